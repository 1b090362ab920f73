// spank_autotune.so: the --autotune* options of sbatch, salloc and srun.
//
// In the allocator context (sbatch/salloc, and srun when it creates the allocation) the option
// value goes into the job's SPANK environment (spank_job_control_setenv), where job_submit/autotune
// reads and validates it inside slurmctld.  In the remote context (slurmstepd) it is put into the
// task environment as AUTOTUNE_CLASS.  Validation is the job_submit plugin's job: this one only
// carries the value, so that a user without the plugin loaded cannot bypass anything.
#include <cstring>
#include <string>

extern "C" {
#include <slurm/spank.h>
}

// SPANK_PLUGIN() gives these internal linkage in C++; spell them out (see docs: C++ plugins).
extern "C" const char plugin_name[] = "autotune";
extern "C" const char plugin_type[] = "spank";
extern "C" const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern "C" const unsigned int spank_plugin_version = 1;

namespace {

constexpr const char kClassVar[] = "AUTOTUNE_CLASS";

std::string g_class;
bool g_class_set = false;

int class_cb(int /*val*/, const char *optarg, int /*remote*/) {
  g_class = optarg ? optarg : "";
  g_class_set = true;
  return ESPANK_SUCCESS;
}

struct spank_option g_options[] = {
    {const_cast<char *>("autotune"), const_cast<char *>("CLASS"),
     const_cast<char *>("Tune this job's resources as a member of tuning class CLASS "
                        "(1-64 characters from A-Z a-z 0-9 . _ -); see autotune(1)."),
     1, 0, class_cb},
    SPANK_OPTIONS_TABLE_END};

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int /*ac*/, char ** /*av*/) {
  const spank_context_t ctx = spank_context();
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return ESPANK_SUCCESS;
  for (struct spank_option *o = g_options; o->name; ++o) {
    const spank_err_t rc = spank_option_register(sp, o);
    if (rc != ESPANK_SUCCESS) {
      slurm_error("spank_autotune: cannot register --%s: %s", o->name, spank_strerror(rc));
      return rc;
    }
  }
  return ESPANK_SUCCESS;
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char ** /*av*/) {
  if (!g_class_set) return ESPANK_SUCCESS;
  switch (spank_context()) {
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
      return spank_job_control_setenv(sp, kClassVar, g_class.c_str(), 1);
    case S_CTX_REMOTE:
      return spank_setenv(sp, kClassVar, g_class.c_str(), 1);
    default:
      return ESPANK_SUCCESS;
  }
}
