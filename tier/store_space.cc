// Free space, never stored but computed from a scan (store_scan.cc) under the store lock: the
// bytes that committed records and live reservations use on each tier (used_bytes; pmem pieces
// count whole pages), the free extents of a pmem pool (pmem_gaps) and their allocation to a piece
// (alloc_pmem: best fit in one gap, else the largest gaps first), the room each tier offers to
// placement (rooms, with the tiers' bandwidths and latencies) and the Error(no_space) message.
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "autotune/units.hpp"
#include "tier/placement.hpp"
#include "tier/record.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

std::vector<std::uint64_t> TierStore::Impl::used_bytes(const Scan &s) const {
  std::vector<std::uint64_t> used(tiers.size(), 0);
  for (const auto *set : {&s.records, &s.reserved})
    for (const auto &r : *set)
      for (const auto &p : r.pieces) {
        const int i = tier_index(p.tier);
        if (i < 0) continue;
        used[static_cast<size_t>(i)] += p.file.empty() ? round_page(p.length) : p.length;
      }
  return used;
}

std::vector<Extent> TierStore::Impl::pmem_gaps(const Scan &s, size_t t) const {
  std::vector<Extent> busy;
  for (const auto *set : {&s.records, &s.reserved})
    for (const auto &r : *set)
      for (const auto &p : r.pieces)
        if (p.tier == tiers[t].spec.name)
          for (const auto &e : p.extents) busy.push_back(e);
  std::sort(busy.begin(), busy.end(),
            [](const Extent &a, const Extent &b) { return a.off < b.off; });
  std::vector<Extent> gaps;
  std::uint64_t at = 0;
  const std::uint64_t end = tiers[t].map->size() / kTierPage * kTierPage;
  for (const auto &e : busy) {
    if (e.off > at) gaps.push_back({at, std::min(e.off, end) - at});
    at = std::max(at, e.off + e.len);
    if (at >= end) break;
  }
  if (at < end) gaps.push_back({at, end - at});
  return gaps;
}

std::vector<TierRoom> TierStore::Impl::rooms(const Scan &s) {
  std::vector<TierRoom> out(tiers.size());
  const auto used = used_bytes(s);
  std::lock_guard<std::mutex> g(mu);
  for (size_t i = 0; i < tiers.size(); ++i) {
    out[i].bandwidth = std::max(tiers[i].bandwidth, 1.0);
    out[i].latency = tiers[i].latency;
    if (tiers[i].spec.kind == TierKind::pmem && tiers[i].lost) {
      out[i].free = 0;  // its pool is gone: nothing is placed there
      out[i].align = kTierPage;
    } else if (tiers[i].spec.kind == TierKind::pmem) {
      std::uint64_t f = 0;
      for (const auto &gap : pmem_gaps(s, i)) f += gap.len;
      out[i].free = f;
      out[i].align = kTierPage;
    } else {
      out[i].free = tiers[i].spec.capacity > used[i] ? tiers[i].spec.capacity - used[i] : 0;
      out[i].align = 1;
    }
  }
  return out;
}

std::vector<bool> TierStore::Impl::pools_gone() const {
  std::vector<bool> out(tiers.size(), false);
  for (size_t i = 0; i < tiers.size(); ++i) {
    const Tier &t = tiers[i];
    if (t.spec.kind != TierKind::pmem || !t.map) continue;
    struct stat st;
    out[i] = ::stat(t.pool.c_str(), &st) != 0 || st.st_dev != t.pool_dev || st.st_ino != t.pool_ino;
  }
  return out;
}

// Best fit in one gap when possible, else the largest gaps first.
std::vector<Extent> TierStore::Impl::alloc_pmem(std::vector<Extent> &gaps,
                                                std::uint64_t len) const {
  std::uint64_t need = round_page(len);
  std::vector<Extent> out;
  size_t best = gaps.size();
  for (size_t i = 0; i < gaps.size(); ++i)
    if (gaps[i].len >= need && (best == gaps.size() || gaps[i].len < gaps[best].len)) best = i;
  if (best != gaps.size()) {
    out.push_back({gaps[best].off, need});
    gaps[best].off += need;
    gaps[best].len -= need;
    return out;
  }
  std::vector<size_t> order(gaps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return gaps[a].len > gaps[b].len; });
  for (size_t i : order) {
    if (need == 0) break;
    const std::uint64_t take = std::min(need, gaps[i].len);
    if (take == 0) continue;
    out.push_back({gaps[i].off, take});
    gaps[i].off += take;
    gaps[i].len -= take;
    need -= take;
  }
  if (need != 0) throw Error(Errc::internal, "pmem allocation does not match the free space");
  std::sort(out.begin(), out.end(), [](const Extent &a, const Extent &b) { return a.off < b.off; });
  return out;
}

std::string TierStore::Impl::no_space_message(const std::string &key, std::uint64_t size,
                                              const Scan &s) {
  const auto r = rooms(s);
  std::string m = "put " + shown(key) + ": " + format_size(size) +
                  " does not fit in the free space of the store's tiers (";
  for (size_t i = 0; i < tiers.size(); ++i)
    m += (i ? ", " : "") + tiers[i].spec.name + ": " + format_size(r[i].free) + " free of " +
         format_size(tiers[i].spec.capacity);
  return m + ")";
}

}  // namespace autotune
