// The per-rank reports of the reporting contract (docs/reporting.md), and how autotune-run turns
// them into the app's result document.
//
// A program that is not linked with libssp reports through a helper (the C library
// libautotune-report, the Python module slurm_autotune, the autotune-report command): each rank
// writes its own figures to $AUTOTUNE_RESULT.rank.<R> (R = its rank, SLURM_PROCID), format
// "autotune-rank/1":
//
//   {"format": "autotune-rank/1", "rank": 0, "role": "worker", "node": "n1",
//    "samples": 51200, "wall_s": 10.0,              (required: samples >= 0, wall_s > 0)
//    "batches": 20, "cpu_s": 9.5, "peak_rss_mb": 310.0,  (optional)
//    "cpus_allocated": 1, "mem_limit_mb": 1024, "profile_only": false}
//
// After the step, autotune-run merges the files of the ranks it finds (merge_rank_reports) into
// one "autotune-result/1" document -- the format libssp's rank 0 writes to $AUTOTUNE_RESULT
// itself -- with libssp's rules: samples_per_s = the workers' samples / the longest worker's
// wall_s, clocks = the fewest batches of a worker, per-role CPU (cpu_s / wall_s) and peak memory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace autotune {

inline constexpr const char *kRankReportFormat = "autotune-rank/1";
inline constexpr std::size_t kMaxRankReportBytes = 64 * 1024;

struct RankReport {
  int rank = 0;
  std::string role = "worker";  // worker | server
  std::string node;
  double samples = 0, wall_s = 0;
  double batches = -1, cpu_s = -1, peak_rss_mb = -1, cpus_allocated = -1, mem_limit_mb = -1;  // -1: not given
  bool profile_only = false;
};

// Parses and validates one rank's report; throws Error(invalid_argument) naming the field
// ("rank report: wall_s: 0 is not above 0") or Error(corrupt) for text that is not JSON.
RankReport parse_rank_report(std::string_view text);

// The "autotune-result/1" document (JSON text) of the ranks' reports (at least one).  When
// `expected_workers` (the configuration's) is above the number of worker ranks that reported --
// ranks on other nodes than autotune-run's cannot reach its scratch directory unless it is on a
// shared file system -- the workers' samples are scaled up to it (the reported ranks' mean per
// rank), so that a configuration spread over several nodes is not undercounted; the document
// then says "workers_reported".
std::string merge_rank_reports(const std::vector<RankReport> &ranks, int expected_workers = 0);

}  // namespace autotune
