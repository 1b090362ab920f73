#include "autotune/objective.hpp"

#include <cmath>
#include <string>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

Reference make_reference(double time, double cost) {
  if (!(time > 0) || !std::isfinite(time))
    throw_invalid("reference time '" + format_double(time) + "' must be a positive number");
  if (!(cost > 0) || !std::isfinite(cost))
    throw_invalid("reference cost '" + format_double(cost) + "' must be a positive number");
  return Reference{time, cost};
}

double run_cost(double billing_rate, int nodes, double time) {
  if (!(billing_rate >= 0) || nodes < 1 || !(time >= 0))
    throw_invalid("run cost needs billing rate >= 0, nodes >= 1 and time >= 0");
  return billing_rate * nodes * time;
}

double score(double time, double cost, const Reference &ref, double gamma) {
  if (!(gamma >= 0 && gamma <= 1))
    throw_invalid("gamma '" + format_double(gamma) +
                  "' is out of range; allowed: a number from 0 to 1");
  if (!ref.valid()) throw_invalid("score: the reference time and cost must be positive");
  if (!(time >= 0) || !(cost >= 0) || !std::isfinite(time) || !std::isfinite(cost))
    throw_invalid("score: time and cost must be non-negative numbers");
  return (1 - gamma) * time / ref.time + gamma * cost / ref.cost;
}

double parse_gamma(std::string_view field, std::string_view value) {
  return parse_double(field, value, 0, 1);
}

}  // namespace autotune
