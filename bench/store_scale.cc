// bench/store_scale: what a year of a busy site's store costs the operations that read it.
//
//   store_scale fill DIR [--classes N] [--trials N] [--nodes N] [--days D]
//     makes DIR/autotune.conf (StateDir=DIR/state, the local cluster's spaces) and a store with
//     three classes of uid 1000 that the measurements use -- "measured" (tuning, 100 done
//     trials), "tuning" (new, its initial design queued) and "converged" (100 trials, converged)
//     -- plus N-3 other classes of 100 other owners (uids 1001-1100; one in a thousand shared),
//     each with
//     --trials finished trials spread over the last D days, and the speeds of --nodes nodes.  With
//     --classes 3 --nodes 0 it makes the "empty" store: only the three classes.  The bulk rows go
//     in in one transaction with prepared statements.
//   store_scale measure DIR [--reps N]
//     in this process, on that store: at_submit() (job_submit's call, as bench/at_submit_bench
//     makes it, each call in a new thread) for the converged class, the tuning class and a new
//     class per call; and N times ingest plus refit of one trial of "measured" (open the store,
//     record the trial as running, find it by its job, record its measurement and two node speeds,
//     refit the class with the Gaussian process, as `autotune ingest` does).  Prints the median,
//     p99 and max of each.
//   store_scale prune DIR --days D --keep-last N
//     Store::prune_trials() with that policy (what `autotune admin prune` does); prints the time.
//
// bench/store-scale runs these for both stores and times the `autotune` commands beside them.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "autotune/autotune.h"
#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/optimizer.hpp"
#include "autotune/store.hpp"
#include "autotune/tuner.hpp"

using namespace autotune;

namespace {

using Clock = std::chrono::steady_clock;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

size_t inventory(void *, at_node_type *t, size_t max) {
  if (max < 1) return 0;
  t[0] = {"cpus2-mem4000", 4, 2, 4000, 0, ""};
  return 1;
}

Inventory cluster() {
  Inventory inv;
  inv.types.push_back({"cpus2-mem4000", 4, 2, 4000, 0, {}, 1.0});
  return inv;
}

void check(int rc, sqlite3 *db, const char *what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    std::fprintf(stderr, "store_scale: %s: %s\n", what, sqlite3_errmsg(db));
    std::exit(1);
  }
}

struct Stmt {
  sqlite3 *db;
  sqlite3_stmt *s = nullptr;
  Stmt(sqlite3 *d, const char *sql) : db(d) {
    check(sqlite3_prepare_v2(d, sql, -1, &s, nullptr), d, sql);
  }
  ~Stmt() { sqlite3_finalize(s); }
  void run() {
    check(sqlite3_step(s), db, sqlite3_sql(s));
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
  }
};

// `n` finished trials of class `id`, configurations drawn from `configs`, ended over the last
// `days` days (seq 1 the oldest); the best (lowest score) becomes the class's best trial.
void fill_trials(sqlite3 *db, Stmt &trial, Stmt &meas, Stmt &best, std::int64_t id, int n,
                 const std::vector<std::string> &configs, double now, double days,
                 std::int64_t *job, unsigned *rng) {
  std::int64_t best_id = 0;
  double best_score = 1e9;
  for (int seq = 1; seq <= n; ++seq) {
    *rng = *rng * 1103515245u + 12345u;
    const std::string &cfg = configs[(*rng >> 8) % configs.size()];
    const double ended = now - days * 86400.0 * (1.0 - (seq - 0.5) / n);
    const bool failed = (*rng >> 4) % 20 == 0;
    sqlite3_bind_int64(trial.s, 1, id);
    sqlite3_bind_int(trial.s, 2, seq);
    sqlite3_bind_text(trial.s, 3, cfg.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(trial.s, 4, failed ? "failed" : "done", -1, SQLITE_STATIC);
    sqlite3_bind_text(trial.s, 5, seq <= 4 ? "initial" : (seq <= 10 ? "model" : "best"), -1,
                      SQLITE_STATIC);
    sqlite3_bind_text(
        trial.s, 6, seq <= 10 ? "initial design (spread over the space)" : "re-measures the winner",
        -1, SQLITE_STATIC);
    sqlite3_bind_int64(trial.s, 7, ++*job);
    sqlite3_bind_double(trial.s, 8, ended - 600);
    sqlite3_bind_double(trial.s, 9, ended - 500);
    sqlite3_bind_double(trial.s, 10, ended);
    trial.run();
    const std::int64_t tid = sqlite3_last_insert_rowid(db);
    if (failed) continue;
    const double sps = 800 + (*rng % 4000) / 10.0;
    const double score = 0.5 + (*rng % 1000) / 1000.0;
    sqlite3_bind_int64(meas.s, 1, tid);
    sqlite3_bind_double(meas.s, 2, sps);
    sqlite3_bind_double(meas.s, 3, 1.0 / sps);
    sqlite3_bind_double(meas.s, 4, 4.0 / sps);
    sqlite3_bind_double(meas.s, 5, score);
    sqlite3_bind_double(meas.s, 6, 0.93);
    sqlite3_bind_double(meas.s, 7, 312.5);
    sqlite3_bind_double(meas.s, 8, 0.41);
    sqlite3_bind_double(meas.s, 9, 180.25);
    const std::string nodes =
        "n" + std::to_string(1 + *rng % 500) + ",n" + std::to_string(501 + *rng % 500);
    sqlite3_bind_text(meas.s, 10, nodes.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(meas.s, 11, "", -1, SQLITE_STATIC);
    meas.run();
    if (score < best_score) {
      best_score = score;
      best_id = tid;
    }
  }
  if (best_id) {
    sqlite3_bind_int64(best.s, 1, best_id);
    sqlite3_bind_int64(best.s, 2, id);
    best.run();
  }
}

int fill(const std::string &dir, int classes, int trials, int nodes, double days) {
  ::mkdir(dir.c_str(), 0755);
  ::mkdir((dir + "/state").c_str(), 0755);
  const std::string conf_path = dir + "/autotune.conf";
  std::ofstream(conf_path)
      << "StateDir=" << dir << "/state\n"
      << "DefaultSpace=nodes=1-4,workers=1-4,ps=1-2,cpus-per-worker=1-2,mem-per-worker=256M-512M,"
         "mem-per-ps=256M\n"
      << "SpaceLimits=nodes=1-4,workers=1-8,ps=0-4,cpus-per-worker=1-2,mem-per-worker=128M-2G,"
         "cpus-per-ps=1-2,mem-per-ps=128M-2G\n";
  const Conf conf = Conf::load(conf_path);
  const std::string path = Store::path_in(conf.core.state_dir);
  std::remove(path.c_str());
  const auto t0 = Clock::now();
  std::int64_t measured_id = 0, converged_id = 0;
  std::vector<std::string> configs;
  std::string extra, space;
  {
    Store store(path, {true, false, 10000});
    const SpaceSpec sp =
        restrict_space(SpaceSpec{}, conf.engine.default_space, conf.engine.space_limits);
    auto make = [&](const char *name, int budget) {
      ClassSettings s;
      s.budget = budget;
      s.space = sp.format();
      s.extra = make_class_extra(sp, cluster(), "", conf, static_cast<std::size_t>(budget), 42, {});
      ClassRecord c = store.ensure_class(1000, name, s);
      refit(store, c.id, conf, propose_design);
      return *store.find_class_by_id(c.id);
    };
    const ClassRecord m = make("measured", 1000);
    make("tuning", 10);
    const ClassRecord cv = make("converged", 100);
    measured_id = m.id;
    converged_id = cv.id;
    for (const Candidate &c : load_problem(m).candidates) configs.push_back(c.config.format());
    extra = m.settings.extra;
    space = m.settings.space;
  }
  sqlite3 *db = nullptr;
  check(sqlite3_open(path.c_str(), &db), db, "open");
  check(sqlite3_exec(db, "PRAGMA foreign_keys=ON; BEGIN IMMEDIATE", nullptr, nullptr, nullptr), db,
        "begin");
  Stmt cls(db,
           "INSERT INTO classes (owner, name, shared, allow_users, space, gamma, budget, mode, "
           "probe_batches, extra, "
           "state, state_reason, stop_rule, t_ref, c_ref, created, updated) VALUES (?1, ?2, ?3, 0, "
           "?4, 0.5, 20, "
           "'jobs', 20, ?5, ?6, ?7, ?8, 0.001, 0.004, ?9, ?9)");
  Stmt trial(db,
             "INSERT INTO trials (class_id, seq, config, status, origin, reason, job_id, created, "
             "started, ended) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  Stmt meas(db,
            "INSERT INTO measurements (trial_id, samples_per_s, time_s, cost, score, worker_cpu, "
            "worker_mem_mb, "
            "server_cpu, server_mem_mb, nodes, raw) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
            "?10, ?11)");
  Stmt best(db, "UPDATE classes SET best_trial = ?1 WHERE id = ?2");
  Stmt rec(db,
           "INSERT INTO recommendations (class_id, position, config, origin, reason) VALUES (?1, "
           "?2, ?3, 'model', "
           "'largest expected improvement')");
  Stmt node(db, "INSERT INTO node_speed (node, score, samples, updated) VALUES (?1, ?2, ?3, ?4)");
  const double now = unix_now();
  std::int64_t job = 1000000;
  unsigned rng = 12345;
  // The measured classes: 100 trials each (the same in both stores).
  fill_trials(db, trial, meas, best, measured_id, 100, configs, now, days, &job, &rng);
  fill_trials(db, trial, meas, best, converged_id, 100, configs, now, days, &job, &rng);
  {
    Stmt conv(db,
              "UPDATE classes SET state = 'converged', stop_rule = 'budget', state_reason = "
              "'stopped by the budget' "
              "WHERE id = ?1");
    sqlite3_bind_int64(conv.s, 1, converged_id);
    conv.run();
  }
  for (int i = 3; i < classes; ++i) {
    const bool tuning = i % 10 == 0, shared = i % 1000 == 7;
    const std::string name = "c" + std::to_string(i);
    sqlite3_bind_int64(cls.s, 1, 1001 + i % 100);
    sqlite3_bind_text(cls.s, 2, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(cls.s, 3, shared ? 1 : 0);
    sqlite3_bind_text(cls.s, 4, space.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(cls.s, 5, extra.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(cls.s, 6, tuning ? "tuning" : "converged", -1, SQLITE_STATIC);
    sqlite3_bind_text(
        cls.s, 7, tuning ? "12 of 20 trials done" : "stopped by ei: expected improvement below 1%",
        -1, SQLITE_STATIC);
    sqlite3_bind_text(cls.s, 8, tuning ? "" : "ei", -1, SQLITE_STATIC);
    sqlite3_bind_double(cls.s, 9, now - days * 86400.0);
    cls.run();
    const std::int64_t id = sqlite3_last_insert_rowid(db);
    fill_trials(db, trial, meas, best, id, trials, configs, now, days, &job, &rng);
    if (tuning)
      for (int p = 0; p < 4; ++p) {
        sqlite3_bind_int64(rec.s, 1, id);
        sqlite3_bind_int(rec.s, 2, p);
        sqlite3_bind_text(rec.s, 3, configs[(i + p) % configs.size()].c_str(), -1,
                          SQLITE_TRANSIENT);
        rec.run();
      }
  }
  for (int n = 1; n <= nodes; ++n) {
    const std::string name = "n" + std::to_string(n);
    sqlite3_bind_text(node.s, 1, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(node.s, 2, 0.8 + (n % 40) / 100.0);
    sqlite3_bind_int(node.s, 3, 1 + n % 300);
    sqlite3_bind_double(node.s, 4, now - n);
    node.run();
  }
  check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db, "commit");
  check(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr), db,
        "checkpoint");
  sqlite3_close(db);
  struct stat sb {};
  ::stat(path.c_str(), &sb);
  std::printf("filled %s: %d classes, %lld trials, %d node speeds in %.1f s; %.1f MiB\n",
              path.c_str(), classes, static_cast<long long>(job - 1000000), nodes,
              std::chrono::duration<double>(Clock::now() - t0).count(),
              static_cast<double>(sb.st_size) / (1 << 20));
  return 0;
}

void report(const char *what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-46s %5zu calls  median %9.1f us  p99 %9.1f us  max %9.1f us\n", what, v.size(),
              v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)], v.back());
  std::fflush(stdout);
}

// New classes are made for uid 2000, so that uid 1000's view (autotune status --user 1000) is
// the same in both stores.
std::vector<double> submit_calls(const std::string &cls, int calls, bool new_class) {
  std::vector<double> us;
  static int serial = 0;
  for (int i = 0; i < calls; ++i) {
    const std::string name =
        new_class ? "new" + std::to_string(::getpid()) + "-" + std::to_string(++serial) : cls;
    std::vector<std::string> env = {"AUTOTUNE_CLASS=" + name};
    std::vector<char *> envp;
    for (auto &e : env) envp.push_back(e.data());
    at_submit_request req{};
    req.uid = new_class ? 2000 : 1000;
    req.spank_env = envp.data();
    req.spank_env_count = envp.size();
    req.partition = "debug";
    req.inventory = inventory;
    at_submit_decision d;
    char err[1024];
    std::thread([&] {
      const auto t0 = Clock::now();
      const int rc = at_submit(&req, &d, err, sizeof err);
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      if (rc != AT_OK) {
        std::fprintf(stderr, "at_submit: %s\n", err);
        std::exit(1);
      }
    }).join();
  }
  return us;
}

int measure(const std::string &dir, int reps) {
  const std::string conf_path = dir + "/autotune.conf";
  char err[512];
  if (at_submit_configure(conf_path.c_str(), err, sizeof err) != AT_OK) {
    std::fprintf(stderr, "%s\n", err);
    return 1;
  }
  submit_calls("converged", 10, false);  // warm up: open the store, read autotune.conf
  report("job_submit: converged class", submit_calls("converged", 2000, false));
  report("job_submit: tuning class", submit_calls("tuning", 2000, false));
  report("job_submit: a new class per call", submit_calls("", 300, true));

  const Conf conf = Conf::load(conf_path);
  const std::string path = Store::path_in(conf.core.state_dir);
  std::vector<double> us;
  static std::int64_t job = 900000000 + ::getpid() % 1000 * 10000;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    Store store(path, {false, false, 10000});
    const auto c = store.find_class(1000, "measured");
    const TrialRecord t = store.add_trial(c->id, load_problem(*c).candidates[r % 8].config.format(),
                                          TrialOrigin::model, "bench", TrialStatus::running, ++job);
    const auto found = store.trial_by_job(job, std::nullopt);
    Measurement m;
    m.samples_per_s = 1000 + r;
    m.time_s = 1.0 / m.samples_per_s;
    m.cost = 4.0 / m.samples_per_s;
    m.nodes = "n1,n2";
    store.finish_trial(found->id, TrialStatus::done, m, unix_now());
    store.update_node_speed("n1", 1.0, 0.3);
    store.update_node_speed("n2", 0.9, 0.3);
    refit(store, c->id, conf, propose);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    (void)t;
  }
  report("ingest + refit of one trial (class 'measured')", us);
  return 0;
}

int prune(const std::string &dir, int days, int keep_last) {
  const Conf conf = Conf::load(dir + "/autotune.conf");
  Store store(Store::path_in(conf.core.state_dir), {false, false, 10000});
  PrunePolicy p;
  p.ended_before = unix_now() - 86400.0 * days;
  p.keep_last = keep_last;
  const auto t0 = Clock::now();
  const PruneResult r = store.prune_trials(p);
  std::printf("pruned %zu trials of %zu classes in %.2f s\n", r.trials, r.classes,
              std::chrono::duration<double>(Clock::now() - t0).count());
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: store_scale fill DIR [--classes N] [--trials N] [--nodes N] [--days D]\n"
                 "       store_scale measure DIR [--reps N]\n"
                 "       store_scale prune DIR --days D --keep-last N\n");
    return 2;
  }
  const std::string cmd = argv[1], dir = argv[2];
  int classes = 10000, trials = 100, nodes = 1000, reps = 20, days = 365, keep_last = 20;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--classes")
      classes = std::max(3, v);
    else if (a == "--trials")
      trials = v;
    else if (a == "--nodes")
      nodes = v;
    else if (a == "--reps")
      reps = std::max(1, v);
    else if (a == "--days")
      days = v;
    else if (a == "--keep-last")
      keep_last = v;
    else {
      std::fprintf(stderr, "store_scale: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  try {
    if (cmd == "fill") return fill(dir, classes, trials, nodes, days);
    if (cmd == "measure") return measure(dir, reps);
    if (cmd == "prune") return prune(dir, days, keep_last);
  } catch (const Error &e) {
    std::fprintf(stderr, "store_scale: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "store_scale: unknown command %s\n", cmd.c_str());
  return 2;
}
