// prep/autotune: records the end of every autotune job from inside slurmctld, with no script.
//
// slurm.conf: PrEpPlugins=prep/script,prep/autotune (prep/script keeps the site's Prolog= and
// Epilog= scripts).  slurmctld calls prep_p_epilog_slurmctld() for every job that ends, under its
// job write lock.  A job without an autotune record in its AdminComment returns at once; for an
// autotune job the plugin copies what slurmctld knows (state, start and end, nodes, record) into
// one small file of StateDir/spool and returns (at_prep_job_end: microseconds, no store, no
// process).  A background thread of libautotune makes the file durable and runs
// `autotune ingest --spool` outside the locks, which records the trial and refits the class.
// The plugin never holds, fails or requeues a job: it always returns success, never asks for the
// prolog of any job (so no job waits in CONFIGURING for it), and is quiet in slurmd.
#include <cstring>

#include "config.h"
extern "C" {
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/read_config.h"
#include "src/slurmctld/slurmctld.h"
}

#include "autotune/autotune.h"
#include "slurm_log.hpp"

extern "C" const char plugin_name[] = "autotune job end recorder";
extern "C" const char plugin_type[] = "prep/autotune";
extern "C" const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#ifndef AT_INGEST_PROGRAM
#error "AT_INGEST_PROGRAM (the installed autotune command) must be defined"
#endif

namespace {
bool g_ctld = false;
// The call types of src/common/prep.h (prep_call_type_t).
enum { kPrepRegisterCallbacks = 0, kPrepProlog, kPrepEpilog, kPrepPrologSlurmctld, kPrepEpilogSlurmctld };
}  // namespace

extern "C" int init(void) {
  g_ctld = running_in_slurmctld();
  if (!g_ctld) return SLURM_SUCCESS;
  at_set_log_sink(autotune_plugin::slurm_log_sink);
  char *path = get_extra_conf_path(const_cast<char *>("autotune.conf"));
  char err[512];
  if (at_prep_configure(path, AT_INGEST_PROGRAM, 30, err, sizeof err) != AT_OK)
    error("%s: %s", plugin_type, err);
  else
    debug("%s: loaded (%s; ingest by %s)", plugin_type, path, AT_INGEST_PROGRAM);
  xfree(path);
  return SLURM_SUCCESS;
}

extern "C" int fini(void) {
  if (g_ctld) at_prep_shutdown();
  return SLURM_SUCCESS;
}

extern "C" void prep_p_register_callbacks(void *) {}

extern "C" int prep_p_prolog(void *, void *) { return SLURM_SUCCESS; }

extern "C" int prep_p_epilog(void *, void *) { return SLURM_SUCCESS; }

extern "C" int prep_p_prolog_slurmctld(job_record_t *, bool *async) {
  *async = false;
  return SLURM_SUCCESS;
}

extern "C" int prep_p_epilog_slurmctld(job_record_t *job_ptr, bool *async) {
  *async = false;
  if (!g_ctld || !job_ptr || !at_prep_is_tuned(job_ptr->admin_comment)) return SLURM_SUCCESS;
  const uint32_t st = job_ptr->job_state;
  at_job_end e;
  std::memset(&e, 0, sizeof e);
  e.job_id = job_ptr->job_id;
  e.uid = job_ptr->user_id;
  e.state = job_state_string(st & JOB_STATE_BASE);
  e.requeued = (st & JOB_STATE_BASE) == JOB_PENDING || (st & (JOB_REQUEUE | JOB_REQUEUE_HOLD));
  e.start = static_cast<long long>(job_ptr->start_time);
  e.end = static_cast<long long>(job_ptr->end_time);
  e.exit_code = job_ptr->exit_code;
  e.nodes = job_ptr->nodes;
  e.admin_comment = job_ptr->admin_comment;
  e.submit = job_ptr->details ? static_cast<long long>(job_ptr->details->submit_time) : 0;
  char err[512];
  if (at_prep_job_end(&e, err, sizeof err) != AT_OK) error("%s: %s", plugin_type, err);
  return SLURM_SUCCESS;
}

// Only the epilog of slurmctld is needed: asking for no prolog keeps every job out of
// CONFIGURING on our account.
extern "C" void prep_p_required(int type, bool *required) {
  *required = g_ctld && type == kPrepEpilogSlurmctld;
}
