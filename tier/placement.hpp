// PlacementPolicy: how many bytes of an object each tier takes (internal; pure functions, no I/O).
//
// fill-fastest (Hermes' top-down placement): walk the tiers from the fastest; each takes
//   min(remaining, free).
// bandwidth-proportional: the split that makes every tier finish at the same time when the
//   pieces are written in parallel: latency_i + piece_i / bw_i equal for all tiers that take a
//   piece (without latencies, piece_i = S * bw_i / sum(bw)).  A tier whose share exceeds its free
//   space is capped at its free space and the rest is re-split among the others in proportion to
//   their bandwidth (water-filling); a tier whose latency exceeds the finish time takes nothing.
//   This minimises max_i(latency_i + piece_i / bw_i) under the capacity limits.
// auto: fill-fastest when the whole object fits in the fastest tier's free space, else
//   bandwidth-proportional.
// All then round each aligned tier's piece down to its alignment (a pmem tier allocates whole
// pages), hand the remainder to the fastest tier that can hold it, and fold pieces smaller than
// `min_part` into a bigger piece when one can hold them (a 10-byte disk piece costs an fsync).
#pragma once

#include <cstdint>
#include <vector>

#include "autotune/tier_conf.hpp"

namespace autotune {

struct TierRoom {
  double bandwidth = 0;     // bytes per second (> 0)
  std::uint64_t free = 0;   // bytes this object may use on the tier (a multiple of `align`)
  std::uint64_t align = 1;  // allocation unit: a piece of n bytes uses round_up(n, align)
  double latency = 0;       // seconds a piece costs whatever its size (e.g. fsync)
};

// Bytes per tier (same order as `tiers`, which is fastest first), summing to `size`; an empty
// vector when the object does not fit in the free space of all tiers together.
std::vector<std::uint64_t> plan_placement(PlacementPolicy policy, std::uint64_t size,
                                          const std::vector<TierRoom> &tiers,
                                          std::uint64_t min_part);

}  // namespace autotune
