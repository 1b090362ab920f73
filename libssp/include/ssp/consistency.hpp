// Consistency policies of the parameter server: BSP, SSP(s) and ASP, as one small value class
// that knows nothing of transport or storage (after Bosen's SSPConsistencyController; Ho et al.,
// "More Effective Distributed ML via a Stale Synchronous Parallel Parameter Server", NIPS 2013).
//
// Clocks.  Every worker starts at clock c0 (0, or the clock of a restored snapshot) and each call
// of clock() moves it to the next one.  An update made while a worker is at clock c is "an update
// of clock c"; clock() flushes it to the servers.  A server's minimum clock m is the smallest clock
// any worker has reached; it holds every update of every clock < m.
//
// The guarantee (s = staleness):  a worker at clock c sees every update from clocks <= c - s - 1
// of every worker, and all of its own writes.  It may see newer updates too.  A worker more than
// s clocks ahead of the slowest one blocks in clock() until the slowest catches up, so no update
// it can see is from a clock > c + s.
//
//   BSP = SSP(0):   at clock c a worker sees everything of clocks < c (a barrier per clock).
//   SSP(s):         bounded staleness s >= 1.
//   ASP:            no bound; a worker never waits.
//
// Every policy refreshes a cached row at its first read in each clock (see cache_usable).
//
// Example:
//   auto p = ssp::ConsistencyPolicy::from_staleness(2);   // SSP(2)
//   p.required_min_clock(10);        // 8: reads at clock 10 need the servers' minimum >= 8
//   p.may_proceed(10, 7);            // false: the slowest worker is 3 clocks behind
//
// Thread safety: immutable value; safe to share.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ssp {

// Staleness value that selects ASP (unbounded staleness).
inline constexpr int kAsync = std::numeric_limits<int>::max();

class ConsistencyPolicy {
 public:
  enum class Model { bsp, ssp, asp };

  // 0 -> BSP, 1..kAsync-1 -> SSP(s), kAsync -> ASP.  Throws Error(invalid_argument) for s < 0.
  static ConsistencyPolicy from_staleness(int staleness);
  static ConsistencyPolicy bsp() { return from_staleness(0); }
  static ConsistencyPolicy asp() { return from_staleness(kAsync); }

  Model model() const { return model_; }
  int staleness() const { return staleness_; }  // kAsync for ASP
  // "BSP", "SSP(2)", "ASP".
  std::string name() const;

  // The minimum clock the servers must have reached before a worker at clock `c` may read or
  // run: c - s (BSP: c).  ASP: the lowest int64 (never waits).
  std::int64_t required_min_clock(std::int64_t c) const;

  // Whether a worker at clock `c` may proceed when the slowest worker is at `min_clock`.
  bool may_proceed(std::int64_t c, std::int64_t min_clock) const {
    return min_clock >= required_min_clock(c);
  }

  // Whether a cached row may be read at clock `c`.  `stamp` is the server's minimum clock when the
  // row was sent (it held every update of clocks < stamp); `fetched_at` is the reader's clock when
  // it fetched the row.  A row is fetched again at its first read in each clock (the server
  // answers at once when its minimum satisfies the bound, so reads are as fresh as the bound
  // allows without waiting), then served from the cache for the rest of the clock:
  // fetched_at == c, and for SSP/BSP also stamp >= c - s.
  bool cache_usable(std::int64_t stamp, std::int64_t fetched_at, std::int64_t c) const;

 private:
  ConsistencyPolicy(Model m, int s) : model_(m), staleness_(s) {}
  Model model_;
  int staleness_;
};

// The clocks of all workers as a server sees them.  min() is the slowest worker's clock.
// Preconditions: worker indices in [0, workers); clocks never go backwards (checked).
class VectorClock {
 public:
  VectorClock(int workers = 0, std::int64_t start = 0);
  // Sets worker w's clock; returns true when that raised min().
  bool advance(int w, std::int64_t clock);
  std::int64_t min() const { return min_; }
  std::int64_t max() const;
  std::int64_t at(int w) const { return clocks_.at(static_cast<std::size_t>(w)); }
  int workers() const { return static_cast<int>(clocks_.size()); }

 private:
  std::vector<std::int64_t> clocks_;
  std::int64_t min_ = 0;
};

}  // namespace ssp
