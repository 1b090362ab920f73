// spank_autotune.so: the --autotune* options of sbatch, salloc and srun.
//
// Allocator context (sbatch, salloc, and srun when it creates the allocation): each option's
// value goes into the job's SPANK environment (spank_job_control_setenv) as AUTOTUNE_<NAME>,
// where job_submit/autotune reads and validates it inside slurmctld.  This plugin only carries
// values: validation is the job_submit plugin's, so that nothing depends on the client.
//
// Remote context (slurmstepd): the job's AUTOTUNE_* values (the options, and the configuration
// job_submit/autotune chose, which arrive as SLURM_SPANK_AUTOTUNE_*) are put into each task's
// environment under their plain names, so programs and autotune-run find them.
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

// One --autotune* option: its name, argument, help, and the AUTOTUNE_* variable it sets.
struct Opt {
  const char *name, *arg, *help, *var;
};
struct OptValue {
  std::string value;
  bool set = false;
};

const Opt g_opts[] = {
    {"autotune", "CLASS",
     "Tune this job's resources as a member of tuning class CLASS (1-64 characters from "
     "A-Z a-z 0-9 . _ -): Bayesian optimization chooses the configuration of each job of the "
     "class until the search stops, then every job runs the winner. See autotune(1).",
     "AUTOTUNE_CLASS"},
    {"autotune-gamma", "G",
     "Trade-off of the class's objective, 0..1: 0 = fastest, 1 = cheapest (default from autotune.conf).",
     "AUTOTUNE_GAMMA"},
    {"autotune-budget", "N", "Most trials the class may run before it settles on the best (default from autotune.conf).",
     "AUTOTUNE_BUDGET"},
    {"autotune-mode", "jobs|steps",
     "jobs: each job is one trial; steps: the job tunes itself inside its allocation with short job steps.",
     "AUTOTUNE_MODE"},
    {"autotune-probe-batches", "K", "Batches each trial profiles in steps mode (default from autotune.conf).",
     "AUTOTUNE_PROBE_BATCHES"},
    {"autotune-metric", "time|throughput",
     "What a trial is measured by, fixed when the class is created: time = the job's whole run (any program), "
     "throughput = the samples per second the program reports (default: throughput when the program reports it, "
     "else time).",
     "AUTOTUNE_METRIC"},
    {"autotune-workflow", "NAME",
     "This job runs function CLASS (--autotune) of workflow NAME, defined with `autotune workflow define`: "
     "the workflow's stages are tuned jointly, run by run. See autotune-workflow(1).",
     "AUTOTUNE_WORKFLOW"},
    {"autotune-space", "SPEC",
     "Limits of the search per dimension, e.g. workers=1-8,ps=1-2,cpus-per-worker=1-2,mem-per-worker=256M-2G "
     "(within the administrator's limits).",
     "AUTOTUNE_SPACE"},
};
constexpr int kNumOpts = sizeof(g_opts) / sizeof(g_opts[0]);
OptValue g_values[kNumOpts];

// The variables job_submit/autotune adds for the job, copied into each task's environment.
const char *const kJobVars[] = {"AUTOTUNE_CLASS",    "AUTOTUNE_CONFIG",        "AUTOTUNE_TRIAL",
                                "AUTOTUNE_PS",       "AUTOTUNE_WORKERS",       "AUTOTUNE_MODE",
                                "AUTOTUNE_INCOMING", "AUTOTUNE_PROBE_BATCHES", "AUTOTUNE_UNAVAILABLE",
                                "AUTOTUNE_WORKFLOW", "AUTOTUNE_RUN"};

int option_cb(int val, const char *optarg, int /*remote*/) {
  if (val < 0 || val >= kNumOpts) return ESPANK_BAD_ARG;
  g_values[val].value = optarg ? optarg : "";
  g_values[val].set = true;
  return ESPANK_SUCCESS;
}

struct spank_option g_table[kNumOpts + 1];

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int /*ac*/, char ** /*av*/) {
  const spank_context_t ctx = spank_context();
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return ESPANK_SUCCESS;
  for (int i = 0; i < kNumOpts; ++i) {
    g_table[i] = {const_cast<char *>(g_opts[i].name), const_cast<char *>(g_opts[i].arg),
                  const_cast<char *>(g_opts[i].help), 1, i, option_cb};
    const spank_err_t rc = spank_option_register(sp, &g_table[i]);
    if (rc != ESPANK_SUCCESS) {
      slurm_error("spank_autotune: cannot register --%s: %s", g_opts[i].name, spank_strerror(rc));
      return rc;
    }
  }
  return ESPANK_SUCCESS;
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char ** /*av*/) {
  const spank_context_t ctx = spank_context();
  for (int i = 0; i < kNumOpts; ++i) {
    const Opt &o = g_opts[i];
    const OptValue &v = g_values[i];
    if (!v.set) continue;
    spank_err_t rc = static_cast<spank_err_t>(ESPANK_SUCCESS);
    if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR) rc = spank_job_control_setenv(sp, o.var, v.value.c_str(), 1);
    else if (ctx == S_CTX_REMOTE) rc = spank_setenv(sp, o.var, v.value.c_str(), 1);
    if (rc != ESPANK_SUCCESS) {
      slurm_error("spank_autotune: cannot pass --%s to the job: %s", o.name, spank_strerror(rc));
      return rc;
    }
  }
  return ESPANK_SUCCESS;
}

// Each task: AUTOTUNE_X from the job's SLURM_SPANK_AUTOTUNE_X, unless already set.
extern "C" int slurm_spank_task_init(spank_t sp, int /*ac*/, char ** /*av*/) {
  char buf[1024];
  for (const char *var : kJobVars) {
    if (spank_getenv(sp, var, buf, sizeof buf) == ESPANK_SUCCESS) continue;
    const std::string from = std::string("SLURM_SPANK_") + var;
    if (spank_getenv(sp, from.c_str(), buf, sizeof buf) == ESPANK_SUCCESS) spank_setenv(sp, var, buf, 0);
  }
  return ESPANK_SUCCESS;
}
