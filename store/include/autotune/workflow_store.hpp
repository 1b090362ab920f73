// What the profile store keeps of workflows (schema 4): a workflow of an owner, its runs, and
// what each function of a run was given and measured.  Storage only: what a run is given and
// when a workflow converges are decided outside slurmctld (tools/workflow_plan.cc).
//
// Runs.  A run of a workflow is the set of jobs, one per function, submitted since the previous
// run was opened: the first job of a function that the open run has no job of yet joins it; a
// second job of a function the open run already has opens the next run (the open one is closed:
// it takes no more jobs, and ends when the jobs it has ended).  So a driver script or a workflow
// manager that runs the pipeline again and again needs no run identifier; runs of one workflow
// are expected one after the other, not interleaved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace autotune {

// One function of a workflow as job_submit needs it: its name, the functions it runs after, and
// its space (as --autotune-space; empty: the site's).
struct WorkflowFunctionDef {
  std::string name;
  std::vector<std::string> after;
  std::string space;
};
// The store's compact text of the functions (one line per function: name TAB after,after TAB
// space), read by job_submit without a JSON parser.
std::string format_workflow_functions(const std::vector<WorkflowFunctionDef> &fs);
std::vector<WorkflowFunctionDef> parse_workflow_functions(const std::string &text);

struct WorkflowRecord {
  std::int64_t id = 0;
  std::uint32_t owner = 0;
  std::string name;
  std::string definition;  // the workflow file as defined (JSON)
  std::vector<WorkflowFunctionDef> functions;
  double gamma = 0.5;
  int budget = 12;                 // runs
  std::string state = "tuning";    // tuning, converged
  std::string state_reason;
  std::optional<int> best_run;     // its seq
  std::optional<double> t_ref, c_ref;
  std::string proposal;            // the next run's configuration of each function, and why (below)
  double created = 0, updated = 0;
  const WorkflowFunctionDef *function(const std::string &name) const;
};

struct WorkflowRunRecord {
  std::int64_t id = 0, workflow_id = 0;
  int seq = 0;
  std::string state = "open";  // open (jobs join it), closed (a newer run opened), done, incomplete
  std::string proposal;        // the proposal the run was given (a copy of the workflow's at opening)
  double created = 0;
  std::optional<double> started, ended;
  std::optional<double> time_s, cost, score;  // critical path, sum of costs, the gamma score
  std::optional<double> span_s;               // first start to last end (queueing included)
  std::string tier = "{}";                    // bytes per medium of the data between stages
};

struct WorkflowFunctionRun {
  std::int64_t run_id = 0;
  std::string function;
  std::optional<std::int64_t> class_id;
  std::optional<int> trial_seq;
  std::optional<std::int64_t> job_id;
  std::string config;
  std::string status = "pending";  // pending, done, failed, timeout, cancelled
  std::optional<double> started, ended, time_s, cost;
  std::optional<double> predicted_time, predicted_cost;
  std::string reason;
};

struct WorkflowPlan {
  std::string state = "tuning";
  std::string state_reason;
  std::optional<int> best_run;
  std::optional<double> t_ref, c_ref;
  std::string proposal;
};

}  // namespace autotune

namespace autotune {

// One function's configuration in a run's proposal, and why.  A proposal is kept as text, one
// line per function (function TAB config TAB origin TAB predicted time TAB predicted cost TAB
// why; a prediction may be empty), so that job_submit reads it without a JSON parser.
struct WorkflowAssignment {
  std::string function, config, origin, why;
  std::optional<double> time, cost;
};
std::string format_workflow_proposal(const std::vector<WorkflowAssignment> &as);
// Malformed lines are Error(corrupt).
std::vector<WorkflowAssignment> parse_workflow_proposal(const std::string &text);

}  // namespace autotune
