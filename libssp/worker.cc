// ssp::Worker, the worker side of a Context (see worker.hpp): owns the worker's clock, what it
// knows of the servers' clocks, and per table its read cache and unsent increments; runs
// run()'s task loop.  Thread safety: none; the Context's thread only.
#include "worker.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "codec.hpp"
#include "profile.hpp"
#include "protocol.hpp"
#include "ssp/error.hpp"

namespace ssp {

namespace {
// Rows fetched together when a read misses the cache (an aligned block).
constexpr std::int64_t kFetchBlock = 64;
// get_at() of fewer rows fetches their blocks; of more, exactly the rows that miss.
constexpr std::int64_t kFewRows = 8;
// fresh_reads: the shortest time between two kGetFresh while the servers are behind.
constexpr double kFreshRetryS = 0.001;
}  // namespace

Worker::Worker(Transport &tx, const Tables &tables, const ConsistencyPolicy &policy, int servers,
               std::size_t flush_bytes, bool fresh_reads, Profiler &profiler)
    : tx_(tx),
      tables_(tables),
      policy_(policy),
      servers_(servers),
      flush_bytes_(flush_bytes),
      fresh_reads_(fresh_reads),
      profiler_(profiler),
      known_min_(static_cast<std::size_t>(servers), 0),
      prefetching_(static_cast<std::size_t>(servers), 0) {}

void Worker::add_table() { caches_.emplace_back(); }

void Worker::reset_table(int id) {
  Cache &c = caches_[static_cast<std::size_t>(id)];
  c.rows.clear();
  c.stamp.clear();
  c.fetched_at.clear();
  c.pending.clear();
  c.dirty.clear();
  c.dirty_rows.clear();
  c.read_whole_at = kNone;
  c.prefetching = false;
}

void Worker::resume_at(std::int64_t clock) {
  clock_ = clock;
  known_min_.assign(static_cast<std::size_t>(servers_), clock);
}

std::int64_t Worker::min_known() const {
  return *std::min_element(known_min_.begin(), known_min_.end());
}

void Worker::note_min(int server, std::int64_t m) {
  auto &k = known_min_[static_cast<std::size_t>(server)];
  k = std::max(k, m);
}

void Worker::invalidate_caches() {
  for (auto &c : caches_)
    if (!c.stamp.empty()) std::fill(c.stamp.begin(), c.stamp.end(), kNone);
}

void Worker::ensure_cache(const TableShape &t, Cache &c) {
  if (!c.stamp.empty()) return;
  c.rows.assign(static_cast<std::size_t>(t.rows) * t.rb, 0);
  c.stamp.assign(static_cast<std::size_t>(t.rows), kNone);
  c.fetched_at.assign(static_cast<std::size_t>(t.rows), kNone);
}

void Worker::ensure_pending(const TableShape &t, Cache &c) {
  if (!c.dirty.empty()) return;
  c.pending.assign(static_cast<std::size_t>(t.rows) * t.rb, 0);
  c.dirty.assign(static_cast<std::size_t>(t.rows), 0);
}

std::vector<int> Worker::send_get(int id, const std::vector<ShardMap::Piece> &pieces,
                                  std::uint8_t type, std::int64_t need) {
  const TableShape &t = tables_[static_cast<std::size_t>(id)];
  const int S = servers_;
  std::vector<std::vector<const ShardMap::Piece *>> by(static_cast<std::size_t>(S));
  for (const auto &p : pieces)
    by[static_cast<std::size_t>(t.map.server_of_shard(p.shard))].push_back(&p);
  std::vector<int> asked;
  for (int s = 0; s < S; ++s) {
    const auto &v = by[static_cast<std::size_t>(s)];
    if (v.empty()) continue;
    Writer w;
    w.put<std::uint8_t>(type);
    w.put<std::int64_t>(need);
    w.put<std::int32_t>(id);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(v.size()));
    for (const auto *p : v) {
      w.put<std::int64_t>(p->first);
      w.put<std::int64_t>(p->count);
    }
    tx_.send(s, kTagRequest, w.take());
    asked.push_back(s);
  }
  return asked;
}

void Worker::take_get_reply(int s, Message &&m) {
  Reader r(m.data, "get reply");
  const auto type = r.get<std::uint8_t>();
  if (type == kNotYet) {  // a kGetFresh the servers were not ready for
    note_min(s, r.get<std::int64_t>());
    tx_.recycle(std::move(m.data));
    return;
  }
  if (type != kGetReply) throw Error(Errc::internal, "ssp: expected a get reply");
  const auto mn = r.get<std::int64_t>();
  note_min(s, mn);
  const auto id = r.get<std::int32_t>();
  if (id < 0 || id >= static_cast<std::int32_t>(tables_.size()))
    throw Error(Errc::internal, "ssp: get reply for an unknown table");
  const TableShape &t = tables_[static_cast<std::size_t>(id)];
  Cache &c = caches_[static_cast<std::size_t>(id)];
  ensure_cache(t, c);
  const auto n = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto first = r.get<std::int64_t>();
    const auto count = r.get<std::int64_t>();
    r.get_bytes(&c.rows[static_cast<std::size_t>(first) * t.rb],
                static_cast<std::size_t>(count) * t.rb);
    for (std::int64_t row = first; row < first + count; ++row) {
      c.stamp[static_cast<std::size_t>(row)] = mn;
      c.fetched_at[static_cast<std::size_t>(row)] = clock_;
    }
  }
  tx_.recycle(std::move(m.data));
}

Message Worker::reply_from(int s) {
  for (;;) {
    Message m = tx_.recv_from(s, kTagReply);
    auto &p = prefetching_[static_cast<std::size_t>(s)];
    const auto type = m.data.empty() ? std::uint8_t{0} : static_cast<std::uint8_t>(m.data[0]);
    if (p > 0 && (type == kGetReply || type == kNotYet)) {
      take_get_reply(s, std::move(m));
      --p;
      continue;
    }
    return m;
  }
}

void Worker::drain_prefetches() {
  for (int s = 0; s < servers_; ++s)
    while (prefetching_[static_cast<std::size_t>(s)] > 0) {
      take_get_reply(s, tx_.recv_from(s, kTagReply));
      --prefetching_[static_cast<std::size_t>(s)];
    }
  for (auto &c : caches_) c.prefetching = false;
}

void Worker::take_arrived() {
  for (int s = 0; s < servers_; ++s) {
    auto &p = prefetching_[static_cast<std::size_t>(s)];
    Message m;
    while (p > 0 && tx_.try_recv_from(s, kTagReply, m)) {
      take_get_reply(s, std::move(m));
      --p;
    }
  }
}

void Worker::ask_fresh(int id) {
  const TableShape &t = tables_[static_cast<std::size_t>(id)];
  const Cache &c = caches_[static_cast<std::size_t>(id)];
  if (*std::min_element(c.stamp.begin(), c.stamp.end()) >= clock_) return;  // fresh already
  for (int p : prefetching_)
    if (p > 0) return;  // an answer is on its way
  const double now = wall_now_s();
  if (fresh_asked_at_ >= 0 && now - fresh_asked_at_ < kFreshRetryS) return;
  fresh_asked_at_ = now;
  for (int s : send_get(id, t.map.split(0, t.rows), kGetFresh, clock_))
    ++prefetching_[static_cast<std::size_t>(s)];
}

void Worker::prefetch() {
  for (std::size_t id = 0; id < tables_.size(); ++id) {
    Cache &c = caches_[id];
    if (c.read_whole_at != clock_ - 1) continue;
    const TableShape &t = tables_[id];
    for (int s : send_get(static_cast<int>(id), t.map.split(0, t.rows), kGet,
                          policy_.required_min_clock(clock_)))
      ++prefetching_[static_cast<std::size_t>(s)];
    c.prefetching = true;
  }
}

void Worker::fetch(int id, const std::vector<ShardMap::Piece> &pieces) {
  drain_prefetches();  // no other get reply is outstanding while this one is awaited
  for (int s : send_get(id, pieces, kGet, policy_.required_min_clock(clock_)))
    take_get_reply(s, tx_.recv_from(s, kTagReply));
}

void Worker::get(int id, std::int64_t first, std::int64_t count, char *out) {
  const TableShape &t = table_at(tables_, id);
  Cache &c = caches_[static_cast<std::size_t>(id)];
  if (first < 0 || count < 0 || first > t.rows - count)
    invalid("table '" + t.name + "': rows [" + std::to_string(first) + ", " +
            std::to_string(first + count) + ") are outside 0.." + std::to_string(t.rows));
  ensure_cache(t, c);
  if (c.prefetching)
    drain_prefetches();
  else if (fresh_reads_)
    take_arrived();
  const bool whole = first == 0 && count == t.rows;
  if (whole) c.read_whole_at = clock_;
  auto usable = [&](std::int64_t r) {
    const auto i = static_cast<std::size_t>(r);
    return c.stamp[i] != kNone && policy_.cache_usable(c.stamp[i], c.fetched_at[i], clock_);
  };
  bool miss = false;
  for (std::int64_t r = first; r < first + count && !miss; ++r) miss = !usable(r);
  if (miss) {
    // A short read fetches the aligned block(s) of kFetchBlock rows around it: one round trip
    // then serves the neighbouring rows too (row-at-a-time readers would pay one per row).
    std::int64_t lo = first, hi = first + count;
    if (count < kFetchBlock) {
      lo = first / kFetchBlock * kFetchBlock;
      hi = std::min(t.rows, (first + count + kFetchBlock - 1) / kFetchBlock * kFetchBlock);
    }
    std::vector<ShardMap::Piece> need;
    std::int64_t run = -1;
    auto close = [&](std::int64_t end) {
      if (run < 0) return;
      for (const auto &p : t.map.split(run, end - run)) need.push_back(p);
      run = -1;
    };
    for (std::int64_t r = lo; r < hi; ++r) {
      const bool ok = usable(r);
      if (!ok && run < 0) run = r;
      if (ok) close(r);
    }
    close(hi);
    fetch(id, need);
  }
  if (count > 0) {
    const auto b = c.stamp.begin() + first;
    note_lag(*std::min_element(b, b + count));
  }
  if (fresh_reads_ && whole) ask_fresh(id);
  if (c.dirty_rows.empty()) {
    std::memcpy(out, &c.rows[static_cast<std::size_t>(first) * t.rb],
                static_cast<std::size_t>(count) * t.rb);
    return;
  }
  // Rows with unsent increments are summed into `out` in one pass; runs of the others copied.
  std::int64_t r = first;
  while (r < first + count) {
    char *o = out + static_cast<std::size_t>(r - first) * t.rb;
    const auto i = static_cast<std::size_t>(r);
    if (c.dirty[i]) {
      sum_elems(t.kind, o, &c.rows[i * t.rb], &c.pending[i * t.rb],
                static_cast<std::size_t>(t.cols));
      ++r;
      continue;
    }
    std::int64_t e = r + 1;
    while (e < first + count && !c.dirty[static_cast<std::size_t>(e)]) ++e;
    std::memcpy(o, &c.rows[i * t.rb], static_cast<std::size_t>(e - r) * t.rb);
    r = e;
  }
}

void Worker::note_lag(std::int64_t oldest) { read_lag_ = std::max<std::int64_t>(0, clock_ - oldest); }

bool Worker::usable(const Cache &c, std::int64_t r) const {
  const auto i = static_cast<std::size_t>(r);
  return c.stamp[i] != kNone && policy_.cache_usable(c.stamp[i], c.fetched_at[i], clock_);
}

void Worker::copy_row(const TableShape &t, const Cache &c, std::int64_t r, char *out) const {
  const auto i = static_cast<std::size_t>(r);
  if (!c.dirty.empty() && c.dirty[i])
    sum_elems(t.kind, out, &c.rows[i * t.rb], &c.pending[i * t.rb],
              static_cast<std::size_t>(t.cols));
  else
    std::memcpy(out, &c.rows[i * t.rb], t.rb);
}

void Worker::get_at(int id, const std::int64_t *rows, std::int64_t n, char *out) {
  const TableShape &t = table_at(tables_, id);
  Cache &c = caches_[static_cast<std::size_t>(id)];
  if (n < 0) invalid("table '" + t.name + "': get_rows_at of " + std::to_string(n) + " rows");
  for (std::int64_t k = 0; k < n; ++k)
    if (rows[k] < 0 || rows[k] >= t.rows)
      invalid("table '" + t.name + "': row " + std::to_string(rows[k]) + " is outside 0.." +
              std::to_string(t.rows));
  ensure_cache(t, c);
  if (c.prefetching) drain_prefetches();
  // The rows that miss, fetched together (one message per server, runs of consecutive rows).
  // A read of a few rows fetches their aligned blocks instead, as get() does for a short read:
  // a reader of one row at a time would otherwise pay a round trip per row.
  std::vector<std::int64_t> miss;
  for (std::int64_t k = 0; k < n; ++k) {
    if (usable(c, rows[k])) continue;
    if (n >= kFewRows) {
      miss.push_back(rows[k]);
      continue;
    }
    const std::int64_t lo = rows[k] / kFetchBlock * kFetchBlock;
    for (std::int64_t r = lo; r < std::min(t.rows, lo + kFetchBlock); ++r)
      if (!usable(c, r)) miss.push_back(r);
  }
  if (!miss.empty()) {
    std::sort(miss.begin(), miss.end());
    miss.erase(std::unique(miss.begin(), miss.end()), miss.end());
    std::vector<ShardMap::Piece> need;
    std::size_t i = 0;
    while (i < miss.size()) {
      std::size_t j = i + 1;
      while (j < miss.size() && miss[j] == miss[j - 1] + 1) ++j;
      for (const auto &p : t.map.split(miss[i], static_cast<std::int64_t>(j - i))) need.push_back(p);
      i = j;
    }
    fetch(id, need);
  }
  std::int64_t oldest = clock_;
  for (std::int64_t k = 0; k < n; ++k) {
    oldest = std::min(oldest, c.stamp[static_cast<std::size_t>(rows[k])]);
    copy_row(t, c, rows[k], out + static_cast<std::size_t>(k) * t.rb);
  }
  if (n > 0) note_lag(oldest);
}

void Worker::mark_dirty(const TableShape &t, Cache &c, std::int64_t r) {
  auto &d = c.dirty[static_cast<std::size_t>(r)];
  if (!d) {
    d = 1;
    c.dirty_rows.push_back(r);
    dirty_bytes_ += t.rb;
  }
}

void Worker::inc(int id, std::int64_t row, std::int64_t col, const void *delta) {
  const TableShape &t = table_at(tables_, id);
  Cache &c = caches_[static_cast<std::size_t>(id)];
  if (row < 0 || row >= t.rows || col < 0 || col >= t.cols)
    invalid("table '" + t.name + "': cell (" + std::to_string(row) + ", " + std::to_string(col) +
            ") is outside " + std::to_string(t.rows) + " x " + std::to_string(t.cols));
  ensure_pending(t, c);
  add_elems(
      t.kind,
      &c.pending[static_cast<std::size_t>(row) * t.rb + static_cast<std::size_t>(col) * t.esz],
      static_cast<const char *>(delta), 1);
  mark_dirty(t, c, row);
  if (dirty_bytes_ > flush_bytes_) flush(-1);
}

void Worker::inc_rows(int id, std::int64_t first, std::int64_t count, const void *delta) {
  const TableShape &t = table_at(tables_, id);
  Cache &c = caches_[static_cast<std::size_t>(id)];
  if (first < 0 || count < 0 || first > t.rows - count)
    invalid("table '" + t.name + "': rows [" + std::to_string(first) + ", " +
            std::to_string(first + count) + ") are outside 0.." + std::to_string(t.rows));
  ensure_pending(t, c);
  add_elems(t.kind, &c.pending[static_cast<std::size_t>(first) * t.rb],
            static_cast<const char *>(delta), static_cast<std::size_t>(count * t.cols));
  for (std::int64_t r = first; r < first + count; ++r) mark_dirty(t, c, r);
  if (dirty_bytes_ > flush_bytes_) flush(-1);
}

void Worker::flush(std::int64_t clock_after, bool refetch_whole) {
  // A prefetch reply stored after this flush would not hold the increments folded in below.
  drain_prefetches();
  const int S = servers_;
  std::vector<Writer> ws(static_cast<std::size_t>(S));
  std::vector<bool> has(static_cast<std::size_t>(S), false);
  for (int s = 0; s < S; ++s) {
    ws[static_cast<std::size_t>(s)].put<std::uint8_t>(kFlush);
    ws[static_cast<std::size_t>(s)].put<std::int64_t>(clock_after);
  }
  for (std::size_t id = 0; id < tables_.size(); ++id) {
    const TableShape &t = tables_[id];
    Cache &c = caches_[id];
    if (c.dirty_rows.empty()) continue;
    std::sort(c.dirty_rows.begin(), c.dirty_rows.end());
    // runs of consecutive dirty rows inside one shard, grouped by server
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> runs(
        static_cast<std::size_t>(S));
    std::size_t i = 0;
    while (i < c.dirty_rows.size()) {
      const std::int64_t a = c.dirty_rows[i];
      const int l = t.map.shard_of(a);
      const std::int64_t lend = t.map.shard_end(l);
      std::size_t j = i + 1;
      while (j < c.dirty_rows.size() && c.dirty_rows[j] == c.dirty_rows[j - 1] + 1 &&
             c.dirty_rows[j] < lend)
        ++j;
      runs[static_cast<std::size_t>(t.map.server_of_shard(l))].push_back(
          {a, static_cast<std::int64_t>(j - i)});
      i = j;
    }
    for (int s = 0; s < S; ++s) {
      auto &rv = runs[static_cast<std::size_t>(s)];
      if (rv.empty()) continue;
      Writer &w = ws[static_cast<std::size_t>(s)];
      has[static_cast<std::size_t>(s)] = true;
      // The message's size is known: one allocation, no copies as it grows.
      std::size_t bytes = w.size() + 12 + 4;
      for (auto [a, n] : rv) bytes += 16 + static_cast<std::size_t>(n) * t.rb;
      if (w.buffer().capacity() < bytes) {
        std::string b = tx_.buffer(bytes);
        b.append(w.buffer());
        w.buffer() = std::move(b);
      }
      w.put<std::int32_t>(static_cast<std::int32_t>(id));
      w.put<std::uint32_t>(static_cast<std::uint32_t>(rv.size()));
      for (auto [a, n] : rv) {
        w.put<std::int64_t>(a);
        w.put<std::int64_t>(n);
        w.put_bytes(&c.pending[static_cast<std::size_t>(a) * t.rb],
                    static_cast<std::size_t>(n) * t.rb);
      }
    }
    // Fold what was sent into the cached rows, so reads keep seeing this worker's writes; a
    // table about to be fetched again whole (prefetch) is not folded but marked stale: the
    // server's rows replace it, these increments included.
    const bool cached = !c.stamp.empty();
    const bool refetch = cached && refetch_whole && c.read_whole_at == clock_;
    if (refetch) std::fill(c.stamp.begin(), c.stamp.end(), kNone);
    for (std::int64_t r : c.dirty_rows) {
      char *p = &c.pending[static_cast<std::size_t>(r) * t.rb];
      if (cached && c.stamp[static_cast<std::size_t>(r)] != kNone)
        add_elems(t.kind, &c.rows[static_cast<std::size_t>(r) * t.rb], p,
                  static_cast<std::size_t>(t.cols));
      std::memset(p, 0, t.rb);
      c.dirty[static_cast<std::size_t>(r)] = 0;
    }
    c.dirty_rows.clear();
  }
  dirty_bytes_ = 0;
  for (int s = 0; s < S; ++s) {
    if (!has[static_cast<std::size_t>(s)] && clock_after < 0) continue;
    ws[static_cast<std::size_t>(s)].put<std::int32_t>(-1);
    tx_.send(s, kTagRequest, ws[static_cast<std::size_t>(s)].take());
  }
}

std::int64_t Worker::advance() {
  flush(clock_ + 1, true);  // waits for the prefetches first
  ++clock_;
  profiler_.worker_clock(clock_, in_run_);
  // The tables read whole in the clock just ended are asked for again now: their replies come
  // while this worker waits at the bound and asks for its next micro-task.
  prefetch();
  const std::int64_t need = policy_.required_min_clock(clock_);
  if (min_known() < need) {
    std::vector<int> asked;
    for (int s = 0; s < servers_; ++s)
      if (known_min_[static_cast<std::size_t>(s)] < need) {
        Writer w;
        w.put<std::uint8_t>(kWait);
        w.put<std::int64_t>(need);
        tx_.send(s, kTagRequest, w.take());
        asked.push_back(s);
      }
    for (int s : asked) {
      Message m = reply_from(s);
      Reader r(m.data, "wait reply");
      if (r.get<std::uint8_t>() != kWaitReply)
        throw Error(Errc::internal, "ssp: expected a wait reply");
      note_min(s, r.get<std::int64_t>());
    }
  }
  return clock_;
}

void Worker::barrier(std::uint8_t kind, std::int64_t seq) {
  flush(-1);  // waits for the prefetches first
  for (int s = 0; s < servers_; ++s) {
    Writer w;
    w.put<std::uint8_t>(kBarrier);
    w.put<std::uint8_t>(kind);
    w.put<std::int64_t>(seq);
    tx_.send(s, kTagRequest, w.take());
  }
  const int acks = kind == kPlain ? servers_ : 1;
  for (int s = 0; s < acks; ++s) {
    Message m = reply_from(s);
    Reader r(m.data, "barrier ack");
    if (r.get<std::uint8_t>() != kBarrierAck)
      throw Error(Errc::internal, "ssp: expected a barrier ack");
    note_min(s, r.get<std::int64_t>());
  }
  invalidate_caches();
}

bool Worker::run_tasks(const Job &job, const TaskFn &fn, std::uint64_t *checkpoints) {
  in_run_ = true;
  bool finished = true;
  bool have_done = false;
  Task t;
  double secs = 0;
  for (;;) {
    Writer w;
    w.put<std::uint8_t>(kTaskReq);
    w.put<std::int64_t>(clock_);
    w.put<std::uint8_t>(have_done ? 1 : 0);
    if (have_done) {
      w.put<std::int64_t>(t.id);
      w.put<double>(secs);
      w.put_string(t.state);
      have_done = false;
    }
    tx_.send(0, kTagRequest, w.take());
    Message m = reply_from(0);
    Reader r(m.data, "task reply");
    if (r.get<std::uint8_t>() != kTaskReply)
      throw Error(Errc::internal, "ssp: expected a task reply");
    note_min(0, r.get<std::int64_t>());
    const auto d = r.get<std::uint8_t>();
    if (d == kGrant) {
      t.id = r.get<std::int64_t>();
      t.executor = r.get<std::int32_t>();
      t.epoch = r.get<std::int32_t>();
      t.begin = r.get<std::uint64_t>();
      t.end = r.get<std::uint64_t>();
      t.shard_begin = r.get<std::uint64_t>();
      t.shard_end = r.get<std::uint64_t>();
      t.state = r.get_string();
      t.clock = clock_;
      const double a = wall_now_s();
      fn(t);
      secs = wall_now_s() - a;
      profiler_.add_samples((t.end - t.begin) * job.samples_per_unit);
      have_done = true;
    } else if (d == kClock) {
      advance();
      if (job.after_clock) job.after_clock(clock_);
    } else if (d == kCheckpoint) {
      barrier(kCkptRun, r.get<std::int64_t>());
      ++*checkpoints;
    } else if (d == kDone || d == kStop) {
      finished = d == kDone;
      break;
    } else {
      throw Error(Errc::internal, "ssp: unknown task decision " + std::to_string(d));
    }
  }
  in_run_ = false;
  return finished;
}

}  // namespace ssp
