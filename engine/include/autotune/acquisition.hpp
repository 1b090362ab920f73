// Expected improvement, in closed form, for minimization.
//
// For a Gaussian prediction Y ~ N(mu, sigma^2) and the incumbent (best observed) value `best`:
//   EI = E[max(best - xi - Y, 0)] = (best - xi - mu) Phi(z) + sigma phi(z),  z = (best - xi - mu) /
//   sigma
// (Jones, Schonlau & Welch, "Efficient global optimization of expensive black-box functions",
// J. Global Optimization 13, 1998, eq. 15; xi >= 0 is the exploration margin of Lizotte's thesis,
// 2008: an improvement must beat the incumbent by xi to count).  mu = 0, sigma = 1, best = 0,
// xi = 0 gives phi(0) = 0.398942.  sigma = 0 gives max(best - xi - mu, 0).
//
// For a log-normal prediction (the engine models log scores): log S ~ N(mu, sigma^2), the
// expected improvement in score units over `best` > 0 is
//   E[max(best - S, 0)] = best Phi(z) - exp(mu + sigma^2/2) Phi(z - sigma),  z = (log best - mu) /
//   sigma
// which the stopping rule compares with a fraction of the incumbent score.
//
// The array forms compute the same values for n candidates at once (out[i] from mu[i] and
// sigma[i]), with exp and erfc vectorized (vector_math.hpp): equal within rounding.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>

namespace autotune {

double normal_pdf(double z);
double normal_cdf(double z);

double expected_improvement(double mu, double sigma, double best, double xi = 0.0);
double expected_improvement_lognormal(double mu, double sigma, double best);

void expected_improvement(const double *mu, const double *sigma, std::size_t n, double best,
                          double xi, double *out);
void expected_improvement_lognormal(const double *mu, const double *sigma, std::size_t n,
                                    double best, double *out);

}  // namespace autotune
