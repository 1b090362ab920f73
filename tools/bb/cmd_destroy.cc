// autotune-bb destroy: remove a job's buffer and everything in it (slurm_bb_job_teardown, as root).
#include <unistd.h>

#include <cstdio>

#include "autotune/error.hpp"
#include "buffer.hpp"

namespace autotune::bb {

int cmd_destroy(const Invocation &in) {
  if (::geteuid() != 0) throw Error(Errc::permission, "destroy: must run as root");
  const std::uint32_t job = job_of(in);
  JobBuffers jb(tier_site(load_conf(in)));
  const bool had = jb.destroy(job);
  std::printf("job %u: %s\n", job, had ? "buffer destroyed" : "no buffer (nothing to do)");
  return 0;
}

}  // namespace autotune::bb
