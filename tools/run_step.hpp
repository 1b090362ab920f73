// Running one configuration of a training program as a Slurm job step, and leaving what it
// measured for ingest.  Used by autotune-run in both modes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotune/config.hpp"

namespace autotune {

// How a job runs its app when it has no configuration (a job without --autotune, or one
// job_submit/autotune could not tune: the tuner was unavailable, no free configuration, ...):
// on its own allocation, with every task the allocation has (SLURM_NTASKS; without -n, one per
// allocated CPU, SLURM_JOB_CPUS_PER_NODE), but at least two, since a libssp program needs a
// parameter server and a worker (on an allocation of one CPU the two share it: srun
// --overcommit); AUTOTUNE_PS parameter servers when the user set it, else one; the rest workers.
struct UntunedRanks {
  int ranks = 2;
  int servers = 1;
  bool overcommit = false;  // more ranks than the allocation's CPUs
  std::string why;          // how the numbers were found, for the user
};

// From the job's SLURM_NTASKS, SLURM_JOB_CPUS_PER_NODE (e.g. "2(x3),1") and AUTOTUNE_PS (each may
// be null or empty).  Values that do not parse are ignored (and said so in `why`).
UntunedRanks untuned_ranks(const char *ntasks, const char *cpus_per_node, const char *ps);

struct StepRequest {
  std::vector<std::string> app;              // program and arguments
  std::optional<Configuration> config;       // none: the allocation as it is (see `untuned`)
  std::optional<UntunedRanks> untuned;       // without a config: the ranks and roles to run
  std::optional<double> timeout_s;           // kill the step after this long
  std::string timeout_name = "--timeout";    // the option that set timeout_s, for messages
  std::vector<std::pair<std::string, std::string>> env;  // extra environment for the app
  std::vector<std::string> unset;            // environment variables removed for the step
  std::string name;                          // the step's name (srun --job-name), if any
  std::string label;                         // names the step's files (e.g. "1234" or "1234.3")
};

enum class StepStatus { ok, failed, timeout };

struct StepOutcome {
  StepStatus status = StepStatus::failed;
  int exit_code = 1;      // what autotune-run itself returns
  int signal = 0;         // the signal that ended srun, if any
  std::string reason;     // why it failed, for the user and the store
  bool cancelled = false;  // autotune-run itself got SIGINT/SIGTERM (the job is being cancelled)
  double wall_s = 0;
  // The app's report: what libssp (or any program) wrote to AUTOTUNE_RESULT, else the ranks'
  // reports of a helper merged (rank_report.hpp); none when the app reported nothing.
  std::optional<nlohmann::json> app_result;
  std::string summary() const;
};

const char *to_string(StepStatus s);

// Whether this process is a task of a job step (srun autotune-run ...), not the batch script.
bool inside_step();

// How long srun may wait for Slurm to create the app's step from inside a step (srun
// --immediate): AUTOTUNE_STEP_WAIT seconds (1..86400), default kStepWaitS.  Throws
// Error(invalid_argument) naming the variable for another value.
inline constexpr int kStepWaitS = 60;
int step_wait_s();

// srun --mpi=pmix ... APP ARGS for the request (as run_step would run it).
std::vector<std::string> srun_command(const StepRequest &req);

// Run the step; forwards SIGINT/SIGTERM to it; never throws for the app's own failures.
StepOutcome run_step(const StepRequest &req);

// The document left for ingest: status, exit code, signal, reason, wall time, the claimed
// configuration and libssp's measurements.
nlohmann::json outcome_json(const StepOutcome &out, const StepRequest &req);

// Write `doc` as <incoming>/<uid>/<name>.json (atomically: a temporary file, then rename), where
// <incoming> is $AUTOTUNE_INCOMING or StateDir/incoming of autotune.conf and <uid>/ the calling
// user's own directory there (made when missing; a new <uid>.XXXXXX/ when another user took the
// name).  Throws when the directory holds more than the limits of result.hpp.  Returns the path.
std::string leave_result(const nlohmann::json &doc, const std::string &name);

}  // namespace autotune
