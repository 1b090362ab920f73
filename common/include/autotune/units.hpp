// Parsing and printing of the quantities users write: memory and capacity sizes, bandwidths,
// fractions, counts.  Every parser takes the name of the field the value came from and throws
// Error(Errc::invalid_argument) with a message that names the field, quotes the value and says
// what is allowed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace autotune {

// "512M", "2G", "1.5T", "4096K", "100" (a bare number is in `default_unit`: 'M' for Slurm-style
// memory, 'B' for byte counts).  Suffixes K, M, G, T (powers of 1024), optional trailing "B"/"iB".
// Returns bytes.  Rejects negative, empty, overflowing, and unknown units.
std::uint64_t parse_size(std::string_view field, std::string_view value, char default_unit = 'M');

// Bytes as the shortest exact Slurm-style string: 536870912 -> "512M", 1073741824 -> "1G",
// 1000 -> "1000B".
std::string format_size(std::uint64_t bytes);

// Megabytes (Slurm's memory unit) from a size string, rounded up.
std::uint64_t parse_mem_mb(std::string_view field, std::string_view value);

// A number in [lo, hi].  parse_int rejects fractions and trailing junk.
double parse_double(std::string_view field, std::string_view value, double lo, double hi);
long long parse_int(std::string_view field, std::string_view value, long long lo, long long hi);

// "yes|no|true|false|1|0|on|off" (case-insensitive).
bool parse_bool(std::string_view field, std::string_view value);

// Shortest round-trip text of a double ("0.3", "1e-05"); integers in full ("10", not "1e+01").
std::string format_double(double v);

// The items of a comma-separated KEY=VALUE list ("nodes=2,workers=4"), in order, as views into
// `text`.  Throws Error(invalid_argument) "FIELD: empty item in '...'" or "FIELD: 'x' is not
// DIMENSION=<value_name>".
std::vector<std::pair<std::string_view, std::string_view>> split_assignments(std::string_view field,
                                                                             std::string_view text,
                                                                             std::string_view value_name);

}  // namespace autotune
