#include "slurm_job.hpp"

#include <cstdlib>
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

std::vector<std::string> expand_hostlist(const std::string &hostlist, std::size_t max) {
  std::vector<std::string> out;
  if (hostlist.empty()) return out;
  hostlist_t hl = slurm_hostlist_create(hostlist.c_str());
  if (!hl) return out;
  while (char *h = slurm_hostlist_shift(hl)) {
    if (out.size() < max) out.emplace_back(h);
    std::free(h);
  }
  slurm_hostlist_destroy(hl);
  return out;
}

}  // namespace autotune
