// Shared by the libFuzzer targets of tests/fuzz (scripts/fuzz runs them).
//
// Each target feeds its input to a parser the product uses on user or admin input.  A clear
// autotune::Error is the expected outcome for bad input and is caught; anything else (a crash, a
// sanitizer report, an exception of another type escaping, a hang, a broken round trip checked
// with FUZZ_CHECK) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/error.hpp"

namespace fuzz {

// Aborts (a finding libFuzzer reports with the input) when `ok` is false.
#define FUZZ_CHECK(ok, what)                                                     \
  do {                                                                           \
    if (!(ok)) {                                                                 \
      std::fprintf(stderr, "fuzz: check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                   std::string(what).c_str());                                   \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

inline std::string_view as_text(const std::uint8_t *data, std::size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

// Runs `f`; an autotune::Error (the parser refused the input) is the expected outcome and is
// swallowed.  Its message must not be empty: a refusal says what was wrong.  With FUZZ_VERBOSE set
// in the environment, each refusal is printed (to see what a seed reaches: `fuzz_x FILE`).
template <class F>
bool refused(F &&f) {
  try {
    f();
    return false;
  } catch (const autotune::Error &e) {
    FUZZ_CHECK(e.what()[0] != '\0', "an Error with an empty message");
    static const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
    return true;
  }
}

// The lines of `text` (split at '\n', the last one possibly without one).
inline std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    out.emplace_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace fuzz
