#include "autotune/acquisition.hpp"

#include <algorithm>
#include <cmath>

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

}  // namespace autotune
