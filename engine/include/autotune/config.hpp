// A configuration of a training job: how many of each, and how big each is.
//
// Two tuples (docs/architecture.md, "Terms"): the counts (nodes, workers, parameter servers) and
// the per-role resources (CPUs, memory and GPUs per worker; CPUs and memory per parameter server).
// A configuration travels as text, in the dimension names users write in --autotune-space:
//
//   nodes=2,workers=3,ps=1,cpus-per-worker=1,mem-per-worker=512M,cpus-per-ps=1,mem-per-ps=256M
//
// (gpus-per-worker appears only when non-zero).  parse(format(c)) == c for every valid c.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace autotune {

struct Counts {
  int nodes = 1;
  int workers = 1;
  int servers = 0;  // parameter servers ("ps")
  bool operator==(const Counts &o) const {
    return nodes == o.nodes && workers == o.workers && servers == o.servers;
  }
};

struct RoleResources {
  int cpus = 1;
  std::uint64_t mem_mb = 256;
  int gpus = 0;
  bool operator==(const RoleResources &o) const {
    return cpus == o.cpus && mem_mb == o.mem_mb && gpus == o.gpus;
  }
};

struct Configuration {
  Counts counts;
  RoleResources worker;
  RoleResources server;  // gpus unused

  int ranks() const { return counts.workers + counts.servers; }
  bool operator==(const Configuration &o) const {
    return counts == o.counts && worker == o.worker && server == o.server;
  }
  bool operator!=(const Configuration &o) const { return !(*this == o); }

  // The text form above.
  std::string format() const;
  // Parses the text form; every dimension must be present once (gpus-per-worker optional).
  // Throws Error(invalid_argument) naming `field` and the offending dimension.
  static Configuration parse(std::string_view text, std::string_view field = "configuration");
  // Structural sanity: nodes >= 1, workers >= 1, servers >= 0, cpus >= 1, memory >= 1 MB,
  // nodes <= ranks.  Throws Error(invalid_argument) otherwise.
  void validate(std::string_view field = "configuration") const;
};

// What a configuration asks of Slurm.  Slurm gives every task of a job (and of a step) the same
// CPUs and memory, so the request takes the larger role's: ntasks = workers + ps,
// cpus_per_task = max(cpus per worker, cpus per ps), mem_per_cpu = the larger role's memory per
// task divided by cpus_per_task, rounded up.  Ranks are placed in blocks: rank r on node
// r * nodes / ntasks; workers are ranks 0..W-1, parameter servers W..W+S-1.
struct SlurmRequest {
  int nodes = 1;
  int ntasks = 1;
  int cpus_per_task = 1;
  std::uint64_t mem_per_cpu_mb = 1;
  int gpus_per_task = 0;
  // The most tasks any node gets with block placement: ceil(ntasks / nodes).
  int max_tasks_per_node() const { return (ntasks + nodes - 1) / nodes; }
  std::uint64_t mem_per_node_mb() const {
    return mem_per_cpu_mb * static_cast<std::uint64_t>(cpus_per_task) * max_tasks_per_node();
  }
  int cpus_per_node() const { return cpus_per_task * max_tasks_per_node(); }
};
SlurmRequest slurm_request(const Configuration &c);

// The dimension names, in the order of the text form.
inline constexpr const char *kDimNodes = "nodes";
inline constexpr const char *kDimWorkers = "workers";
inline constexpr const char *kDimServers = "ps";
inline constexpr const char *kDimCpusPerWorker = "cpus-per-worker";
inline constexpr const char *kDimMemPerWorker = "mem-per-worker";
inline constexpr const char *kDimGpusPerWorker = "gpus-per-worker";
inline constexpr const char *kDimCpusPerServer = "cpus-per-ps";
inline constexpr const char *kDimMemPerServer = "mem-per-ps";

}  // namespace autotune
