#include "tier/placement.hpp"

#include <algorithm>
#include <cmath>

namespace autotune {
namespace {

std::uint64_t round_up(std::uint64_t n, std::uint64_t a) {
  return a <= 1 ? n : (n + a - 1) / a * a;
}
std::uint64_t round_down(std::uint64_t n, std::uint64_t a) { return a <= 1 ? n : n / a * a; }

bool fits(const TierRoom &t, std::uint64_t n) { return round_up(n, t.align) <= t.free; }

std::vector<std::uint64_t> fill(std::uint64_t size, const std::vector<TierRoom> &tiers,
                                std::vector<std::uint64_t> shares) {
  std::uint64_t placed = 0;
  for (auto s : shares) placed += s;
  std::uint64_t remaining = size - placed;
  for (size_t i = 0; i < tiers.size() && remaining > 0; ++i) {
    // What this tier can still take: its free space minus the pages its piece already uses.
    const std::uint64_t used = round_up(shares[i], tiers[i].align);
    const std::uint64_t room = tiers[i].free > used ? tiers[i].free - used : 0;
    // Fill up a partly used last page first.
    const std::uint64_t slack = used - shares[i];
    std::uint64_t take = std::min(remaining, slack + room);
    shares[i] += take;
    remaining -= take;
  }
  if (remaining > 0) return {};
  return shares;
}

}  // namespace

std::vector<std::uint64_t> plan_placement(PlacementPolicy policy, std::uint64_t size,
                                          const std::vector<TierRoom> &tiers,
                                          std::uint64_t min_part) {
  const size_t n = tiers.size();
  std::vector<std::uint64_t> shares(n, 0);
  if (n == 0) return size == 0 ? shares : std::vector<std::uint64_t>{};
  if (size == 0) return shares;
  if (policy == PlacementPolicy::automatic) {
    if (fits(tiers[0], size)) return fill(size, tiers, shares);
    policy = PlacementPolicy::bandwidth_proportional;
  }
  // A small object is one piece; splitting it would cost more than it saves.
  if (policy == PlacementPolicy::fill_fastest || size < 2 * std::max<std::uint64_t>(min_part, 1))
    return fill(size, tiers, shares);

  // The finish time T at which the tiers together take the object: tier i, started at once and
  // busy for T, writes min(free_i, max(0, bw_i * (T - latency_i))) bytes.  That total grows
  // with T, so T is found by bisection; with no latency this is water-filling.
  std::uint64_t room = 0;
  for (const auto &t : tiers) room += t.free;
  if (room < size) return {};
  auto taken = [&](double T, std::vector<double> *out) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const double x = std::min(static_cast<double>(tiers[i].free),
                                std::max(0.0, tiers[i].bandwidth * (T - tiers[i].latency)));
      if (out) (*out)[i] = x;
      sum += x;
    }
    return sum;
  };
  double lo = 0, hi = 0, min_bw = 0;
  for (const auto &t : tiers) {
    hi = std::max(hi, t.latency);
    if (t.free > 0 && t.bandwidth > 0)
      min_bw = min_bw == 0 ? t.bandwidth : std::min(min_bw, t.bandwidth);
  }
  if (min_bw <= 0) return fill(size, tiers, shares);
  hi += static_cast<double>(size) / min_bw;
  for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
    const double mid = (lo + hi) / 2;
    (taken(mid, nullptr) >= static_cast<double>(size) ? hi : lo) = mid;
  }
  std::vector<double> ideal(n, 0);
  taken(hi, &ideal);
  for (size_t i = 0; i < n; ++i) {
    std::uint64_t s = static_cast<std::uint64_t>(std::floor(ideal[i]));
    s = std::min(s, size);
    shares[i] = std::min(round_down(s, tiers[i].align), round_down(tiers[i].free, tiers[i].align));
  }
  std::uint64_t placed = 0;
  for (auto s : shares) placed += s;
  if (placed > size) {  // rounding can only lower shares, but stay safe
    for (size_t i = n; i-- > 0 && placed > size;) {
      const std::uint64_t cut = std::min(shares[i], placed - size);
      shares[i] -= cut;
      placed -= cut;
    }
  }
  // The rounding remainder goes to the fastest tier that can hold it whole, else anywhere.
  const std::uint64_t rest = size - placed;
  if (rest > 0) {
    bool done = false;
    for (size_t i = 0; i < n && !done; ++i)
      if (shares[i] > 0 && fits(tiers[i], shares[i] + rest)) {
        shares[i] += rest;
        done = true;
      }
    if (!done) {
      shares = fill(size, tiers, shares);
      if (shares.empty()) return shares;
    }
  }
  // Fold pieces below min_part into the biggest piece that can hold them.
  for (size_t i = 0; i < n; ++i) {
    if (shares[i] == 0 || shares[i] >= min_part) continue;
    size_t best = n;
    for (size_t j = 0; j < n; ++j)
      if (j != i && shares[j] > 0 && fits(tiers[j], shares[j] + shares[i]) &&
          (best == n || shares[j] > shares[best]))
        best = j;
    if (best != n) {
      shares[best] += shares[i];
      shares[i] = 0;
    }
  }
  return shares;
}

}  // namespace autotune
