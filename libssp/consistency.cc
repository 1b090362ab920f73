#include "ssp/consistency.hpp"

#include <algorithm>
#include <string>

#include "ssp/error.hpp"

namespace ssp {

ConsistencyPolicy ConsistencyPolicy::from_staleness(int s) {
  if (s < 0)
    throw Error(Errc::invalid_argument,
                "ssp: staleness: '" + std::to_string(s) +
                    "' is out of range; allowed: 0 (BSP), 1 and up (SSP), or unbounded (ASP)");
  if (s == 0) return ConsistencyPolicy(Model::bsp, 0);
  if (s == kAsync) return ConsistencyPolicy(Model::asp, kAsync);
  return ConsistencyPolicy(Model::ssp, s);
}

std::string ConsistencyPolicy::name() const {
  switch (model_) {
    case Model::bsp:
      return "BSP";
    case Model::asp:
      return "ASP";
    case Model::ssp:
      break;
  }
  return "SSP(" + std::to_string(staleness_) + ")";
}

std::int64_t ConsistencyPolicy::required_min_clock(std::int64_t c) const {
  if (model_ == Model::asp) return std::numeric_limits<std::int64_t>::min();
  return c - staleness_;
}

bool ConsistencyPolicy::cache_usable(std::int64_t stamp, std::int64_t fetched_at,
                                     std::int64_t c) const {
  // A row is read fresh at least once per clock; within the clock the cached copy serves.
  if (fetched_at != c) return false;
  return model_ == Model::asp || stamp >= required_min_clock(c);
}

VectorClock::VectorClock(int workers, std::int64_t start)
    : clocks_(static_cast<std::size_t>(std::max(workers, 0)), start), min_(start) {}

bool VectorClock::advance(int w, std::int64_t clock) {
  if (w < 0 || w >= workers())
    throw Error(Errc::internal, "vector clock: worker " + std::to_string(w) + " out of range");
  auto &c = clocks_[static_cast<std::size_t>(w)];
  if (clock < c)
    throw Error(Errc::internal, "vector clock: worker " + std::to_string(w) + " went back from " +
                                    std::to_string(c) + " to " + std::to_string(clock));
  const bool was_min = c == min_;
  c = clock;
  if (!was_min) return false;
  const std::int64_t m = *std::min_element(clocks_.begin(), clocks_.end());
  const bool raised = m > min_;
  min_ = m;
  return raised;
}

std::int64_t VectorClock::max() const {
  return clocks_.empty() ? min_ : *std::max_element(clocks_.begin(), clocks_.end());
}

}  // namespace ssp
