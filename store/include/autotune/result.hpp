// The result document a trial leaves for ingest, and its validation.
//
// autotune-run writes one JSON document per trial ("autotune-run/1"), wrapping what the
// training program measured through libssp ("autotune-result/1", see libssp's profile.hpp):
//
//   {"format": "autotune-run/1", "status": "ok"|"failed"|"timeout", "exit_code": 0,
//    "signal": 0, "reason": "", "wall_s": 12.5, "config": "nodes=2,workers=3,...",
//    "step": 3,                                    (steps mode: the trial's job step)
//    "adjust_reason": "...",                       (steps mode: why per-role resources changed)
//    "origin": "initial"|"model"|"manual",         (steps mode: why it was tried)
//    "app": {"format": "autotune-result/1", "samples_per_s": 5120.0, "time_per_clock_s": 0.2,
//            "clocks": 20, "samples": 102400, "wall_s": 20.0, "workers": 3, "servers": 1,
//            "roles": {"worker": {"ranks": 3, "cpu_util_mean": 0.95, "cpu_util_max": 0.99,
//                                 "cpus_allocated": 1, "peak_rss_mb_max": 180.0,
//                                 "mem_limit_mb": 512},
//                      "server": {...}},
//            "per_rank": [{"rank": 0, "role": "worker", "node": "n1", "samples_per_s": 1700.0,
//                          "cpu_util": 0.97, "peak_rss_mb": 170.0}, ...]}}
//
// Steps mode also leaves the end of its search as <jobid>.search.json:
//
//   {"format": "autotune-search/1", "stop_rule": "budget"|"exhausted"|"improvement"|"ei"|"none",
//    "reason": "...", "winner": "nodes=2,workers=3,...", "trials": 6}
//
// The document comes from a user's job: it is read with a size limit, every field is checked
// (type, finite, range, length), and nothing in it decides whose class or which trial it is --
// ingest takes those from Slurm's record of the job.  Unknown fields are ignored.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune {

inline constexpr std::size_t kMaxResultBytes = 1 << 20;

// The results of a user's jobs travel in StateDir/incoming/<uid>/ (or, when another user squats
// that name, a StateDir/incoming/<uid>.XXXXXX/ of their own): a directory owned by the user that
// no one else may write, so no other user can plant or block a job's result.  What one user may
// leave there is bounded: autotune-run refuses to add a result beyond these limits, and files
// older than kIncomingStaleS are stale (removed by autotune-run and by ingest).
inline constexpr std::size_t kMaxIncomingFiles = 256;
inline constexpr unsigned long long kMaxIncomingBytes = 64ULL << 20;
inline constexpr long kIncomingStaleS = 24 * 3600;

struct RoleUse {
  int ranks = 0;
  std::optional<double> cpu_util_mean, cpu_util_max;  // cores busy per rank
  std::optional<double> cpus_allocated;
  std::optional<double> peak_rss_mb_max;
  std::optional<double> mem_limit_mb;
};

struct RankUse {
  int rank = 0;
  std::string role;  // worker | server
  std::string node;
  std::optional<double> samples_per_s, cpu_util, peak_rss_mb;
};

struct AppResult {
  double samples_per_s = 0;
  std::optional<double> time_per_clock_s, wall_s;
  std::optional<double> clocks, samples;
  std::optional<RoleUse> worker, server;
  std::vector<RankUse> per_rank;
};

struct RunResult {
  std::string status;  // ok | failed | timeout
  int exit_code = 0;
  int signal = 0;
  std::string reason;
  double wall_s = 0;
  std::string config;  // as the job claims; ingest uses the store's record instead when it has one
  std::optional<long long> step;
  std::string adjust_reason;
  std::string origin;  // steps mode: initial | model | manual ("" when not given)
  std::optional<AppResult> app;
  // The bytes each medium of the tiered burst buffer held for the job at the end of its run
  // (autotune-run, from `autotune-bb ls`), by tier name; empty without a buffer.
  std::map<std::string, double> tier;
};

struct SearchSummary {
  std::string stop_rule;  // budget | exhausted | improvement | ei | none
  std::string reason;
  std::string winner;  // a configuration (config.hpp text form), "" when nothing succeeded
  int trials = 0;      // trials the job ran
};

// Parses and validates; throws Error(invalid_argument) naming the field ("result: app.samples_per_s:
// -3 is negative") or Error(corrupt) for text that is not JSON.
RunResult parse_result(std::string_view text);

// Reads `path` (a regular file, not a link, at most kMaxResultBytes) and parses it.  When
// `owner` is given the file must belong to that uid.  Throws Error(not_found|io|permission|
// invalid_argument|corrupt).
RunResult read_result_file(const std::string &path, std::optional<unsigned> owner);
// The same for the file `name` of the open directory `dirfd` (no path is followed again; `name`
// itself must not be a link); `path` names it in messages.
RunResult read_result_at(int dirfd, const std::string &name, const std::string &path, std::optional<unsigned> owner);

// The same for a search summary ("search: stop_rule: 'x' is not one of ...").
SearchSummary parse_search_summary(std::string_view text);
SearchSummary read_search_file(const std::string &path, std::optional<unsigned> owner);
SearchSummary read_search_at(int dirfd, const std::string &name, const std::string &path, std::optional<unsigned> owner);

}  // namespace autotune
