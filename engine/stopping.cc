#include "autotune/stopping.hpp"

#include <cmath>
#include <limits>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {
namespace {

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g%%", 100.0 * f);
  return buf;
}

}  // namespace

const char *stop_rule_name(StopRule r) {
  switch (r) {
    case StopRule::none:
      return "none";
    case StopRule::budget:
      return "budget";
    case StopRule::exhausted:
      return "exhausted";
    case StopRule::improvement:
      return "improvement";
    case StopRule::ei:
      return "ei";
  }
  return "?";
}

void StoppingOptions::validate() const {
  if (round_trials < 1) throw_invalid("round trials must be at least 1");
  if (!(min_improvement >= 0) || !std::isfinite(min_improvement))
    throw_invalid("the improvement threshold '" + format_double(min_improvement) +
                  "' must be a number >= 0");
  if (!(ei_fraction >= 0) || !std::isfinite(ei_fraction))
    throw_invalid("the EI fraction '" + format_double(ei_fraction) + "' must be a number >= 0");
}

StopDecision check_history_rules(const std::vector<Observation> &done, std::size_t running,
                                 std::size_t untried, const StoppingOptions &o) {
  const size_t n = done.size();
  if (o.budget > 0 && n >= o.budget)
    return {StopRule::budget, "the budget of " + std::to_string(o.budget) + " trials is spent"};
  if (untried == 0 && running == 0) return {StopRule::exhausted, "every candidate has been tried"};
  if (o.min_improvement > 0 && n >= o.min_trials) {
    const size_t rounds = n / o.round_trials;
    if (rounds >= 2) {
      const double inf = std::numeric_limits<double>::infinity();
      double before = inf, after = inf;
      for (size_t i = 0; i < rounds * o.round_trials; ++i) {
        if (done[i].failed) continue;
        if (i < (rounds - 1) * o.round_trials) before = std::min(before, done[i].score);
        after = std::min(after, done[i].score);
      }
      if (before < inf) {
        const double gain = (before - after) / before;
        if (gain < o.min_improvement)
          return {StopRule::improvement,
                  "the best score improved by " + percent(gain) + " in the last round of " +
                      std::to_string(o.round_trials) + " trials (less than " +
                      percent(o.min_improvement) + ")"};
      }
    }
  }
  return {};
}

StopDecision check_ei_rule(double max_ei, double incumbent, std::size_t done,
                           const StoppingOptions &o) {
  if (o.ei_fraction > 0 && done >= o.min_trials && incumbent > 0 &&
      max_ei < o.ei_fraction * incumbent)
    return {StopRule::ei, "the largest expected improvement is " + percent(max_ei / incumbent) +
                              " of the best score (less than " + percent(o.ei_fraction) + ")"};
  return {};
}

}  // namespace autotune
