// The names of the engine's search strategies and batch modes (optimizer.hpp explains them).
// Kept apart from optimizer.hpp so configuration code can use them without Eigen.
#pragma once

#include <string_view>

namespace autotune {

enum class Strategy { bo, random, exhaustive };
enum class BatchMode { kriging_believer, constant_liar };

const char *strategy_name(Strategy s);  // "bo", "random", "exhaustive"
// Throws Error(invalid_argument) naming `field` and the allowed values.
Strategy parse_strategy(std::string_view field, std::string_view value);
const char *batch_mode_name(BatchMode b);  // "believer", "liar"
BatchMode parse_batch_mode(std::string_view field, std::string_view value);

}  // namespace autotune
