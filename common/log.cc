#include "autotune/log.hpp"

#include <atomic>
#include <cstdio>

namespace autotune {
namespace {
std::atomic<LogSink> g_sink{nullptr};
const char *g_prog = "autotune";
LogLevel g_max = LogLevel::info;

void stderr_sink(LogLevel level, const char *message) {
  if (level > g_max) return;
  std::fprintf(stderr, "%s: %s%s\n", g_prog, level == LogLevel::error ? "error: " : "", message);
}
}  // namespace

void set_log_sink(LogSink sink) noexcept { g_sink.store(sink); }

bool log_enabled() noexcept { return g_sink.load() != nullptr; }

std::string log_escape(const std::string &text) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  return out;
}

void log(LogLevel level, const std::string &message) noexcept {
  LogSink sink = g_sink.load();
  if (!sink) return;
  try {
    sink(level, log_escape(message).c_str());
  } catch (...) {
    sink(level, "(a message that could not be escaped)");
  }
}

void set_stderr_log_sink(const char *prog, LogLevel max_level) noexcept {
  g_prog = prog;
  g_max = max_level;
  g_sink.store(stderr_sink);
}

}  // namespace autotune
