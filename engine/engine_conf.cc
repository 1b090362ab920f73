#include "autotune/engine_conf.hpp"

#include <string>
#include <string_view>

#include "autotune/design.hpp"
#include "autotune/raw_conf.hpp"
#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

StoppingOptions EngineConf::stopping(std::size_t budget) const {
  StoppingOptions s;
  s.budget = budget;
  s.min_improvement = min_improvement;
  s.round_trials = round_trials;
  s.ei_fraction = ei_fraction;
  s.min_trials = min_trials;
  return s;
}

const char *kernel_name(GpKernel k) {
  switch (k) {
    case GpKernel::ard: return "ard";
    case GpKernel::additive: return "additive";
    case GpKernel::ard_additive: return "ard+additive";
  }
  return "?";
}

GpKernel parse_kernel(std::string_view field, std::string_view value) {
  for (GpKernel k : {GpKernel::ard, GpKernel::additive, GpKernel::ard_additive})
    if (value == kernel_name(k)) return k;
  throw_invalid(std::string(field) + ": '" + std::string(value) +
                "' is not a kernel; allowed: ard, additive, ard+additive");
}

const char *trend_name(Trend t) {
  switch (t) {
    case Trend::no: return "no";
    case Trend::yes: return "yes";
    case Trend::automatic: return "auto";
  }
  return "?";
}

Trend parse_trend(std::string_view field, std::string_view value) {
  if (value == "auto") return Trend::automatic;
  try {
    return parse_bool(field, value) ? Trend::yes : Trend::no;
  } catch (const Error &) {
    throw_invalid(std::string(field) + ": '" + std::string(value) +
                  "' is not allowed; allowed: auto, yes, no (or true, false, 1, 0, on, off)");
  }
}

void parse_engine_section(RawConf &raw, EngineConf &out) {
  auto int_key = [&](const char *key, long long lo, long long hi, auto *dst) {
    if (auto l = raw.take_line(key))
      *dst = static_cast<std::remove_pointer_t<decltype(dst)>>(
          parse_int(l->where() + ": " + key, l->tokens[0].value, lo, hi));
  };
  auto double_key = [&](const char *key, double lo, double hi, double *dst) {
    if (auto l = raw.take_line(key))
      *dst = parse_double(l->where() + ": " + key, l->tokens[0].value, lo, hi);
  };
  if (auto l = raw.take_line("InitialTrials"))
    out.initial_trials = parse_initial_trials(l->where() + ": InitialTrials", l->tokens[0].value);
  std::string budget_where;
  if (auto l = raw.take_line("DefaultBudget")) {
    out.default_budget = static_cast<std::size_t>(
        parse_int(l->where() + ": DefaultBudget", l->tokens[0].value, 1, 100000));
    budget_where = l->where();
  }
  if (auto l = raw.take_line("MaxBudget")) {
    out.max_budget = static_cast<std::size_t>(
        parse_int(l->where() + ": MaxBudget", l->tokens[0].value, 1, 100000));
    if (budget_where.empty()) budget_where = l->where();
  }
  double_key("DefaultGamma", 0, 1, &out.default_gamma);
  if (auto l = raw.take_line("Seed"))
    out.seed = static_cast<std::uint64_t>(
        parse_int(l->where() + ": Seed", l->tokens[0].value, 0, 9007199254740991LL));
  double_key("StopImprovement", 0, 1, &out.min_improvement);
  int_key("RoundTrials", 1, 1000, &out.round_trials);
  double_key("StopEIFraction", 0, 1, &out.ei_fraction);
  int_key("MinTrials", 0, 100000, &out.min_trials);
  double_key("ExplorationMargin", 0, 10, &out.exploration_margin);
  if (auto l = raw.take_line("InputWarping"))
    out.input_warping = parse_bool(l->where() + ": InputWarping", l->tokens[0].value);
  if (auto l = raw.take_line("LinearTrend"))
    out.linear_trend = parse_trend(l->where() + ": LinearTrend", l->tokens[0].value);
  if (auto l = raw.take_line("Kernel"))
    out.kernel = parse_kernel(l->where() + ": Kernel", l->tokens[0].value);
  if (auto l = raw.take_line("TimeModel"))
    out.time_model = parse_time_model(l->where() + ": TimeModel", l->tokens[0].value);
  if (auto l = raw.take_line("BatchMode"))
    out.batch = parse_batch_mode(l->where() + ": BatchMode", l->tokens[0].value);
  std::string space_where;
  if (auto l = raw.take_line("DefaultSpace")) {
    out.default_space = SpaceSpec::parse(l->tokens[0].value, l->where() + ": DefaultSpace");
    space_where = l->where();
  }
  if (auto l = raw.take_line("SpaceLimits"))
    out.space_limits = SpaceSpec::parse(l->tokens[0].value, l->where() + ": SpaceLimits");
  if (out.default_budget > out.max_budget)
    throw_invalid(budget_where + ": DefaultBudget " + std::to_string(out.default_budget) +
                  " is above MaxBudget " + std::to_string(out.max_budget));
  if (!space_where.empty() && !out.space_limits.empty())
    // A default that the limits would refuse from a user is an error of the site's own file.
    restrict_space(out.default_space, SpaceSpec{}, out.space_limits,
                   space_where + ": DefaultSpace");
  // So is a default larger than job_submit takes from a user (a new class would be refused).
  if (!space_where.empty()) check_space_size(out.default_space, 1, space_where + ": DefaultSpace");
}

}  // namespace autotune
