// libautotune-report (report.h): the per-rank report of the reporting contract, written without
// any library of the project, so that a program links nothing else (no MPI, no libssp, no JSON
// library).  Exception firewall: nothing throws across the C boundary.
#include "autotune/report.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

thread_local std::string t_error;

int fail(int err, const std::string &msg) {
  t_error = msg;
  errno = err;
  return -1;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A JSON string literal of `s` (control characters escaped).
std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (const unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

// A whole number in [lo, hi] from the environment variable `name`; -1 when unset.
long long env_int(const char *name, long long lo, long long hi, bool *bad) {
  const char *v = std::getenv(name);
  if (!v || !*v) return -1;
  char *end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0' || n < lo || n > hi) {
    *bad = true;
    return -1;
  }
  return n;
}

std::string node_name() {
  if (const char *v = std::getenv("SLURMD_NODENAME"); v && *v) return std::string(v).substr(0, 256);
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) == 0) return buf;
  return "";
}

int report(double samples, double seconds, long long batches) {
  if (!std::isfinite(samples)) return fail(EINVAL, "at_report: samples: is not a finite number");
  if (samples < 0) return fail(EINVAL, "at_report: samples: " + num(samples) + " is below 0");
  if (samples > 1e18) return fail(EINVAL, "at_report: samples: " + num(samples) + " is above 1e18");
  if (!std::isfinite(seconds)) return fail(EINVAL, "at_report: seconds: is not a finite number");
  if (!(seconds > 0)) return fail(EINVAL, "at_report: seconds: " + num(seconds) + " is not above 0");
  if (seconds > 1e9) return fail(EINVAL, "at_report: seconds: " + num(seconds) + " is above 1e9");
  if (batches < -1 || batches > 1000000000000LL)
    return fail(EINVAL, "at_report: batches: " + std::to_string(batches) + " is not from 0 to 1e12 (or -1: not counted)");
  const char *result = std::getenv("AUTOTUNE_RESULT");
  if (!result || !*result) {
    t_error.clear();
    return 1;
  }
  bool bad = false;
  long long rank = env_int("SLURM_PROCID", 0, 10000000, &bad);
  if (bad) return fail(EINVAL, "at_report: SLURM_PROCID: is not a whole number from 0 to 10000000");
  if (rank < 0) rank = 0;
  const long long cpus = env_int("SLURM_CPUS_PER_TASK", 1, 4096, &bad);
  bad = false;
  const long long mem_per_cpu = env_int("SLURM_MEM_PER_CPU", 1, 1000000000, &bad);
  bad = false;
  const long long mem_per_node = env_int("SLURM_MEM_PER_NODE", 1, 1000000000, &bad);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);

  std::string j = "{\"format\":\"" AT_REPORT_FORMAT "\",\"rank\":" + std::to_string(rank) +
                  ",\"role\":\"worker\",\"node\":" + quoted(node_name()) + ",\"samples\":" + num(samples) +
                  ",\"wall_s\":" + num(seconds);
  if (batches >= 0) j += ",\"batches\":" + std::to_string(batches);
  j += ",\"peak_rss_mb\":" + num(static_cast<double>(ru.ru_maxrss) / 1024.0);
  if (cpus > 0) j += ",\"cpus_allocated\":" + std::to_string(cpus);
  if (mem_per_cpu > 0) j += ",\"mem_limit_mb\":" + std::to_string(mem_per_cpu * (cpus > 0 ? cpus : 1));
  else if (mem_per_node > 0) j += ",\"mem_limit_mb\":" + std::to_string(mem_per_node);
  j += ",\"reporter\":\"libautotune-report\"}\n";

  const std::string path = std::string(result) + ".rank." + std::to_string(rank);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    const int e = errno;
    return fail(e, "at_report: cannot create " + tmp + ": " + std::strerror(e));
  }
  std::size_t off = 0;
  while (off < j.size()) {
    const ssize_t n = ::write(fd, j.data() + off, j.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail(e, "at_report: cannot write " + tmp + ": " + std::strerror(e));
    }
    off += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail(e, "at_report: cannot write " + path + ": " + std::strerror(e));
  }
  t_error.clear();
  return 0;
}

}  // namespace

extern "C" int at_report(double samples, double seconds) { return at_report_batches(samples, seconds, -1); }

extern "C" int at_report_batches(double samples, double seconds, long long batches) {
  try {
    return report(samples, seconds, batches);
  } catch (const std::exception &e) {
    return fail(ENOMEM, std::string("at_report: ") + e.what());
  } catch (...) {
    return fail(EIO, "at_report: unexpected error");
  }
}

extern "C" const char *at_report_error(void) { return t_error.c_str(); }
