// autotune-run's steps mode: tuning inside the job's own allocation.
//
// 1. The allocation: node count (SLURM_JOB_NUM_NODES), the CPUs of its smallest node
//    (SLURM_JOB_CPUS_PER_NODE), memory per node (SLURM_MEM_PER_NODE, SLURM_MEM_PER_CPU x CPUs, or
//    the memory Slurm's record of the job says it holds, e.g. with --mem=0), GPUs per node
//    (SLURM_GPUS_ON_NODE).
// 2. The class's problem and history: `autotune export CLASS --json` (the setuid command that
//    gives users their own classes), then the policy library's AllocationSearch (steps.hpp): the candidates
//    that fit the allocation, warm-started from the history.
// 3. Trials: configurations given with --try first, then the engine's proposals; an adjusted
//    configuration (adjust.hpp, thresholds from autotune.conf) right after a trial that became the
//    best so far.  Each is one job step, `srun --mpi=pmix -N -n -c --mem-per-cpu ...` named
//    autotune-trial-N, with AUTOTUNE_PROFILE_BATCHES=K and AUTOTUNE_PROFILE_ONLY=1: the app
//    measures K batches after its warm-up, writes its result and exits.  A step that fails or
//    runs past the step timeout is a failed trial.  Each trial is left for ingest as
//    StateDir/incoming/<jobid>.<n>.json ("step": n), progress goes to stderr.
// 4. When the engine stops, with --confirm N its N best configurations are profiled once more
//    and the winner is the one with the lowest mean score (the best of several noisy profiles is
//    biased towards a lucky one; bench/README.md has what it did on the local cluster).
// 5. Then (the class's budget, every fitting configuration tried, or its
//    improvement / expected-improvement rules), the end of the search is left as
//    <jobid>.search.json (ingest converges the class on the winner), the job shrinks to the
//    winner's node count (`scontrol update JobId=.. NumNodes=..`, then the environment fixed up
//    from the slurm_job_<id>_resize.sh Slurm writes, as its documentation says to source), the
//    AdminComment says so (`autotune annotate`, before the shrink and, when Slurm accepts updates
//    of the resized job, after it with the released nodes), and the app runs in full on the
//    winner.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace autotune {

struct StepsOptions {
  std::vector<std::string> app;            // program and arguments
  std::string cls;                         // the class (AUTOTUNE_CLASS)
  std::string job;                         // SLURM_JOB_ID
  int probe_batches = 20;                  // K
  std::optional<double> step_timeout_s;    // per profiling step; default from K (see --help)
  std::optional<double> timeout_s;         // the full run
  std::vector<std::string> try_configs;    // --try, in order
  int confirm = 0;                         // --confirm: finalists profiled once more
  bool shrink = true;
  bool dry_run = false;
};

// Runs the whole of steps mode; returns autotune-run's exit status.
int run_steps(const StepsOptions &o);

// The default timeout of a profiling step before any trial succeeded: 60 s + 3 s per batch.
double default_step_timeout(int probe_batches);

}  // namespace autotune
