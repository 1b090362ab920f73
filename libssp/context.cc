// ssp::Context: MPI set-up and teardown, roles, the tables and the dispatch of messages to the
// parts that own the rest of the state (see include/ssp/*.hpp for the contracts):
//
//   worker.hpp       the worker side: cache, buffered increments, clocks, run()'s task loop
//   server.hpp       the server side: shards, the workers' vector clock, deferred reads, barriers
//   coordinator.hpp  rank 0's driver of the micro-task scheduler during run()
//   checkpoint.hpp   consistent snapshots and restore
//   profiling.hpp    the profiling hook (AUTOTUNE_PROFILE_* / AUTOTUNE_RESULT)
//
// Context::Impl owns the communicators, the role, the table shapes, the transport and the parts;
// it runs the server loop (serve_until), handing each message to its part, and the collective
// calls, telling each part its share.  Every part exists on every rank; each is called only on
// the ranks of its role.  Thread safety: none (see context.hpp): the Context's thread only.
#include "ssp/context.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "autotune/log.hpp"
#include "autotune/units.hpp"
#include "checkpoint.hpp"
#include "codec.hpp"
#include "coordinator.hpp"
#include "profile.hpp"
#include "profiling.hpp"
#include "protocol.hpp"
#include "scheduler.hpp"
#include "server.hpp"
#include "shard_map.hpp"
#include "tables.hpp"
#include "transport.hpp"
#include "worker.hpp"

namespace ssp {

namespace {

void mpi_check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) throw Error(Errc::io, std::string("ssp: ") + what + " failed");
}

}  // namespace

struct Context::Impl {
  // What the constructor settled before the parts are made.
  struct Setup {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm wcomm = MPI_COMM_NULL;
    bool we_initialized = false;
    int rank = 0, size = 1, servers = 1;
    ConsistencyPolicy policy = ConsistencyPolicy::bsp();
    Options opt;
    ProfileEnv penv;
  };

  explicit Impl(const Setup &s)
      : comm(s.comm),
        wcomm(s.wcomm),
        we_initialized(s.we_initialized),
        rank(s.rank),
        size(s.size),
        S(s.servers),
        W(s.size - s.servers),
        role(s.rank < s.servers ? Role::server : Role::worker),
        policy(s.policy),
        opt(s.opt),
        tx(s.comm, s.opt.idle_sleep_us),
        profiler(tx, comm, rank, size, S, role, opt.profile, opt.app, policy, s.penv),
        server(tx, tables, rank, S, W),
        worker(tx, tables, policy, S, opt.flush_bytes, opt.fresh_reads, profiler),
        coord(tx, server, profiler, rank, S, W),
        ckpt(tx, comm, tables, server, coord, policy, rank, S, W) {
    profiler.rebase(0);
  }

  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm wcomm = MPI_COMM_NULL;
  bool we_initialized = false;
  bool finished = false;
  int rank = 0, size = 1, S = 1, W = 0;
  Role role = Role::worker;
  ConsistencyPolicy policy;
  Options opt;
  Transport tx;
  Tables tables;
  std::int64_t phase_seq = 0;  // collective phases (barrier, run, checkpoint) so far

  // The parts (declared after what they refer to).
  Profiler profiler;
  Server server;
  Worker worker;
  Coordinator coord;
  Checkpointer ckpt;

  void need_worker(const char *what) const {
    if (role != Role::worker)
      throw Error(Errc::invalid_argument, std::string("ssp: ") + what +
                                              " is for worker ranks; rank " + std::to_string(rank) +
                                              " is a parameter server");
  }

  // This rank's clock for the profiler.
  RankClock rank_clock() const {
    if (role == Role::worker) return {worker.clock(), worker.clock()};
    return {server.vc().min(), server.vc().max()};
  }

  // restore(): table `id` on `logical` shards over this run's servers, nothing held or cached.
  void remap_table(int id, int logical) {
    TableShape &t = tables[static_cast<std::size_t>(id)];
    t.map = ShardMap(t.rows, logical, S);
    server.remap_table(id);
    worker.reset_table(id);
  }

  // Hands a message that reached this server to the part it is for.
  void dispatch(Message &m) {
    Reader r(m.data, "request");
    const auto type = r.get<std::uint8_t>();
    switch (type) {
      case kFlush:
        if (server.on_flush(m.source, r)) profiler.server_clock(rank_clock(), coord.running());
        break;
      case kGet:
        server.on_get(m, r);
        break;
      case kGetFresh:
        server.on_get_fresh(m, r);
        break;
      case kWait:
        server.on_wait(m.source, r);
        break;
      case kBarrier: {
        std::uint8_t kind = 0;
        std::int64_t seq = 0;
        if (!server.on_barrier(r, &kind, &seq)) break;
        if (kind == kPlain) {
          server.ack_workers(kind, seq);
          server.complete_phase(seq);
        } else {
          ckpt.on_barrier(kind, seq);
        }
        break;
      }
      case kTaskReq:
        coord.on_task_request(m.source, r);
        break;
      case kShardsDone:
        ckpt.on_shards_done(r);
        break;
      case kProfileStop:
        profiler.stop_requested(rank_clock(), coord.running());
        break;
      default:
        throw Error(Errc::internal, "ssp: unknown message type " + std::to_string(type));
    }
  }

  // The server loop: serves until the collective phase `seq` has completed on this server.
  void serve_until(std::int64_t seq) {
    unsigned idle = 0;
    Message m;  // its buffer is reused by the next poll
    while (server.completed_phase() < seq) {
      if (tx.poll(m)) {
        dispatch(m);
        idle = 0;
      } else {
        tx.progress();
        tx.backoff(idle);
      }
    }
  }
};

// ---- Context: construction -----------------------------------------------------------------

Context::Context(MPI_Comm comm, const Options &options) {
  Impl::Setup s;
  s.opt = options;
  int inited = 0, fin = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&fin);
  if (fin) throw Error(Errc::invalid_argument, "ssp: MPI is already finalized");
  if (!inited) {
    int provided = 0;
    mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    s.we_initialized = true;
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
    mpi_check(MPI_Comm_dup(comm, &s.comm), "MPI_Comm_dup");
    MPI_Comm_rank(s.comm, &s.rank);
    MPI_Comm_size(s.comm, &s.size);
    // Validation: the same inputs on every rank, so every rank throws the same error.
    s.policy = ConsistencyPolicy::from_staleness(options.staleness);
    int servers = options.servers;
    if (servers == -1) {
      const char *ps = std::getenv("AUTOTUNE_PS");
      servers =
          (ps && *ps) ? static_cast<int>(autotune::parse_int("AUTOTUNE_PS", ps, 1, 1 << 20)) : 1;
    }
    if (servers < 1 || servers >= s.size)
      invalid("servers: '" + std::to_string(servers) + "' is out of range; allowed: 1 to " +
              std::to_string(s.size - 1) + " (the communicator has " + std::to_string(s.size) +
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
    if (options.profile) s.penv = read_profile_env(options.profile_warmup);
    s.servers = servers;
  } catch (...) {
    // Leave MPI as we found it: the caller prints the message and exits.
    if (s.comm != MPI_COMM_NULL) MPI_Comm_free(&s.comm);
    if (s.we_initialized) MPI_Finalize();
    throw;
  }
  MPI_Comm_split(s.comm, s.rank >= s.servers ? 0 : MPI_UNDEFINED, s.rank, &s.wcomm);
  impl_ = std::make_unique<Impl>(s);
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
std::int64_t Context::current_clock() const { return impl_->worker.clock(); }
std::int64_t Context::read_lag() const { return impl_->worker.read_lag(); }
void Context::count_samples(std::uint64_t n) { impl_->profiler.add_samples(n); }

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
  TableShape t;
  t.name = name;
  t.kind = kind;
  t.esz = elem_size(kind);
  t.rows = rows;
  t.cols = cols;
  t.rb = static_cast<std::size_t>(cols) * t.esz;
  t.map = ShardMap(rows, I.opt.logical_servers, I.S);
  I.tables.push_back(std::move(t));
  I.server.add_table();
  I.worker.add_table();
  return static_cast<int>(I.tables.size()) - 1;
}

std::int64_t Context::table_rows(int id) const { return table_at(impl_->tables, id).rows; }
std::int64_t Context::table_cols(int id) const { return table_at(impl_->tables, id).cols; }
const std::string &Context::table_name(int id) const { return table_at(impl_->tables, id).name; }
void Context::table_get(int id, std::int64_t first, std::int64_t count, void *out) {
  impl_->need_worker("Table::get");
  impl_->worker.get(id, first, count, static_cast<char *>(out));
}
void Context::table_get_at(int id, const std::int64_t *rows, std::int64_t n, void *out) {
  impl_->need_worker("Table::get_rows_at");
  impl_->worker.get_at(id, rows, n, static_cast<char *>(out));
}
void Context::table_inc(int id, std::int64_t row, std::int64_t col, const void *delta) {
  impl_->need_worker("Table::inc");
  impl_->worker.inc(id, row, col, delta);
}
void Context::table_inc_rows(int id, std::int64_t first, std::int64_t count, const void *delta) {
  impl_->need_worker("Table::inc_rows");
  impl_->worker.inc_rows(id, first, count, delta);
}

void Context::table_pull_all(int id, void *out) {
  Impl &I = *impl_;
  const TableShape &t = table_at(I.tables, id);
  barrier();
  // Each server contributes its shards as (first row, count, data) records.
  Writer w;
  for (const auto &[l, data] : I.server.shards(id)) {
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

std::int64_t Context::clock() {
  impl_->need_worker("clock()");
  return impl_->worker.advance();
}

void Context::barrier() {
  Impl &I = *impl_;
  const std::int64_t seq = ++I.phase_seq;
  if (I.role == Role::server)
    I.serve_until(seq);
  else
    I.worker.barrier(kPlain, seq);
}

void Context::finish() {
  Impl &I = *impl_;
  if (I.finished) return;
  I.finished = true;
  barrier();
  I.tx.drain();
  I.profiler.finish(I.rank_clock());
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
  I.ckpt.check_resumed_job(spec);
  const std::int64_t seq = ++I.phase_seq;
  RunResult res;
  std::uint8_t finished = 1;
  if (I.role == Role::server) {
    if (I.rank == 0) I.coord.begin(job, spec);
    I.ckpt.set_run_store(job.checkpoint_store);
    const std::uint64_t ck0 = I.ckpt.written();
    I.serve_until(seq);
    if (I.rank == 0) I.coord.end();
    I.ckpt.set_run_store(nullptr);
    res.checkpoints = I.ckpt.written() - ck0;
    finished = I.rank == 0 ? !I.coord.suspended() : 1;
  } else {
    finished = I.worker.run_tasks(job, fn, &res.checkpoints) ? 1 : 0;
    I.worker.barrier(kPlain, seq);
  }
  // Everyone: the per-worker counters, the micro-task figures and whether the job finished, from
  // rank 0.
  std::vector<std::uint64_t> counts(2 * static_cast<std::size_t>(I.W) + 1, 0);
  double tstat[3] = {0, 0, 0};
  if (I.rank == 0) {
    RunResult rep;
    I.coord.report(&rep);
    for (int w = 0; w < I.W; ++w) {
      counts[static_cast<std::size_t>(w)] = rep.tasks_per_worker[static_cast<std::size_t>(w)];
      counts[static_cast<std::size_t>(I.W + w)] = rep.units_per_worker[static_cast<std::size_t>(w)];
    }
    counts.back() = finished;
    tstat[0] = rep.task_s_mean;
    tstat[1] = rep.task_s_max;
    tstat[2] = static_cast<double>(rep.task_units);
  }
  MPI_Bcast(counts.data(), static_cast<int>(counts.size()), MPI_UINT64_T, 0, I.comm);
  MPI_Bcast(tstat, 3, MPI_DOUBLE, 0, I.comm);
  res.task_s_mean = tstat[0];
  res.task_s_max = tstat[1];
  res.task_units = static_cast<std::uint64_t>(tstat[2]);
  res.tasks_per_worker.assign(counts.begin(), counts.begin() + I.W);
  res.units_per_worker.assign(counts.begin() + I.W, counts.begin() + 2 * I.W);
  res.finished = counts.back() != 0;
  res.clock = I.role == Role::worker ? I.worker.clock() : I.server.vc().max();
  res.seconds = wall_now_s() - t0;
  // AUTOTUNE_PROFILE_ONLY: the measured clocks are done (or the job ended first): report, exit.
  if (I.profiler.profile_only()) I.profiler.exit(I.rank_clock());
  return res;
}

// ---- checkpoint / restore -------------------------------------------------------------------

std::string Context::checkpoint(SnapshotStore &store) {
  Impl &I = *impl_;
  const std::int64_t seq = ++I.phase_seq;
  std::int64_t c = 0;
  if (I.role == Role::server) {
    I.ckpt.set_store(&store);
    I.serve_until(seq);
    I.ckpt.set_store(nullptr);
    c = I.server.vc().max();
  } else {
    I.worker.barrier(kCkptEnd, seq);
  }
  MPI_Bcast(&c, 1, MPI_INT64_T, 0, I.comm);
  return snapshot_id(c);
}

SnapshotInfo Context::restore(const SnapshotStore &store) {
  Impl &I = *impl_;
  const SnapshotInfo info =
      I.ckpt.restore(store, [&I](int id, int logical) { I.remap_table(id, logical); });
  // Every worker resumes at the snapshot's clock.
  I.worker.resume_at(info.clock);
  I.server.resume_at(info.clock);
  I.coord.resume_at(info.clock);
  I.profiler.rebase(info.clock);
  return info;
}

}  // namespace ssp
