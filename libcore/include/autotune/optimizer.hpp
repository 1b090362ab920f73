// The tuning engine: which candidates to try next, and whether to stop.
//
// propose() is a pure function of the history, so the store can recompute it after every
// measurement: the same candidate set, history, k and options (seed included) always give the
// same proposal, and adding history continues the same sequence.
//
// Strategy (bo).  Every default below is a published or structural choice, not a value fitted to
// a benchmark; bench/README.md reports what they reach on the replay benchmark.
// 1. Initial design.  The first `initial_trials` (3) trials are spread over the candidate set:
//    among `design_draws` (64) seeded random subsets of that size, the one whose closest pair (in
//    the encoded inputs) is farthest apart -- a maximin design over the finite set (Johnson,
//    Moore & Ylvisaker, "Minimax and maximin distance designs", 1990), which avoids the clumps of
//    a single random draw without the corner-seeking of a greedy maximin sequence.  It depends
//    only on the seed and the candidate set.  While fewer than two distinct candidates have
//    succeeded, the design continues greedily (each next point the farthest from the ones
//    before).  Three points are the fewest that show a trend in each direction; every trial more
//    spent on design is one not spent on what the model learnt.
// 2. Model.  A Gaussian process (gp.hpp: Matern-5/2, one length scale per feature, the
//    dimension-scaled length-scale prior of Hvarfner et al. 2024) on the standardized log score
//    of the successful trials.  Scores are ratios (time or cost relative to the reference), so the
//    log makes a 2x gain the same step everywhere and keeps predictions positive; the inputs are
//    on log scales too (candidates.hpp), since resources act multiplicatively.  Both models
//    learn a warping of each numeric input (`input_warping`, gp.hpp: Snoek et al. 2014 with the
//    priors of BoTorch's and Ax's warped models), so that a score may change fast at one end of a
//    resource's range and slowly at the other.  A linear term in the kernel (`linear_trend`) is
//    an option, off by default; bench/README.md has what both do on the replay tables.
// 3. Failures.  A failed or timed-out trial is never proposed again.  By default
//    (Failures::classifier) a second GP on success/failure labels gives each candidate a
//    probability of running at all, and expected improvement is weighted by it (constrained EI:
//    Gardner et al., ICML 2014; Gelbart, Snoek & Adams, UAI 2014), which steers the search away
//    from where runs fail without distorting the score model.  Failures::impute instead enters a
//    failure in the score model with the worst score seen (Forrester, Sobester & Keane,
//    "Optimization with missing data", 2006).
// 4. Acquisition.  Expected improvement (acquisition.hpp) on the log score with margin `xi`
//    (0.01 standard deviations, the usual small margin of Lizotte 2008), maximized by scoring
//    every untried candidate.
// 5. Batches.  Running trials (`pending`) and the picks of this call are added as fantasy
//    observations -- their predicted mean (kriging believer) or the incumbent (constant liar) --
//    without refitting, so k trials running at once get k distinct candidates spread out.
// 6. Stopping rules (stopping.hpp), checked before proposing.
//
// Strategies random and exhaustive (baselines for replay): a seeded random order, or the order of
// the candidate set; they use the budget, exhausted and improvement rules.
//
// Cost: one GP fit (on at most GpFitOptions::max_fit_points observations), one more when some
// trial failed, and an O(n^2 m) pass over the m candidates; bench/propose_bench measures it.
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
#include "autotune/engine_conf.hpp"
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
  bool input_warping = true;      // warp the numeric inputs (gp.hpp) of both models
  bool linear_trend = false;      // add a linear term to both models' kernels (gp.hpp)
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

// The options of a class's search from the site's autotune.conf, for a budget of `budget` trials
// (the job's --autotune-budget, or conf.default_budget).
EngineOptions engine_options(const EngineConf &conf, std::size_t budget);

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
