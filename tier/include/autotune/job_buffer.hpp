// Burst buffers of Slurm jobs on the node's storage tiers (autotune-bb, etc/burst_buffer.lua).
//
// Link: tier/libautotune_tier.la, tier/libautotune_tier_conf.la, common/libautotune_common.la.
//
// A job's buffer is a tier store of its own: on every tier of autotune.conf where the job has a
// share, the directory <Tier Path>/job.<JOBID> (owned by the job's uid and gid, mode 0700) holds
// that tier's part of the store; the pmem tier's pool is sized to the job's pmem share.  The
// registry of buffers is trusted state under <StateDir>/bb/: one record per job (job.<JOBID>,
// root-owned, 0644) saying who owns it and how much of each tier it may use, so the job's own
// files never decide its size or owner.  Shares are admitted against the tiers' capacities
// (the sum of all buffers' shares on a tier never exceeds the tier's Capacity).
//
// Who calls what:
//   slurmctld's burst_buffer.lua (as root)  create, destroy   through `autotune-bb`
//   the job (as its user)                   open_job_buffer() -> TierStore
// Creating and destroying need root (chown, the registry); opening a buffer must be done as its
// owner, never as root, so that every file in it belongs to the job's user.
//
// Thread safety: a JobBuffers object is immutable after construction; its functions may be
// called from several threads and processes (the registry is serialised by an flock).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autotune/tier.hpp"
#include "autotune/tier_conf.hpp"

namespace autotune {

struct JobBufferShare {
  std::string tier;
  std::uint64_t bytes = 0;
};

struct JobBuffer {
  std::uint32_t job = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  PlacementPolicy placement = PlacementPolicy::automatic;
  std::int64_t created_ns = 0;
  std::vector<JobBufferShare> shares;  // tiers with a non-zero share, in autotune.conf order
  std::uint64_t capacity() const;
  std::uint64_t share_of(const std::string &tier) const;
};

struct JobBufferRequest {
  std::uint32_t job = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::uint64_t capacity = 0;          // the whole buffer, > 0
  std::optional<std::uint64_t> pmem;   // the pmem tier's share (default: see create())
  std::vector<JobBufferShare> tiers;   // explicit shares by tier name
  std::optional<PlacementPolicy> placement;  // default: TierPlacement of autotune.conf
};

// Per tier: its capacity and how much of it buffers have been granted.
struct TierCommitment {
  std::string tier;
  std::uint64_t capacity = 0;
  std::uint64_t committed = 0;
};

class JobBuffers {
 public:
  // Throws Error(invalid_argument) when `conf` has no Tier= line.
  explicit JobBuffers(TierSiteConf conf);

  // Grant and create job `req.job`'s buffer (root).  Shares: the explicit ones (`pmem`, `tiers`),
  // then the rest of `capacity` split over the other tiers in proportion to their capacities
  // (a pmem share is rounded down to 4K; the last tier takes the remainder).  Each share is 0 or at
  // least 1M.  Throws Error(invalid_argument) for an unknown tier, shares that exceed the
  // capacity, an existing buffer of another owner; Error(no_space) when a tier has not that much
  // left ("tier 'pmem': 3G requested, 1G of 4G left").  Creating an existing buffer with the same
  // owner returns it unchanged (a retried setup).
  JobBuffer create(const JobBufferRequest &req);
  // Remove the buffer's directories on every tier (without following symbolic links) and its
  // record.  Returns false when there was nothing to remove.
  bool destroy(std::uint32_t job);
  std::optional<JobBuffer> find(std::uint32_t job) const;
  std::vector<JobBuffer> list() const;
  std::vector<TierCommitment> commitments() const;

  // The options of the buffer's tier store (paths, capacities = shares, placement).
  TierStoreOptions store_options(const JobBuffer &b) const;
  std::string directory(const JobBuffer &b, const std::string &tier) const;
  const TierSiteConf &conf() const noexcept { return conf_; }
  std::string registry_dir() const;

 private:
  TierSiteConf conf_;
};

// The job id a tool or library inside a job should use: $AUTOTUNE_BB_JOB, else $SLURM_JOB_ID;
// 0 when neither is set.  Throws Error(invalid_argument) for a value that is not a job id.
std::uint32_t current_job_id();

// Open the store of job `job`'s buffer (0: current_job_id()) as its owner.  `conf_path` empty:
// default_conf_path().  Throws Error(not_found) when the job has no buffer, Error(permission)
// when the caller's uid is not the buffer's owner -- root included, since files root created
// there would lock the owner out.
TierStore open_job_buffer(std::uint32_t job = 0, const std::string &conf_path = "");

}  // namespace autotune
