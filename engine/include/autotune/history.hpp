// Warm start: other problems' measurements as a prior for a new search (RGPE: Feurer, Letham &
// Bakshy, "Scalable meta-learning for Bayesian optimization using ranking-weighted Gaussian
// process ensembles", AutoML workshop 2018).
//
// Each history problem gets a Gaussian process of its own (a base model) on its standardized log
// scores.  prepare_warm_start() fits the base models and predicts them at every candidate of the
// target once, outside the proposal step (autotune ingest and autotune replay do it when they
// load the history); propose() then combines them with the target's own model, by
// EngineOptions::history_mode:
//   rgpe (default) EI on mean(x) = sum_i w_i mean_i(x), var(x) = sum_i w_i^2 var_i(x)
//                  (i over bases and the target);
//   taf            a(x) = w_t EI_t(x) + sum_i w_i max(best_i - mean_i(x), 0), the target's
//                  expected improvement (standardized) plus each base's predicted improvement
//                  over its own prediction of the target's best trial (the transfer acquisition
//                  function, Wistuba, Schilling & Schmidt-Thieme, Machine Learning 2018);
// with weights from a ranking loss: for S seeded draws from each model's predictions at the
// target's successful trials (the target's own model leave-one-out), the number of pairs of
// trials it orders differently from the measurements (failed trials rank after every success);
// w_i is the share of draws in which model i has the lowest loss (ties shared, or the target's
// own when it is among them: EngineOptions::history_ties_to_own).  Two guards make a history
// earn its weight:
//   - the gate (EngineOptions::history_gate, z): once the target has its own model, a base whose
//     mean orders the target's n trials with more than P/2 - z sqrt(P (2n + 5) / 36) discordant
//     pairs (P the pairs with distinct scores; Kendall's test against a random order at z
//     standard deviations) gets no weight -- with z = 1.645, a base needs 4 trials in perfect
//     order, 5 with one pair wrong, and so on;
//   - weight dilution (the paper's): a base whose median loss is above the 95th percentile of
//     the target's own model's gets no weight.
// Then, from gamma kHistoryOwnFloorGammaLow on, the target's own weight is raised to at least
// n / (n + EngineOptions::history_own_floor), n its successes (the bases scaled down).
// So a history that orders the target's trials no better than chance (an unrelated or shuffled
// one) has no weight and the proposal is the cold search's; as the target's own model grows
// better, the bases lose the draws and their weight.  The history's models pick the first
// EngineOptions::history_picks trials, until one of them fails (the untried candidates with
// the lowest ensemble mean, the bases weighted equally, weighted by the probability that they
// run when trials failed);
// the rest of the initial design is the maximin subset with them (design.hpp), so the target's
// model and the gate also see trials the history did not choose -- unless the history earns
// them (EngineOptions::history_confirm, default 1): before each later design trial, the
// history's combined mean (the bases weighted equally) is tested against the target's finished
// trials by the gate's Kendall test at history_confirm; while it passes, the trial is the
// weighted ensemble's (the bases gated at history_confirm for that step), else the maximin
// point.  Before the target has two successful trials after the design, the history picks
// again.  At gamma 1, a history that fails the same test at the second trial after the design
// (EngineOptions::history_doubt) gets one more maximin point there.
//
// A history of two or more problems that do not predict each other is set aside
// (EngineOptions::history_coherence): its coherence is 2 AUC - 1 of the pairs of each problem's
// successful measurements ordered by the other problems' models (their mean, leave-one-out; at
// most kCoherencePoints measurements per problem).  A shuffled history's is near 0, a related
// one's well above; below the threshold prepare_warm_start() keeps no base model, and the search
// is the cold one.
//
// Once the target has its own model, a history whose top-ranked tried candidate (the lowest mean
// of the bases, weighted equally, among the candidates tried) failed on the target gets no
// weight (EngineOptions::history_top_must_run): its best guess does not run here.
//
// The history's failures are a prior on where the target's runs fail
// (EngineOptions::history_feasibility): a candidate's probability of running is multiplied by
// (1 - h)^(f t), h the share of the history problems that failed there and t the trust in it,
// history_failure_trust(): how well h predicts the history problems' own failures from each
// other's, then updated by the target's trials where the history failed.
//
// History problems must describe their configurations like the target's (the same feature
// columns): map_history() keeps the observations whose candidate has a label (candidates.hpp)
// in the target's set, and drops the others.
//
// Thread safety: a WarmStart is immutable once prepared; pure functions.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "autotune/candidates.hpp"
#include "autotune/design.hpp"
#include "autotune/observation.hpp"

namespace autotune {

struct HistoryProblem {
  std::string name;
  std::vector<Observation> done;  // indices into the target's candidate set
  // The run times of `done`'s successful trials (Observation::ok(index, seconds)), for the time
  // bases (WarmStart::log_time_mean); empty: not known.
  std::vector<Observation> times;
};

struct WarmStart {
  std::vector<std::string> names;  // the history problems with a base model (>= 2 successes)
  // Per base model: the predictive mean and variance of the standardized log score at every
  // candidate of the target (candidates.size()).
  std::vector<Eigen::VectorXd> mean, var;
  // Per base model, when every history problem gave its run times (HistoryProblem::times) and
  // options.effective_history_time_model() (design.hpp): a model of its log run times, its
  // predictive mean and variance at every candidate (in log seconds, not standardized), and the
  // candidates it measured successfully.  With the target's score factors, time_scored() makes
  // the bases' means from them.
  std::vector<Eigen::VectorXd> log_time_mean, log_time_var;
  std::vector<std::vector<std::size_t>> measured;
  // At every candidate, the share of the base models' problems that measured it and failed there
  // (-1: none measured it); and how well that share predicts each history problem's own failures
  // from the others' (leave-one-out): of the pairs (a failed candidate, a successful one) of
  // every problem, the number the others' share orders right (failed higher; ties count half).
  Eigen::VectorXd failure_share;
  double failure_pairs_right = 0, failure_pairs = 0;
  // The history's coherence (NaN: fewer than two base models, or no pairs) and the pairs it
  // counts; the names of the problems set aside for it (EngineOptions::history_coherence).
  double coherence = std::numeric_limits<double>::quiet_NaN(), coherence_pairs = 0;
  std::vector<std::string> set_aside;
  std::size_t candidates = 0;
  std::size_t size() const { return names.size(); }
  // The base models' mean at a candidate, weighted equally (the history's combined prediction
  // that confirms design trials and ranks the tried candidates); 0 without base models.
  double combined_mean(std::size_t candidate) const {
    double m = 0;
    for (const auto &b : mean) m += b[static_cast<Eigen::Index>(candidate)];
    return size() ? m / static_cast<double>(size()) : 0.0;
  }
};

// The observations of `history` (on candidates `from`) whose candidate label is one of `to`,
// re-indexed into `to`.
std::vector<Observation> map_history(const CandidateSet &from, const std::vector<Observation> &done,
                                     const CandidateSet &to);

// Fits one base model per history problem with at least two distinct successful candidates
// (the others are left out) and predicts it at every candidate; then measures the history's
// coherence and sets the history aside if it is below options.history_coherence.  Uses options.gp,
// options.input_warping and options.linear_trend as the target's model does, and a seed derived
// from options.seed.  Throws Error(invalid_argument) for an index out of range or a score that
// is not a positive number.  Cost: one GP fit and one prediction over the candidates per problem.
std::shared_ptr<const WarmStart> prepare_warm_start(const CandidateSet &candidates,
                                                    const std::vector<HistoryProblem> &history,
                                                    const EngineOptions &options);

// The warm start whose base models predict the target's score as the base's run time times the
// target's score factor f (EngineOptions::score_factor: a score is T x f): each base's mean of
// log T + log f, standardized over the candidates it measured, and its variance of log T scaled
// alike.  `ws` itself when it has no time bases.  Cost: bases x candidates.
std::shared_ptr<const WarmStart> time_scored(const std::shared_ptr<const WarmStart> &ws,
                                             const std::vector<double> &factor);

// Of the pairs (a in `failed`, b in `succeeded`), how many have a > b (ties count half); adds them
// to *right and the pairs to *pairs.  O((|failed| + |succeeded|) log |succeeded|).
void count_ordered_pairs(const std::vector<double> &failed, std::vector<double> succeeded,
                         double *right, double *pairs);

// The trust in the history's failures (EngineOptions::history_feasibility), from 0 to 1: the
// probability that they predict the problem's, H1, against H0, that the problem fails at its own
// rate q wherever the history failed.  The prior is max(0, 2 AUC - 1) of the history problems'
// own pairs (a failed candidate, a successful one) ordered by the others' failure share
// (WarmStart::failure_pairs_right / failure_pairs; at most 0.95); each of the problem's trials
// (the last outcome per candidate) where the history's failure share h > 0 then weighs for H1,
// under which it fails with probability q + 0.9 (1 - q) h, or H0 (Bayes' rule; q by Laplace's
// rule from the problem's trials).  0 when the history has no such pairs.
double history_failure_trust(const WarmStart &ws, const std::vector<Observation> &done);

// The RGPE weights: `base_at` (bases x n) are the base models' means and variances at the
// target's n successful observations `y` (standardized), loo_mean / loo_var the target model's
// leave-one-out predictions there (empty: no target model yet).  Returns bases + 1 weights
// summing to 1, the target's last.  With ties_to_own, a draw in which the target's model ties
// for the lowest loss is the target's (EngineOptions::history_ties_to_own).  Deterministic for a
// seed.  gate > 0: once the target has its own model (loo_mean not empty), a base whose mean
// fails the gate (see above) at `gate` standard deviations gets no weight.
std::vector<double> rgpe_weights(const std::vector<Eigen::VectorXd> &base_mean,
                                 const std::vector<Eigen::VectorXd> &base_var,
                                 const Eigen::VectorXd &y, const Eigen::VectorXd &loo_mean,
                                 const Eigen::VectorXd &loo_var, std::uint64_t seed,
                                 bool ties_to_own = false, double gate = 0, int samples = 64);

}  // namespace autotune
