// Expected improvement against its closed form and against numerical integration.
#include "autotune/acquisition.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace autotune;

TEST(ExpectedImprovement, ClosedFormValues) {
  // mu = 0, sigma = 1, best = 0: phi(0).
  EXPECT_NEAR(expected_improvement(0.0, 1.0, 0.0), 0.398942, 1e-6);
  // gain = best - mu = -1, z = -0.5: -Phi(-0.5) + 2 phi(-0.5).
  EXPECT_NEAR(expected_improvement(1.0, 2.0, 0.0), -0.3085375387 + 2 * 0.3520653268, 1e-9);
  // gain = 2, z = 4: almost all of the gain.
  EXPECT_NEAR(expected_improvement(-2.0, 0.5, 0.0), 2.0 * normal_cdf(4.0) + 0.5 * normal_pdf(4.0),
              1e-12);
  // No uncertainty: the plain gain, never negative.
  EXPECT_DOUBLE_EQ(expected_improvement(-1.0, 0.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(expected_improvement(1.0, 0.0, 0.0), 0.0);
  // The margin xi shifts the incumbent.
  EXPECT_NEAR(expected_improvement(0.0, 1.0, 0.0, 0.1), expected_improvement(0.1, 1.0, 0.0), 1e-15);
  // More uncertainty never lowers EI.
  EXPECT_GT(expected_improvement(1.0, 2.0, 0.0), expected_improvement(1.0, 1.0, 0.0));
}

TEST(ExpectedImprovement, NormalFunctions) {
  EXPECT_NEAR(normal_pdf(0.0), 0.3989422804, 1e-10);
  EXPECT_NEAR(normal_cdf(0.0), 0.5, 1e-15);
  EXPECT_NEAR(normal_cdf(1.96), 0.9750021049, 1e-9);
  EXPECT_NEAR(normal_cdf(-8.0), 6.22096e-16, 1e-20);
}

TEST(ExpectedImprovement, LogNormalMatchesIntegration) {
  // E[max(best - exp(Y), 0)], Y ~ N(mu, sigma^2), by the trapezoid rule over +-10 sigma.
  for (double mu : {-0.5, 0.0, 0.3}) {
    for (double sigma : {0.1, 0.5, 1.0}) {
      const double best = 1.0;
      const int steps = 200000;
      double sum = 0;
      for (int i = 0; i <= steps; ++i) {
        const double z = -10.0 + 20.0 * i / steps;
        const double w = (i == 0 || i == steps) ? 0.5 : 1.0;
        sum += w * std::max(best - std::exp(mu + sigma * z), 0.0) * normal_pdf(z);
      }
      sum *= 20.0 / steps;
      EXPECT_NEAR(expected_improvement_lognormal(mu, sigma, best), sum, 1e-7)
          << "mu " << mu << " sigma " << sigma;
    }
  }
  EXPECT_DOUBLE_EQ(expected_improvement_lognormal(std::log(0.5), 0.0, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(expected_improvement_lognormal(0.0, 1.0, 0.0), 0.0);
}

TEST(ExpectedImprovement, ArrayFormsEqualTheScalarOnes) {
  // Every (mu, sigma) pair of a grid, with sigma = 0 and far tails among them, in one array.
  std::vector<double> mu, sigma;
  for (double m : {-30.0, -3.0, -0.5, 0.0, 0.2, 1.0, 4.0, 40.0})
    for (double s : {0.0, 1e-9, 0.01, 0.3, 1.0, 2.5, 10.0}) {
      mu.push_back(m);
      sigma.push_back(s);
    }
  const std::size_t n = mu.size();
  std::vector<double> out(n);
  for (double best : {-1.0, 0.0, 0.7}) {
    for (double xi : {0.0, 0.05}) {
      expected_improvement(mu.data(), sigma.data(), n, best, xi, out.data());
      for (std::size_t i = 0; i < n; ++i) {
        const double want = expected_improvement(mu[i], sigma[i], best, xi);
        EXPECT_NEAR(out[i], want, 1e-14 + 1e-12 * want) << mu[i] << " " << sigma[i] << " " << best;
      }
    }
    expected_improvement_lognormal(mu.data(), sigma.data(), n, best, out.data());
    for (std::size_t i = 0; i < n; ++i) {
      const double want = expected_improvement_lognormal(mu[i], sigma[i], best);
      EXPECT_NEAR(out[i], want, 1e-14 + 1e-12 * want) << mu[i] << " " << sigma[i] << " " << best;
    }
  }
}
