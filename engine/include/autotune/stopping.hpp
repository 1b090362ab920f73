// When to stop searching.  Every rule is available and they combine: the search stops at the
// first rule that fires, checked in the order below, and the decision says which one.
//
//  budget       the number of finished trials (failed ones included) reached `budget`.
//  exhausted    every candidate has been tried and nothing is running.
//  improvement  after at least `min_trials` trials: trials are grouped in rounds of
//               `round_trials` consecutive trials (in the order they finished; set it to the
//               number of trials that run at once), and the best score after the last complete
//               round improved on the best after the round before by less than the fraction
//               `min_improvement` ((before - after) / before < min_improvement).
//  ei           after at least `min_trials` trials: the largest expected improvement of any
//               untried candidate (in score units, expected_improvement_lognormal) is below
//               `ei_fraction` times the incumbent (best) score.  CherryPick (Alipourfard et al.,
//               NSDI 2017) stops with this rule at 10% after 6 trials.
// A rule with its threshold at 0 (budget 0, min_improvement 0, ei_fraction 0) is off.  The
// improvement and ei rules need at least one successful trial.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "autotune/observation.hpp"

namespace autotune {

enum class StopRule { none, budget, exhausted, improvement, ei };

// "none", "budget", "exhausted", "improvement", "ei".
const char *stop_rule_name(StopRule r);

struct StoppingOptions {
  std::size_t budget = 20;
  double min_improvement = 0.0;
  std::size_t round_trials = 3;
  double ei_fraction = 0.0;
  std::size_t min_trials = 6;
  // Throws Error(invalid_argument) for round_trials = 0, a negative or non-finite threshold.
  void validate() const;
};

struct StopDecision {
  StopRule rule = StopRule::none;
  std::string reason;  // one line for users, empty when rule == none
  bool stopped() const { return rule != StopRule::none; }
};

// The budget, exhausted and improvement rules, from the history alone.
// `done` in the order the trials finished; `untried` = candidates neither done nor running.
StopDecision check_history_rules(const std::vector<Observation> &done, std::size_t running,
                                 std::size_t untried, const StoppingOptions &options);

// The ei rule, given the largest expected improvement (score units) over the untried candidates
// and the incumbent score (> 0).
StopDecision check_ei_rule(double max_ei, double incumbent, std::size_t done,
                           const StoppingOptions &options);

}  // namespace autotune
