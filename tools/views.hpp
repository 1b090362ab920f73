// What the commands show of a class, computed once from the store.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "autotune/export.hpp"
#include "autotune/store.hpp"

namespace autotune::cli {

struct ClassView {
  ClassRecord cls;
  std::vector<TrialRecord> trials;
  std::vector<Recommendation> queue;
  int used = 0;                       // trials that count against the budget (ran, any outcome)
  std::optional<TrialRecord> best;    // the class's best trial
  std::optional<TrialRecord> runner_up;  // the best trial of another configuration
};

ClassView make_view(Store &store, const ClassRecord &c);
// What `autotune status` and `autotune admin list` show (used and best only; no trials, queue or
// runner-up): two indexed lookups when the class has a best trial recorded, instead of reading
// every trial, so that a store of many classes lists in time proportional to the classes.
ClassView summary_view(Store &store, const ClassRecord &c);
// A class "W.F" that is function F of the owner's workflow W (autotune workflow define): its
// configurations come from the workflow's runs, which are scored as a whole, so the class has no
// score, state or winner of its own; `autotune show` and `status` give the workflow's instead.
struct FunctionOf {
  WorkflowRecord workflow;
  std::string function;
  std::optional<WorkflowRunRecord> best_run;  // the workflow's best run
  std::optional<WorkflowFunctionRun> best;    // this function in it
};
std::optional<FunctionOf> function_of(Store &store, const ClassRecord &c);
// "class 'W.F' is function F of workflow W": how a refusal of such a class begins.
std::string function_class_text(const ClassRecord &c, const FunctionOf &f);
// One row of `autotune status`; a workflow function's with its workflow's state, runs and best run.
std::vector<std::string> status_row(const ClassView &v, const std::optional<FunctionOf> &fn = std::nullopt);
// JSON: the class; with `full`, every trial and the queue: the export's writer
// (autotune/export.hpp), so that what `autotune export` prints is what autotune-run parses.
nlohmann::json view_json(const ClassView &v, bool full);
// One trial as the export writes it (trial_to_json).
nlohmann::json trial_json(const TrialRecord &t);

}  // namespace autotune::cli
