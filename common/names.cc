#include "autotune/names.hpp"

#include <string>

#include "autotune/error.hpp"

namespace autotune {

void validate_class_name(std::string_view name, std::string_view field) {
  const std::string allowed = "1-" + std::to_string(kClassNameMax) +
                              " characters from A-Z a-z 0-9 . _ -";
  if (name.empty()) throw_invalid(std::string(field) + ": the class name is empty; allowed: " + allowed);
  if (name.size() > kClassNameMax)
    throw_invalid(std::string(field) + ": the class name is " + std::to_string(name.size()) +
                  " characters long; allowed: " + allowed);
  for (char ch : name) {
    const bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
    if (!ok) {
      std::string shown = (ch == ' ') ? "a space"
                          : (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
                              ? "a control character"
                              : std::string("'") + ch + "'";
      throw_invalid(std::string(field) + ": the class name '" + std::string(name) + "' contains " +
                    shown + "; allowed: " + allowed);
    }
  }
}

}  // namespace autotune
