// The hyperparameters of a Gaussian process and the options of its fit, as plain data: what a
// proposal reports and an engine option carries, without the model itself (autotune/gp.hpp).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace autotune {

// The covariance of the score model (gp.hpp):
//  ard           one Matern-5/2 term over every feature, a length scale per feature (ARD);
//  additive      a sum of one-feature Matern-5/2 terms, each with its own length scale and weight
//                (first-order additive: Duvenaud, Nickisch & Rasmussen, NIPS 2011; Kandasamy,
//                Schneider & Poczos, ICML 2015): a score that is close to a sum of per-feature
//                effects (a product of factors, on the log scale) is learnt from fewer trials, and
//                the weights say which features matter;
//  ard_additive  the sum of both (interactions through the ARD term).
enum class GpKernel { ard, additive, ard_additive };
// (In engine_conf.cc: the library without the model parses autotune.conf.)
const char *kernel_name(GpKernel k);  // "ard", "additive", "ard+additive"
// Throws Error(invalid_argument) naming `field` and the allowed values.
GpKernel parse_kernel(std::string_view field, std::string_view value);

// The linear term of the score and feasibility models (gp.hpp: LinearTrend): no, yes, or
// automatic, by the objective (EngineOptions::effective_linear_trend(), design.hpp).
enum class Trend { no, yes, automatic };
// (In engine_conf.cc, as kernel_name.)
const char *trend_name(Trend t);  // "no", "yes", "auto"
// auto, or a boolean as parse_bool() reads one (yes, no, true, false, 1, 0, on, off); throws
// Error(invalid_argument) naming `field` and the allowed values.
Trend parse_trend(std::string_view field, std::string_view value);

// Whether the search models the run time rather than the score (EngineOptions::time_model,
// design.hpp): no; better (when it orders the trials better); automatic (when it orders them
// better, and from gamma 0.5 to below 1 also by turns); or yes.
enum class TimeModel { no, automatic, better, yes };
// (In design.cc.)  "no", "auto", "better", "yes"; parse_time_model() takes auto, better (unless
// !with_better: the warm start's time bases have no such choice) or a boolean (yes, no, true,
// false, 1, 0, on, off), else Error(invalid_argument) naming `field` and the allowed values.
const char *time_model_name(TimeModel m);
TimeModel parse_time_model(std::string_view field, std::string_view value, bool with_better = true);

struct GpHyper {
  Eigen::VectorXd log_lengthscale;  // (G)
  double log_signal_var = 0.0;      // log sigma_f^2
  double log_noise_var = -4.0;      // log sigma_n^2
  // Input warping: the warped columns (ascending), and log a, log b of each (same length).
  std::vector<int> warp_columns;
  Eigen::VectorXd log_warp_a, log_warp_b;
  // log s_lin of the linear term, or -infinity: none.
  double log_linear_var = -std::numeric_limits<double>::infinity();
  bool linear() const { return log_linear_var > -std::numeric_limits<double>::infinity(); }
  // The kernel (GpKernel): the ARD term sigma_f^2 M(r) is present unless ard is false; additive
  // terms sigma_f^2 w_g M(r_g), one per feature group, when log_additive_weight (G: log w_g) is
  // not empty.  Their length scales are log_additive_lengthscale (G) with the ARD term, else
  // log_lengthscale (and log_additive_lengthscale is empty).
  bool ard = true;
  Eigen::VectorXd log_additive_weight, log_additive_lengthscale;
  bool additive() const { return log_additive_weight.size() > 0; }
  GpKernel kernel() const {
    return !additive() ? GpKernel::ard : ard ? GpKernel::ard_additive : GpKernel::additive;
  }
};

// A prior on one positive hyperparameter h, and its bounds.  Log-normal: log h ~ N(mu, sd^2).
struct LogNormalPrior {
  double mu = 0, sd = 1;
  double min = 1e-3, max = 1e3;  // bounds on h
};

struct GpFitOptions {
  // Length scales on inputs scaled to [0, 1]: LogNormal(sqrt(2) + log(G)/2, sqrt(3)), the
  // dimension-scaled prior of Hvarfner, Hellsten & Nardi, "Vanilla Bayesian optimization performs
  // great in high dimensions" (ICML 2024), adopted as BoTorch's default in 2024.  With G features its
  // median grows as sqrt(G): the more features, the smoother the function is assumed to be in
  // each one, which keeps the model from explaining a handful of points by wiggles.  mu = NaN
  // (the default) means "use that formula"; set mu to override.
  LogNormalPrior lengthscale{std::numeric_limits<double>::quiet_NaN(), 1.7320508075688772, 0.02,
                             100.0};
  // Signal variance of standardized targets: centred on 1.
  LogNormalPrior signal_var{0.0, 1.0, 0.05, 20.0};
  // Noise variance of standardized targets: LogNormal(-4, 1) (same source), bounded below so the
  // Cholesky factorization stays well conditioned with repeated inputs.
  LogNormalPrior noise_var{-4.0, 1.0, 1e-6, 1.0};
  // Starts: the prior median, then starts - 1 draws from the prior.  Each start gets
  // probe_iterations L-BFGS iterations; the best continues up to max_iterations in all.  Input
  // warping adds two hyperparameters per input (29 instead of 11 for nine inputs), and one
  // probing iteration no longer tells the starts' basins apart: three starts probed three
  // iterations each find better ones than four probed once, in about as many likelihood
  // evaluations (bench/README.md, "Fitting the hyperparameters").
  int starts = 3;
  int probe_iterations = 3;
  int max_iterations = 15;
  std::uint64_t seed = 1;
  // The first start instead of the prior median (e.g. the hyperparameters of a related model).
  std::optional<GpHyper> first_start;
  // With more observations than this, the hyperparameters are fitted on a seeded random subset of
  // this size (subset of data: Chalupka, Williams & Murray, "A framework for evaluating
  // approximation methods for Gaussian process regression", JMLR 2013) and the model is then
  // conditioned on every observation.  The hyperparameter posterior is already concentrated at
  // this size, and the fit, O(n^3) per likelihood evaluation, stays within the time of one
  // proposal step.  0: always use every observation.
  int max_fit_points = 32;
  // The input columns to warp (any order; empty: none), and the prior of each concentration.
  std::vector<int> warp_columns;
  LogNormalPrior warp{0.0, 0.8660254037844386, 0.05, 20.0};
  // A linear term, and the prior of its variance s_lin.  mu = NaN (the default) means
  // log(12 / D) for D input columns: the linear term's variance over the unit cube, s_lin D / 12,
  // then has the median 1 of the signal variance's prior.
  bool linear = false;
  LogNormalPrior linear_var{std::numeric_limits<double>::quiet_NaN(), 1.0, 1e-4, 1e3};
  // The kernel, and the priors of the additive terms: each term is a function of one feature, so
  // its length scale gets the dimension-scaled prior above for one feature (median e^sqrt(2) =
  // 4.1 when mu is NaN); the weights w_g LogNormal(-log G, 1) for G groups when mu is NaN (their
  // sum has the median 1 of the signal variance's prior: the additive terms share the variance
  // with the ARD term, if any, as equals).
  GpKernel kernel = GpKernel::ard;
  LogNormalPrior additive_weight{std::numeric_limits<double>::quiet_NaN(), 1.0, 1e-4, 20.0};
};

}  // namespace autotune
