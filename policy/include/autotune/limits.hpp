// Slurm's limits on one job's request, as the tuner keeps to them: the partition's (slurm.conf)
// and accounting's (the job's QOS and association TRES limits), and the check of a request
// against them.  A configuration whose request breaks one would never start (Slurm keeps such a
// job pending for ever, reason PartitionNodeLimit, QOSMaxNodePerJobLimit, AssocGrpCpuLimit, ...,
// or refuses it), so it is no candidate.
//
// accounting_limits() reduces the QOS and association records of one job to per-job and
// per-node bounds.  It works on plain copies (JobAccounting): job_submit/autotune copies the
// records out of slurmctld's assoc_mgr while it holds its read locks, and calls it on the copy
// after releasing them.  This header needs no Slurm, Eigen or JSON header: that plugin includes
// it.
//
// Thread safety: pure functions and plain data.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace autotune {

struct SlurmRequest;  // config.hpp

// The limits accounting puts on one job's request (QOS and association TRES limits, as slurmctld
// enforces them with AccountingStorageEnforce=limits; at_accounting_limits says which), already
// reduced to per-job and per-node bounds; 0 = no limit.  Memory in MB.
struct AccountingLimits {
  std::uint64_t max_nodes = 0, max_cpus = 0, max_mem_mb = 0, max_gpus = 0;
  std::uint64_t max_cpus_per_node = 0, max_mem_per_node_mb = 0, max_gpus_per_node = 0;
  std::uint64_t min_nodes = 0, min_cpus = 0, min_mem_mb = 0;
  std::string text;  // where they come from, e.g. "QOS small: MaxTRESPerJob=cpu=4,node=2"
  bool any() const;
  // Empty when the request respects every limit, else which bound it breaks ("asks for 8 CPUs,
  // at most 4").
  std::string violation(const SlurmRequest &r) const;
};

// The limits of a job's partition that bound what a job may request (slurm.conf's MinNodes,
// MaxNodes, MaxCPUsPerNode, MaxMemPerNode, MaxMemPerCPU); 0 = no limit.  `accounting` holds the
// QOS and association limits of the job that created the class.
struct PartitionLimits {
  int min_nodes = 0, max_nodes = 0, max_cpus_per_node = 0;
  std::uint64_t max_mem_per_node_mb = 0, max_mem_per_cpu_mb = 0;
  AccountingLimits accounting;
  // Any partition limit (accounting's are separate: accounting.any()).
  bool any() const;
  // "MaxNodes=2, MaxCPUsPerNode=1" (the partition limits that are set, in slurm.conf's words).
  std::string describe() const;
  // Empty when the request respects every limit (the partition's and accounting's), else which
  // one it breaks ("asks for 4 nodes, MaxNodes=2").
  std::string violation(const SlurmRequest &r) const;
};

// ---- a job's QOS and association records, as plain data ----------------------------------------

// The resources whose TRES limits bound a configuration's request.
enum class Tres { cpu, mem, node, gpu };
inline constexpr std::size_t kTresCount = 4;
inline constexpr std::array<Tres, kTresCount> kAllTres = {Tres::cpu, Tres::mem, Tres::node,
                                                          Tres::gpu};
// Slurm's TRES names: "cpu", "mem", "node", "gres/gpu".
const char *tres_name(Tres r);

// One TRES limit per resource, memory in MB.  nullopt: not set (Slurm's INFINITE64 or NO_VAL64,
// a TRES the cluster does not track); 0 is no limit either, as for slurmctld.
struct TresLimits {
  std::array<std::optional<std::uint64_t>, kTresCount> value{};
  std::optional<std::uint64_t> &operator[](Tres r) { return value[static_cast<std::size_t>(r)]; }
  const std::optional<std::uint64_t> &operator[](Tres r) const {
    return value[static_cast<std::size_t>(r)];
  }
};

// A QOS's limits on one job (sacctmgr's names).
struct QosLimits {
  std::string name;  // QOS names are unique: the same name is the same QOS
  // Flags=OverPartQOS: its limits come before those of the partition's QOS.
  bool over_part_qos = false;
  // LimitFactor, which scales association limits; nullopt: none (Slurm's INFINITE).
  std::optional<double> limit_factor;
  TresLimits max_per_job;      // MaxTRESPerJob
  TresLimits max_per_node;     // MaxTRESPerNode
  TresLimits grp;              // GrpTRES
  TresLimits max_per_user;     // MaxTRESPerUser
  TresLimits max_per_account;  // MaxTRESPerAccount
  TresLimits min_per_job;      // MinTRESPerJob
};

// An association's limits on one job.
struct AssocLimits {
  std::string user;         // empty: an account's association (no user)
  std::string account;      // empty: unknown
  TresLimits max_per_job;   // MaxTRES
  TresLimits max_per_node;  // MaxTRESPerNode
  TresLimits grp;           // GrpTRES
};

// What accounting knows of one job.
struct JobAccounting {
  // The job's QOS (asked for, or its association's default) and its partition's QOS.
  std::optional<QosLimits> job_qos, partition_qos;
  // The job's association first, then each parent up to the root account.
  std::vector<AssocLimits> associations;
};

// The limits acct_policy.c applies to one job, reduced to bounds on the job's nodes, CPUs, memory
// and GPUs.  For each resource:
//  - the QOSes in order: the partition's QOS before the job's, unless the job's has OverPartQOS
//    (one QOS when both are the same);
//  - for each kind of QOS limit (MaxTRESPerJob, MaxTRESPerNode, GrpTRES) the first QOS that sets
//    it decides it; MaxTRESPerUser and MaxTRESPerAccount of every QOS bound one job too (a job
//    cannot exceed them), and so does MinTRESPerJob from below (the largest wins);
//  - where no QOS sets MaxTRESPerJob, the association's MaxTRES; where none sets MaxTRESPerNode,
//    its MaxTRESPerNode; where none sets GrpTRES, the GrpTRES of the association and of every
//    account above it -- each scaled by the LimitFactor of the first QOS that has one (> 0),
//    rounded down (a limit scaled to 0, or beyond 2^64, is none);
//  - the tightest bound wins; on a tie, the one named first above.
// `text` names the binding limits, grouped by where they come from, in the order max per job,
// max per node, min per job, and cpu, mem, node, gres/gpu within each:
//   "QOS small: MaxTRESPerJob=cpu=4,node=2; association of user u, account a: GrpTRES=mem=2000M"
// It names every binding bound, including the two no field holds (MaxTRESPerNode=node,
// MinTRESPerJob=gres/gpu).  Empty when there is none.
AccountingLimits accounting_limits(const JobAccounting &job);

}  // namespace autotune
