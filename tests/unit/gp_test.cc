// The Gaussian process against values computed by hand (closed-form 2 x 2 algebra, GPML
// Algorithm 2.1), its gradient against finite differences, and the fantasy updates against a refit.
#include "autotune/gp.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "autotune/error.hpp"
#include "autotune/rng.hpp"

using namespace autotune;

namespace {

// Two points x = 0 and x = 1 with y = 1 and 2; l = 1, sigma_f^2 = 1, sigma_n^2 = 0.01.
// k(r) = (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r): k(1) = 0.5239941088, K = [[1.01, k1], [k1, 1.01]],
// mean(x*) = k*^T K^-1 y, var(x*) = 1 - k*^T K^-1 k*, log p = -y^T K^-1 y / 2 - log|K| / 2 - log
// 2pi.
GaussianProcess tiny() {
  Eigen::MatrixXd X(2, 1);
  X << 0.0, 1.0;
  Eigen::VectorXd y(2);
  y << 1.0, 2.0;
  GpHyper h;
  h.log_lengthscale = Eigen::VectorXd::Zero(1);
  h.log_signal_var = 0.0;
  h.log_noise_var = std::log(0.01);
  return GaussianProcess(X, y, {0}, h);
}

}  // namespace

TEST(GaussianProcess, MatchesHandComputedPosterior) {
  const GaussianProcess gp = tiny();
  EXPECT_NEAR(gp.kernel(gp.inputs().row(0), gp.inputs().row(1))(0, 0), 0.5239941088, 1e-9);
  Eigen::MatrixXd Xs(3, 1);
  Xs << 0.5, 0.25, 2.0;
  Eigen::VectorXd mean, var;
  gp.predict(Xs, &mean, &var);
  EXPECT_NEAR(mean[0], 1.6205716912, 1e-7);
  EXPECT_NEAR(var[0], 0.1047431052, 1e-7);
  EXPECT_NEAR(mean[1], 1.3073217568, 1e-7);
  EXPECT_NEAR(var[1], 0.0596143330, 1e-7);
  EXPECT_NEAR(mean[2], 1.0443988002, 1e-7);
  EXPECT_NEAR(var[2], 0.7041157682, 1e-7);
  EXPECT_NEAR(gp.log_marginal_likelihood(), -3.6722035061, 1e-7);
  // One point at a time agrees with the batch.
  double m, v;
  gp.predict_one(Xs.row(0), &m, &v);
  EXPECT_NEAR(m, mean[0], 1e-12);
  EXPECT_NEAR(v, var[0], 1e-12);
}

TEST(GaussianProcess, GradientMatchesFiniteDifferences) {
  Rng rng(7);
  const int n = 12;
  Eigen::MatrixXd X(n, 3);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) X(i, c) = rng.uniform();
    y[i] = std::sin(3 * X(i, 0)) + X(i, 1) * X(i, 2) + 0.05 * rng.normal();
  }
  const std::vector<int> groups = {0, 1, 1};  // columns 1 and 2 share a length scale
  GpHyper h;
  h.log_lengthscale = Eigen::Vector2d(-0.7, 0.2);
  h.log_signal_var = 0.3;
  h.log_noise_var = -3.0;
  Eigen::VectorXd g;
  const double f0 = GaussianProcess::log_marginal_likelihood(X, y, groups, h, &g);
  ASSERT_EQ(g.size(), 4);
  const double eps = 1e-6;
  for (int p = 0; p < 4; ++p) {
    GpHyper a = h, b = h;
    auto bump = [&](GpHyper &x, double d) {
      if (p < 2)
        x.log_lengthscale[p] += d;
      else if (p == 2)
        x.log_signal_var += d;
      else
        x.log_noise_var += d;
    };
    bump(a, eps);
    bump(b, -eps);
    const double fd = (GaussianProcess::log_marginal_likelihood(X, y, groups, a) -
                       GaussianProcess::log_marginal_likelihood(X, y, groups, b)) /
                      (2 * eps);
    EXPECT_NEAR(g[p], fd, 1e-5 * (1 + std::fabs(fd))) << "parameter " << p;
  }
  EXPECT_TRUE(std::isfinite(f0));
}

TEST(GaussianProcess, FitImprovesThePosteriorAndIsDeterministic) {
  Rng rng(3);
  const int n = 15;
  Eigen::MatrixXd X(n, 2);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    X(i, 0) = rng.uniform();
    X(i, 1) = rng.uniform();
    y[i] = std::sin(6 * X(i, 0));  // the second input is irrelevant
  }
  y = (y.array() - y.mean()) / std::sqrt((y.array() - y.mean()).square().mean());
  GpFitOptions o;
  o.seed = 11;
  const GaussianProcess a = GaussianProcess::fit(X, y, {0, 1}, o);
  const GaussianProcess b = GaussianProcess::fit(X, y, {0, 1}, o);
  EXPECT_EQ(a.hyper().log_lengthscale, b.hyper().log_lengthscale);
  EXPECT_EQ(a.hyper().log_noise_var, b.hyper().log_noise_var);
  // The relevant input gets the shorter length scale.
  EXPECT_LT(a.hyper().log_lengthscale[0], a.hyper().log_lengthscale[1]);
  const GaussianProcess start(X, y, {0, 1}, prior_median(o, 2));
  EXPECT_GT(a.log_marginal_likelihood(), start.log_marginal_likelihood());
}

TEST(CandidatePosterior, FantasiesMatchConditioningOnTheData) {
  Rng rng(5);
  Eigen::MatrixXd Xc(30, 2);
  for (int i = 0; i < 30; ++i) Xc.row(i) << rng.uniform(), rng.uniform();
  // Data: candidates 0..5; fantasies at candidates 10 and 20.
  Eigen::MatrixXd X = Xc.topRows(6);
  Eigen::VectorXd y(6);
  for (int i = 0; i < 6; ++i) y[i] = Xc(i, 0) - Xc(i, 1);
  GpHyper h;
  h.log_lengthscale = Eigen::Vector2d(-1.0, -0.5);
  h.log_signal_var = 0.0;
  h.log_noise_var = -5.0;
  const GaussianProcess gp(X, y, {0, 1}, h);
  CandidatePosterior post(gp, Xc);
  post.condition(10, 0.7);
  post.condition(20, -0.2);
  Eigen::MatrixXd X2(8, 2);
  X2 << X, Xc.row(10), Xc.row(20);
  Eigen::VectorXd y2(8);
  y2 << y, 0.7, -0.2;
  const GaussianProcess full(X2, y2, {0, 1}, h);
  Eigen::VectorXd mean, var;
  full.predict(Xc, &mean, &var);
  EXPECT_LT((post.mean() - mean).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((post.var() - var).cwiseAbs().maxCoeff(), 1e-8);
}

TEST(GaussianProcess, RejectsBadShapes) {
  Eigen::MatrixXd X(2, 1);
  X << 0, 1;
  Eigen::VectorXd y(3);
  y << 1, 2, 3;
  GpHyper h;
  h.log_lengthscale = Eigen::VectorXd::Zero(1);
  EXPECT_THROW(GaussianProcess(X, y, {0}, h), Error);
}
