// Slurm's record of one job (slurm_load_job), owned: the tools that ask slurmctld about a job
// (`autotune ingest`, `autotune annotate`, autotune-run's steps mode) go through this.
//
// Thread safety: a value owned by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <slurm/slurm.h>

namespace autotune {

class SlurmJob {
 public:
  // Loads job `id` with SHOW_DETAIL.  Throws Error(not_found) "Slurm does not know job ID
  // (REASON)" when slurmctld cannot be reached or does not know it.
  explicit SlurmJob(std::uint32_t id);
  ~SlurmJob();
  SlurmJob(const SlurmJob &) = delete;
  SlurmJob &operator=(const SlurmJob &) = delete;

  const slurm_job_info_t &info() const { return msg_->job_array[0]; }

 private:
  job_info_msg_t *msg_ = nullptr;
};

// The node names of a Slurm host list ("n[1-3],m2" -> n1 n2 n3 m2), at most `max` of them
// (the rest are dropped); empty for an empty or malformed list.
std::vector<std::string> expand_hostlist(const std::string &hostlist, std::size_t max = 65536);

}  // namespace autotune
