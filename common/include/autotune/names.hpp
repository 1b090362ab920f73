// Validation of the names users give: tuning classes.
#pragma once

#include <string_view>

namespace autotune {

// Longest class name accepted.
inline constexpr std::size_t kClassNameMax = 64;

// Throws Error(Errc::invalid_argument) unless `name` is 1..64 characters from [A-Za-z0-9._-].
// `field` names the option or key the value came from (e.g. "--autotune"), for the message.
void validate_class_name(std::string_view name, std::string_view field = "--autotune");

}  // namespace autotune
