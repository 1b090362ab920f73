// job_submit/autotune: validates the --autotune options of a job and records what it did.
//
// Runs inside slurmctld under its locks: every call is bounded, touches no network and no file it
// does not own, and lets no exception escape (libautotune's C API is the firewall).  A job without
// --autotune is never touched.
#include <cstdio>
#include <string>

#include "config.h"
extern "C" {
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
}

#include "autotune/autotune.h"
#include "slurm_log.hpp"

extern "C" const char plugin_name[] = "autotune job_submit plugin";
extern "C" const char plugin_type[] = "job_submit/autotune";
extern "C" const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern "C" int init(void) {
  at_set_log_sink(autotune_plugin::slurm_log_sink);
  debug("%s: loaded", plugin_type);
  return SLURM_SUCCESS;
}

extern "C" int fini(void) {
  at_set_log_sink(nullptr);
  return SLURM_SUCCESS;
}

namespace {

// Append `note` to the job's AdminComment, keeping what an administrator put there.
void note_admin_comment(job_desc_msg_t *job_desc, const std::string &note) {
  if (job_desc->admin_comment && job_desc->admin_comment[0]) {
    xstrfmtcat(job_desc->admin_comment, "; %s", note.c_str());
  } else {
    xfree(job_desc->admin_comment);
    job_desc->admin_comment = xstrdup(note.c_str());
  }
}

}  // namespace

extern "C" int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg) {
  try {
    const char *cls =
        at_env_get(job_desc->spank_job_env, job_desc->spank_job_env_size, "AUTOTUNE_CLASS");
    if (!cls) return SLURM_SUCCESS;  // not an autotune job: untouched

    char err[512];
    if (at_class_name_check(cls, err, sizeof err) != AT_OK) {
      verbose("%s: uid %u: rejected: %s", plugin_type, submit_uid, err);
      if (err_msg) *err_msg = xstrdup(err);
      return SLURM_ERROR;
    }
    note_admin_comment(job_desc, std::string("autotune: class=") + cls);
    debug("%s: uid %u: class=%s", plugin_type, submit_uid, cls);
    return SLURM_SUCCESS;
  } catch (...) {
    // Nothing above should throw; if it does, the job goes through unchanged.
    error("%s: internal error; job accepted unchanged", plugin_type);
    return SLURM_SUCCESS;
  }
}

extern "C" int job_modify(job_desc_msg_t * /*job_desc*/, job_record_t * /*job_ptr*/,
                          uint32_t /*modify_uid*/) {
  return SLURM_SUCCESS;
}
