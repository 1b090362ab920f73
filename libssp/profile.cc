#include "profile.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include <nlohmann/json.hpp>

#include "autotune/units.hpp"
#include "ssp/error.hpp"
#include "ssp/profile.hpp"

namespace ssp {

using nlohmann::json;

namespace {

json role_summary(const std::vector<RankRecord> &records, int role) {
  int n = 0;
  double sum = 0, mx = 0, rss = 0, mem = -1;
  int cpus = 1;
  for (const auto &r : records) {
    if (r.role != role) continue;
    const double u = r.wall_s > 0 ? r.cpu_s / r.wall_s : 0;
    sum += u;
    mx = std::max(mx, u);
    rss = std::max(rss, r.peak_rss_mb);
    cpus = std::max(cpus, static_cast<int>(r.cpus_allocated));
    mem = std::max(mem, r.mem_limit_mb);
    ++n;
  }
  json j;
  j["ranks"] = n;
  j["cpu_util_mean"] = n ? sum / n : 0.0;
  j["cpu_util_max"] = mx;
  j["cpus_allocated"] = cpus;
  j["peak_rss_mb_max"] = rss;
  j["mem_limit_mb"] = mem < 0 ? json(nullptr) : json(mem);
  return j;
}

}  // namespace

json build_result(const ResultHeader &h, const std::vector<RankRecord> &records) {
  double wall = 0;
  std::uint64_t samples = 0;
  std::int64_t clocks = -1;
  for (const auto &r : records) {
    if (r.role != 1) continue;
    wall = std::max(wall, r.wall_s);
    samples += r.samples;
    clocks = clocks < 0 ? r.clocks : std::min(clocks, r.clocks);
  }
  if (clocks < 0) clocks = 0;
  json j;
  j["format"] = kResultFormat;
  j["status"] = (clocks > 0 && wall > 0) ? "ok" : "empty";
  j["app"] = h.app;
  j["ranks"] = h.ranks;
  j["workers"] = h.workers;
  j["servers"] = h.servers;
  j["consistency"] = h.consistency;
  j["staleness"] = h.staleness;
  j["warmup_clocks"] = h.warmup_clocks;
  j["clocks"] = clocks;
  j["samples"] = samples;
  j["wall_s"] = wall;
  j["samples_per_s"] = wall > 0 ? static_cast<double>(samples) / wall : 0.0;
  j["time_per_clock_s"] = clocks > 0 ? wall / static_cast<double>(clocks) : 0.0;
  j["profile_only"] = h.profile_only;
  j["roles"]["worker"] = role_summary(records, 1);
  j["roles"]["server"] = role_summary(records, 0);
  json per = json::array();
  for (const auto &r : records) {
    json p;
    p["rank"] = r.rank;
    p["role"] = r.role == 1 ? "worker" : "server";
    p["node"] = std::string(r.node, strnlen(r.node, sizeof r.node));
    p["samples"] = r.samples;
    p["samples_per_s"] = r.wall_s > 0 ? static_cast<double>(r.samples) / r.wall_s : 0.0;
    p["cpu_util"] = r.wall_s > 0 ? r.cpu_s / r.wall_s : 0.0;
    p["peak_rss_mb"] = r.peak_rss_mb;
    p["wall_s"] = r.wall_s;
    per.push_back(p);
  }
  j["per_rank"] = per;
  return j;
}

std::string result_text(const ResultHeader &h, const std::vector<RankRecord> &records) {
  return build_result(h, records).dump();
}

ProfileEnv read_profile_env(int warmup_option) {
  ProfileEnv e;
  if (const char *v = std::getenv("AUTOTUNE_RESULT"); v && *v) e.result_path = v;
  if (const char *v = std::getenv("AUTOTUNE_PROFILE_BATCHES"); v && *v)
    e.batches = autotune::parse_int("AUTOTUNE_PROFILE_BATCHES", v, 1, 1000000);
  if (warmup_option >= 0) {
    e.warmup = warmup_option;
  } else if (const char *v = std::getenv("AUTOTUNE_PROFILE_WARMUP"); v && *v) {
    e.warmup = static_cast<int>(autotune::parse_int("AUTOTUNE_PROFILE_WARMUP", v, 0, 1000000));
  }
  if (const char *v = std::getenv("AUTOTUNE_PROFILE_ONLY"); v && *v)
    e.only = autotune::parse_bool("AUTOTUNE_PROFILE_ONLY", v);
  if (e.only && e.batches == 0)
    throw Error(Errc::invalid_argument,
                "AUTOTUNE_PROFILE_ONLY: set, but AUTOTUNE_PROFILE_BATCHES is not; allowed: "
                "AUTOTUNE_PROFILE_ONLY=1 together with AUTOTUNE_PROFILE_BATCHES=K");
  return e;
}

double process_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double wall_now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

std::string node_name() {
  if (const char *v = std::getenv("SLURMD_NODENAME"); v && *v) return v;
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) == 0) return buf;
  return "unknown";
}

int cpus_allocated() {
  if (const char *v = std::getenv("SLURM_CPUS_PER_TASK"); v && *v) {
    const long n = std::strtol(v, nullptr, 10);
    if (n >= 1 && n < 100000) return static_cast<int>(n);
  }
  return 1;
}

double mem_limit_mb(int cpus) {
  if (const char *v = std::getenv("SLURM_MEM_PER_CPU"); v && *v) {
    const double m = std::strtod(v, nullptr);
    if (m > 0) return m * cpus;
  }
  if (const char *v = std::getenv("SLURM_MEM_PER_NODE"); v && *v) {
    const double m = std::strtod(v, nullptr);
    if (m > 0) return m;
  }
  return -1;
}

void write_file_atomic(const std::string &path, const std::string &text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) autotune::throw_io("AUTOTUNE_RESULT: cannot create '" + tmp + "'", errno);
    out << text << '\n';
    out.flush();
    if (!out) autotune::throw_io("AUTOTUNE_RESULT: cannot write '" + tmp + "'", errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    autotune::throw_io("AUTOTUNE_RESULT: cannot rename '" + tmp + "' to '" + path + "'", e);
  }
}

}  // namespace ssp
