// A small seeded random number generator whose sequence is the same on every platform and
// standard library (std::uniform_real_distribution and std::normal_distribution are not), so a
// seed reproduces a search exactly.  SplitMix64 (Steele, Lea & Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014).
//
// Thread safety: none; one Rng per thread.  Seeds are always injected by the caller.
#pragma once

#include <cmath>
#include <cstdint>

namespace autotune {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  // Derives independent streams from one seed and a stream number.
  Rng(std::uint64_t seed, std::uint64_t stream) : state_(seed) {
    state_ = next() ^ (stream * 0xd1342543de82ef95ull);
    next();
  }

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n >= 1 (Lemire's multiply-shift; the bias is below 2^-64 * n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Standard normal (Box-Muller, one value per call).
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t state_;
};

}  // namespace autotune
