#include "autotune/rank_report.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

namespace {

using nlohmann::json;

double num(const json &j, const char *key, bool required, double lo, double hi, bool above_lo = false) {
  const std::string f = std::string("rank report: ") + key;
  if (!j.contains(key) || j[key].is_null()) {
    if (required) throw_invalid(f + ": missing");
    return -1;
  }
  if (!j[key].is_number()) throw_invalid(f + ": is not a number");
  const double d = j[key].get<double>();
  if (!std::isfinite(d)) throw_invalid(f + ": is not finite");
  if (above_lo ? !(d > lo) : d < lo)
    throw_invalid(f + ": " + format_double(d) + (above_lo ? " is not above " : " is below ") + format_double(lo));
  if (d > hi) throw_invalid(f + ": " + format_double(d) + " is above " + format_double(hi));
  return d;
}

json role_summary(const std::vector<RankReport> &ranks, const std::string &role) {
  int n = 0;
  double sum = 0, mx = 0, rss = 0, mem = -1, cpus = 1;
  bool cpu_known = false;
  for (const auto &r : ranks) {
    if (r.role != role) continue;
    ++n;
    if (r.cpu_s >= 0) {
      const double u = r.cpu_s / r.wall_s;
      sum += u;
      mx = std::max(mx, u);
      cpu_known = true;
    }
    rss = std::max(rss, r.peak_rss_mb);
    cpus = std::max(cpus, r.cpus_allocated);
    mem = std::max(mem, r.mem_limit_mb);
  }
  json j;
  j["ranks"] = n;
  j["cpu_util_mean"] = cpu_known && n ? json(sum / n) : json(nullptr);
  j["cpu_util_max"] = cpu_known ? json(mx) : json(nullptr);
  j["cpus_allocated"] = cpus;
  j["peak_rss_mb_max"] = rss > 0 ? json(rss) : json(nullptr);
  j["mem_limit_mb"] = mem > 0 ? json(mem) : json(nullptr);
  return j;
}

}  // namespace

RankReport parse_rank_report(std::string_view text) {
  if (text.size() > kMaxRankReportBytes) throw_invalid("rank report: larger than 64 KiB");
  json j;
  try {
    j = json::parse(text);
  } catch (const std::exception &e) {
    throw Error(Errc::corrupt, std::string("rank report: not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) throw_invalid("rank report: is not a JSON object");
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != kRankReportFormat)
    throw_invalid(std::string("rank report: format: is not ") + kRankReportFormat);
  RankReport r;
  const double rank = num(j, "rank", true, 0, 1e7);
  if (rank != std::floor(rank)) throw_invalid("rank report: rank: is not a whole number");
  r.rank = static_cast<int>(rank);
  if (j.contains("role") && !j["role"].is_null()) {
    if (!j["role"].is_string()) throw_invalid("rank report: role: is not a string");
    r.role = j["role"].get<std::string>();
    if (r.role != "worker" && r.role != "server")
      throw_invalid("rank report: role: '" + r.role.substr(0, 64) + "' is not one of worker, server");
  }
  if (j.contains("node") && !j["node"].is_null()) {
    if (!j["node"].is_string()) throw_invalid("rank report: node: is not a string");
    r.node = j["node"].get<std::string>();
    if (r.node.size() > 256) throw_invalid("rank report: node: longer than 256 characters");
  }
  r.samples = num(j, "samples", true, 0, 1e18);
  r.wall_s = num(j, "wall_s", true, 0, 1e9, true);
  r.batches = num(j, "batches", false, 0, 1e12);
  r.cpu_s = num(j, "cpu_s", false, 0, 1e12);
  r.peak_rss_mb = num(j, "peak_rss_mb", false, 0, 1e9);
  r.cpus_allocated = num(j, "cpus_allocated", false, 0, 4096);
  r.mem_limit_mb = num(j, "mem_limit_mb", false, 0, 1e9);
  if (j.contains("profile_only") && !j["profile_only"].is_null()) {
    if (!j["profile_only"].is_boolean()) throw_invalid("rank report: profile_only: is not true or false");
    r.profile_only = j["profile_only"].get<bool>();
  }
  return r;
}

std::string merge_rank_reports(const std::vector<RankReport> &in, int expected_workers) {
  std::vector<RankReport> ranks = in;
  std::sort(ranks.begin(), ranks.end(), [](const RankReport &a, const RankReport &b) { return a.rank < b.rank; });
  double wall = 0, samples = 0, clocks = -1;
  int workers = 0, servers = 0;
  bool profile_only = false;
  for (const auto &r : ranks) {
    profile_only = profile_only || r.profile_only;
    if (r.role != "worker") {
      ++servers;
      continue;
    }
    ++workers;
    wall = std::max(wall, r.wall_s);
    samples += r.samples;
    if (r.batches >= 0) clocks = clocks < 0 ? r.batches : std::min(clocks, r.batches);
  }
  json j;
  if (workers > 0 && expected_workers > workers) {
    samples *= static_cast<double>(expected_workers) / workers;
    j["workers_reported"] = workers;
    workers = expected_workers;
  }
  j["format"] = "autotune-result/1";
  j["status"] = samples > 0 && wall > 0 ? "ok" : "empty";
  j["reported_by"] = kRankReportFormat;
  j["ranks"] = static_cast<int>(ranks.size());
  j["workers"] = workers;
  j["servers"] = servers;
  j["clocks"] = clocks < 0 ? 0.0 : clocks;
  j["samples"] = samples;
  j["wall_s"] = wall;
  j["samples_per_s"] = wall > 0 ? samples / wall : 0.0;
  if (clocks > 0) j["time_per_clock_s"] = wall / clocks;
  j["profile_only"] = profile_only;
  j["roles"]["worker"] = role_summary(ranks, "worker");
  j["roles"]["server"] = role_summary(ranks, "server");
  json per = json::array();
  for (const auto &r : ranks) {
    json p;
    p["rank"] = r.rank;
    p["role"] = r.role;
    p["node"] = r.node;
    p["samples"] = r.samples;
    p["samples_per_s"] = r.samples / r.wall_s;
    p["cpu_util"] = r.cpu_s >= 0 ? json(r.cpu_s / r.wall_s) : json(nullptr);
    p["peak_rss_mb"] = r.peak_rss_mb >= 0 ? json(r.peak_rss_mb) : json(nullptr);
    p["wall_s"] = r.wall_s;
    per.push_back(p);
  }
  j["per_rank"] = per;
  return j.dump();
}

}  // namespace autotune
