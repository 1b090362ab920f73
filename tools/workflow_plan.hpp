// Workflows on Slurm, outside slurmctld: what ingest does when a job of a workflow ended (the
// function's measurement, the run's totals once its last function ended) and the next run's
// proposal, which job_submit then only reads (workflow_store.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autotune/conf.hpp"
#include "autotune/store.hpp"
#include "autotune/workflow.hpp"

namespace autotune {

// The workflow as its file defined it (Workflow::parse of the stored definition).
Workflow workflow_of(const WorkflowRecord &wf);

// Its stages by name (cut_stages(), workflow.hpp): a function's stage is its longest chain of
// predecessors, so the functions of one stage run in parallel.
std::vector<std::vector<std::string>> workflow_stages(const WorkflowRecord &wf);
std::vector<std::vector<std::string>> workflow_stages(const Workflow &w);

// A run's time: the critical path of its functions' measured times (critical_path(),
// workflow.hpp).  nullopt when a function has no time.
std::optional<double> run_critical_path(const WorkflowRecord &wf, const std::vector<WorkflowFunctionRun> &measured);

// The workflow's next plan from its runs, by the workflow search (workflow_search.hpp, the
// strategy of the file's "search", stage by default; its first InitialTrials runs, of autotune.conf, take each function's initial design): the
// next run's configuration of every function with its prediction and why, or, once a stopping
// rule fired (the budget of runs, improvement, ei), converged on the best run.
WorkflowPlan plan_workflow(Store &store, const Conf &conf, const WorkflowRecord &wf);

// Ingest's part for a job of workflow `workflow` run `run_seq` whose trial of class `cls` was
// recorded as `trial`: the function's row, the bytes its burst buffer held per medium (added to
// the run's), and when the run is complete its totals and the next plan.  Returns the lines
// ingest logs.
std::vector<std::string> workflow_job_ended(Store &store, const Conf &conf, std::uint32_t uid,
                                            const std::string &workflow, int run_seq, const TrialRecord &trial,
                                            std::int64_t job_id, const std::map<std::string, double> &tier_bytes = {});

}  // namespace autotune
