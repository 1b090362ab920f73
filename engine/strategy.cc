#include "autotune/strategy.hpp"

#include <string>

#include "autotune/error.hpp"

namespace autotune {

const char *strategy_name(Strategy s) {
  switch (s) {
    case Strategy::bo:
      return "bo";
    case Strategy::random:
      return "random";
    case Strategy::exhaustive:
      return "exhaustive";
  }
  return "?";
}

Strategy parse_strategy(std::string_view field, std::string_view v) {
  if (v == "bo") return Strategy::bo;
  if (v == "random") return Strategy::random;
  if (v == "exhaustive") return Strategy::exhaustive;
  throw_invalid(std::string(field) + ": unknown strategy '" + std::string(v) +
                "'; allowed: bo, random, exhaustive");
}

const char *batch_mode_name(BatchMode b) {
  return b == BatchMode::kriging_believer ? "believer" : "liar";
}

BatchMode parse_batch_mode(std::string_view field, std::string_view v) {
  if (v == "believer") return BatchMode::kriging_believer;
  if (v == "liar") return BatchMode::constant_liar;
  throw_invalid(std::string(field) + ": unknown batch mode '" + std::string(v) +
                "'; allowed: believer, liar");
}

}  // namespace autotune
