// The search of a workflow's configurations: given the runs so far, the configuration of every
// function for the next run.  One trial is one run of the whole workflow (workflow.hpp).
//
// Score of a run (objective.hpp): (1 - gamma) * T / T_ref + gamma * C / C_ref with T the run's
// critical path and C the sum of its functions' costs; a run in which any function failed has
// no score.  T_ref and C_ref come from WorkflowSearchOptions::reference, else from the first run
// that succeeded (objective.hpp's rule: a score never moves when later runs are added).
//
// Strategies:
//  stage     Each function has its own Gaussian processes (gp.hpp) of log time and of log cost
//            (acquisition ei models cost on its own even when the rates are known: the cost
//            surface is much flatter than the time surface, and rate x a model of time carries the
//            time model's errors into every cost; lcb and thompson use cost = rate x time when
//            the rates are known).  The first
//            `initial_runs` runs take each function's initial design (design.hpp).  Afterwards
//            (acquisition ei, the default) the base is the best combination of the configurations
//            measured so far: each stage chosen exactly for its term of the score,
//            (1 - gamma) max_f t_f / T_ref + gamma sum_f c_f / C_ref, by trying each measured time
//            as the stage's time T and giving every function its cheapest measured configuration
//            within T; for a DAG that is not fork-join (Stages::exact false) then refined by
//            coordinate descent on the run's critical path.  Every function then takes the
//            candidate of largest expected improvement of the whole run's score with the other
//            functions at the base: the score as a function of one function's time t is
//            a max(t + L, C0) + b rate t (L the longest path through it without its own time, C0
//            the critical path without it), so a function off the critical path gains nothing
//            from being faster than its slack and its expected improvement comes from cost.  The
//            expectation is taken with log time and log cost comonotone (for one configuration
//            cost is rate x time), by quadrature over 41 points, and weighted by the candidate's
//            probability of success (a GP classifier on the function's successes and failures,
//            as propose()'s constraint model; a failed candidate is never proposed again: a
//            failure anywhere leaves the run without a score).  All functions
//            explore in the same run (their measurements do not depend on each other).  A choice
//            that repeats a past run moves the function whose best unmeasured candidate has the
//            largest expected improvement; the ei rule of stopping.hpp applies to the sum of the
//            functions' largest expected improvements.  The last run of the budget is the best
//            combination of measured configurations when it has not run as a whole and beats the
//            best run (exploit_last): the functions explore in the same runs, so their best
//            configurations may have been measured in different runs.  Before that, a function
//            whose choice is already measured (its base: nothing unmeasured is expected to beat
//            it) takes its unmeasured candidate of largest expected improvement (fresh): the
//            run's score may suffer, but every function learns from every run, and the last run
//            recombines the best measurements.
//            Acquisitions lcb and thompson (for comparison) instead choose each stage jointly
//            from optimistic times, exp(mu - kappa sd) or one posterior draw, with the same
//            exact stage solution; a choice that repeats a past run is retried with kappa
//            doubled (up to 4 times), and one that still repeats stops the search (rule ei).
//  function  Each function tuned alone by propose() (optimizer.hpp) with the workflow's gamma on
//            its own score, normalized by its own first measurement.
//  flat      One propose() over the joint configuration (every function's encoded features side
//            by side), on a pool of the runs so far plus `flat_pool` seeded random joint
//            configurations (the joint space is too large to enumerate).
//  random    Each function's candidate uniformly at random.
// Stopping (all strategies): the budget in runs (options.stop.budget) and the improvement rule of
// stopping.hpp over the runs' scores; the ei rule as described for stage; "exhausted" when
// every configuration of every function has been measured.
//
// Cost of one proposal: two GP fits per function (one for lcb and thompson with rates) on its
// measurements, O(n) per function for the expected improvements of its n candidates, and O(m n log
// n) for a stage of m functions (bench/README.md, "Workflows", has the time of one proposal).
//
// Thread safety: pure; deterministic for a seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "autotune/candidates.hpp"
#include "autotune/design.hpp"
#include "autotune/objective.hpp"
#include "autotune/stopping.hpp"
#include "autotune/workflow.hpp"

namespace autotune {

// What one function may run on.
struct FunctionCandidates {
  CandidateSet candidates;  // e.g. CandidateSet::from_candidates(enumerate(space, inventory))
  // Optional: the cost of one second on each candidate (billing rate x nodes; Candidate's
  // billing_rate), so that cost = rate x time.  Empty: the cost is modelled from measurements.
  std::vector<double> rate;
};

// One function's measurement in one run.
struct FunctionMeasurement {
  std::size_t candidate = 0;  // index into its FunctionCandidates::candidates
  bool failed = false;        // failed or timed out
  double time = 0;            // > 0 unless failed
  double cost = 0;            // > 0 unless failed
};

// One run of the workflow: one measurement per function, in the workflow's order.
struct WorkflowRun {
  std::vector<FunctionMeasurement> functions;
  bool ok() const;  // no function failed
};
// The run's time (critical path) and cost (sum).  Precondition: run.ok().
double workflow_run_time(const Workflow &w, const WorkflowRun &run);
double workflow_run_cost(const WorkflowRun &run);

struct WorkflowSearchOptions {
  WorkflowStrategy strategy = WorkflowStrategy::stage;
  std::uint64_t seed = 1;
  std::size_t initial_runs = 4;  // runs of the initial design (stage, function, flat)
  double kappa = 1.0;            // optimism of acquisitions lcb and thompson, in std. deviations
  // How the stage strategy chooses (see above): ei (the default), or the whole stage at once
  // from optimistic times: lcb (exp(mu - kappa sd)) or thompson (one draw from each function's
  // posterior, its spread scaled by kappa).
  enum class Acquisition { ei, lcb, thompson };
  Acquisition acquisition = Acquisition::ei;
  // ei: the expected improvement of the log score instead of the score (with the margin
  // engine.xi in standard deviations of the function's log time).
  bool log_ei = false;
  // ei: when the best combination of measured configurations has not run as a whole and beats
  // the best run by more than this fraction, the next run is that combination.  < 0: never.
  double exploit_margin = -1;
  // ei: the last run of the budget is that combination whenever it beats the best run.
  bool exploit_last = true;
  // ei: a function whose choice is already measured takes its unmeasured candidate of largest
  // expected improvement instead (its measurement in the run would teach nothing).
  bool fresh = true;
  std::size_t flat_pool = 1000;  // random joint configurations of the flat strategy's pool
  StoppingOptions stop;          // budget: runs of the whole workflow (Workflow::budget)
  // T_ref and C_ref of the workflow score; unset: the first run that succeeded.
  std::optional<Reference> reference;
  // The model options of the per-function GPs (gp, input_warping, linear_trend, xi) and of
  // propose() for the function and flat strategies; its strategy, seed, stop and budget are set
  // from the fields above, and its gamma is the workflow's, so propose()'s automatic choices
  // (design.hpp) follow the score it is given.  The stage strategy's models of time and cost have
  // the linear term only for linear_trend yes: the automatic choice is made for scores.
  EngineOptions engine;
  // Throws Error(invalid_argument) for initial_runs = 0, kappa < 0, flat_pool = 0, bad stop.
  void validate() const;
};

// The options of a workflow's search from the file: gamma is the file's, budget its budget,
// strategy its "search".
WorkflowSearchOptions workflow_search_options(const Workflow &w);

struct FunctionProposal {
  std::size_t candidate = 0;
  std::size_t stage = 0;
  // The model's prediction of this candidate (NaN when it has no model yet: initial design,
  // random): the mean and standard deviation of the time, and the mean cost.
  double time = std::numeric_limits<double>::quiet_NaN();
  double time_std = std::numeric_limits<double>::quiet_NaN();
  double cost = std::numeric_limits<double>::quiet_NaN();
  std::string reason;  // one line: why this candidate
};

struct WorkflowProposal {
  // One per function, in the workflow's order; empty when the search stopped.
  std::vector<FunctionProposal> functions;
  StopDecision stop;
  bool stopped() const { return stop.stopped(); }
  // The best run so far (index into runs) and its score, if any run succeeded.
  std::optional<std::size_t> best_run;
  double best_score = std::numeric_limits<double>::quiet_NaN();
  Reference reference;  // valid once a run succeeded or options.reference is set
  // The proposal's predicted run time (critical path of the predicted times), cost and score
  // (NaN without models for every function).
  double time = std::numeric_limits<double>::quiet_NaN();
  double cost = std::numeric_limits<double>::quiet_NaN();
  double score = std::numeric_limits<double>::quiet_NaN();
};

// The next run's configuration of every function.  `functions` and every run hold one entry per
// function of `w`, in its order.  Throws Error(invalid_argument) when the shapes disagree, a
// candidate index is out of range, a measurement of a successful function is not positive, or
// a rate is negative; never for a valid history.
WorkflowProposal propose_workflow(const Workflow &w,
                                  const std::vector<FunctionCandidates> &functions,
                                  const std::vector<WorkflowRun> &runs,
                                  const WorkflowSearchOptions &options);

}  // namespace autotune
