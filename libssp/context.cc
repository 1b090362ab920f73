// ssp::Context: roles, tables, the worker side (cache, buffered increments, clocks), the server
// loop (shards, vector clock, deferred reads), the micro-task scheduler driver on rank 0,
// checkpoint/restore and the profiling hook.  See include/ssp/*.hpp for the contracts.
#include "ssp/context.hpp"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "autotune/log.hpp"
#include "autotune/units.hpp"
#include "codec.hpp"
#include "manifest.hpp"
#include "profile.hpp"
#include "scheduler.hpp"
#include "shard_map.hpp"
#include "transport.hpp"

namespace ssp {

namespace {

constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();
// Rows fetched together when a read misses the cache (an aligned block).
constexpr std::int64_t kFetchBlock = 64;

enum MsgType : std::uint8_t {
  kFlush = 1,      // w->s  i64 clock_after (-1: none), blocks {i32 table, u32 runs, runs} .. i32 -1
  kGet = 2,        // w->s  i64 need, i32 table, u32 runs, {i64 first, i64 count}
  kGetReply = 3,   // s->w  i64 min, i32 table, u32 runs, {i64 first, i64 count, data}
  kWait = 4,       // w->s  i64 need
  kWaitReply = 5,  // s->w  i64 min
  kBarrier = 6,    // w->s  u8 kind, i64 seq
  kBarrierAck = 7,   // s->w  i64 min, u8 kind, i64 seq
  kTaskReq = 8,      // w->0  i64 clock, u8 has_done, [i64 task, f64 seconds, str state]
  kTaskReply = 9,    // 0->w  i64 min, u8 decision, [grant | i64 checkpoint clock]
  kShardsDone = 10,  // s->0  i64 seq, the sums of the parts written (manifest.hpp)
  kProfileStop = 11  // 0->*  (control tag)
};

enum BarrierKind : std::uint8_t { kPlain = 0, kCkptRun = 1, kCkptEnd = 2 };
enum WireDecision : std::uint8_t { kGrant = 1, kClock = 2, kCheckpoint = 3, kDone = 4, kStop = 5 };

std::size_t elem_size(ElemKind k) { return (k == ElemKind::f32 || k == ElemKind::i32) ? 4 : 8; }
const char *kind_name(ElemKind k) {
  switch (k) {
    case ElemKind::f32:
      return "float";
    case ElemKind::f64:
      return "double";
    case ElemKind::i32:
      return "int32";
    case ElemKind::i64:
      return "int64";
  }
  return "?";
}

template <class T>
void add_typed(char *dst, const char *src, std::size_t n) {
  T *d = reinterpret_cast<T *>(dst);
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    d[i] += v;
  }
}

// dst (aligned) += src (any alignment), n elements of kind k.
void add_elems(ElemKind k, char *dst, const char *src, std::size_t n) {
  switch (k) {
    case ElemKind::f32:
      add_typed<float>(dst, src, n);
      break;
    case ElemKind::f64:
      add_typed<double>(dst, src, n);
      break;
    case ElemKind::i32:
      add_typed<std::int32_t>(dst, src, n);
      break;
    case ElemKind::i64:
      add_typed<std::int64_t>(dst, src, n);
      break;
  }
}

std::string snapshot_id(std::int64_t clock) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "c%012" PRId64, clock);
  return buf;
}

[[noreturn]] void invalid(const std::string &m) {
  throw Error(Errc::invalid_argument, "ssp: " + m);
}

void mpi_check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) throw Error(Errc::io, std::string("ssp: ") + what + " failed");
}

}  // namespace

struct TableState {
  std::string name;
  ElemKind kind = ElemKind::f32;
  std::size_t esz = 4;
  std::int64_t rows = 0, cols = 0;
  std::size_t rb = 0;  // bytes per row
  ShardMap map;
  // servers: the logical shards this rank owns
  std::map<int, std::vector<char>> shards;
  // workers
  std::vector<char> cache;
  std::vector<std::int64_t> stamp, fetched_at;
  std::vector<char> pending;
  std::vector<std::uint8_t> dirty;
  std::vector<std::int64_t> dirty_rows;
};

struct Context::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm wcomm = MPI_COMM_NULL;
  bool we_initialized = false;
  bool finished = false;
  int rank = 0, size = 1, S = 1, W = 0;
  Role role = Role::worker;
  ConsistencyPolicy policy = ConsistencyPolicy::bsp();
  Options opt;
  ProfileEnv penv;
  Transport tx;
  std::vector<TableState> tables;
  std::int64_t phase_seq = 0;

  // worker
  std::int64_t clock = 0;
  std::vector<std::int64_t> known_min;
  std::size_t dirty_bytes = 0;
  std::uint64_t samples = 0;

  // server
  VectorClock vc;
  std::deque<Message> deferred_gets;
  std::deque<std::pair<int, std::int64_t>> deferred_waits;  // (source, need)
  std::map<std::pair<int, std::int64_t>, int> arrivals;     // (kind, seq) -> workers arrived
  std::int64_t completed_phase = 0;
  SnapshotStore *store = nullptr;                          // of the checkpoint in progress
  std::map<std::int64_t, int> shards_done;                 // rank 0: ckpt seq -> servers done
  std::map<std::int64_t, std::vector<PartSum>> ckpt_sums;  // rank 0: ckpt seq -> parts written
  std::set<std::int64_t> own_shards_done;                  // rank 0
  std::map<std::int64_t, std::uint8_t> ckpt_kind;
  bool profile_stop_pending = false;
  bool in_run = false;  // workers: inside run()

  // rank 0: scheduler
  std::unique_ptr<Scheduler> sched;
  const Job *job = nullptr;
  std::deque<std::pair<int, std::int64_t>> task_reqs;  // deferred (worker, clock)
  std::int64_t last_ckpt = kNone;
  std::uint64_t checkpoints = 0;
  bool suspended = false;
  std::int64_t run_ckpt_seq = 0;
  // restored job shape (every rank), for validation of the next run()
  bool restored_job = false;
  std::uint64_t r_units = 0;
  int r_executors = 0, r_epochs = 0;

  // profile
  std::int64_t warm_clock = 0, end_clock = -1;
  bool p_started = false, p_ended = false;
  double p_t0 = 0, p_cpu0 = 0, p_t1 = 0, p_cpu1 = 0;
  std::uint64_t p_s0 = 0, p_s1 = 0;
  std::int64_t p_c0 = 0, p_c1 = 0;

  // ---- helpers -------------------------------------------------------------------------------
  TableState &table(int id) {
    if (id < 0 || id >= static_cast<int>(tables.size()))
      throw Error(Errc::invalid_argument, "ssp: table handle is not valid in this context");
    return tables[static_cast<std::size_t>(id)];
  }
  void need_worker(const char *what) const {
    if (role != Role::worker)
      throw Error(Errc::invalid_argument, std::string("ssp: ") + what +
                                              " is for worker ranks; rank " + std::to_string(rank) +
                                              " is a parameter server");
  }
  std::int64_t min_known() const { return *std::min_element(known_min.begin(), known_min.end()); }
  void note_min(int server, std::int64_t m) {
    auto &k = known_min[static_cast<std::size_t>(server)];
    k = std::max(k, m);
  }
  void alloc_server_shards(TableState &t) {
    t.shards.clear();
    if (role != Role::server) return;
    for (int l : t.map.shards_of_server(rank))
      t.shards[l].assign(static_cast<std::size_t>(t.map.shard_end(l) - t.map.shard_begin(l)) * t.rb,
                         0);
  }
  void reset_worker_cache(TableState &t) {
    t.cache.clear();
    t.stamp.clear();
    t.fetched_at.clear();
    t.pending.clear();
    t.dirty.clear();
    t.dirty_rows.clear();
  }
  void invalidate_caches() {
    for (auto &t : tables)
      if (!t.stamp.empty()) std::fill(t.stamp.begin(), t.stamp.end(), kNone);
  }

  // ---- profiling -----------------------------------------------------------------------------
  void profile_begin() {
    p_started = true;
    p_t0 = wall_now_s();
    p_cpu0 = process_cpu_s();
    p_s0 = samples;
    p_c0 = role == Role::worker ? clock : vc.max();
  }
  void profile_end() {
    p_ended = true;
    p_t1 = wall_now_s();
    p_cpu1 = process_cpu_s();
    p_s1 = samples;
    p_c1 = role == Role::worker ? clock : vc.min();
  }
  void rebase_profile(std::int64_t base) {
    warm_clock = base + penv.warmup;
    end_clock = penv.batches > 0 ? warm_clock + penv.batches : -1;
    p_started = p_ended = false;
    if (role == Role::worker && penv.warmup == 0) profile_begin();
  }
  RankRecord my_record() {
    if (p_started && !p_ended) profile_end();
    RankRecord r;
    r.rank = rank;
    r.role = role == Role::worker ? 1 : 0;
    const std::string n = node_name();
    std::snprintf(r.node, sizeof r.node, "%s", n.c_str());
    if (p_started) {
      r.wall_s = p_t1 - p_t0;
      r.cpu_s = p_cpu1 - p_cpu0;
      r.samples = p_s1 - p_s0;
      r.clocks = p_c1 - p_c0;
    }
    r.peak_rss_mb = peak_rss_mb();
    r.cpus_allocated = cpus_allocated();
    r.mem_limit_mb = mem_limit_mb(r.cpus_allocated);
    return r;
  }
  // Collective: gathers every rank's record; rank 0 writes AUTOTUNE_RESULT.
  void write_result(bool profile_only) {
    RankRecord mine = my_record();
    std::vector<RankRecord> all(static_cast<std::size_t>(size));
    MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, comm);
    if (rank != 0 || penv.result_path.empty()) return;
    ResultHeader h;
    h.app = opt.app;
    if (h.app.empty()) {
      char buf[4096] = {};
      const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
      h.app = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "app";
      h.app = h.app.substr(h.app.find_last_of('/') + 1);
    }
    h.ranks = size;
    h.workers = W;
    h.servers = S;
    h.consistency = policy.name();
    h.staleness = policy.model() == ConsistencyPolicy::Model::asp ? -1 : policy.staleness();
    h.warmup_clocks = penv.warmup;
    h.profile_only = profile_only;
    try {
      write_file_atomic(penv.result_path, build_result(h, all).dump());
    } catch (const std::exception &e) {
      autotune::log(autotune::LogLevel::error, std::string("ssp: ") + e.what());
    }
  }
  [[noreturn]] void profile_exit() {
    tx.drain();
    write_result(true);
    autotune::log(autotune::LogLevel::info,
                  "ssp: profiling done (AUTOTUNE_PROFILE_ONLY): exiting with status 0");
    std::fflush(nullptr);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
    std::exit(0);
  }
  void server_profile_check() {
    if (!opt.profile || role != Role::server) return;
    if (!p_started && vc.max() >= warm_clock) profile_begin();
    if (p_started && !p_ended && end_clock >= 0 && vc.min() >= end_clock) {
      profile_end();
      if (penv.only && rank == 0 && !job) {
        for (int r = 1; r < size; ++r) tx.send(r, kTagControl, std::string(1, char(kProfileStop)));
        profile_exit();
      }
    }
    if (profile_stop_pending && end_clock >= 0 && vc.min() >= end_clock) profile_exit();
  }
  void worker_profile_check() {
    if (!opt.profile) return;
    if (!p_started && clock >= warm_clock) profile_begin();
    if (p_started && !p_ended && end_clock >= 0 && clock >= end_clock) {
      profile_end();
      if (penv.only && !in_run) {
        tx.recv_from(0, kTagControl);
        profile_exit();
      }
    }
  }

  // ---- worker side ---------------------------------------------------------------------------
  void ensure_cache(TableState &t) {
    if (!t.stamp.empty()) return;
    t.cache.assign(static_cast<std::size_t>(t.rows) * t.rb, 0);
    t.stamp.assign(static_cast<std::size_t>(t.rows), kNone);
    t.fetched_at.assign(static_cast<std::size_t>(t.rows), kNone);
  }
  void ensure_pending(TableState &t) {
    if (!t.dirty.empty()) return;
    t.pending.assign(static_cast<std::size_t>(t.rows) * t.rb, 0);
    t.dirty.assign(static_cast<std::size_t>(t.rows), 0);
  }

  void fetch(int id, const std::vector<ShardMap::Piece> &pieces) {
    TableState &t = tables[static_cast<std::size_t>(id)];
    std::vector<std::vector<const ShardMap::Piece *>> by(static_cast<std::size_t>(S));
    for (const auto &p : pieces)
      by[static_cast<std::size_t>(t.map.server_of_shard(p.shard))].push_back(&p);
    const std::int64_t need = policy.required_min_clock(clock);
    for (int s = 0; s < S; ++s) {
      const auto &v = by[static_cast<std::size_t>(s)];
      if (v.empty()) continue;
      Writer w;
      w.put<std::uint8_t>(kGet);
      w.put<std::int64_t>(need);
      w.put<std::int32_t>(id);
      w.put<std::uint32_t>(static_cast<std::uint32_t>(v.size()));
      for (const auto *p : v) {
        w.put<std::int64_t>(p->first);
        w.put<std::int64_t>(p->count);
      }
      tx.send(s, kTagRequest, w.take());
    }
    for (int s = 0; s < S; ++s) {
      if (by[static_cast<std::size_t>(s)].empty()) continue;
      Message m = tx.recv_from(s, kTagReply);
      Reader r(m.data, "get reply");
      if (r.get<std::uint8_t>() != kGetReply)
        throw Error(Errc::internal, "ssp: expected a get reply");
      const auto mn = r.get<std::int64_t>();
      note_min(s, mn);
      if (r.get<std::int32_t>() != id)
        throw Error(Errc::internal, "ssp: get reply for another table");
      const auto n = r.get<std::uint32_t>();
      for (std::uint32_t i = 0; i < n; ++i) {
        const auto first = r.get<std::int64_t>();
        const auto count = r.get<std::int64_t>();
        r.get_bytes(&t.cache[static_cast<std::size_t>(first) * t.rb],
                    static_cast<std::size_t>(count) * t.rb);
        for (std::int64_t row = first; row < first + count; ++row) {
          t.stamp[static_cast<std::size_t>(row)] = mn;
          t.fetched_at[static_cast<std::size_t>(row)] = clock;
        }
      }
    }
  }

  void get(int id, std::int64_t first, std::int64_t count, char *out) {
    need_worker("Table::get");
    TableState &t = table(id);
    if (first < 0 || count < 0 || first > t.rows - count)
      invalid("table '" + t.name + "': rows [" + std::to_string(first) + ", " +
              std::to_string(first + count) + ") are outside 0.." + std::to_string(t.rows));
    ensure_cache(t);
    auto usable = [&](std::int64_t r) {
      const auto i = static_cast<std::size_t>(r);
      return t.stamp[i] != kNone && policy.cache_usable(t.stamp[i], t.fetched_at[i], clock);
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
    std::memcpy(out, &t.cache[static_cast<std::size_t>(first) * t.rb],
                static_cast<std::size_t>(count) * t.rb);
    if (!t.dirty_rows.empty())
      for (std::int64_t r = first; r < first + count; ++r)
        if (t.dirty[static_cast<std::size_t>(r)])
          add_elems(t.kind, out + static_cast<std::size_t>(r - first) * t.rb,
                    &t.pending[static_cast<std::size_t>(r) * t.rb],
                    static_cast<std::size_t>(t.cols));
  }

  void mark_dirty(TableState &t, std::int64_t r) {
    auto &d = t.dirty[static_cast<std::size_t>(r)];
    if (!d) {
      d = 1;
      t.dirty_rows.push_back(r);
      dirty_bytes += t.rb;
    }
  }

  void inc(int id, std::int64_t row, std::int64_t col, const void *delta) {
    need_worker("Table::inc");
    TableState &t = table(id);
    if (row < 0 || row >= t.rows || col < 0 || col >= t.cols)
      invalid("table '" + t.name + "': cell (" + std::to_string(row) + ", " + std::to_string(col) +
              ") is outside " + std::to_string(t.rows) + " x " + std::to_string(t.cols));
    ensure_pending(t);
    add_elems(
        t.kind,
        &t.pending[static_cast<std::size_t>(row) * t.rb + static_cast<std::size_t>(col) * t.esz],
        static_cast<const char *>(delta), 1);
    mark_dirty(t, row);
    if (dirty_bytes > opt.flush_bytes) flush(-1);
  }

  void inc_rows(int id, std::int64_t first, std::int64_t count, const void *delta) {
    need_worker("Table::inc_rows");
    TableState &t = table(id);
    if (first < 0 || count < 0 || first > t.rows - count)
      invalid("table '" + t.name + "': rows [" + std::to_string(first) + ", " +
              std::to_string(first + count) + ") are outside 0.." + std::to_string(t.rows));
    ensure_pending(t);
    add_elems(t.kind, &t.pending[static_cast<std::size_t>(first) * t.rb],
              static_cast<const char *>(delta), static_cast<std::size_t>(count * t.cols));
    for (std::int64_t r = first; r < first + count; ++r) mark_dirty(t, r);
    if (dirty_bytes > opt.flush_bytes) flush(-1);
  }

  // Sends the buffered increments (and, with clock_after >= 0, the new clock to every server).
  void flush(std::int64_t clock_after) {
    std::vector<Writer> ws(static_cast<std::size_t>(S));
    std::vector<bool> has(static_cast<std::size_t>(S), false);
    for (int s = 0; s < S; ++s) {
      ws[static_cast<std::size_t>(s)].put<std::uint8_t>(kFlush);
      ws[static_cast<std::size_t>(s)].put<std::int64_t>(clock_after);
    }
    for (std::size_t id = 0; id < tables.size(); ++id) {
      TableState &t = tables[id];
      if (t.dirty_rows.empty()) continue;
      std::sort(t.dirty_rows.begin(), t.dirty_rows.end());
      // runs of consecutive dirty rows inside one shard, grouped by server
      std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> runs(
          static_cast<std::size_t>(S));
      std::size_t i = 0;
      while (i < t.dirty_rows.size()) {
        const std::int64_t a = t.dirty_rows[i];
        const int l = t.map.shard_of(a);
        const std::int64_t lend = t.map.shard_end(l);
        std::size_t j = i + 1;
        while (j < t.dirty_rows.size() && t.dirty_rows[j] == t.dirty_rows[j - 1] + 1 &&
               t.dirty_rows[j] < lend)
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
        w.put<std::int32_t>(static_cast<std::int32_t>(id));
        w.put<std::uint32_t>(static_cast<std::uint32_t>(rv.size()));
        for (auto [a, n] : rv) {
          w.put<std::int64_t>(a);
          w.put<std::int64_t>(n);
          w.put_bytes(&t.pending[static_cast<std::size_t>(a) * t.rb],
                      static_cast<std::size_t>(n) * t.rb);
        }
      }
      // Fold what was sent into the cached rows, so reads keep seeing this worker's writes.
      const bool cached = !t.stamp.empty();
      for (std::int64_t r : t.dirty_rows) {
        char *p = &t.pending[static_cast<std::size_t>(r) * t.rb];
        if (cached && t.stamp[static_cast<std::size_t>(r)] != kNone)
          add_elems(t.kind, &t.cache[static_cast<std::size_t>(r) * t.rb], p,
                    static_cast<std::size_t>(t.cols));
        std::memset(p, 0, t.rb);
        t.dirty[static_cast<std::size_t>(r)] = 0;
      }
      t.dirty_rows.clear();
    }
    dirty_bytes = 0;
    for (int s = 0; s < S; ++s) {
      if (!has[static_cast<std::size_t>(s)] && clock_after < 0) continue;
      ws[static_cast<std::size_t>(s)].put<std::int32_t>(-1);
      tx.send(s, kTagRequest, ws[static_cast<std::size_t>(s)].take());
    }
  }

  std::int64_t do_clock() {
    need_worker("clock()");
    flush(clock + 1);
    ++clock;
    worker_profile_check();
    const std::int64_t need = policy.required_min_clock(clock);
    if (min_known() < need) {
      std::vector<int> asked;
      for (int s = 0; s < S; ++s)
        if (known_min[static_cast<std::size_t>(s)] < need) {
          Writer w;
          w.put<std::uint8_t>(kWait);
          w.put<std::int64_t>(need);
          tx.send(s, kTagRequest, w.take());
          asked.push_back(s);
        }
      for (int s : asked) {
        Message m = tx.recv_from(s, kTagReply);
        Reader r(m.data, "wait reply");
        if (r.get<std::uint8_t>() != kWaitReply)
          throw Error(Errc::internal, "ssp: expected a wait reply");
        note_min(s, r.get<std::int64_t>());
      }
    }
    return clock;
  }

  // Worker side of a barrier: flush, announce, wait for the acknowledgement(s).
  void worker_barrier(std::uint8_t kind, std::int64_t seq) {
    flush(-1);
    for (int s = 0; s < S; ++s) {
      Writer w;
      w.put<std::uint8_t>(kBarrier);
      w.put<std::uint8_t>(kind);
      w.put<std::int64_t>(seq);
      tx.send(s, kTagRequest, w.take());
    }
    const int acks = kind == kPlain ? S : 1;
    for (int s = 0; s < acks; ++s) {
      Message m = tx.recv_from(s, kTagReply);
      Reader r(m.data, "barrier ack");
      if (r.get<std::uint8_t>() != kBarrierAck)
        throw Error(Errc::internal, "ssp: expected a barrier ack");
      note_min(s, r.get<std::int64_t>());
    }
    invalidate_caches();
  }

  // ---- server side ---------------------------------------------------------------------------
  void reply(int dest, Writer &w) { tx.send(dest, kTagReply, w.take()); }

  void handle_flush(int src, Reader &r) {
    const auto clock_after = r.get<std::int64_t>();
    for (;;) {
      const auto id = r.get<std::int32_t>();
      if (id < 0) break;
      TableState &t = table(id);
      const auto n = r.get<std::uint32_t>();
      for (std::uint32_t i = 0; i < n; ++i) {
        const auto a = r.get<std::int64_t>();
        const auto cnt = r.get<std::int64_t>();
        const int l = t.map.shard_of(a);
        auto it = t.shards.find(l);
        if (it == t.shards.end() || a + cnt > t.map.shard_end(l))
          throw Error(Errc::internal, "ssp: increments for rows this server does not own");
        const char *p = r.skip(static_cast<std::size_t>(cnt) * t.rb);
        add_elems(t.kind, &it->second[static_cast<std::size_t>(a - t.map.shard_begin(l)) * t.rb], p,
                  static_cast<std::size_t>(cnt * t.cols));
      }
    }
    if (clock_after >= 0 && vc.advance(src - S, clock_after)) on_min_raised();
    if (clock_after >= 0) server_profile_check();
  }

  void answer_get(int src, const std::string &data) {
    Reader r(data, "get");
    r.get<std::uint8_t>();
    r.get<std::int64_t>();
    const auto id = r.get<std::int32_t>();
    TableState &t = table(id);
    const auto n = r.get<std::uint32_t>();
    Writer w;
    w.put<std::uint8_t>(kGetReply);
    w.put<std::int64_t>(vc.min());
    w.put<std::int32_t>(id);
    w.put<std::uint32_t>(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto a = r.get<std::int64_t>();
      const auto cnt = r.get<std::int64_t>();
      const int l = t.map.shard_of(a);
      auto it = t.shards.find(l);
      if (it == t.shards.end() || a + cnt > t.map.shard_end(l))
        throw Error(Errc::internal, "ssp: read of rows this server does not own");
      w.put<std::int64_t>(a);
      w.put<std::int64_t>(cnt);
      w.put_bytes(&it->second[static_cast<std::size_t>(a - t.map.shard_begin(l)) * t.rb],
                  static_cast<std::size_t>(cnt) * t.rb);
    }
    reply(src, w);
  }

  void on_min_raised() {
    for (std::size_t k = deferred_gets.size(); k > 0; --k) {
      Message m = std::move(deferred_gets.front());
      deferred_gets.pop_front();
      Reader r(m.data, "get");
      r.get<std::uint8_t>();
      if (r.get<std::int64_t>() <= vc.min())
        answer_get(m.source, m.data);
      else
        deferred_gets.push_back(std::move(m));
    }
    for (std::size_t k = deferred_waits.size(); k > 0; --k) {
      auto d = deferred_waits.front();
      deferred_waits.pop_front();
      if (d.second <= vc.min()) {
        Writer w;
        w.put<std::uint8_t>(kWaitReply);
        w.put<std::int64_t>(vc.min());
        reply(d.first, w);
      } else {
        deferred_waits.push_back(d);
      }
    }
  }

  // Writes this server's shards; returns their sums for the manifest.
  std::vector<PartSum> write_shards(const std::string &id) {
    std::vector<PartSum> sums;
    for (const auto &t : tables)
      for (const auto &[l, data] : t.shards) {
        Writer w;  // the part framed in place: the shard is copied once
        w.buffer().reserve(64 + t.name.size() + data.size());
        begin_part(w, PartKind::shard);
        w.put_string(t.name);
        w.put<std::uint8_t>(static_cast<std::uint8_t>(t.kind));
        w.put<std::int64_t>(t.rows);
        w.put<std::int64_t>(t.cols);
        w.put<std::int32_t>(t.map.shards());
        w.put<std::int32_t>(l);
        w.put<std::int64_t>(t.map.shard_begin(l));
        w.put<std::int64_t>(t.map.shard_end(l) - t.map.shard_begin(l));
        w.put_bytes(data.data(), data.size());
        std::string name = id + ".table-" + t.name + ".shard-" + std::to_string(l);
        const std::string framed = finish_part(w);
        store->put(name, framed);
        sums.push_back(part_sum(std::move(name), framed));
      }
    return sums;
  }

  // Rank 0: puts one part it writes itself and records its sum.
  void put_part(std::vector<PartSum> &sums, std::string name, PartKind kind,
                const std::string &payload) {
    const std::string framed = frame_part(kind, payload);
    store->put(name, framed);
    sums.push_back(part_sum(std::move(name), framed));
  }

  // Rank 0, once every server wrote its shards (`sums`): the scheduler and executors, then the
  // manifest listing every part, then `latest`.
  void write_manifest(const std::string &id, std::int64_t ckpt_clock, bool with_job,
                      std::vector<PartSum> sums) {
    nlohmann::json j;
    j["format"] = kManifestFormat;
    j["id"] = id;
    j["clock"] = ckpt_clock;
    j["workers"] = W;
    j["servers"] = S;
    j["consistency"] = policy.name();
    nlohmann::json tv = nlohmann::json::array();
    for (const auto &t : tables)
      tv.push_back({{"name", t.name},
                    {"type", kind_name(t.kind)},
                    {"rows", t.rows},
                    {"cols", t.cols},
                    {"logical_servers", t.map.shards()}});
    j["tables"] = tv;
    if (with_job) {
      const auto &sp = sched->spec();
      j["job"] = {{"executors", sp.executors},
                  {"units", sp.units},
                  {"epochs", sp.epochs},
                  {"units_left", sched->units_left()}};
      put_part(sums, id + ".scheduler", PartKind::scheduler, sched->encode_scheduler());
      for (int e = 0; e < sched->executors(); ++e) {
        const std::string pre = id + ".executor-" + std::to_string(e);
        put_part(sums, pre + ".queue", PartKind::executor_queue, sched->encode_queue(e));
        put_part(sums, pre + ".state", PartKind::executor_state, sched->encode_state(e));
      }
    } else {
      j["job"] = nullptr;
    }
    j["parts"] = sums_to_json(std::move(sums));
    store->put(id + ".manifest", j.dump(1));
    store->put("latest", id + "\n");
    ++checkpoints;
    autotune::log(autotune::LogLevel::info, "ssp: checkpoint " + id + " written (" +
                                                std::to_string(W) + " workers, " +
                                                std::to_string(S) + " servers)");
  }

  // Rank 0: once every server wrote its shards, finish the checkpoint and release the workers.
  void maybe_finish_ckpt(std::int64_t seq) {
    if (rank != 0 || !own_shards_done.count(seq) || shards_done[seq] < S - 1) return;
    const std::uint8_t kind = ckpt_kind[seq];
    const std::int64_t c = vc.max();
    const std::string id = snapshot_id(c);
    const bool with_job =
        sched && (kind == kCkptRun || (sched->work_left() && sched->in_flight() == 0));
    write_manifest(id, c, with_job, std::move(ckpt_sums[seq]));
    if (kind == kCkptRun) last_ckpt = c;
    for (int w = 0; w < W; ++w) {
      Writer a;
      a.put<std::uint8_t>(kBarrierAck);
      a.put<std::int64_t>(vc.min());
      a.put<std::uint8_t>(kind);
      a.put<std::int64_t>(seq);
      reply(S + w, a);
    }
    own_shards_done.erase(seq);
    shards_done.erase(seq);
    ckpt_sums.erase(seq);
    ckpt_kind.erase(seq);
    if (kind == kCkptEnd) completed_phase = std::max(completed_phase, seq);
    if (kind == kCkptRun) {
      store = nullptr;
      update_pause();
    }
  }

  void handle_barrier(Reader &r) {
    const auto kind = r.get<std::uint8_t>();
    const auto seq = r.get<std::int64_t>();
    if (++arrivals[{kind, seq}] < W) return;
    arrivals.erase({kind, seq});
    if (kind == kPlain) {
      for (int w = 0; w < W; ++w) {
        Writer a;
        a.put<std::uint8_t>(kBarrierAck);
        a.put<std::int64_t>(vc.min());
        a.put<std::uint8_t>(kind);
        a.put<std::int64_t>(seq);
        reply(S + w, a);
      }
      completed_phase = std::max(completed_phase, seq);
      return;
    }
    if (kind == kCkptRun && job) store = job->checkpoint_store;
    if (!store) throw Error(Errc::internal, "ssp: checkpoint barrier without a store");
    std::vector<PartSum> sums = write_shards(snapshot_id(vc.max()));
    if (rank == 0) {
      auto &all = ckpt_sums[seq];
      all.insert(all.end(), sums.begin(), sums.end());
      own_shards_done.insert(seq);
      ckpt_kind[seq] = kind;
      maybe_finish_ckpt(seq);
    } else {
      Writer w;
      w.put<std::uint8_t>(kShardsDone);
      w.put<std::int64_t>(seq);
      put_sums(w, sums);
      tx.send(0, kTagRequest, w.take());
      if (kind == kCkptEnd) completed_phase = std::max(completed_phase, seq);
      if (kind == kCkptRun) store = nullptr;
    }
  }

  // ---- rank 0: scheduling ---------------------------------------------------------------------
  void update_pause() {
    if (!sched || !job) return;
    std::int64_t p = -1;
    if (job->checkpoint_every > 0 && job->checkpoint_store) {
      const std::int64_t every = job->checkpoint_every;
      const std::int64_t from = std::max(last_ckpt, vc.max());
      p = (from / every + 1) * every;  // the next multiple after the last checkpoint
    }
    if (job->stop_at_clock >= 0 && (p < 0 || job->stop_at_clock < p)) p = job->stop_at_clock;
    // AUTOTUNE_PROFILE_ONLY: suspend at the end of the measured clocks; run() then exits.
    if (opt.profile && penv.only && end_clock >= 0 && (p < 0 || end_clock < p)) p = end_clock;
    sched->set_pause(p);
  }

  void send_decision(int worker, std::uint8_t d, const Grant *g = nullptr, std::int64_t ck = 0) {
    Writer w;
    w.put<std::uint8_t>(kTaskReply);
    w.put<std::int64_t>(vc.min());
    w.put<std::uint8_t>(d);
    if (d == kGrant) {
      w.put<std::int64_t>(g->task_id);
      w.put<std::int32_t>(g->executor);
      w.put<std::int32_t>(g->epoch);
      w.put<std::uint64_t>(g->begin);
      w.put<std::uint64_t>(g->end);
      w.put<std::uint64_t>(g->shard_begin);
      w.put<std::uint64_t>(g->shard_end);
      w.put_string(sched->state_of(g->executor));
    } else if (d == kCheckpoint) {
      w.put<std::int64_t>(ck);
    }
    reply(S + worker, w);
  }

  void schedule() {
    bool all_paused = true;
    for (std::size_t k = task_reqs.size(); k > 0; --k) {
      auto [worker, c] = task_reqs.front();
      task_reqs.pop_front();
      Grant g{};
      switch (sched->decide(worker, c, &g)) {
        case Decision::grant:
          send_decision(worker, kGrant, &g);
          break;
        case Decision::clock:
          send_decision(worker, kClock);
          break;
        case Decision::done:
          send_decision(worker, kDone);
          break;
        case Decision::pause:
          task_reqs.push_back({worker, c});
          break;
        case Decision::wait:
          all_paused = false;
          task_reqs.push_back({worker, c});
          break;
      }
    }
    // Every worker waits at the pause clock and nothing is in flight: checkpoint or suspend.
    if (all_paused && static_cast<int>(task_reqs.size()) == W && sched->in_flight() == 0 &&
        sched->pause() >= 0) {
      const std::int64_t p = sched->pause();
      const bool ckpt_due = job->checkpoint_every > 0 && job->checkpoint_store &&
                            p % job->checkpoint_every == 0 && last_ckpt != p;
      if (ckpt_due) {
        const std::int64_t seq = -(++run_ckpt_seq);  // phases use positive numbers
        for (auto &[worker, c] : task_reqs) send_decision(worker, kCheckpoint, nullptr, seq);
      } else {
        for (auto &[worker, c] : task_reqs) send_decision(worker, kStop);
        suspended = true;
      }
      task_reqs.clear();
    }
  }

  void handle_task_req(int src, Reader &r) {
    if (rank != 0 || !sched || !job)
      throw Error(Errc::internal, "ssp: micro-task request outside run()");
    const int worker = src - S;
    const auto c = r.get<std::int64_t>();
    if (r.get<std::uint8_t>()) {
      const auto id = r.get<std::int64_t>();
      const auto secs = r.get<double>();
      sched->complete(worker, id, secs, r.get_string());
    }
    task_reqs.push_back({worker, c});
    schedule();
  }

  void handle(Message &m) {
    Reader r(m.data, "request");
    const auto type = r.get<std::uint8_t>();
    switch (type) {
      case kFlush:
        handle_flush(m.source, r);
        break;
      case kGet: {
        const auto need = r.get<std::int64_t>();
        if (need <= vc.min())
          answer_get(m.source, m.data);
        else
          deferred_gets.push_back(std::move(m));
        break;
      }
      case kWait: {
        const auto need = r.get<std::int64_t>();
        if (need <= vc.min()) {
          Writer w;
          w.put<std::uint8_t>(kWaitReply);
          w.put<std::int64_t>(vc.min());
          reply(m.source, w);
        } else {
          deferred_waits.push_back({m.source, need});
        }
        break;
      }
      case kBarrier:
        handle_barrier(r);
        break;
      case kTaskReq:
        handle_task_req(m.source, r);
        break;
      case kShardsDone: {
        const auto seq = r.get<std::int64_t>();
        auto sums = get_sums(r);
        auto &all = ckpt_sums[seq];
        all.insert(all.end(), std::make_move_iterator(sums.begin()),
                   std::make_move_iterator(sums.end()));
        ++shards_done[seq];
        maybe_finish_ckpt(seq);
        break;
      }
      case kProfileStop:
        profile_stop_pending = true;
        server_profile_check();
        break;
      default:
        throw Error(Errc::internal, "ssp: unknown message type " + std::to_string(type));
    }
  }

  // Serves until the collective phase `seq` has completed on this server.
  void serve_until(std::int64_t seq) {
    unsigned idle = 0;
    while (completed_phase < seq) {
      Message m;
      if (tx.poll(m)) {
        handle(m);
        idle = 0;
      } else {
        tx.progress();
        tx.backoff(idle);
      }
    }
  }
};

// ---- Context: construction -----------------------------------------------------------------

Context::Context(MPI_Comm comm, const Options &options) : impl_(std::make_unique<Impl>()) {
  Impl &I = *impl_;
  I.opt = options;
  int inited = 0, fin = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&fin);
  if (fin) throw Error(Errc::invalid_argument, "ssp: MPI is already finalized");
  if (!inited) {
    int provided = 0;
    mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    I.we_initialized = true;
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      throw Error(Errc::unsupported, "ssp: MPI provides no MPI_THREAD_FUNNELED support");
    }
  } else {
    int level = MPI_THREAD_SINGLE, main = 0;
    MPI_Query_thread(&level);
    MPI_Is_thread_main(&main);
    if (level < MPI_THREAD_SERIALIZED && !main)
      throw Error(Errc::invalid_argument,
                  "ssp: Context created outside MPI's main thread, but MPI was initialized with "
                  "thread level " +
                      std::to_string(level) +
                      "; allowed: the main thread, or MPI_THREAD_SERIALIZED or higher");
  }
  try {
    mpi_check(MPI_Comm_dup(comm, &I.comm), "MPI_Comm_dup");
    MPI_Comm_rank(I.comm, &I.rank);
    MPI_Comm_size(I.comm, &I.size);
    // Validation: the same inputs on every rank, so every rank throws the same error.
    I.policy = ConsistencyPolicy::from_staleness(options.staleness);
    int servers = options.servers;
    if (servers == -1) {
      const char *ps = std::getenv("AUTOTUNE_PS");
      servers =
          (ps && *ps) ? static_cast<int>(autotune::parse_int("AUTOTUNE_PS", ps, 1, 1 << 20)) : 1;
    }
    if (servers < 1 || servers >= I.size)
      invalid("servers: '" + std::to_string(servers) + "' is out of range; allowed: 1 to " +
              std::to_string(I.size - 1) + " (the communicator has " + std::to_string(I.size) +
              " ranks and at least one must be a worker)");
    if (options.logical_servers < servers || options.logical_servers > 65536)
      invalid("logical_servers: '" + std::to_string(options.logical_servers) +
              "' is out of range; allowed: " + std::to_string(servers) + " (the servers) to 65536");
    if (options.flush_bytes < 1024 || options.flush_bytes > (std::size_t{1} << 30))
      invalid("flush_bytes: '" + std::to_string(options.flush_bytes) +
              "' is out of range; allowed: 1024 to 1073741824");
    if (options.idle_sleep_us < 0 || options.idle_sleep_us > 100000)
      invalid("idle_sleep_us: '" + std::to_string(options.idle_sleep_us) +
              "' is out of range; allowed: 0 to 100000");
    if (options.profile_warmup < -1 || options.profile_warmup > 1000000)
      invalid("profile_warmup: '" + std::to_string(options.profile_warmup) +
              "' is out of range; allowed: -1 (environment) or 0 to 1000000");
    if (options.profile) I.penv = read_profile_env(options.profile_warmup);
    I.S = servers;
    I.W = I.size - servers;
    I.role = I.rank < I.S ? Role::server : Role::worker;
  } catch (...) {
    // Leave MPI as we found it: the caller prints the message and exits.
    if (I.comm != MPI_COMM_NULL) MPI_Comm_free(&I.comm);
    if (I.we_initialized) MPI_Finalize();
    throw;
  }
  MPI_Comm_split(I.comm, I.role == Role::worker ? 0 : MPI_UNDEFINED, I.rank, &I.wcomm);
  I.tx = Transport(I.comm, options.idle_sleep_us);
  I.known_min.assign(static_cast<std::size_t>(I.S), 0);
  I.vc = VectorClock(I.W, 0);
  I.rebase_profile(0);
}

Context::~Context() {
  if (!impl_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // the application finalized MPI first: nothing can be sent any more
  try {
    if (!impl_->finished && std::uncaught_exceptions() == 0) finish();
  } catch (const std::exception &e) {
    autotune::log(autotune::LogLevel::error, std::string("ssp: finish: ") + e.what());
  }
  Impl &I = *impl_;
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) {
    try {
      I.tx.drain();
    } catch (const std::exception &e) {
      autotune::log(autotune::LogLevel::error, std::string("ssp: ") + e.what());
    }
    if (I.wcomm != MPI_COMM_NULL) MPI_Comm_free(&I.wcomm);
    if (I.comm != MPI_COMM_NULL) MPI_Comm_free(&I.comm);
    if (I.we_initialized) MPI_Finalize();
  }
}

int Context::rank() const { return impl_->rank; }
int Context::size() const { return impl_->size; }
Role Context::role() const { return impl_->role; }
int Context::servers() const { return impl_->S; }
int Context::workers() const { return impl_->W; }
int Context::worker_index() const {
  return impl_->role == Role::worker ? impl_->rank - impl_->S : -1;
}
int Context::server_index() const { return impl_->role == Role::server ? impl_->rank : -1; }
const ConsistencyPolicy &Context::policy() const { return impl_->policy; }
MPI_Comm Context::worker_comm() const { return impl_->wcomm; }
std::int64_t Context::current_clock() const { return impl_->clock; }
void Context::count_samples(std::uint64_t n) { impl_->samples += n; }

// ---- tables ---------------------------------------------------------------------------------

int Context::create_table(const std::string &name, std::int64_t rows, std::int64_t cols,
                          ElemKind kind) {
  Impl &I = *impl_;
  const std::string what = "table '" + name + "': ";
  try {
    SnapshotStore::check_name(name);
  } catch (const Error &) {
    invalid("table name: '" + name +
            "' is not allowed; allowed: letters, digits, '.', '_' and "
            "'-', starting with a letter or digit");
  }
  for (const auto &t : I.tables)
    if (t.name == name) invalid(what + "a table of that name already exists");
  const std::int64_t max_cells = std::int64_t{1} << 40;
  if (rows < 1 || rows > max_cells)
    invalid(what + "rows: '" + std::to_string(rows) + "' is out of range; allowed: 1 to " +
            std::to_string(max_cells));
  if (cols < 1 || cols > (std::int64_t{1} << 24) || rows > max_cells / cols)
    invalid(what + "cols: '" + std::to_string(cols) + "' is out of range; allowed: 1 to " +
            std::to_string(std::min<std::int64_t>(std::int64_t{1} << 24, max_cells / rows)));
  // Every rank must create the same table: compare (rows, cols, kind, name hash) across ranks.
  std::int64_t v[4] = {rows, cols, static_cast<std::int64_t>(kind),
                       static_cast<std::int64_t>(crc32(name.data(), name.size()))};
  std::int64_t lo[4], hi[4];
  MPI_Allreduce(v, lo, 4, MPI_INT64_T, MPI_MIN, I.comm);
  MPI_Allreduce(v, hi, 4, MPI_INT64_T, MPI_MAX, I.comm);
  if (std::memcmp(lo, hi, sizeof lo) != 0)
    invalid(what +
            "the ranks created different tables here (every rank must call table() with "
            "the same name, type and shape, in the same order)");
  TableState t;
  t.name = name;
  t.kind = kind;
  t.esz = elem_size(kind);
  t.rows = rows;
  t.cols = cols;
  t.rb = static_cast<std::size_t>(cols) * t.esz;
  t.map = ShardMap(rows, I.opt.logical_servers, I.S);
  I.alloc_server_shards(t);
  I.tables.push_back(std::move(t));
  return static_cast<int>(I.tables.size()) - 1;
}

std::int64_t Context::table_rows(int id) const { return impl_->table(id).rows; }
std::int64_t Context::table_cols(int id) const { return impl_->table(id).cols; }
const std::string &Context::table_name(int id) const { return impl_->table(id).name; }
void Context::table_get(int id, std::int64_t first, std::int64_t count, void *out) {
  impl_->get(id, first, count, static_cast<char *>(out));
}
void Context::table_inc(int id, std::int64_t row, std::int64_t col, const void *delta) {
  impl_->inc(id, row, col, delta);
}
void Context::table_inc_rows(int id, std::int64_t first, std::int64_t count, const void *delta) {
  impl_->inc_rows(id, first, count, delta);
}

void Context::table_pull_all(int id, void *out) {
  Impl &I = *impl_;
  TableState &t = I.table(id);
  barrier();
  // Each server contributes its shards as (first row, count, data) records.
  Writer w;
  for (const auto &[l, data] : t.shards) {
    w.put<std::int64_t>(t.map.shard_begin(l));
    w.put<std::int64_t>(t.map.shard_end(l) - t.map.shard_begin(l));
    w.put_bytes(data.data(), data.size());
  }
  std::string mine = w.take();
  if (mine.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Error(Errc::unsupported, "ssp: pull_all: a server's part is larger than 2 GiB");
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(I.size)),
      displs(static_cast<std::size_t>(I.size));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, I.comm);
  long long total = 0;
  for (int r = 0; r < I.size; ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += counts[static_cast<std::size_t>(r)];
  }
  if (total > std::numeric_limits<int>::max())
    throw Error(Errc::unsupported, "ssp: pull_all: table '" + t.name + "' is larger than 2 GiB");
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE,
                 I.comm);
  Reader r(all, "pull_all");
  char *o = static_cast<char *>(out);
  while (!r.done()) {
    const auto a = r.get<std::int64_t>();
    const auto c = r.get<std::int64_t>();
    r.get_bytes(o + static_cast<std::size_t>(a) * t.rb, static_cast<std::size_t>(c) * t.rb);
  }
}

// ---- clocks, barriers -----------------------------------------------------------------------

std::int64_t Context::clock() { return impl_->do_clock(); }

void Context::barrier() {
  Impl &I = *impl_;
  const std::int64_t seq = ++I.phase_seq;
  if (I.role == Role::server)
    I.serve_until(seq);
  else
    I.worker_barrier(kPlain, seq);
}

void Context::finish() {
  Impl &I = *impl_;
  if (I.finished) return;
  I.finished = true;
  barrier();
  I.tx.drain();
  if (I.opt.profile) I.write_result(false);
}

// ---- run ------------------------------------------------------------------------------------

RunResult Context::run(const Job &job, const TaskFn &fn) {
  Impl &I = *impl_;
  const double t0 = wall_now_s();
  const SchedulerSpec spec =
      make_scheduler_spec(job.executors, job.units, job.epochs, job.tasks_per_clock, job.task_ms,
                          job.initial_task_units, job.max_task_units, I.W);
  if (job.checkpoint_every < 0)
    invalid("job: checkpoint_every: '" + std::to_string(job.checkpoint_every) +
            "' is out of range; allowed: 0 (none) or a number of clocks");
  if (job.checkpoint_every > 0 && !job.checkpoint_store)
    invalid("job: checkpoint_every is set but checkpoint_store is not");
  if (!fn) invalid("run: no task function");
  if (I.restored_job &&
      (I.r_executors != spec.executors || I.r_units != spec.units || I.r_epochs != spec.epochs))
    invalid("job: the restored snapshot's job has executors=" + std::to_string(I.r_executors) +
            " units=" + std::to_string(I.r_units) + " epochs=" + std::to_string(I.r_epochs) +
            ", this job has executors=" + std::to_string(spec.executors) +
            " units=" + std::to_string(spec.units) + " epochs=" + std::to_string(spec.epochs) +
            " (a resumed job must keep them)");
  I.restored_job = false;
  const std::int64_t seq = ++I.phase_seq;
  RunResult res;
  std::uint8_t finished = 1;
  if (I.role == Role::server) {
    if (I.rank == 0) {
      const bool resume =
          I.sched && I.sched->work_left() && I.sched->spec().executors == spec.executors &&
          I.sched->spec().units == spec.units && I.sched->spec().epochs == spec.epochs;
      if (resume) {
        SchedulerSpec s = spec;
        I.sched->rebase(I.W, I.vc.max());
        I.sched->retune(s);
      } else {
        I.sched = std::make_unique<Scheduler>(I.W, spec);
        I.last_ckpt = I.vc.max();
      }
      I.job = &job;
      I.suspended = false;
      I.task_reqs.clear();
      I.update_pause();
    } else {
      I.job = &job;
    }
    const std::uint64_t ck0 = I.checkpoints;
    I.serve_until(seq);
    I.job = nullptr;
    res.checkpoints = I.checkpoints - ck0;
    finished = I.rank == 0 ? !I.suspended : 1;
  } else {
    I.in_run = true;
    bool have_done = false;
    Task t;
    double secs = 0;
    for (;;) {
      Writer w;
      w.put<std::uint8_t>(kTaskReq);
      w.put<std::int64_t>(I.clock);
      w.put<std::uint8_t>(have_done ? 1 : 0);
      if (have_done) {
        w.put<std::int64_t>(t.id);
        w.put<double>(secs);
        w.put_string(t.state);
        have_done = false;
      }
      I.tx.send(0, kTagRequest, w.take());
      Message m = I.tx.recv_from(0, kTagReply);
      Reader r(m.data, "task reply");
      if (r.get<std::uint8_t>() != kTaskReply)
        throw Error(Errc::internal, "ssp: expected a task reply");
      I.note_min(0, r.get<std::int64_t>());
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
        t.clock = I.clock;
        const double a = wall_now_s();
        fn(t);
        secs = wall_now_s() - a;
        I.samples += (t.end - t.begin) * job.samples_per_unit;
        have_done = true;
      } else if (d == kClock) {
        I.do_clock();
        if (job.after_clock) job.after_clock(I.clock);
      } else if (d == kCheckpoint) {
        I.worker_barrier(kCkptRun, r.get<std::int64_t>());
        ++res.checkpoints;
      } else if (d == kDone || d == kStop) {
        finished = d == kDone;
        break;
      } else {
        throw Error(Errc::internal, "ssp: unknown task decision " + std::to_string(d));
      }
    }
    I.in_run = false;
    I.worker_barrier(kPlain, seq);
  }
  // Everyone: the per-worker counters and whether the job finished, from rank 0.
  std::vector<std::uint64_t> counts(2 * static_cast<std::size_t>(I.W) + 1, 0);
  if (I.rank == 0) {
    for (int w = 0; w < I.W; ++w) {
      counts[static_cast<std::size_t>(w)] = I.sched->tasks_by_worker()[static_cast<std::size_t>(w)];
      counts[static_cast<std::size_t>(I.W + w)] =
          I.sched->units_by_worker()[static_cast<std::size_t>(w)];
    }
    counts.back() = finished;
  }
  MPI_Bcast(counts.data(), static_cast<int>(counts.size()), MPI_UINT64_T, 0, I.comm);
  double tstat[3] = {0, 0, 0};
  if (I.rank == 0) {
    std::uint64_t n = 0;
    for (auto k : I.sched->tasks_by_worker()) n += k;
    tstat[0] = n ? I.sched->task_s_sum() / static_cast<double>(n) : 0;
    tstat[1] = I.sched->task_s_max();
    tstat[2] = static_cast<double>(I.sched->sizer().next_units());
  }
  MPI_Bcast(tstat, 3, MPI_DOUBLE, 0, I.comm);
  res.task_s_mean = tstat[0];
  res.task_s_max = tstat[1];
  res.task_units = static_cast<std::uint64_t>(tstat[2]);
  res.tasks_per_worker.assign(counts.begin(), counts.begin() + I.W);
  res.units_per_worker.assign(counts.begin() + I.W, counts.begin() + 2 * I.W);
  res.finished = counts.back() != 0;
  res.clock = I.role == Role::worker ? I.clock : I.vc.max();
  res.seconds = wall_now_s() - t0;
  // AUTOTUNE_PROFILE_ONLY: the measured clocks are done (or the job ended first): report, exit.
  if (I.opt.profile && I.penv.only) I.profile_exit();
  return res;
}

// ---- checkpoint / restore -------------------------------------------------------------------

std::string Context::checkpoint(SnapshotStore &store) {
  Impl &I = *impl_;
  const std::int64_t seq = ++I.phase_seq;
  std::int64_t c = 0;
  if (I.role == Role::server) {
    I.store = &store;
    I.serve_until(seq);
    I.store = nullptr;
    c = I.vc.max();
  } else {
    I.worker_barrier(kCkptEnd, seq);
  }
  MPI_Bcast(&c, 1, MPI_INT64_T, 0, I.comm);
  return snapshot_id(c);
}

namespace {

// Runs `f` on every rank; if it threw anywhere, every rank throws the lowest failing rank's error.
template <class F>
void all_or_none(MPI_Comm comm, int rank, F &&f) {
  std::string msg;
  int code = 0;
  try {
    f();
  } catch (const Error &e) {
    msg = e.what();
    code = static_cast<int>(e.code());
  } catch (const std::exception &e) {
    msg = e.what();
    code = static_cast<int>(Errc::internal);
  }
  int me = msg.empty() ? std::numeric_limits<int>::max() : rank, first = 0;
  MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == std::numeric_limits<int>::max()) return;
  int len = static_cast<int>(msg.size());
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  msg.resize(static_cast<std::size_t>(len));
  MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm);
  throw Error(static_cast<Errc>(code), msg);
}

}  // namespace

SnapshotInfo Context::restore(const SnapshotStore &store) {
  Impl &I = *impl_;
  SnapshotInfo info;
  nlohmann::json man;
  all_or_none(I.comm, I.rank, [&] {
    // Trusted only through the manifest: every part it lists must be there before any is loaded,
    // and each is checked against it as it is loaded.
    const SnapshotReader snap(store);
    snap.check_present();
    const std::string &id = snap.id();
    man = snap.manifest();
    info.id = id;
    info.clock = man.at("clock").get<std::int64_t>();
    info.workers = man.at("workers").get<int>();
    info.servers = man.at("servers").get<int>();
    info.has_job = !man.at("job").is_null();
    const auto &tv = man.at("tables");
    if (tv.size() != I.tables.size())
      throw Error(Errc::invalid_argument,
                  "ssp: restore: the snapshot holds " + std::to_string(tv.size()) +
                      " tables, this program created " + std::to_string(I.tables.size()));
    for (std::size_t k = 0; k < tv.size(); ++k) {
      const auto &t = I.tables[k];
      const std::string n = tv[k].at("name").get<std::string>();
      const std::string ty = tv[k].at("type").get<std::string>();
      const auto rows = tv[k].at("rows").get<std::int64_t>();
      const auto cols = tv[k].at("cols").get<std::int64_t>();
      if (n != t.name || ty != kind_name(t.kind) || rows != t.rows || cols != t.cols)
        throw Error(Errc::invalid_argument,
                    "ssp: restore: table " + std::to_string(k) + " is '" + n + "' " +
                        std::to_string(rows) + " x " + std::to_string(cols) + " " + ty +
                        " in the snapshot, but '" + t.name + "' " + std::to_string(t.rows) + " x " +
                        std::to_string(t.cols) + " " + kind_name(t.kind) + " here");
    }
    // Remap the logical shards onto this run's servers and load the ones this rank owns.
    for (std::size_t k = 0; k < tv.size(); ++k) {
      auto &t = I.tables[k];
      const int L = tv[k].at("logical_servers").get<int>();
      if (L < I.S)
        throw Error(Errc::invalid_argument, "ssp: restore: table '" + t.name + "' has " +
                                                std::to_string(L) +
                                                " logical servers, fewer than the " +
                                                std::to_string(I.S) + " server ranks of this run");
      t.map = ShardMap(t.rows, L, I.S);
      I.alloc_server_shards(t);
      I.reset_worker_cache(t);
      for (auto &[l, data] : t.shards) {
        const std::string name = id + ".table-" + t.name + ".shard-" + std::to_string(l);
        const std::string p = snap.part(name, PartKind::shard);
        Reader r(p, "snapshot part '" + name + "'");
        const std::string tn = r.get_string();
        r.get<std::uint8_t>();
        r.get<std::int64_t>();
        r.get<std::int64_t>();
        const auto Ls = r.get<std::int32_t>();
        const auto ls = r.get<std::int32_t>();
        const auto first = r.get<std::int64_t>();
        const auto count = r.get<std::int64_t>();
        if (tn != t.name || Ls != L || ls != l || first != t.map.shard_begin(l) ||
            count != t.map.shard_end(l) - first || r.left() != data.size())
          throw Error(Errc::corrupt, "snapshot part '" + name + "' does not match its manifest");
        r.get_bytes(data.data(), data.size());
      }
    }
    if (I.rank == 0 && info.has_job) {
      const auto &j = man.at("job");
      SchedulerSpec sp;
      sp.executors = j.at("executors").get<int>();
      sp.units = j.at("units").get<std::uint64_t>();
      sp.epochs = j.at("epochs").get<int>();
      sp.tasks_per_clock = I.W;
      std::vector<std::string> queues, states;
      for (int e = 0; e < sp.executors; ++e) {
        const std::string pre = id + ".executor-" + std::to_string(e);
        queues.push_back(snap.part(pre + ".queue", PartKind::executor_queue));
        states.push_back(snap.part(pre + ".state", PartKind::executor_state));
      }
      I.sched = std::make_unique<Scheduler>(Scheduler::decode(
          I.W, sp, snap.part(id + ".scheduler", PartKind::scheduler), queues, states));
    } else if (I.rank == 0) {
      I.sched.reset();
    }
  });
  if (info.has_job) {
    const auto &j = man.at("job");
    I.restored_job = true;
    I.r_executors = j.at("executors").get<int>();
    I.r_units = j.at("units").get<std::uint64_t>();
    I.r_epochs = j.at("epochs").get<int>();
    info.job_executors = I.r_executors;
    info.job_units = I.r_units;
    info.job_epochs = I.r_epochs;
  }
  // Every worker resumes at the snapshot's clock.
  I.clock = info.clock;
  I.known_min.assign(static_cast<std::size_t>(I.S), info.clock);
  I.vc = VectorClock(I.W, info.clock);
  I.last_ckpt = info.clock;
  I.rebase_profile(info.clock);
  return info;
}

}  // namespace ssp
