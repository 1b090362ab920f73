// Gaussian-process regression with a Matérn-5/2 ARD kernel (Rasmussen & Williams, "Gaussian
// Processes for Machine Learning", MIT Press 2006 -- GPML).
//
// Model: y = f(x) + e, f ~ GP(0, k), e ~ N(0, sigma_n^2), with
//   k(x, x') = sigma_f^2 (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r),
//   r^2 = sum_j (x_j - x'_j)^2 / l_{g(j)}^2                                    (GPML eq. 4.17)
// where input column j belongs to feature group g(j) and each group has its own length scale
// (automatic relevance determination; the one-hot columns of a categorical feature share one).
// The mean is zero: callers standardize the targets (the optimizer models the standardized log
// score).
//
// Conditioning follows GPML Algorithm 2.1: L = cholesky(K + sigma_n^2 I), alpha = L^T \ (L \ y),
// mean = k*^T alpha, v = L \ k*, var = k(x*, x*) - v^T v,
// log p(y|X) = -y^T alpha / 2 - sum_i log L_ii - n/2 log 2 pi.
// Hyperparameters theta = (log l_1..l_G, log sigma_f^2, log sigma_n^2, then log a and log b of
// each warped column, then log s_lin, then the additive terms' log w_g and log l'_g) maximize the log marginal likelihood plus log-priors (a
// MAP estimate; the gradient is GPML eq. 5.9), by projected L-BFGS
// within bounds, from several starts drawn from the prior with an injected seed: every start gets
// a few probing iterations, the best continues for a bounded number of iterations (a proposal
// needs the basin of the hyperparameters, not their last digits).  For many query points v = L \ k* is
// computed as a product with the explicit L^-1.
//
// Input warping (optional; Snoek, Swersky, Zemel & Adams, "Input warping for Bayesian
// optimization of non-stationary functions", ICML 2014).  Each warped input column c, in [0, 1],
// enters the kernel through the Kumaraswamy CDF w_c(x) = 1 - (1 - x^a_c)^b_c (x first mapped to
// [eps, 1 - eps]), whose two concentrations are hyperparameters like the length scales.  a = b = 1
// is the identity; other values stretch one end of the range and compress the other, so a score
// that changes fast at the small end of a resource (a data set that just fits in memory) and
// slowly at the large end is no longer forced onto one length scale.  The concentrations get
// LogNormal(0, 0.75) priors (variance 0.75, median 1), the defaults of BoTorch's and Ax's warped
// models.  Their gradient: dlog p/dd_p = -1/2 w_p c_p / l^2 per pair distance (below), chained
// through dw/dlog a = a b (1 - x^a)^(b-1) x^a log x and dw/dlog b = -b (1 - x^a)^b log(1 - x^a).
//
// Linear term (optional): k(x, x') += s_lin (x - 1/2).(x' - 1/2) on the unwarped inputs, a
// Bayesian linear trend (slopes ~ N(0, s_lin)) under the Matern term (GPML section 2.7), whose
// variance s_lin is fitted like the other hyperparameters; the prior variance of a point is then
// sigma_f^2 + s_lin |x - 1/2|^2.  Its gradient: dK/dlog s_lin = s_lin (X - 1/2)(X - 1/2)^T.
//
// Additive terms (optional, GpKernel; Duvenaud, Nickisch & Rasmussen, "Additive Gaussian
// processes", NIPS 2011, first order; Kandasamy, Schneider & Poczos, "High dimensional Bayesian
// optimisation and bandits via additive models", ICML 2015): k(x, x') += sigma_f^2 sum_g w_g
// M(r_g), M the Matern-5/2 correlation above and r_g = |x_g - x'_g| / l'_g over the columns of
// group g alone (a categorical feature's one-hot columns are one term), on the warped inputs.
// Each term has its own length scale l'_g and weight w_g (hyperparameters, LogNormal(-log G, 1)
// priors on w: their sum has the signal variance's median); a score that is close to a sum of
// per-feature effects is then learnt from fewer points than one joint ARD term needs, and the
// weights show which features matter.  Kernel `additive` has these terms alone (l'_g are then
// log_lengthscale), `ard+additive` both (an ARD term for the interactions).  Gradients:
// dk/dlog w_g = sigma_f^2 w_g M(r_g), dk/dlog l'_g as for l_g with r_g.
//
// Shapes: X is (n x D), y (n), groups (D) with values in [0, G); query points (m x D).  Inputs are
// always given unwarped; the model warps them.
// Thread safety: a GaussianProcess is immutable once built; const methods may run concurrently.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "autotune/gp_options.hpp"

namespace autotune {

// The median hyperparameters of the priors for G feature groups in `columns` input columns
// (default: one per group) -- the first start of fit(), unless GpFitOptions::first_start is set.
GpHyper prior_median(const GpFitOptions &options, int groups, Eigen::Index columns = -1);

class GaussianProcess {
 public:
  GaussianProcess() = default;
  // Conditions on (X, y) with fixed hyperparameters.  Throws Error(invalid_argument) on shape
  // mismatch and Error(internal) when K + sigma_n^2 I is not positive definite even with jitter.
  GaussianProcess(Eigen::MatrixXd X, Eigen::VectorXd y, std::vector<int> groups, GpHyper hyper);

  // MAP hyperparameters for (X, y), then conditions on them.  Deterministic for a given seed.
  static GaussianProcess fit(Eigen::MatrixXd X, Eigen::VectorXd y, std::vector<int> groups,
                             const GpFitOptions &options);

  // log p(y | X, theta) for the conditioned data (without priors).
  double log_marginal_likelihood() const { return lml_; }
  // The log marginal likelihood and its gradient with respect to theta (G + 2 + 2 x the warped
  // columns, + 1 with a linear term, + G or 2G with additive terms: the order above), without
  // priors.
  // Returns -infinity when the matrix is not positive definite.
  static double log_marginal_likelihood(const Eigen::MatrixXd &X, const Eigen::VectorXd &y,
                                        const std::vector<int> &groups, const GpHyper &h,
                                        Eigen::VectorXd *gradient = nullptr);

  // Posterior mean and variance of the latent f at the rows of Xs (m x D); var excludes the noise.
  void predict(const Eigen::MatrixXd &Xs, Eigen::VectorXd *mean, Eigen::VectorXd *var) const;
  // The same at one point x (1 x D), in O(n^2).
  void predict_one(const Eigen::Ref<const Eigen::RowVectorXd> &x, double *mean, double *var) const;

  // k(A, B) (rows of A against rows of B), (a x b).  Fastest when a >= b (long columns).
  Eigen::MatrixXd kernel(const Eigen::MatrixXd &A, const Eigen::MatrixXd &B) const;
  // The same with the warped inputs given too (Aw = warp(A), Bw = warp(B)), for callers that
  // evaluate many kernels on the same points.
  Eigen::MatrixXd kernel(const Eigen::MatrixXd &A, const Eigen::MatrixXd &Aw, const Eigen::MatrixXd &B,
                         const Eigen::MatrixXd &Bw) const;
  // The inputs as the Matern term sees them (warped; a copy when nothing is warped).
  Eigen::MatrixXd warp(const Eigen::MatrixXd &X) const;
  // k(x, x) for each row x of A (m): sigma_f^2 (times 1 for an ARD term + sum_g w_g), plus
  // s_lin |x - 1/2|^2 with a linear term.
  Eigen::VectorXd prior_variance(const Eigen::MatrixXd &A) const;

  const GpHyper &hyper() const { return hyper_; }
  const Eigen::MatrixXd &inputs() const { return X_; }
  const Eigen::MatrixXd &warped_inputs() const { return Xw_; }
  const Eigen::VectorXd &targets() const { return y_; }
  const std::vector<int> &groups() const { return groups_; }
  // The lower Cholesky factor L of K + sigma_n^2 I (n x n) and beta = L \ y (n).
  const Eigen::MatrixXd &chol() const { return L_; }
  // L^-1 (n x n, lower triangular): v = L \ k* becomes a matrix product, which Eigen runs several
  // times faster than a triangular solve with thousands of right-hand sides.
  const Eigen::MatrixXd &chol_inverse() const { return Linv_; }
  const Eigen::VectorXd &beta() const { return beta_; }
  double signal_var() const;
  double noise_var() const;
  // The leave-one-out predictions at the inputs, in the units of the targets (GPML eq. 5.12):
  // mean_i = y_i - alpha_i / [K^-1]_ii, var_i = 1 / [K^-1]_ii, alpha = K^-1 y.  O(n^2).
  void leave_one_out(Eigen::VectorXd *mean, Eigen::VectorXd *var) const;

 private:
  Eigen::MatrixXd matern(const Eigen::MatrixXd &Aw, const Eigen::MatrixXd &Bw) const;
  Eigen::MatrixXd X_, Xw_;
  Eigen::VectorXd y_;
  std::vector<int> groups_;
  GpHyper hyper_;
  Eigen::MatrixXd L_, Linv_;
  Eigen::VectorXd alpha_, beta_;
  double lml_ = 0;
};

// The posterior over a fixed set of candidate points that can absorb extra "fantasy"
// observations cheaply, for batch proposals (kriging believer, constant liar: Ginsbourger, Le Riche
// & Carraro, "Kriging is well-suited to parallelize optimization", 2010).  Keeps V = L \ k(X, Xc)
// so adding a fantasy at candidate j costs O((n + added) m) instead of a refit.
// Shapes: Xc is (m x D); it is referenced, not copied, and must outlive the posterior (as gp).
class CandidatePosterior {
 public:
  // `fantasies` keeps V for condition() (O(n m) memory); without it condition() throws.
  CandidatePosterior(const GaussianProcess &gp, const Eigen::MatrixXd &Xc, bool fantasies = true);
  const Eigen::VectorXd &mean() const { return mean_; }  // (m)
  const Eigen::VectorXd &var() const { return var_; }    // (m), latent, >= 0
  // Adds observation y at candidate j with the GP's hyperparameters (no refit).
  void condition(Eigen::Index j, double y);
  // The joint posterior covariance of the latent f at the candidates `idx` (s x s), the fantasies
  // included: k(Xs, Xs) - V_s^T V_s (GPML eq. 2.24).  O(s^2 (n + added) + s n^2) without
  // fantasies kept, O(s^2 (n + added)) with them.
  Eigen::MatrixXd covariance(const std::vector<Eigen::Index> &idx) const;
  // A prior mean m at the candidates (m), for a GP fitted to y - m at its inputs: added to
  // mean(), and subtracted from the y of every later condition().  At most once, before any
  // condition() (Error(internal) otherwise).
  void add_prior_mean(const Eigen::VectorXd &m);

 private:
  const GaussianProcess &gp_;
  const Eigen::MatrixXd &Xc_;  // the candidates (m x D)
  Eigen::MatrixXd Xw_;         // the same, warped
  Eigen::VectorXd prior_;      // k(x, x) of each candidate (m)
  Eigen::MatrixXd V_;     // (rows x m)
  Eigen::VectorXd beta_;  // (rows)
  Eigen::Index rows_ = 0;
  Eigen::VectorXd mean_, var_;
  Eigen::VectorXd prior_mean_;  // empty: none
};

}  // namespace autotune
