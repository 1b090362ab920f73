// What the tier store's tests share: temporary directories on real media, reproducible bytes,
// and the error code (and message) a call throws.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "autotune/error.hpp"

namespace tier_test {

constexpr std::uint64_t MiB = 1ull << 20;

// A new directory under `base` (e.g. /dev/shm for the pmem tier, /tmp for the disk tier).
inline std::string make_temp_dir(const char *base) {
  std::string t = std::string(base) + "/autotune-tier-test-XXXXXX";
  if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp " + t);
  return t;
}

// n pseudo-random bytes, the same for the same seed.
inline std::vector<unsigned char> bytes(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  std::mt19937 rng(seed);
  for (auto &b : v) b = static_cast<unsigned char>(rng());
  return v;
}

// The code of the autotune::Error `fn` throws (and its message in *msg); a test failure when it
// throws none.
inline autotune::Errc code_of(const std::function<void()> &fn, std::string *msg = nullptr) {
  try {
    fn();
  } catch (const autotune::Error &e) {
    if (msg) *msg = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no autotune::Error was thrown";
  return autotune::Errc::internal;
}

}  // namespace tier_test
