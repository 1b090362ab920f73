// Checks of libssp under real MPI ranks, one mode per invocation (run by tests/mpi/ssp.test):
//
//   ssp_check staleness S|asp [CLOCKS]  every read records, for every cell (worker w, clock k),
//        whether worker w's update of clock k was seen; fails on any read that misses an update
//        of a clock <= c-S-1, sees one of a clock > c+S, misses its own writes, sees a value
//        other than 0/1, or reads a row through get_rows_at unlike through get_rows, or whose
//        Context::read_lag L is outside 0..S, claims more than it holds (an update of another
//        worker's clock < c-L missing) or differs after get_rows_at of the same rows.  Also
//        checks that sums of increments are exact after a final barrier.
//   ssp_check prefetch [CLOCKS]  a table read whole every clock (libssp asks for it again as the
//        next clock starts) while increments are sent early (flush_bytes at its minimum): every
//        read must see all of the worker's own increments, and every other worker's of clocks
//        <= c-s-1; the sums are exact after a final barrier.
//   ssp_check fresh 1|0 [CLOCKS]  SSP(2), a table read whole: after each clock() every worker
//        reads it every millisecond until it sees the other workers' increments of the clock just
//        ended (or a time limit passes).  With Options::fresh_reads (1) every wait must end within
//        the clock, once the others have clocked too; without (0) the table is fetched once per
//        clock, so the waits of the workers that clock first must run out, which shows the check
//        can fail.  The last worker clocks 100 ms after the others each time, so that the
//        others clock first whatever the machine's load (when the ranks kept pace by chance,
//        a run without fresh reads saw every clock).  Every read is checked against the bound
//        and read-my-writes, the sums at the end.
//   ssp_check badconfig servers|staleness|rows   a bad configuration: every rank must fail at
//        construction with one clear line ("rank R: error: ...") and exit 3.
//   ssp_check tasks        micro-task scheduling with worker 0 slowed 3x: every unit run exactly
//        once, each executor's micro-tasks in order, per-worker counts as reported; the
//        micro-task durations and whether worker 0 ran the fewest are printed, not checked.
//   ssp_check ckpt-save DIR CLOCK   train a linear model as a job, checkpoint at CLOCK and stop;
//        prints the model's checksum.
//   ssp_check ckpt-resume DIR       restore on this run's ranks, print the same checksum, train
//        to the end, check every unit was processed exactly `epochs` times and the loss fell.
// Rank 0 prints "ok ..." lines or "FAIL ..." lines; the exit status is 0 only when all passed.
#include <ssp/ssp.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int g_rank = 0;

int all_ok(MPI_Comm comm, bool ok) {
  int mine = ok ? 0 : 1, bad = 0;
  MPI_Allreduce(&mine, &bad, 1, MPI_INT, MPI_MAX, comm);
  return bad;
}

int staleness_mode(const std::string &arg, int clocks) {
  ssp::Options o;
  o.staleness = arg == "asp" ? ssp::kAsync : std::atoi(arg.c_str());
  o.servers = 1;
  o.logical_servers = 3;
  ssp::Context ctx(MPI_COMM_WORLD, o);
  const int W = ctx.workers();
  auto log = ctx.table<std::int32_t>("log", W, clocks + 1);
  auto sum = ctx.table<std::int64_t>("sum", 5, 3);
  auto frac = ctx.table<double>("frac", 2, 2);
  long reads = 0, violations = 0, max_lag = 0, max_ahead = 0, max_read_lag = 0;
  std::string first_violation;
  const bool asp = o.staleness == ssp::kAsync;
  const long s = asp ? 0 : o.staleness;
  if (ctx.is_worker()) {
    const int me = ctx.worker_index();
    std::mt19937 rng(1234u + static_cast<unsigned>(me));
    std::vector<std::int32_t> m(static_cast<std::size_t>(W * (clocks + 1)));
    auto violation = [&](const std::string &what) {
      if (violations++ == 0) first_violation = what;
    };
    for (int c = 0; c < clocks; ++c) {
      // worker 0 is slow, the others jitter: they drift apart as far as the policy lets them
      usleep(me == 0 ? 4000 : static_cast<useconds_t>(rng() % 1000));
      log.get_rows(0, W, m.data());
      ++reads;
      // Context::read_lag: the read held every other worker's updates of clocks < c - lag.
      const long lag = static_cast<long>(ctx.read_lag());
      max_read_lag = std::max(max_read_lag, lag);
      if (lag < 0 || (!asp && lag > s))
        violation("worker " + std::to_string(me) + " at clock " + std::to_string(c) +
                  ": read_lag " + std::to_string(lag) + " outside 0.." + std::to_string(s));
      {
        // get_rows_at (the rows in reverse, one twice) reads the same rows as get_rows.
        std::vector<std::int64_t> at_rows;
        for (int w = W - 1; w >= 0; --w) at_rows.push_back(w);
        at_rows.push_back(0);
        std::vector<std::int32_t> g(at_rows.size() * static_cast<std::size_t>(clocks + 1));
        log.get_rows_at(at_rows.data(), static_cast<std::int64_t>(at_rows.size()), g.data());
        if (ctx.read_lag() != lag)
          violation("worker " + std::to_string(me) + " at clock " + std::to_string(c) +
                    ": get_rows_at's read_lag " + std::to_string(ctx.read_lag()) +
                    " unlike get_rows' " + std::to_string(lag) + " for the same rows");
        for (std::size_t i = 0; i < at_rows.size(); ++i)
          if (!std::equal(g.begin() + static_cast<long>(i) * (clocks + 1),
                          g.begin() + static_cast<long>(i + 1) * (clocks + 1),
                          m.begin() + at_rows[i] * (clocks + 1)))
            violation("worker " + std::to_string(me) + " at clock " + std::to_string(c) +
                      ": get_rows_at read row " + std::to_string(at_rows[i]) +
                      " unlike get_rows");
      }
      for (int w = 0; w < W; ++w) {
        long seen_upto = -1;  // every update of clocks <= seen_upto was seen
        while (seen_upto + 1 <= clocks &&
               m[static_cast<std::size_t>(w * (clocks + 1) + seen_upto + 1)] == 1)
          ++seen_upto;
        for (int k = 0; k <= clocks; ++k) {
          const auto v = m[static_cast<std::size_t>(w * (clocks + 1) + k)];
          const std::string at = "worker " + std::to_string(me) + " at clock " + std::to_string(c) +
                                 " read cell (worker " + std::to_string(w) + ", clock " +
                                 std::to_string(k) + ") = " + std::to_string(v);
          if (v != 0 && v != 1) violation(at + ": not 0 or 1");
          if (w == me && k < c && v != 1) violation(at + ": misses its own write");
          if (w == me && k >= c && v != 0) violation(at + ": sees a write not made yet");
          if (!asp && k <= c - s - 1 && v != 1)
            violation(at + ": misses an update older than the staleness bound");
          if (!asp && k > c + s && v != 0)
            violation(at + ": sees an update from more than s clocks ahead");
          if (v == 1 && k > c) max_ahead = std::max<long>(max_ahead, k - c);
        }
        if (w != me) max_lag = std::max<long>(max_lag, (c - 1) - seen_upto);
        if (w != me && seen_upto < c - lag - 1)
          violation("worker " + std::to_string(me) + " at clock " + std::to_string(c) +
                    ": read_lag " + std::to_string(lag) + " but worker " + std::to_string(w) +
                    "'s updates are seen only up to clock " + std::to_string(seen_upto));
      }
      log.inc(me, c, 1);
      // read-my-writes inside the clock
      auto own = log.get(me);
      if (own[static_cast<std::size_t>(c)] != 1)
        violation("worker " + std::to_string(me) + " does not read its own write at clock " +
                  std::to_string(c));
      for (int r = 0; r < 5; ++r)
        for (int col = 0; col < 3; ++col) sum.inc(r, col, me + 1);
      frac.inc(1, 1, 0.25);
      ctx.clock();
    }
  }
  auto total = sum.pull_all();
  auto f = frac.pull_all();
  auto final_log = log.pull_all();
  long want = 0;
  for (int w = 0; w < W; ++w) want += static_cast<long>(w + 1) * clocks;
  bool sums_ok = true;
  for (auto v : total) sums_ok = sums_ok && v == want;
  sums_ok = sums_ok && f[3] == 0.25 * clocks * W && f[0] == 0;
  for (int w = 0; w < W; ++w)
    for (int k = 0; k <= clocks; ++k)
      sums_ok = sums_ok &&
                final_log[static_cast<std::size_t>(w * (clocks + 1) + k)] == (k < clocks ? 1 : 0);
  long tot[5] = {reads, violations, max_lag, max_ahead, max_read_lag}, agg[5];
  MPI_Reduce(tot, agg, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(tot + 2, agg + 2, 3, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (violations)
    std::fprintf(stderr, "rank %d: first violation: %s\n", g_rank, first_violation.c_str());
  const int bad = all_ok(MPI_COMM_WORLD, violations == 0 && sums_ok);
  if (g_rank == 0) {
    std::printf(
        "%s staleness %s (%s): %ld reads by %d workers, %ld violations, max lag seen %ld, max lead "
        "seen %ld, max read_lag %ld\n",
        agg[1] == 0 ? "ok" : "FAIL", arg.c_str(), ctx.policy().name().c_str(), agg[0], W, agg[1],
        agg[2], agg[3], agg[4]);
    std::printf("%s sums exact after the final barrier: %s\n", sums_ok ? "ok" : "FAIL",
                sums_ok ? "every cell as expected" : "a cell differs");
  }
  return bad;
}

int prefetch_mode(int clocks) {
  ssp::Options o;
  o.staleness = 1;
  o.servers = 1;
  o.logical_servers = 2;
  o.flush_bytes = 1024;  // one row of increments is sent at once, mid-clock
  ssp::Context ctx(MPI_COMM_WORLD, o);
  const int W = ctx.workers();
  constexpr int kCols = 512;  // 2 KiB per row: more than flush_bytes
  auto t = ctx.table<std::int32_t>("t", W, kCols);
  long reads = 0, violations = 0;
  std::string first_violation;
  if (ctx.is_worker()) {
    const int me = ctx.worker_index();
    std::vector<std::int32_t> m(static_cast<std::size_t>(W * kCols));
    const std::vector<std::int32_t> one(kCols, 1);
    int mine = 0;  // this worker's increments so far; one per clock, made right after clock()
    auto check = [&](const char *when) {
      t.get_rows(0, W, m.data());
      ++reads;
      const long c = ctx.current_clock();
      for (int w = 0; w < W; ++w) {
        // worker w's increments of clocks <= c-s-1: one each in clocks 1 .. c-s-1
        const long need = w == me ? mine : std::max(0L, c - o.staleness - 1);
        for (int k = 0; k < kCols; ++k) {
          const auto v = m[static_cast<std::size_t>(w * kCols + k)];
          if (v < need || (w == me && v != need)) {
            if (violations++ == 0)
              first_violation = "worker " + std::to_string(me) + " at clock " + std::to_string(c) +
                                " (" + when + ") read cell (" + std::to_string(w) + ", " +
                                std::to_string(k) + ") = " + std::to_string(v) + ", expected " +
                                (w == me ? "" : "at least ") + std::to_string(need);
            break;
          }
        }
      }
    };
    for (int c = 0; c < clocks; ++c) {
      check("the clock's first read");
      ctx.clock();
      t.inc_rows(me, 1, one.data());  // sent at once, while the table is being fetched again
      ++mine;
      check("after an increment sent early");
      if (me == 0) usleep(1000);  // worker 0 is slower: the others wait at the bound
    }
  }
  const auto all = t.pull_all();
  bool sums_ok = true;
  for (auto v : all) sums_ok = sums_ok && v == clocks;
  long tot[2] = {reads, violations}, agg[2];
  MPI_Reduce(tot, agg, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (violations)
    std::fprintf(stderr, "rank %d: first violation: %s\n", g_rank, first_violation.c_str());
  const int bad = all_ok(MPI_COMM_WORLD, violations == 0 && sums_ok);
  if (g_rank == 0) {
    std::printf("%s prefetch (%s): %ld whole-table reads by %d workers, %ld violations\n",
                agg[1] == 0 ? "ok" : "FAIL", ctx.policy().name().c_str(), agg[0], W, agg[1]);
    std::printf("%s prefetch sums exact after the final barrier: %s\n", sums_ok ? "ok" : "FAIL",
                sums_ok ? "every cell as expected" : "a cell differs");
  }
  return bad;
}

int fresh_mode(bool fresh, int clocks) {
  ssp::Options o;
  o.staleness = 2;
  o.servers = 1;
  o.fresh_reads = fresh;
  ssp::Context ctx(MPI_COMM_WORLD, o);
  const int W = ctx.workers();
  auto t = ctx.table<std::int32_t>("t", W, 1);
  // Generous when the others are expected to show up (a sanitized run on a loaded machine),
  // short when they cannot.
  const int limit_ms = fresh ? 20000 : 200;
  long waits = 0, seen = 0, violations = 0;
  std::string first_violation;
  if (ctx.is_worker()) {
    const int me = ctx.worker_index();
    std::vector<std::int32_t> m(static_cast<std::size_t>(W));
    const std::int32_t one = 1;
    int mine = 0;
    for (int c = 0; c < clocks; ++c) {
      if (me == W - 1) usleep(100 * 1000);  // the straggler: the others clock first
      t.inc_rows(me, 1, &one);
      ++mine;
      ctx.clock();
      const long cur = ctx.current_clock();
      bool all = false;
      for (int k = 0; k < limit_ms && !all; ++k) {
        if (k) usleep(1000);
        t.get_rows(0, W, m.data());
        all = true;
        for (int w = 0; w < W; ++w) {
          // this worker's own increments, every other's of clocks <= cur-s-1 (the bound), and
          // whether every other's of the clock just ended (all `cur` of them) have arrived
          const long v = m[static_cast<std::size_t>(w)];
          const long need = w == me ? mine : std::max(0L, cur - o.staleness);
          if ((w == me && v != need) || v < need) {
            if (violations++ == 0)
              first_violation = "worker " + std::to_string(me) + " at clock " +
                                std::to_string(cur) + " read cell " + std::to_string(w) + " = " +
                                std::to_string(v) + ", expected " + (w == me ? "" : "at least ") +
                                std::to_string(need);
          }
          if (w != me && v < cur) all = false;
        }
      }
      ++waits;
      if (all) ++seen;
    }
  }
  const auto all_rows = t.pull_all();
  bool sums_ok = true;
  for (auto v : all_rows) sums_ok = sums_ok && v == clocks;
  long tot[3] = {waits, seen, violations}, agg[3];
  MPI_Reduce(tot, agg, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Bcast(agg, 3, MPI_LONG, 0, MPI_COMM_WORLD);
  if (violations)
    std::fprintf(stderr, "rank %d: first violation: %s\n", g_rank, first_violation.c_str());
  const bool as_expected = fresh ? agg[1] == agg[0] : agg[1] < agg[0];
  const int bad = all_ok(MPI_COMM_WORLD, violations == 0 && sums_ok && as_expected);
  if (g_rank == 0) {
    std::printf("%s fresh reads %s (%s): %ld of %ld waits by %d workers saw the others' last clock "
                "within the clock (expected: %s), %ld violations\n",
                as_expected && agg[2] == 0 ? "ok" : "FAIL", fresh ? "on" : "off",
                ctx.policy().name().c_str(), agg[1], agg[0], W, fresh ? "all" : "not all", agg[2]);
    std::printf("%s fresh reads sums exact after the final barrier: %s\n", sums_ok ? "ok" : "FAIL",
                sums_ok ? "every cell as expected" : "a cell differs");
  }
  return bad;
}

int badconfig_mode(const std::string &what) {
  MPI_Init(nullptr, nullptr);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    ssp::Options o;
    o.servers = 1;
    if (what == "servers") o.servers = size + 1;
    if (what == "staleness") o.staleness = -1;
    ssp::Context ctx(MPI_COMM_WORLD, o);
    ctx.table<float>("w", what == "rows" ? 0 : 4, 4);
    std::printf("rank %d: no error\n", g_rank);
  } catch (const ssp::Error &e) {
    std::printf("rank %d: error: %s\n", g_rank, e.what());
    std::fflush(stdout);
    MPI_Finalize();
    return 3;
  }
  MPI_Finalize();
  return 0;
}

// No check depends on the machine's speed or load: the job finishes; every unit is run exactly
// once (each executor's micro-tasks tile its shard, in order, each seeing the cursor the previous
// one left in the executor's state); the per-worker counts the library reports match the
// micro-tasks each worker ran.  What does depend on it is printed, not checked: the micro-task
// durations, and whether the slowed worker (3x the sleep per unit) ran fewer micro-tasks than
// every other worker -- it does on an idle machine, but on a loaded one the other ranks'
// overheads can outweigh the sleeps.
int tasks_mode() {
  ssp::Options o;
  o.staleness = 2;
  o.servers = 1;
  ssp::Context ctx(MPI_COMM_WORLD, o);
  auto w = ctx.table<double>("w", 4, 1);
  ssp::Job job;
  job.executors = 4 * ctx.workers();
  job.units = 6000;
  job.epochs = 1;
  job.task_ms = 20;
  job.initial_task_units = 40;
  const int me = ctx.worker_index();  // -1 on the server
  const bool slow = me == 0;
  // One record per micro-task run here: id, executor, epoch, begin, end, shard begin, shard end,
  // the cursor found in the executor's state, worker.
  constexpr int kFields = 9;
  std::vector<std::int64_t> mine;
  auto res = ctx.run(job, [&](ssp::Task &t) {
    const auto cursor = t.state_as<std::uint64_t>(t.shard_begin);
    const double per_unit_us = slow ? 300 : 100;  // worker 0 is 3x slower
    usleep(static_cast<useconds_t>(per_unit_us * static_cast<double>(t.end - t.begin)));
    w.inc(t.executor % 4, 0, static_cast<double>(t.end - t.begin));
    t.set_state(t.end);
    for (std::int64_t v :
         {t.id, static_cast<std::int64_t>(t.executor), static_cast<std::int64_t>(t.epoch),
          static_cast<std::int64_t>(t.begin), static_cast<std::int64_t>(t.end),
          static_cast<std::int64_t>(t.shard_begin), static_cast<std::int64_t>(t.shard_end),
          static_cast<std::int64_t>(cursor), static_cast<std::int64_t>(me)})
      mine.push_back(v);
  });
  auto m = w.pull_all();
  double units = 0;
  for (double v : m) units += v;

  // Every rank's records to rank 0.
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<std::int64_t> all;
  if (g_rank == 0) {
    for (int r = 1; r < size; ++r)
      displs[static_cast<std::size_t>(r)] =
          displs[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
    all.resize(static_cast<std::size_t>(displs.back() + counts.back()));
  }
  MPI_Gatherv(mine.data(), n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T, 0,
              MPI_COMM_WORLD);

  const std::size_t W = res.tasks_per_worker.size();
  std::vector<std::string> failures;
  auto check = [&](bool cond, const std::string &what) {
    if (!cond && failures.size() < 5) failures.push_back(what);
  };
  check(res.finished, "the job did not finish");
  check(units == 6000, "the table's sum of units is " + std::to_string(units) + ", not 6000");
  std::uint64_t total_units = 0;
  for (std::size_t i = 0; i < W; ++i) total_units += res.units_per_worker[i];
  check(total_units == 6000,
        "units_per_worker add up to " + std::to_string(total_units) + ", not 6000");
  check(W == static_cast<std::size_t>(ctx.workers()),
        "tasks_per_worker has " + std::to_string(W) + " entries");
  std::uint64_t others_min = ~0ull;
  for (std::size_t i = 1; i < W; ++i) others_min = std::min(others_min, res.tasks_per_worker[i]);
  const bool fewer = W > 1 && res.tasks_per_worker[0] < others_min;
  if (g_rank == 0 && W == static_cast<std::size_t>(ctx.workers())) {
    const std::size_t n_tasks = all.size() / kFields;
    auto at = [&](std::size_t i, int f) { return all[i * kFields + static_cast<std::size_t>(f)]; };
    // Micro-tasks and units each worker ran, as recorded, against the library's report.
    std::vector<std::uint64_t> ran(W), ran_units(W);
    std::vector<std::int64_t> ids;
    std::vector<std::vector<std::size_t>> by_executor(static_cast<std::size_t>(job.executors));
    for (std::size_t i = 0; i < n_tasks; ++i) {
      const auto wk = at(i, 8), ex = at(i, 1);
      const std::string name = "micro-task " + std::to_string(at(i, 0));
      check(wk >= 0 && wk < static_cast<std::int64_t>(W),
            name + " ran on a rank that is not a worker");
      check(ex >= 0 && ex < job.executors,
            name + ": executor " + std::to_string(ex) + " out of range");
      check(at(i, 2) == 0, name + ": epoch " + std::to_string(at(i, 2)) + " in a one-epoch job");
      if (wk < 0 || wk >= static_cast<std::int64_t>(W) || ex < 0 || ex >= job.executors) continue;
      ++ran[static_cast<std::size_t>(wk)];
      ran_units[static_cast<std::size_t>(wk)] += static_cast<std::uint64_t>(at(i, 4) - at(i, 3));
      ids.push_back(at(i, 0));
      by_executor[static_cast<std::size_t>(ex)].push_back(i);
    }
    for (std::size_t k = 0; k < W; ++k) {
      check(ran[k] == res.tasks_per_worker[k],
            "worker " + std::to_string(k) + " ran " + std::to_string(ran[k]) +
                " micro-tasks, the library reports " + std::to_string(res.tasks_per_worker[k]));
      check(ran_units[k] == res.units_per_worker[k],
            "worker " + std::to_string(k) + " ran " + std::to_string(ran_units[k]) +
                " units, the library reports " + std::to_string(res.units_per_worker[k]));
    }
    std::sort(ids.begin(), ids.end());
    check(std::adjacent_find(ids.begin(), ids.end()) == ids.end(), "two micro-tasks share an id");
    // Each executor's shard [e*units/E, (e+1)*units/E) is tiled by its micro-tasks, in order: the
    // one starting at b found the cursor b left by the one ending at b.
    const auto E = static_cast<std::uint64_t>(job.executors);
    for (std::uint64_t e = 0; e < E; ++e) {
      auto &v = by_executor[e];
      std::sort(v.begin(), v.end(),
                [&](std::size_t a, std::size_t b) { return at(a, 3) < at(b, 3); });
      const auto sb = static_cast<std::int64_t>(e * job.units / E),
                 se = static_cast<std::int64_t>((e + 1) * job.units / E);
      const std::string ex = "executor " + std::to_string(e);
      std::int64_t next = sb;
      for (std::size_t i : v) {
        const std::string name = ex + ", micro-task [" + std::to_string(at(i, 3)) + ", " +
                                 std::to_string(at(i, 4)) + ")";
        check(at(i, 5) == sb && at(i, 6) == se,
              name + ": shard [" + std::to_string(at(i, 5)) + ", " + std::to_string(at(i, 6)) +
                  "), not [" + std::to_string(sb) + ", " + std::to_string(se) + ")");
        check(at(i, 3) == next,
              name + ": expected to start at " + std::to_string(next) + " (a gap or an overlap)");
        check(at(i, 3) < at(i, 4), name + ": empty");
        check(at(i, 7) == at(i, 3), name + ": found the cursor " + std::to_string(at(i, 7)) +
                                        " in the executor's state, not its start");
        next = at(i, 4);
      }
      check(next == se, ex + ": its micro-tasks end at " + std::to_string(next) +
                            ", the shard at " + std::to_string(se));
    }
  }
  const bool ok = failures.empty();
  const int bad = all_ok(MPI_COMM_WORLD, ok);
  if (g_rank == 0) {
    std::string per_worker;
    for (std::size_t i = 0; i < W; ++i)
      per_worker += (i ? "," : "") + std::to_string(res.tasks_per_worker[i]);
    std::printf(
        "%s micro-tasks per worker (worker 0 slowed 3x): %s; units processed %.0f of 6000; "
        "checked: every unit run exactly once, each executor's micro-tasks in order\n",
        bad ? "FAIL" : "ok", per_worker.c_str(), units);
    for (const auto &f : failures) std::printf("FAIL %s\n", f.c_str());
    // Machine-dependent figures, for information only.
    std::printf(
        "micro-task duration mean %.1f ms, max %.1f ms (target 20 ms); next size %llu units; the "
        "slowed worker ran fewer micro-tasks than every other worker: %s (not checked)\n",
        1000 * res.task_s_mean, 1000 * res.task_s_max,
        static_cast<unsigned long long>(res.task_units), fewer ? "yes" : "no");
  }
  return bad;
}

// A linear model y = x . w* fitted by SGD; sample i's features are a fixed function of i.
constexpr int kDim = 16;
constexpr std::uint64_t kUnits = 1200;
constexpr int kEpochs = 3;

void features(std::uint64_t i, double *x) {
  for (int d = 0; d < kDim; ++d) x[d] = std::sin(0.37 * static_cast<double>(i) * (d + 1) + d);
}
double target(const double *x) {
  double y = 0;
  for (int d = 0; d < kDim; ++d) y += x[d] * (0.5 - 0.06 * d);
  return y;
}
double loss_of(const std::vector<double> &w) {
  double l = 0, x[kDim];
  for (std::uint64_t i = 0; i < kUnits; ++i) {
    features(i, x);
    double p = 0;
    for (int d = 0; d < kDim; ++d) p += x[d] * w[static_cast<std::size_t>(d)];
    l += 0.5 * (p - target(x)) * (p - target(x));
  }
  return l / kUnits;
}
std::string checksum(const std::vector<double> &w, const std::vector<std::int64_t> &v) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void *p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      h = (h ^ static_cast<const unsigned char *>(p)[i]) * 1099511628211ull;
  };
  mix(w.data(), w.size() * sizeof(double));
  mix(v.data(), v.size() * sizeof(std::int64_t));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

int ckpt_mode(bool save, const std::string &dir, std::int64_t stop) {
  ssp::Options o;
  o.staleness = 1;
  o.logical_servers = 8;
  ssp::Context ctx(MPI_COMM_WORLD, o);
  auto w = ctx.table<double>("w", kDim, 1);
  auto visits = ctx.table<std::int64_t>("visits", static_cast<std::int64_t>(kUnits), 1);
  ssp::DirectorySnapshotStore store(dir);
  ssp::Job job;
  job.executors = 12;
  job.units = kUnits;
  job.epochs = kEpochs;
  job.task_ms = 5;
  job.initial_task_units = 8;
  job.max_task_units = 40;
  if (save) {
    job.checkpoint_store = &store;
    job.checkpoint_every = static_cast<int>(stop);
    job.stop_at_clock = stop;
  }
  auto fn = [&](ssp::Task &t) {
    std::vector<double> m(kDim);
    double x[kDim];
    auto seen = t.state_as<std::uint64_t>(0);
    for (std::uint64_t i = t.begin; i < t.end; ++i) {
      w.get_rows(0, kDim, m.data());
      features(i, x);
      double p = 0;
      for (int d = 0; d < kDim; ++d) p += x[d] * m[static_cast<std::size_t>(d)];
      const double g = p - target(x);
      for (int d = 0; d < kDim; ++d) w.inc(d, 0, -0.02 * g * x[d]);
      visits.inc(static_cast<std::int64_t>(i), 0, 1);
      ++seen;
    }
    t.set_state(seen);
  };
  int bad = 0;
  if (save) {
    auto res = ctx.run(job, fn);
    auto m = w.pull_all();
    auto v = visits.pull_all();
    std::int64_t n = 0;
    for (auto x : v) n += x;
    bool ok = !res.finished && res.checkpoints == 1 && n > 0 &&
              n < static_cast<std::int64_t>(kUnits * kEpochs);
    // A collective checkpoint of the suspended job, restored in place, gives the same tables.
    ssp::DirectorySnapshotStore again(dir + "/again");
    const std::string id = ctx.checkpoint(again);
    auto info = ctx.restore(again);
    const bool same = checksum(w.pull_all(), visits.pull_all()) == checksum(m, v);
    if (g_rank == 0)
      std::printf(
          "%s collective checkpoint %s of the suspended job restored in place: %s, job kept: %s\n",
          same && info.has_job && info.id == id ? "ok" : "FAIL", id.c_str(),
          same ? "same model" : "DIFFERENT MODEL", info.has_job ? "yes" : "no");
    ok = ok && same && info.has_job && info.id == id;
    if (g_rank == 0)
      std::printf(
          "%s checkpoint at clock %lld on %d ranks (%d workers, %d servers): model=%s visits=%lld "
          "loss=%.6f\n",
          ok ? "ok" : "FAIL", static_cast<long long>(stop), ctx.size(), ctx.workers(),
          ctx.servers(), checksum(m, v).c_str(), static_cast<long long>(n), loss_of(m));
    bad = all_ok(MPI_COMM_WORLD, ok);
  } else {
    auto info = ctx.restore(store);
    auto m0 = w.pull_all();
    auto v0 = visits.pull_all();
    std::int64_t n0 = 0;
    for (auto x : v0) n0 += x;
    if (g_rank == 0)
      std::printf(
          "restored %s (clock %lld, taken with %d workers and %d servers) on %d ranks (%d workers, "
          "%d servers): model=%s visits=%lld loss=%.6f\n",
          info.id.c_str(), static_cast<long long>(info.clock), info.workers, info.servers,
          ctx.size(), ctx.workers(), ctx.servers(), checksum(m0, v0).c_str(),
          static_cast<long long>(n0), loss_of(m0));
    auto res = ctx.run(job, fn);
    auto m = w.pull_all();
    auto v = visits.pull_all();
    bool exact = true;
    for (auto x : v) exact = exact && x == kEpochs;
    const double l0 = loss_of(m0), l1 = loss_of(m);
    const bool ok = res.finished && exact && l1 < l0 && info.has_job;
    if (g_rank == 0)
      std::printf(
          "%s resumed to the end: finished=%d every unit processed exactly %d times=%s loss %.6f "
          "-> %.6f\n",
          ok ? "ok" : "FAIL", res.finished ? 1 : 0, kEpochs, exact ? "yes" : "no", l0, l1);
    bad = all_ok(MPI_COMM_WORLD, ok);
  }
  return bad;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "badconfig" && argc > 2) return badconfig_mode(argv[2]);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int bad = 2;
  try {
    if (mode == "staleness" && argc > 2)
      bad = staleness_mode(argv[2], argc > 3 ? std::atoi(argv[3]) : 30);
    else if (mode == "prefetch")
      bad = prefetch_mode(argc > 2 ? std::atoi(argv[2]) : 30);
    else if (mode == "fresh" && argc > 2)
      bad = fresh_mode(std::atoi(argv[2]) != 0, argc > 3 ? std::atoi(argv[3]) : 10);
    else if (mode == "tasks")
      bad = tasks_mode();
    else if (mode == "ckpt-save" && argc > 3)
      bad = ckpt_mode(true, argv[2], std::atoll(argv[3]));
    else if (mode == "ckpt-resume" && argc > 2)
      bad = ckpt_mode(false, argv[2], -1);
    else if (g_rank == 0)
      std::fprintf(stderr,
                   "usage: ssp_check staleness S|asp [CLOCKS] | prefetch [CLOCKS] | fresh 1|0 "
                   "[CLOCKS] | badconfig "
                   "servers|staleness|rows | "
                   "tasks | ckpt-save DIR CLOCK | ckpt-resume DIR\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "rank %d: error: %s\n", g_rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return bad;
}
