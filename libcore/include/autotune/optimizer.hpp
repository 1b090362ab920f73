// The tuning engine: which candidates to try next, and whether to stop.
//
// propose() is a pure function of the history, so the store can recompute it after every
// measurement: the same candidate set, history, k and options (seed included) always give the
// same proposal, and adding history continues the same sequence.
//
// Strategy (bo):
// 1. Initial design.  The first `initial_trials` trials are spread over the candidate set: among
//    `design_draws` seeded random subsets of that size, the one whose closest pair (in the
//    encoded inputs) is farthest apart -- a maximin design over the finite set (Johnson, Moore &
//    Ylvisaker, "Minimax and maximin distance designs", 1990), which avoids the clumps of a single
//    random draw without the corner-seeking of a greedy maximin sequence.  It depends only on
//    the seed and the candidate set.  While fewer than two distinct candidates have succeeded,
//    the design continues greedily (each next point the farthest from every point tried).
// 2. Model.  A Gaussian process (gp.hpp) on the standardized log score: scores are ratios
//    (time or cost relative to the reference), so the log makes a 2x gain the same step
//    everywhere and keeps the model positive.  A failed or timed-out trial is never proposed
//    again and enters the model with the worst log score observed so far, which lowers the
//    expected improvement of its neighbourhood (Forrester, Sobester & Keane, "Optimization with
//    missing data", 2006, impute pessimistically).
// 3. Acquisition.  Expected improvement (acquisition.hpp) with margin `xi` (in standard
//    deviations of the log score), maximized by scoring every untried candidate.
// 4. Batches.  Running trials (`pending`) and the picks of this call are added as fantasy
//    observations -- their predicted mean (kriging believer) or the incumbent (constant liar) --
//    without refitting, so k trials running at once get k distinct candidates spread out.
// 5. Stopping rules (stopping.hpp), checked before proposing.
//
// Strategies random and exhaustive (baselines for replay): a seeded random order, or the order of
// the candidate set; they use the budget, exhausted and improvement rules.
//
// Thread safety: pure; concurrent calls are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "autotune/candidates.hpp"
#include "autotune/gp.hpp"
#include "autotune/observation.hpp"
#include "autotune/stopping.hpp"
#include "autotune/strategy.hpp"

namespace autotune {

struct EngineOptions {
  Strategy strategy = Strategy::bo;
  std::uint64_t seed = 1;
  std::size_t initial_trials = 3;
  std::size_t design_draws = 64;  // random subsets compared by the maximin criterion
  double xi = 0.01;               // EI margin, in standard deviations of the standardized log score
  BatchMode batch = BatchMode::kriging_believer;
  // How failed trials steer the search (both never propose a failed candidate again):
  //  classifier  a second GP on +1 (succeeded) / -1 (failed) labels models a constraint c(x);
  //              EI is weighted by P(c(x) > 0) = Phi(mu_c / sigma_c) (constrained EI: Gardner et
  //              al., ICML 2014; Gelbart, Snoek & Adams, UAI 2014), and the score model sees only
  //              successful trials.
  //  impute      a failure enters the score model with the worst score seen.
  enum class Failures { classifier, impute };
  Failures failures = Failures::classifier;
  StoppingOptions stop;
  GpFitOptions gp;          // its seed is derived from `seed`
  bool predictions = true;  // fill Proposal::predictions
  // Throws Error(invalid_argument) for initial_trials = 0, design_draws = 0, xi < 0, bad stop.
  void validate() const;
};

// A model prediction for one candidate, in score units: the mean and standard deviation of the
// log-normal predictive distribution (the GP models the log score).
struct Prediction {
  double mean = 0;
  double std = 0;
};

struct Proposal {
  // Up to k distinct candidates, none done or pending.  Fewer when the budget (done + pending +
  // these <= budget) or the untried candidates run out; none when the search stopped.
  std::vector<std::size_t> indices;
  StopDecision stop;
  // The best successful observation so far (index and score), if any.
  std::optional<std::size_t> best_index;
  double best_score = std::numeric_limits<double>::quiet_NaN();
  // With a model (bo, at least two successful candidates): per candidate predictions (when
  // options.predictions), the largest expected improvement over the untried candidates in score
  // units, and the fitted hyperparameters (length scales per feature group: a short one means
  // the score is sensitive to that feature).
  bool modelled = false;
  std::vector<Prediction> predictions;
  double max_ei = std::numeric_limits<double>::quiet_NaN();
  GpHyper hyper;
};

// Preconditions (Error(invalid_argument) otherwise): every index < candidates.size(), scores of
// successful observations finite and > 0, pending indices distinct, k >= 1, options valid.
// `done` is in the order the trials finished (the improvement rule needs it).
Proposal propose(const CandidateSet &candidates, const std::vector<Observation> &done,
                 const std::vector<std::size_t> &pending, std::size_t k,
                 const EngineOptions &options);

// The initial design order: `count` candidates (count <= candidates.size()), the first
// `options.initial_trials` of them the maximin subset, the rest continuing greedily away from the
// ones before.  Depends only on the seed and the candidate set.
std::vector<std::size_t> initial_design(const CandidateSet &candidates, std::size_t count,
                                        const EngineOptions &options);

}  // namespace autotune
