// Profiling measurements of one rank and the result file built from all of them (the format is
// documented in include/ssp/profile.hpp).  Pure except for the clock and getrusage readers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ssp {

// One rank's figures over its measured window (fixed size: gathered as bytes).
struct RankRecord {
  std::int32_t rank = 0;
  std::int32_t role = 0;  // 0 server, 1 worker
  char node[64] = {};
  double wall_s = 0;
  double cpu_s = 0;
  double peak_rss_mb = 0;
  std::uint64_t samples = 0;
  std::int64_t clocks = 0;
  std::int32_t cpus_allocated = 1;
  double mem_limit_mb = -1;  // < 0: none
};

struct ResultHeader {
  std::string app;
  int ranks = 0, workers = 0, servers = 0;
  std::string consistency;
  int staleness = 0;  // -1 for ASP
  int warmup_clocks = 0;
  bool profile_only = false;
};

nlohmann::json build_result(const ResultHeader &h, const std::vector<RankRecord> &records);
// build_result as the result file's text (one line of JSON).
std::string result_text(const ResultHeader &h, const std::vector<RankRecord> &records);

// Environment of the profiling hook, validated.  Error(invalid_argument) naming the variable.
struct ProfileEnv {
  std::string result_path;   // empty: no file
  std::int64_t batches = 0;  // 0: measure the whole run
  int warmup = 2;
  bool only = false;
};
ProfileEnv read_profile_env(int warmup_option);

// This process's CPU seconds, wall seconds (monotonic) and peak RSS in MB.
double process_cpu_s();
double wall_now_s();
double peak_rss_mb();
// $SLURMD_NODENAME, else the host name.
std::string node_name();
// $SLURM_CPUS_PER_TASK (else 1) and the memory limit in MB (< 0: none).
int cpus_allocated();
double mem_limit_mb(int cpus);

// Writes `text` to `path` atomically (temporary file in the same directory, then rename).
void write_file_atomic(const std::string &path, const std::string &text);

}  // namespace ssp
