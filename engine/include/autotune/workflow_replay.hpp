// Offline replay of workflow searches on a table of measured configurations (replay.hpp): each
// function of the workflow is one problem of the table, and a run of the workflow is answered
// from the table, function by function.
//
// The score of a replayed run uses a fixed reference, the same for every strategy and seed:
// T_ref = the critical path with every function on its fastest configuration, C_ref = the sum of
// every function's cheapest cost.  1.0 is then a lower bound no run reaches unless one
// configuration of each function is both the fastest and the cheapest.
//
// The rates (cost per second) of the candidates are the table's cost / time, a property of the
// configuration (price x nodes) known before it runs; a table where a row has no time or cost
// (a failed run) gives its function no rates, and the stage strategy then models cost too.
//
// The true optimum (workflow_optimum): the score is non-decreasing in every function's time and
// cost, so some optimum takes every function from its Pareto front of (time, cost) over the rows
// that succeeded.  For a workflow whose stages are exact (fork-join, chains) it is found stage by
// stage (each stage's threshold search, as in workflow_search.hpp, on the true values); for other
// DAGs by exhaustive search over the product of the Pareto fronts with branch and bound (a lower
// bound from the fastest and cheapest of the functions not yet assigned).  Both are exact.
//
// Thread safety: pure.
#pragma once

#include <cstddef>
#include <vector>

#include "autotune/replay.hpp"
#include "autotune/workflow.hpp"
#include "autotune/workflow_search.hpp"

namespace autotune {

// The largest product of Pareto front sizes the exhaustive search accepts.
inline constexpr double kMaxOptimumCombinations = 1e9;

struct WorkflowReplay {
  Workflow workflow;
  std::vector<const ReplayProblem *> problems;  // per function
  std::vector<FunctionCandidates> functions;    // per function: the problem's candidates, rates
  Reference reference;                          // as above
};

// Precondition: every function's problem is in `problems` (Workflow::parse with the table's
// problem names); throws Error(invalid_argument) otherwise.  `problems` must outlive the result.
WorkflowReplay make_workflow_replay(const Workflow &w, const std::vector<ReplayProblem> &problems);

struct WorkflowOptimum {
  std::vector<std::size_t> choice;  // per function: a candidate (row of its problem)
  double score = 0, time = 0, cost = 0;
  bool stage_by_stage = false;  // false: exhaustive over the Pareto fronts
  double combinations = 0;      // the product of the Pareto fronts' sizes
};
// Throws Error(invalid_argument) when the exhaustive search would exceed kMaxOptimumCombinations.
WorkflowOptimum workflow_optimum(const WorkflowReplay &r, double gamma);

// The score of a run where function f runs on choice[f]; NaN when any row failed.
double workflow_replay_score(const WorkflowReplay &r, const std::vector<std::size_t> &choice,
                             double gamma);

// One search: proposals answered from the table until the search stops.  best_ratio holds the
// best score so far / optimum.score after each run; `tried` the run numbers.
ReplayRun replay_workflow_once(const WorkflowReplay &r, const WorkflowOptimum &optimum,
                               const WorkflowSearchOptions &options);

}  // namespace autotune
