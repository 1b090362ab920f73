#include "autotune/result.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

namespace {

using nlohmann::json;

constexpr size_t kMaxString = 4096;
constexpr size_t kMaxRanks = 65536;

std::string where(const std::string &path) { return "result: " + path; }

std::optional<double> opt_number(const json &j, const char *key, const std::string &path, double lo = 0,
                                 double hi = 1e18) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const json &v = j[key];
  if (!v.is_number()) throw_invalid(where(path + key) + ": is not a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw_invalid(where(path + key) + ": is not finite");
  if (d < lo) throw_invalid(where(path + key) + ": " + format_double(d) + " is below " + format_double(lo));
  if (d > hi) throw_invalid(where(path + key) + ": " + format_double(d) + " is above " + format_double(hi));
  return d;
}

double number(const json &j, const char *key, const std::string &path, double lo = 0, double hi = 1e18) {
  auto v = opt_number(j, key, path, lo, hi);
  if (!v) throw_invalid(where(path + key) + ": missing");
  return *v;
}

std::string string(const json &j, const char *key, const std::string &path, bool required = false) {
  if (!j.contains(key) || j[key].is_null()) {
    if (required) throw_invalid(where(path + key) + ": missing");
    return "";
  }
  if (!j[key].is_string()) throw_invalid(where(path + key) + ": is not a string");
  std::string s = j[key].get<std::string>();
  if (s.size() > kMaxString) throw_invalid(where(path + key) + ": longer than 4096 characters");
  return s;
}

std::optional<RoleUse> role(const json &roles, const char *name) {
  if (!roles.contains(name) || roles[name].is_null()) return std::nullopt;
  const json &r = roles[name];
  const std::string p = std::string("app.roles.") + name + ".";
  if (!r.is_object()) throw_invalid(where(p.substr(0, p.size() - 1)) + ": is not an object");
  RoleUse u;
  u.ranks = static_cast<int>(opt_number(r, "ranks", p, 0, 1e7).value_or(0));
  u.cpu_util_mean = opt_number(r, "cpu_util_mean", p, 0, 4096);
  u.cpu_util_max = opt_number(r, "cpu_util_max", p, 0, 4096);
  u.cpus_allocated = opt_number(r, "cpus_allocated", p, 0, 4096);
  u.peak_rss_mb_max = opt_number(r, "peak_rss_mb_max", p, 0, 1e9);
  u.mem_limit_mb = opt_number(r, "mem_limit_mb", p, 0, 1e9);
  return u;
}

}  // namespace

RunResult parse_result(std::string_view text) {
  if (text.size() > kMaxResultBytes) throw_invalid("result: larger than 1 MiB");
  json j;
  try {
    j = json::parse(text);
  } catch (const std::exception &e) {
    throw Error(Errc::corrupt, std::string("result: not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) throw_invalid("result: is not a JSON object");
  const std::string fmt = string(j, "format", "", true);
  if (fmt != "autotune-run/1") throw_invalid("result: format: '" + fmt + "' is not autotune-run/1");
  RunResult r;
  r.status = string(j, "status", "", true);
  if (r.status != "ok" && r.status != "failed" && r.status != "timeout")
    throw_invalid("result: status: '" + r.status + "' is not one of ok, failed, timeout");
  r.exit_code = static_cast<int>(opt_number(j, "exit_code", "", -1e6, 1e6).value_or(0));
  r.signal = static_cast<int>(opt_number(j, "signal", "", 0, 128).value_or(0));
  r.reason = string(j, "reason", "");
  r.wall_s = opt_number(j, "wall_s", "", 0, 1e9).value_or(0);
  r.config = string(j, "config", "");
  if (auto s = opt_number(j, "step", "", 0, 4294967294.0)) r.step = static_cast<long long>(*s);
  r.adjust_reason = string(j, "adjust_reason", "");
  r.origin = string(j, "origin", "");
  if (!r.origin.empty() && r.origin != "initial" && r.origin != "model" && r.origin != "manual")
    throw_invalid("result: origin: '" + r.origin + "' is not one of initial, model, manual");
  if (j.contains("tier") && !j["tier"].is_null()) {
    const json &t = j["tier"];
    if (!t.is_object()) throw_invalid("result: tier: is not an object");
    if (t.size() > 8) throw_invalid("result: tier: more than 8 media");
    for (const auto &[k, v] : t.items()) {
      if (k.empty() || k.size() > 32 || k.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
        throw_invalid("result: tier: '" + k.substr(0, 32) + "' is not a tier name (1-32 of a-z 0-9 _ -)");
      r.tier[k] = number(t, k.c_str(), "tier.", 0, 1e18);
    }
  }
  if (j.contains("app") && !j["app"].is_null()) {
    const json &a = j["app"];
    if (!a.is_object()) throw_invalid("result: app: is not an object");
    if (a.contains("format") && !a["format"].is_null() &&
        (!a["format"].is_string() || a["format"].get<std::string>() != "autotune-result/1"))
      throw_invalid("result: app.format: is not autotune-result/1 (see docs/reporting.md)");
    AppResult app;
    app.samples_per_s = number(a, "samples_per_s", "app.", 0, 1e15);
    app.time_per_clock_s = opt_number(a, "time_per_clock_s", "app.", 0, 1e9);
    app.wall_s = opt_number(a, "wall_s", "app.", 0, 1e9);
    app.clocks = opt_number(a, "clocks", "app.", 0, 1e12);
    app.samples = opt_number(a, "samples", "app.", 0, 1e18);
    if (a.contains("roles") && a["roles"].is_object()) {
      app.worker = role(a["roles"], "worker");
      app.server = role(a["roles"], "server");
    }
    if (a.contains("per_rank") && !a["per_rank"].is_null()) {
      if (!a["per_rank"].is_array()) throw_invalid("result: app.per_rank: is not an array");
      if (a["per_rank"].size() > kMaxRanks) throw_invalid("result: app.per_rank: more than 65536 ranks");
      for (const json &pr : a["per_rank"]) {
        if (!pr.is_object()) throw_invalid("result: app.per_rank: an entry is not an object");
        RankUse u;
        u.rank = static_cast<int>(number(pr, "rank", "app.per_rank[].", 0, 1e7));
        u.role = string(pr, "role", "app.per_rank[].");
        u.node = string(pr, "node", "app.per_rank[].");
        if (u.node.size() > 256) throw_invalid("result: app.per_rank[].node: longer than 256 characters");
        u.samples_per_s = opt_number(pr, "samples_per_s", "app.per_rank[].", 0, 1e15);
        u.cpu_util = opt_number(pr, "cpu_util", "app.per_rank[].", 0, 4096);
        u.peak_rss_mb = opt_number(pr, "peak_rss_mb", "app.per_rank[].", 0, 1e9);
        app.per_rank.push_back(std::move(u));
      }
    }
    r.app = std::move(app);
  }
  // A program that reports nothing is measured by the wall time of its run (the class's metric time).
  if (r.status == "ok" && !r.app && !(r.wall_s > 0))
    throw_invalid("result: status ok without the app's measurements (app) needs the run's wall time (wall_s above 0)");
  return r;
}

namespace {

// The text of a result file the job's user left: a regular file (not a link) of at most
// kMaxResultBytes, owned by `owner` when given.
std::string read_user_file(int dirfd, const std::string &name, const std::string &path, std::optional<unsigned> owner) {
  const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) throw Error(Errc::not_found, path + ": no result file");
    if (errno == ELOOP) throw Error(Errc::permission, path + ": is a symbolic link");
    throw_io(path, errno);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw_io(path, e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(Errc::permission, path + ": not a regular file");
  }
  if (owner && st.st_uid != *owner) {
    ::close(fd);
    throw Error(Errc::permission, path + ": owned by uid " + std::to_string(st.st_uid) + ", not the job's user (uid " +
                                      std::to_string(*owner) + ")");
  }
  if (static_cast<unsigned long long>(st.st_size) > kMaxResultBytes) {
    ::close(fd);
    throw_invalid(path + ": " + std::to_string(st.st_size) + " bytes, larger than the 1 MiB limit");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::read(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(off);
  return text;
}

}  // namespace

RunResult read_result_file(const std::string &path, std::optional<unsigned> owner) {
  return read_result_at(AT_FDCWD, path, path, owner);
}

RunResult read_result_at(int dirfd, const std::string &name, const std::string &path, std::optional<unsigned> owner) {
  const std::string text = read_user_file(dirfd, name, path, owner);
  try {
    return parse_result(text);
  } catch (const Error &e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

SearchSummary parse_search_summary(std::string_view text) {
  if (text.size() > kMaxResultBytes) throw_invalid("search: larger than 1 MiB");
  json j;
  try {
    j = json::parse(text);
  } catch (const std::exception &e) {
    throw Error(Errc::corrupt, std::string("search: not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) throw_invalid("search: is not a JSON object");
  auto str = [&](const char *key, bool required) {
    if (!j.contains(key) || j[key].is_null()) {
      if (required) throw_invalid(std::string("search: ") + key + ": missing");
      return std::string();
    }
    if (!j[key].is_string()) throw_invalid(std::string("search: ") + key + ": is not a string");
    std::string v = j[key].get<std::string>();
    if (v.size() > kMaxString) throw_invalid(std::string("search: ") + key + ": longer than 4096 characters");
    return v;
  };
  const std::string fmt = str("format", true);
  if (fmt != "autotune-search/1") throw_invalid("search: format: '" + fmt + "' is not autotune-search/1");
  SearchSummary s;
  s.stop_rule = str("stop_rule", true);
  static const char *const rules[] = {"budget", "exhausted", "improvement", "ei", "none"};
  if (std::find(std::begin(rules), std::end(rules), s.stop_rule) == std::end(rules))
    throw_invalid("search: stop_rule: '" + s.stop_rule + "' is not one of budget, exhausted, improvement, ei, none");
  s.reason = str("reason", false);
  s.winner = str("winner", false);
  if (j.contains("trials") && !j["trials"].is_null()) {
    if (!j["trials"].is_number_integer() || j["trials"].get<long long>() < 0 || j["trials"].get<long long>() > 1000000)
      throw_invalid("search: trials: is not a whole number from 0 to 1000000");
    s.trials = j["trials"].get<int>();
  }
  return s;
}

SearchSummary read_search_file(const std::string &path, std::optional<unsigned> owner) {
  return read_search_at(AT_FDCWD, path, path, owner);
}

SearchSummary read_search_at(int dirfd, const std::string &name, const std::string &path, std::optional<unsigned> owner) {
  const std::string text = read_user_file(dirfd, name, path, owner);
  try {
    return parse_search_summary(text);
  } catch (const Error &e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

}  // namespace autotune
