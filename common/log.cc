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

void log(LogLevel level, const std::string &message) noexcept {
  LogSink sink = g_sink.load();
  if (sink) sink(level, message.c_str());
}

void set_stderr_log_sink(const char *prog, LogLevel max_level) noexcept {
  g_prog = prog;
  g_max = max_level;
  g_sink.store(stderr_sink);
}

}  // namespace autotune
