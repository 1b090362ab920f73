// Logging through a sink the caller supplies.
//
// Inside Slurm daemons the plugins install a sink that forwards to Slurm's own log (error(),
// verbose(), debug()); tools install one that writes to stderr.  Without a sink nothing is
// written anywhere: the core never prints to stdout or stderr on its own.
//
// Thread safety: set_log_sink() may race with log(); install the sink once, before other threads
// start.  log() itself is safe to call from any thread.
#pragma once

#include <string>

namespace autotune {

enum class LogLevel { error = 0, info = 1, verbose = 2, debug = 3 };

using LogSink = void (*)(LogLevel level, const char *message);

void set_log_sink(LogSink sink) noexcept;
bool log_enabled() noexcept;
// Every message is passed through log_escape() on its way to the sink.
void log(LogLevel level, const std::string &message) noexcept;

// `text` made safe for one line of a log: a backslash becomes "\\", newline, carriage return
// and tab "\n", "\r", "\t", and every other control character (ESC, DEL, ...) "\xHH".  Text that
// comes from users (configurations, node names, error messages quoting their files) cannot
// forge or split log lines, nor send escape sequences to a terminal.
std::string log_escape(const std::string &text);

// A ready-made sink for command-line tools: "<prog>: <message>" on stderr, levels above
// `max_level` dropped.
void set_stderr_log_sink(const char *prog, LogLevel max_level) noexcept;

}  // namespace autotune
