#include "autotune/acquisition.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autotune/vector_math.hpp"

namespace autotune {

double normal_pdf(double z) { return 0.3989422804014327 * std::exp(-0.5 * z * z); }

double normal_cdf(double z) { return 0.5 * std::erfc(-z * 0.7071067811865476); }

double expected_improvement(double mu, double sigma, double best, double xi) {
  const double gain = best - xi - mu;
  if (!(sigma > 0)) return std::max(gain, 0.0);
  const double z = gain / sigma;
  return std::max(gain * normal_cdf(z) + sigma * normal_pdf(z), 0.0);
}

double expected_improvement_lognormal(double mu, double sigma, double best) {
  if (!(best > 0)) return 0.0;
  if (!(sigma > 0)) return std::max(best - std::exp(mu), 0.0);
  const double z = (std::log(best) - mu) / sigma;
  return std::max(best * normal_cdf(z) - std::exp(mu + 0.5 * sigma * sigma) * normal_cdf(z - sigma),
                  0.0);
}

namespace {

constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;

}  // namespace

void expected_improvement(const double *mu, const double *sigma, std::size_t n, double best,
                          double xi, double *out) {
  // cdf = erfc(-z / sqrt2) / 2 and pdf = exp(-z^2 / 2) / sqrt(2 pi), each over the whole array.
  std::vector<double> cdf(n), pdf(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = sigma[i] > 0 ? (best - xi - mu[i]) / sigma[i] : 0.0;
    cdf[i] = -z * kInvSqrt2;
    pdf[i] = -0.5 * z * z;
  }
  erfc_in_place(cdf.data(), n);
  exp_in_place(pdf.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const double gain = best - xi - mu[i];
    out[i] = sigma[i] > 0 ? std::max(gain * 0.5 * cdf[i] + sigma[i] * kInvSqrt2Pi * pdf[i], 0.0)
                          : std::max(gain, 0.0);
  }
}

void expected_improvement_lognormal(const double *mu, const double *sigma, std::size_t n,
                                    double best, double *out) {
  if (!(best > 0)) {
    std::fill(out, out + n, 0.0);
    return;
  }
  // Phi(z), Phi(z - sigma) and exp(mu + sigma^2 / 2) (exp(mu) where sigma = 0), each over the
  // whole array.
  const double log_best = std::log(best);
  std::vector<double> c1(n), c2(n), m(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool s = sigma[i] > 0;
    const double z = s ? (log_best - mu[i]) / sigma[i] : 0.0;
    c1[i] = -z * kInvSqrt2;
    c2[i] = -(z - (s ? sigma[i] : 0.0)) * kInvSqrt2;
    m[i] = mu[i] + (s ? 0.5 * sigma[i] * sigma[i] : 0.0);
  }
  erfc_in_place(c1.data(), n);
  erfc_in_place(c2.data(), n);
  exp_in_place(m.data(), n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = sigma[i] > 0 ? std::max(best * 0.5 * c1[i] - m[i] * 0.5 * c2[i], 0.0)
                          : std::max(best - m[i], 0.0);
}

}  // namespace autotune
