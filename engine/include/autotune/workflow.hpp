// Workflows: a DAG of functions (jobs) tuned together, and its cut into stages.
//
// A workflow file is JSON:
//
//   {"workflow": "nightly", "gamma": 0.5, "budget": 12,
//    "functions": [
//      {"name": "prep",    "after": [],                     "problem": "join_bigdata_spark"},
//      {"name": "train_a", "after": ["prep"],               "space": "nodes=1-4,workers=1-8"},
//      {"name": "train_b", "after": ["prep"]},
//      {"name": "eval",    "after": ["train_a", "train_b"]}]}
//
// Keys: "workflow" (required; a name as validate_class_name: 1..64 of [A-Za-z0-9._-]), "gamma"
// (a number from 0 to 1; default 0.5), "budget" (runs of the whole workflow, 1..kMaxWorkflowBudget;
// default 12), "search" (the strategy of workflow_search.hpp that tunes it on Slurm: "stage", the
// default, "function", "flat" or "random"; `autotune replay --workflow` runs its own --strategy
// list side by side instead), "functions" (required, 1..kMaxWorkflowFunctions).  Per function: "name" (required,
// as the workflow's), "after" (names of functions it runs after; default none), "space" (the
// --autotune-space syntax of space.hpp; optional), "problem" (the table problem it maps to in
// `autotune replay --workflow`; optional).  Any other key is refused ("fail closed").
//
// Stages (docs/architecture.md, "Workflows"): the level of a function is 0 when it runs after
// nothing, else 1 + the largest level of the functions it runs after (the longest path from a
// source); stage k holds the functions of level k.  Every edge goes from a lower stage to a higher
// one, so the functions of one stage never depend on each other and may run in parallel.
//
// Time and cost of a run: the run's time is the critical path, finish(f) = t(f) + max over the
// functions p that f runs after of finish(p) (0 with none), T = max finish(f); its cost is the sum
// of the functions' costs.  The staged time, the sum over stages of the slowest function of the
// stage, is never below T (a path takes at most one function from each stage) and equals T when
// every function of stage k+1 runs after every function of stage k (fork-join, chains): for those
// the score splits exactly into one term per stage, for other DAGs the split is an upper bound.
//
// Thread safety: Workflow and Stages are values; the functions are pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/space.hpp"

namespace autotune {

// Bounds of a workflow file, each refused with a message naming the limit.
inline constexpr std::size_t kMaxWorkflowFunctions = 64;
inline constexpr std::size_t kMaxWorkflowText = 256 * 1024;  // bytes of JSON
inline constexpr std::size_t kMaxWorkflowBudget = 10000;     // runs
inline constexpr std::size_t kMaxWorkflowProblemName = 256;  // characters of "problem"

// How a workflow is searched (workflow_search.hpp describes each).
enum class WorkflowStrategy { stage, function, flat, random };
// "stage", "function", "flat", "random".
const char *workflow_strategy_name(WorkflowStrategy s);
// Throws Error(invalid_argument) naming `field` and the allowed names.
WorkflowStrategy parse_workflow_strategy(std::string_view field, std::string_view name);

struct WorkflowFunction {
  std::string name;
  std::vector<std::string> after;  // as written, distinct
  std::vector<std::size_t> deps;   // indices of `after` into Workflow::functions, same order
  std::string space_text;          // as written; empty: none given
  std::optional<SpaceSpec> space;  // parsed space_text
  std::string problem;             // empty: none given
};

struct Workflow {
  std::string name;
  double gamma = 0.5;
  std::size_t budget = 12;
  WorkflowStrategy search = WorkflowStrategy::stage;
  std::vector<WorkflowFunction> functions;  // in file order

  // Parses and validates the JSON above.  `known_problems`, when given, is the set "problem"
  // must come from (a table's problems); a function without "problem" is then refused too.
  // Throws Error(invalid_argument) "FILE: functions[2] 'train_b': after: 'prep2' is not a
  // function of the workflow" -- `source` (a file name) first, then the function (index and
  // name) and the key.  Refuses: malformed JSON, text over kMaxWorkflowText, unknown keys,
  // values of the wrong type, a missing or bad name, gamma outside [0, 1], a budget outside
  // 1..kMaxWorkflowBudget, an unknown search, no functions or more than kMaxWorkflowFunctions, duplicate names,
  // "after" naming an unknown function, the function itself or one function twice, cycles (the
  // message lists one cycle), a space that space.hpp refuses, an unknown problem.
  static Workflow parse(std::string_view json, std::string_view source = "workflow",
                        const std::vector<std::string> *known_problems = nullptr);
  // Reads FILE (Error(not_found) when missing, Error(io) when unreadable) and parses it.
  static Workflow load(const std::string &path,
                       const std::vector<std::string> *known_problems = nullptr);
  // Canonical JSON (keys as above, "after" always present, "search" when not "stage", "space"
  // and "problem" when given):
  // parse(to_json()) == *this.
  std::string to_json() const;

  // The index of the function called `name`, or nullopt.
  std::optional<std::size_t> find(std::string_view name) const;
  bool operator==(const Workflow &o) const;
};

// The cut into stages described above.
struct Stages {
  std::vector<std::size_t> level;               // per function: its stage
  std::vector<std::vector<std::size_t>> stage;  // per stage: its functions, in file order
  // True when every function of each stage runs after every function of the stage before
  // (fork-join and chains): the staged time is then the critical path for any function times.
  bool exact = false;
};
// Precondition: `w` came from Workflow::parse (a DAG).
Stages cut_stages(const Workflow &w);

// The critical path of a run given each function's time (one per function, >= 0).
double critical_path(const Workflow &w, const std::vector<double> &time);
// The sum over stages of each stage's largest time: >= critical_path(), equal when s.exact.
double staged_time(const Stages &s, const std::vector<double> &time);

}  // namespace autotune
