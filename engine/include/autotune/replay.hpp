// Offline replay: run a search strategy against a table of measured configurations, as if each
// proposal were a real trial, and measure how fast it finds the best one.
//
// A table (table.hpp) holds one row per (problem, configuration): a group column names the
// problem, feature columns describe the configuration (numeric when every value is a number,
// else categorical), and three columns hold the measurement: time (> 0), cost (> 0) and ok
// (1 = completed, 0 = failed or timed out: the engine sees a failure).  Within one run, the
// reference (objective.hpp) is the first successful trial, every score is
// (1-gamma) T/T_ref + gamma C/C_ref, and the optimum is the lowest score over the rows with ok=1.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/candidates.hpp"
#include "autotune/history.hpp"
#include "autotune/objective.hpp"
#include "autotune/optimizer.hpp"
#include "autotune/table.hpp"

namespace autotune {

// A feature computed from numeric columns: their product (e.g. the total memory of an
// allocation = nodes x memory per node), or a ratio (e.g. the learning rate per sample of the
// batch, lr/batch_size).  On the log scale of the model a product is a sum and a ratio a
// difference, so this adds the direction "more of both" (or "more of one, less of the other") as
// an input of its own: a score that depends on the ratio of two inputs -- a valley along the
// diagonal, which one length scale per input models poorly -- then varies along one input.
struct DerivedFeature {
  std::string name;
  std::vector<std::string> factors;  // at least one numeric column
  std::vector<char> divide;          // per factor: 1 when it divides (follows a '/')
  // Parses "NAME=A*B[*C.../D...]" (the first factor multiplies; each later one multiplies after
  // '*' and divides after '/'); throws Error(invalid_argument) naming `field`.
  static DerivedFeature parse(std::string_view text, std::string_view field = "--derive");
};

struct ReplaySpec {
  std::string group;                    // empty: the whole table is one problem
  std::vector<std::string> features;    // empty: every column but group, time, cost and ok
  std::vector<DerivedFeature> derived;  // added after `features`
  std::string time_column = "time_s";
  std::string cost_column = "cost";
  std::string ok_column = "ok";
};

struct ReplayProblem {
  std::string name;
  CandidateSet candidates;
  std::vector<double> time, cost;  // per candidate; NaN where not ok and not given
  std::vector<char> ok;            // per candidate
  // Per candidate, its cost per second (what EngineOptions::score_factor is made of): cost / time
  // where the row gives both (> 0), else estimated from the rows that do, by the least-squares
  // fit of log(cost / time) on the encoded features (a failed run often records neither; a
  // cluster configuration's rate is its node count times its type's price, which the encoding
  // of nodes, CPUs and memory per node carries on log scales).
  std::vector<double> rate;
};

// Validates the table against the spec and splits it into problems (in order of first
// appearance).  Throws Error(not_found) for a missing column and Error(invalid_argument) for an
// empty table, a non-numeric or non-positive time or cost on an ok row, an ok value other than 0
// or 1, an empty feature value, a derived feature over a non-numeric column or named like a
// column, or a problem with no ok row; messages name the file, the line and the column.
std::vector<ReplayProblem> load_problems(const Table &table, const ReplaySpec &spec);

// A problem's rows as history for another search (history.hpp): every row, a success scored
// with `gamma` against the reference of its first successful row, a failure as a failure.  The
// indices are the problem's own; map_history() re-indexes them into another candidate set.
HistoryProblem history_of(const ReplayProblem &problem, double gamma);

// The score factors of `problem`'s candidates (EngineOptions::score_factor) for an objective of
// `gamma` against the reference `ref`: (1 - gamma) / ref.time + gamma rate / ref.cost.
std::vector<double> score_factors(const ReplayProblem &problem, const Reference &ref, double gamma);

struct ReplayRun {
  std::uint64_t seed = 0;
  std::vector<std::size_t> tried;  // in order
  // After each trial: best score so far / optimum (infinity before the first success).
  std::vector<double> best_ratio;
  StopDecision stop;
  std::vector<double> step_seconds;  // wall time of each propose() call
  // How each trial was proposed (same order as `tried`): "design" (the initial design and its
  // continuation: Proposal::designed), "model" (expected improvement, or with a warm start the
  // weighted history's picks), "explore" (EngineOptions::explore), or, in a batch of both,
  // "model+explore"; with " (time)" when the step used the time model (Proposal::time_modelled);
  // the random and exhaustive strategies' trials: "random", "exhaustive".
  std::vector<std::string> proposed_by;
  // Trials until the best is within `fraction` of the optimum (1-based); 0 when never.
  std::size_t trials_to_within(double fraction) const;
  // best / optimum - 1 after `trials` trials (or at the end of a shorter run); infinity if none.
  double regret_after(std::size_t trials) const;
};

// One search of `problem` with seed options.seed, `batch` trials proposed at a time (each batch
// finishes before the next is proposed).  gamma in [0, 1].
ReplayRun replay_once(const ReplayProblem &problem, double gamma, const EngineOptions &options,
                      std::size_t batch = 1);

}  // namespace autotune
