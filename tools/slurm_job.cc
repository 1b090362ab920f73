#include "slurm_job.hpp"

#include <string>

#include <slurm/slurm_errno.h>

#include "autotune/error.hpp"

namespace autotune {

SlurmJob::SlurmJob(std::uint32_t id) {
  if (slurm_load_job(&msg_, id, SHOW_DETAIL) != SLURM_SUCCESS || !msg_ || msg_->record_count < 1) {
    const int e = slurm_get_errno();
    if (msg_) slurm_free_job_info_msg(msg_);
    msg_ = nullptr;
    throw Error(Errc::not_found, "Slurm does not know job " + std::to_string(id) + " (" + slurm_strerror(e) + ")");
  }
}

SlurmJob::~SlurmJob() {
  if (msg_) slurm_free_job_info_msg(msg_);
}

}  // namespace autotune
