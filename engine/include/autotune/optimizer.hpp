// The tuning engine: which candidates to try next, and whether to stop.
//
// propose() is a pure function of the history, so the store can recompute it after every
// measurement: the same candidate set, history, k and options (seed included) always give the
// same proposal, and adding history continues the same sequence.
//
// Strategy (bo).  Every default below is a published or structural choice, not a value fitted to
// a benchmark; bench/README.md reports what they reach on the replay benchmark.
// 1. Initial design.  The first `initial_trials` (3; by default 2 for a cold search over numeric
//    features when gamma <= 0.5, design.hpp kSmallDesign) trials are spread over the candidate set:
//    among `design_draws` (64) seeded random subsets of that size, the one whose closest pair (in
//    the encoded inputs) is farthest apart -- a maximin design over the finite set (Johnson,
//    Moore & Ylvisaker, "Minimax and maximin distance designs", 1990), which avoids the clumps of
//    a single random draw without the corner-seeking of a greedy maximin sequence.  It depends
//    only on the seed and the candidate set.  While fewer than two distinct candidates have
//    succeeded, the design continues greedily (each next point the farthest from the ones
//    before; a design among the cheapest rates, design.hpp kCheapDesignShare, continues among
//    the cheaper half of them first, kCheapContinuationShare).  Three points are the fewest
//    that show a trend in each direction; every trial more spent on design is one not spent on
//    what the model learnt.  Where time counts (gamma <= 0.5) the fastest configurations lie
//    towards the large allocations, which two points and the bowl prior mean already point to
//    (bench/README.md, "A smaller initial design where time counts").
// 2. Model.  A Gaussian process (gp.hpp: Matern-5/2, one length scale per feature, the
//    dimension-scaled length-scale prior of Hvarfner et al. 2024) on the standardized log score
//    of the successful trials.  Scores are ratios (time or cost relative to the reference), so the
//    log makes a 2x gain the same step everywhere and keeps predictions positive; the inputs are
//    on log scales too (candidates.hpp), since resources act multiplicatively.  Both models
//    learn a warping of each numeric input (`input_warping`, gp.hpp: Snoek et al. 2014 with the
//    priors of BoTorch's and Ax's warped models), so that a score may change fast at one end of a
//    resource's range and slowly at the other.  A linear term in the kernel (`linear_trend`) is
//    an option, off by default; bench/README.md has what both do on the replay tables.
//    Without a history, over a space of numeric features only, the prior mean is a bowl
//    (`bowl_mean_sd`): a (q(x) - mean q), q rising from 0 at the centre of the encoded box to 1
//    at its corners, with the amplitude a fitted to the trials (ridge regression, prior
//    N(0, 0.5^2) in standard deviations of the log score).  Without it the first model steps
//    went to the corner of largest variance, most often the largest allocation; fitted, the
//    amplitude is negative where the trials fall towards the edges.
//    A score is a run time times a factor known per candidate (its cost rate and the objective's
//    weights: design.hpp, `time_model`, `score_factor`).  Given the factors, and without a
//    history, a second model of the log run times is fitted from 4 successful trials on (with a
//    linear term of its own: EngineOptions::effective_time_linear_trend()), and it
//    predicts (with log f added back) whenever its leave-one-out predictions order the trials
//    better than the score model's by a margin: the part of the score that is price is then
//    known rather than learnt.
// 3. Failures.  A failed or timed-out trial is never proposed again.  By default
//    (Failures::classifier) a second GP on success/failure labels gives each candidate a
//    probability of running at all, and expected improvement is weighted by it (constrained EI:
//    Gardner et al., ICML 2014; Gelbart, Snoek & Adams, UAI 2014), which steers the search away
//    from where runs fail without distorting the score model (a feasibility power k > 1,
//    by default 4 from gamma 0.75 to below 1, raises the probability to that power first: a
//    likely failure is taken only for a proportionally larger gain; the failure model's fit
//    starts from the hyperparameters of the model that proposes, the time model's own linear
//    term included; where three or more failed trials lie beyond every successful one along a
//    numeric feature, the probability is also multiplied by the failures' edge, design.hpp's
//    FailureEdge).  Failures::impute instead enters a
//    failure in the score model with the worst score seen (Forrester, Sobester & Keane,
//    "Optimization with missing data", 2006).
// 4. Acquisition.  Expected improvement (acquisition.hpp) on the log score with margin `xi`
//    (0.01 standard deviations, the usual small margin of Lizotte 2008), maximized by scoring
//    every untried candidate.
// 5. Batches.  Running trials (`pending`) and the picks of this call are added as fantasy
//    observations -- their predicted mean (kriging believer) or the incumbent (constant liar) --
//    without refitting, so k trials running at once get k distinct candidates spread out.
// 6. Stopping rules (stopping.hpp), checked before proposing.
// 7. Warm start (history.hpp, EngineOptions::history): other problems' models pick the first
//    trial (their best prediction), the initial design fills the space around it (or, with
//    history_confirm, the history earns the next design trials while its combined mean keeps
//    ordering this problem's trials better than chance), and then they join EI (RGPE's
//    ensemble, or TAF), weighted by how well each orders this problem's trials -- no weight until
//    a model orders them better than a random order would (the gate).
// 8. Exploration (EngineOptions::explore; by default chosen by the objective and the space,
//    design.hpp automatic_explore()): a share of the proposals after the initial design goes to
//    the untried candidate farthest from every tried one, to a random one, to the best EI near
//    the incumbent (local: among the untried candidates nearest it, a twentieth of them and at
//    least 5), to Thompson sampling, or to a portfolio (hedge); bench/README.md has what they did
//    on held-out generated problems.
//    Thompson sampling (Thompson 1933; for GPs e.g. Kandasamy et al., AISTATS 2018) proposes
//    the lowest value of one seeded joint draw from the posterior of the log score over the
//    untried candidates, among those whose joint draw of the feasibility model's c(x) is > 0.
//    The joint draw needs the Cholesky factor of the candidates' posterior covariance, O(m^3);
//    it is taken over at most 160 candidates: all untried ones when there are that few, else
//    the 64 of lowest mean - 2 sd and a seeded uniform sample of the rest (exact where the
//    candidate sets are small, as Scout's 69; random Fourier features, not tried, would cover
//    every candidate, with an approximate kernel and m x features cosines per draw).
//    Hedge draws, per exploring trial, one of EI, a lower confidence bound (mean - 2 sd) and
//    Thompson sampling by EXP3's weights, re-derived from the trials so far (optimizer.cc).
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

#include "autotune/design.hpp"
#include "autotune/gp.hpp"

namespace autotune {

// Preconditions (Error(invalid_argument) otherwise): every index < candidates.size(), scores of
// successful observations finite and > 0, pending indices distinct, k >= 1, options valid.
// `done` is in the order the trials finished (the improvement rule needs it).
Proposal propose(const CandidateSet &candidates, const std::vector<Observation> &done,
                 const std::vector<std::size_t> &pending, std::size_t k,
                 const EngineOptions &options);

}  // namespace autotune
