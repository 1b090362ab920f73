// Slurm's record of one job (slurm_load_job), owned: the tools that ask slurmctld about a job
// (`autotune ingest`, `autotune annotate`, autotune-run's steps mode) go through this.
//
// Thread safety: a value owned by one thread.
#pragma once

#include <cstdint>

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

}  // namespace autotune
