// For tests of autotune.conf keys: the message Conf::load_text gives for `text`, or "" when the
// text loads.
#pragma once

#include <string>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"

namespace autotune::test {

inline std::string conf_error(const std::string &text) {
  try {
    Conf::load_text(text, "autotune.conf");
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

}  // namespace autotune::test
