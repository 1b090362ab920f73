// autotune-report: the reporting contract's helper for shell scripts (docs/reporting.md).
//
//   autotune-report --samples N --seconds S [--batches K]
//
// Writes this rank's report through libautotune-report (report.h).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "autotune/report.h"

namespace {

const char kUsage[] =
    "usage: autotune-report --samples N --seconds S [--batches K]\n\n"
    "Tell slurm-autotune how fast this rank of a program went, from a shell script run by\n"
    "autotune-run: it processed N samples (a number >= 0) in S seconds of wall time (> 0), in K\n"
    "batches.  Each rank (task) reports its own; the class's throughput is the ranks' samples over\n"
    "the longest rank's seconds.  Writes $AUTOTUNE_RESULT.rank.$SLURM_PROCID (format\n"
    "autotune-rank/1, docs/reporting.md).  Without AUTOTUNE_RESULT (not under autotune-run) it\n"
    "reports nothing and exits 0.  A script that reports nothing is measured by its wall time.\n\n"
    "Exit status: 0 reported (or nothing to do), 1 the report could not be written, 2 bad usage.\n";

[[noreturn]] void usage_error(const std::string &msg) {
  std::fprintf(stderr, "autotune-report: %s; see `autotune-report --help'\n", msg.c_str());
  std::exit(2);
}

double number(const char *opt, const char *v) {
  if (!v || !*v) usage_error(std::string(opt) + " needs a value");
  char *end = nullptr;
  errno = 0;
  const double d = std::strtod(v, &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(d) || std::strchr(v, 'x') || std::strchr(v, 'X'))
    usage_error(std::string(opt) + ": '" + v + "' is not a number");
  return d;
}

}  // namespace

int main(int argc, char **argv) {
  double samples = -1, seconds = -1, batches = -1;
  bool have_samples = false, have_seconds = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::string name = a, value;
    bool inline_value = false;
    if (const auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      inline_value = true;
    }
    if (name != "--samples" && name != "--seconds" && name != "--batches") usage_error("unknown argument '" + a + "'");
    if (!inline_value) {
      if (i + 1 >= argc) usage_error(name + " needs a value");
      value = argv[++i];
    }
    const double d = number(name.c_str(), value.c_str());
    if (name == "--samples") {
      if (d < 0) usage_error("--samples: '" + value + "' is below 0");
      samples = d;
      have_samples = true;
    } else if (name == "--seconds") {
      if (!(d > 0)) usage_error("--seconds: '" + value + "' is not above 0");
      seconds = d;
      have_seconds = true;
    } else {
      if (d < 0 || d != std::floor(d) || d > 1e12) usage_error("--batches: '" + value + "' is not a whole number from 0 to 1e12");
      batches = d;
    }
  }
  if (!have_samples) usage_error("--samples N is required");
  if (!have_seconds) usage_error("--seconds S is required");
  const int rc = at_report_batches(samples, seconds, static_cast<long long>(batches));
  const int err = errno;
  if (rc == 1) {
    std::fprintf(stderr, "autotune-report: AUTOTUNE_RESULT is unset (not run by autotune-run): nothing reported\n");
    return 0;
  }
  if (rc != 0) {
    const std::string msg = at_report_error();
    std::fprintf(stderr, "autotune-report: %s\n", msg.c_str());
    return err == EINVAL ? 2 : 1;
  }
  return 0;
}
