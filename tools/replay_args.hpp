// What both replays (`autotune replay` and `autotune replay --workflow`) share: the options that
// name the table and its columns, comma-separated lists, and how their figures print.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autotune/replay.hpp"
#include "args.hpp"

namespace autotune::cli {

// "a,b,,c" -> {"a", "b", "", "c"}: every item, empty ones included (the caller names them).
std::vector<std::string> split_list(const std::string &s);

// --table (required), --group, --features, --derive, --time-column, --cost-column and
// --ok-column into `table` and `spec`.  Throws Error(invalid_argument) naming the option.
void parse_table_options(const Args &args, std::string &table, ReplaySpec &spec);

// A median or p90 of trials (or runs): ">BUDGET" when never reached (infinite), else the number
// with one decimal when it has a fraction.
std::string count_text(double v, std::size_t budget);

// A ratio as a percentage with one decimal; "-" when it is not finite.
std::string pct(double v);

// The number, or null when it is not finite (never reached).
nlohmann::json json_number(double v);

}  // namespace autotune::cli
