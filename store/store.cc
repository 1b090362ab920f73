#include "autotune/store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "autotune/error.hpp"
#include "sqlite.hpp"

namespace autotune {

using sql::Db;
using sql::Stmt;
using sql::Txn;

namespace {

double now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Schema migrations: kMigrations[i] takes a store from version i to version i+1.  Version 0 is an
// empty file.  Never edit a released step; add a new one and bump Store::kSchemaVersion.
const char *const kMigrations[] = {
    // 0 -> 1: classes, trials, measurements, the recommendation queue.
    R"SQL(
CREATE TABLE classes (
  id            INTEGER PRIMARY KEY,
  owner         INTEGER NOT NULL,
  name          TEXT    NOT NULL,
  shared        INTEGER NOT NULL DEFAULT 0,
  space         TEXT    NOT NULL,
  gamma         REAL    NOT NULL,
  budget        INTEGER NOT NULL,
  mode          TEXT    NOT NULL,
  probe_batches INTEGER NOT NULL,
  state         TEXT    NOT NULL DEFAULT 'tuning',
  stop_rule     TEXT    NOT NULL DEFAULT '',
  best_trial    INTEGER,
  t_ref         REAL,
  c_ref         REAL,
  created       REAL    NOT NULL,
  updated       REAL    NOT NULL,
  UNIQUE (owner, name)
);
CREATE TABLE trials (
  id       INTEGER PRIMARY KEY,
  class_id INTEGER NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
  seq      INTEGER NOT NULL,
  config   TEXT    NOT NULL,
  status   TEXT    NOT NULL,
  job_id   INTEGER,
  step_id  INTEGER,
  created  REAL    NOT NULL,
  started  REAL,
  ended    REAL,
  UNIQUE (class_id, seq)
);
CREATE TABLE measurements (
  trial_id      INTEGER PRIMARY KEY REFERENCES trials(id) ON DELETE CASCADE,
  samples_per_s REAL,
  time_s        REAL,
  cost          REAL,
  score         REAL,
  worker_cpu    REAL,
  worker_mem_mb REAL,
  server_cpu    REAL,
  server_mem_mb REAL,
  nodes         TEXT,
  raw           TEXT
);
CREATE TABLE recommendations (
  class_id INTEGER NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  config   TEXT    NOT NULL,
  PRIMARY KEY (class_id, position)
);
)SQL",
    // 1 -> 2: shared classes open to users, engine settings, why a state changed, optimistic
    // concurrency (version), why a trial was run, model predictions in the queue, per-node speed,
    // at most one trial per Slurm job step.
    R"SQL(
ALTER TABLE classes ADD COLUMN allow_users  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE classes ADD COLUMN extra        TEXT    NOT NULL DEFAULT '{}';
ALTER TABLE classes ADD COLUMN state_reason TEXT    NOT NULL DEFAULT '';
ALTER TABLE classes ADD COLUMN version      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN origin TEXT NOT NULL DEFAULT 'initial';
ALTER TABLE trials ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE recommendations ADD COLUMN origin    TEXT NOT NULL DEFAULT 'model';
ALTER TABLE recommendations ADD COLUMN reason    TEXT NOT NULL DEFAULT '';
ALTER TABLE recommendations ADD COLUMN predicted REAL;
ALTER TABLE recommendations ADD COLUMN stddev    REAL;
CREATE TABLE node_speed (
  node    TEXT PRIMARY KEY,
  score   REAL NOT NULL,
  samples INTEGER NOT NULL,
  updated REAL NOT NULL
);
CREATE UNIQUE INDEX trials_job_step ON trials (job_id, IFNULL(step_id, -1)) WHERE job_id IS NOT NULL;
CREATE INDEX trials_class_status ON trials (class_id, status);
)SQL",
    // 2 -> 3: the measure a class is scored on (ClassMetric).  A class of an older store that has
    // a trial measured by throughput keeps being measured so; any other is fixed by its next
    // measured trial.
    R"SQL(
ALTER TABLE classes ADD COLUMN metric TEXT NOT NULL DEFAULT 'auto';
UPDATE classes SET metric = 'throughput' WHERE id IN
  (SELECT t.class_id FROM trials t JOIN measurements m ON m.trial_id = t.id WHERE m.samples_per_s > 0);
)SQL",
    // 3 -> 4: workflows (autotune workflow define), their runs, and each run's functions: the
    // configuration each was given (with the prediction and why) and what it measured.  A
    // function's trials stay in its class (the workflow's name, a dot, the function's name).
    R"SQL(
CREATE TABLE workflows (
  id           INTEGER PRIMARY KEY,
  owner        INTEGER NOT NULL,
  name         TEXT    NOT NULL,
  definition   TEXT    NOT NULL,
  functions    TEXT    NOT NULL,
  gamma        REAL    NOT NULL,
  budget       INTEGER NOT NULL,
  state        TEXT    NOT NULL DEFAULT 'tuning',
  state_reason TEXT    NOT NULL DEFAULT '',
  best_run     INTEGER,
  t_ref        REAL,
  c_ref        REAL,
  proposal     TEXT    NOT NULL DEFAULT '',
  created      REAL    NOT NULL,
  updated      REAL    NOT NULL,
  UNIQUE (owner, name)
);
CREATE TABLE workflow_runs (
  id          INTEGER PRIMARY KEY,
  workflow_id INTEGER NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,
  state       TEXT    NOT NULL DEFAULT 'open',
  proposal    TEXT    NOT NULL DEFAULT '',
  created     REAL    NOT NULL,
  started     REAL,
  ended       REAL,
  time_s      REAL,
  cost        REAL,
  score       REAL,
  span_s      REAL,
  tier        TEXT    NOT NULL DEFAULT '{}',
  UNIQUE (workflow_id, seq)
);
CREATE TABLE workflow_functions (
  run_id         INTEGER NOT NULL REFERENCES workflow_runs(id) ON DELETE CASCADE,
  function       TEXT    NOT NULL,
  class_id       INTEGER REFERENCES classes(id) ON DELETE SET NULL,
  trial_seq      INTEGER,
  job_id         INTEGER,
  config         TEXT    NOT NULL DEFAULT '',
  status         TEXT    NOT NULL DEFAULT 'pending',
  started        REAL,
  ended          REAL,
  time_s         REAL,
  cost           REAL,
  predicted_time REAL,
  predicted_cost REAL,
  reason         TEXT    NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, function)
);
)SQL",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == Store::kSchemaVersion,
              "one migration per schema version");

// Indexes that only make queries faster: no query's result depends on them, so they are not part
// of a schema version.  Every writer that opens the store creates those missing (a store of any
// version gets them the first time job_submit or ingest opens it; read-only openers do without).
const char *const kIndexes[] = {
    // find_shared_class(), list_shared_classes(): by name among the few shared classes, instead
    // of a scan of every class (job_submit looks for one whenever a user's class is new).
    "CREATE INDEX IF NOT EXISTS classes_shared_name ON classes (name) WHERE shared = 1",
};

const char kClassCols[] =
    "id, owner, name, shared, allow_users, space, gamma, budget, mode, probe_batches, extra, "
    "state, state_reason, stop_rule, best_trial, t_ref, c_ref, version, created, updated, metric";

ClassRecord read_class(const Stmt &s) {
  ClassRecord c;
  c.id = s.i64(0);
  c.owner = static_cast<std::uint32_t>(s.i64(1));
  c.name = s.text(2);
  c.shared = s.i64(3) != 0;
  c.allow_users = s.i64(4) != 0;
  c.settings.space = s.text(5);
  c.settings.gamma = s.dbl(6);
  c.settings.budget = static_cast<int>(s.i64(7));
  c.settings.mode = class_mode_from(s.text(8));
  c.settings.probe_batches = static_cast<int>(s.i64(9));
  c.settings.extra = s.text(10);
  c.state = class_state_from(s.text(11));
  c.state_reason = s.text(12);
  c.stop_rule = s.text(13);
  c.best_trial = s.opt_i64(14);
  c.t_ref = s.opt_dbl(15);
  c.c_ref = s.opt_dbl(16);
  c.version = s.i64(17);
  c.created = s.dbl(18);
  c.updated = s.dbl(19);
  c.settings.metric = class_metric_from(s.text(20));
  return c;
}

const char kTrialCols[] =
    "t.id, t.class_id, t.seq, t.config, t.status, t.origin, t.reason, t.job_id, t.step_id, "
    "t.created, t.started, t.ended, m.trial_id, m.samples_per_s, m.time_s, m.cost, m.score, "
    "m.worker_cpu, m.worker_mem_mb, m.server_cpu, m.server_mem_mb, m.nodes, m.raw";

TrialRecord read_trial(const Stmt &s) {
  TrialRecord t;
  t.id = s.i64(0);
  t.class_id = s.i64(1);
  t.seq = static_cast<int>(s.i64(2));
  t.config = s.text(3);
  t.status = trial_status_from(s.text(4));
  t.origin = trial_origin_from(s.text(5));
  t.reason = s.text(6);
  t.job_id = s.opt_i64(7);
  t.step_id = s.opt_i64(8);
  t.created = s.dbl(9);
  t.started = s.opt_dbl(10);
  t.ended = s.opt_dbl(11);
  if (!s.is_null(12)) {
    Measurement m;
    m.samples_per_s = s.dbl(13);
    m.time_s = s.dbl(14);
    m.cost = s.dbl(15);
    m.score = s.opt_dbl(16);
    m.worker_cpu = s.opt_dbl(17);
    m.worker_mem_mb = s.opt_dbl(18);
    m.server_cpu = s.opt_dbl(19);
    m.server_mem_mb = s.opt_dbl(20);
    m.nodes = s.text(21);
    m.raw = s.text(22);
    t.measurement = std::move(m);
  }
  return t;
}

void bump(Db &db, std::int64_t class_id) {
  Stmt(db, "UPDATE classes SET version = version + 1, updated = ?1 WHERE id = ?2")
      .bind(1, now())
      .bind(2, class_id)
      .run();
}

// Create the store file with mode 0600 before SQLite does, so that the database (and the -wal and
// -shm files SQLite creates with the database's mode) are never readable by other users.
void precreate(const std::string &path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  if (errno != EEXIST) throw_io("cannot create the profile store " + path, errno);
}

}  // namespace

const char *to_string(ClassState s) {
  switch (s) {
    case ClassState::tuning: return "tuning";
    case ClassState::converged: return "converged";
    case ClassState::stale: return "stale";
  }
  return "?";
}
const char *to_string(TrialStatus s) {
  switch (s) {
    case TrialStatus::pending: return "pending";
    case TrialStatus::running: return "running";
    case TrialStatus::done: return "done";
    case TrialStatus::failed: return "failed";
    case TrialStatus::timeout: return "timeout";
    case TrialStatus::cancelled: return "cancelled";
  }
  return "?";
}
const char *to_string(TrialOrigin o) {
  switch (o) {
    case TrialOrigin::initial: return "initial";
    case TrialOrigin::model: return "model";
    case TrialOrigin::best: return "best";
    case TrialOrigin::adjust: return "adjust";
    case TrialOrigin::manual: return "manual";
  }
  return "?";
}
ClassState class_state_from(std::string_view s) {
  for (ClassState v : {ClassState::tuning, ClassState::converged, ClassState::stale})
    if (s == to_string(v)) return v;
  throw Error(Errc::corrupt, "unknown class state '" + std::string(s) + "' in the store");
}
TrialStatus trial_status_from(std::string_view s) {
  for (TrialStatus v : {TrialStatus::pending, TrialStatus::running, TrialStatus::done, TrialStatus::failed,
                        TrialStatus::timeout, TrialStatus::cancelled})
    if (s == to_string(v)) return v;
  throw Error(Errc::corrupt, "unknown trial status '" + std::string(s) + "' in the store");
}
TrialOrigin trial_origin_from(std::string_view s) {
  for (TrialOrigin v : {TrialOrigin::initial, TrialOrigin::model, TrialOrigin::best, TrialOrigin::adjust,
                        TrialOrigin::manual})
    if (s == to_string(v)) return v;
  throw Error(Errc::corrupt, "unknown trial origin '" + std::string(s) + "' in the store");
}
const char *to_string(ClassMode m) {
  switch (m) {
    case ClassMode::jobs: return "jobs";
    case ClassMode::steps: return "steps";
  }
  return "?";
}
ClassMode class_mode_from(std::string_view s) {
  for (ClassMode v : {ClassMode::jobs, ClassMode::steps})
    if (s == to_string(v)) return v;
  throw Error(Errc::corrupt, "unknown class mode '" + std::string(s) + "' in the store");
}
ClassMode parse_class_mode(std::string_view field, std::string_view value) {
  for (ClassMode v : {ClassMode::jobs, ClassMode::steps})
    if (value == to_string(v)) return v;
  throw_invalid(std::string(field) + ": '" + std::string(value) + "' is not one of: jobs, steps");
}
const char *to_string(ClassMetric m) {
  switch (m) {
    case ClassMetric::automatic: return "auto";
    case ClassMetric::time: return "time";
    case ClassMetric::throughput: return "throughput";
  }
  return "?";
}
ClassMetric class_metric_from(std::string_view s) {
  for (ClassMetric v : {ClassMetric::automatic, ClassMetric::time, ClassMetric::throughput})
    if (s == to_string(v)) return v;
  throw Error(Errc::corrupt, "unknown class metric '" + std::string(s) + "' in the store");
}
ClassMetric parse_class_metric(std::string_view field, std::string_view value) {
  for (ClassMetric v : {ClassMetric::time, ClassMetric::throughput})
    if (value == to_string(v)) return v;
  throw_invalid(std::string(field) + ": '" + std::string(value) + "' is not one of: time, throughput");
}
bool is_final(TrialStatus s) {
  return s == TrialStatus::done || s == TrialStatus::failed || s == TrialStatus::timeout ||
         s == TrialStatus::cancelled;
}

std::string Store::path_in(const std::string &state_dir) { return state_dir + "/store.db"; }

Store::Store(const std::string &path, Options options) : path_(path) {
  if (options.create && !options.read_only) precreate(path);
  db_ = std::make_unique<Db>(path, options.read_only ? Db::Mode::read_only : Db::Mode::read_write,
                             options.busy_timeout_ms);
  Db &db = *db_;
  // Is it a store at all?  Reading the schema fails on a file that is not SQLite.
  int version = 0;
  {
    Stmt s(db, "PRAGMA user_version");
    s.step();
    version = static_cast<int>(s.i64(0));
  }
  if (version > kSchemaVersion)
    throw Error(Errc::unsupported, path + ": the store has schema version " + std::to_string(version) +
                                       ", newer than this build's " + std::to_string(kSchemaVersion) +
                                       "; use a newer slurm-autotune");
  if (version == 0) {
    Stmt s(db, "SELECT count(*) FROM sqlite_master");
    s.step();
    if (s.i64(0) != 0)
      throw Error(Errc::corrupt, path + ": not a profile store (it has tables but no schema version)");
    if (!options.create)
      throw Error(Errc::not_found, path + ": the profile store is empty (not created yet)");
  }
  if (!options.read_only) {
    db.exec("PRAGMA journal_mode=WAL");
    db.exec("PRAGMA synchronous=NORMAL");
    if (options.no_checkpoints) db.exec("PRAGMA wal_autocheckpoint=0");
  }
  db.exec("PRAGMA foreign_keys=ON");
  if (version < kSchemaVersion) {
    if (options.read_only)
      throw Error(Errc::unsupported, path + ": the store has schema version " + std::to_string(version) +
                                         " and must be migrated by a writer first");
    Txn txn(db, Txn::Kind::write);
    // Re-read under the write lock: another process may have migrated meanwhile.
    Stmt s(db, "PRAGMA user_version");
    s.step();
    version = static_cast<int>(s.i64(0));
    for (int v = version; v < kSchemaVersion; ++v) db.exec(kMigrations[v]);
    db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
    txn.commit();
  }
  if (!options.read_only)
    for (const char *sql : kIndexes) db.exec(sql);
}

Store::~Store() = default;
Store::Store(Store &&) noexcept = default;
Store &Store::operator=(Store &&) noexcept = default;

int Store::schema_version() {
  Stmt s(*db_, "PRAGMA user_version");
  s.step();
  return static_cast<int>(s.i64(0));
}

std::pair<std::int64_t, std::int64_t> Store::change_token() {
  Stmt s(*db_, "PRAGMA data_version");
  s.step();
  return {s.i64(0), static_cast<std::int64_t>(sqlite3_total_changes64(db_->raw()))};
}

std::optional<ClassRecord> Store::find_class(std::uint32_t owner, std::string_view name) {
  Stmt s(*db_, std::string("SELECT ") + kClassCols + " FROM classes WHERE owner = ?1 AND name = ?2 AND shared = 0");
  s.bind(1, static_cast<std::int64_t>(owner)).bind(2, name);
  if (!s.step()) return std::nullopt;
  return read_class(s);
}

std::optional<ClassRecord> Store::find_class_by_id(std::int64_t id) {
  Stmt s(*db_, std::string("SELECT ") + kClassCols + " FROM classes WHERE id = ?1");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_class(s);
}

std::optional<ClassRecord> Store::find_shared_class(std::string_view name) {
  Stmt s(*db_, std::string("SELECT ") + kClassCols + " FROM classes WHERE name = ?1 AND shared = 1");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return read_class(s);
}

std::vector<ClassRecord> Store::list_shared_classes() {
  std::vector<ClassRecord> out;
  // '+': sort the few rows the partial index gives, rather than walk every class in the
  // (owner, name) order of the unique index.
  Stmt s(*db_, std::string("SELECT ") + kClassCols + " FROM classes WHERE shared = 1 ORDER BY +owner, +name");
  while (s.step()) out.push_back(read_class(s));
  return out;
}

std::vector<ClassRecord> Store::list_history_classes() {
  std::vector<ClassRecord> out;
  Stmt s(*db_, std::string("SELECT ") + kClassCols +
                   " FROM classes WHERE json_extract(extra, '$.history_shared') = 1 ORDER BY owner, name");
  while (s.step()) out.push_back(read_class(s));
  return out;
}

void Store::set_history_shared(std::int64_t class_id, bool shared) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_, "UPDATE classes SET extra = json_set(extra, '$.history_shared', json(?1)) WHERE id = ?2")
      .bind(1, shared ? "true" : "false")
      .bind(2, class_id)
      .run();
  bump(*db_, class_id);
  txn.commit();
}

std::vector<ClassRecord> Store::list_classes(std::optional<std::uint32_t> owner) {
  std::vector<ClassRecord> out;
  Stmt s(*db_, std::string("SELECT ") + kClassCols + " FROM classes" +
                   (owner ? " WHERE owner = ?1" : "") + " ORDER BY owner, name, shared");
  if (owner) s.bind(1, static_cast<std::int64_t>(*owner));
  while (s.step()) out.push_back(read_class(s));
  return out;
}

ClassRecord Store::ensure_class(std::uint32_t owner, std::string_view name, const ClassSettings &st,
                                bool shared, bool allow_users) {
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  {
    Stmt s(db, std::string("SELECT ") + kClassCols + " FROM classes WHERE owner = ?1 AND name = ?2");
    s.bind(1, static_cast<std::int64_t>(owner)).bind(2, name);
    if (s.step()) return read_class(s);  // rollback of a read-only transaction is harmless
  }
  if (shared) {
    Stmt s(db, "SELECT owner FROM classes WHERE name = ?1 AND shared = 1");
    s.bind(1, name);
    if (s.step())
      throw_invalid("a shared class named '" + std::string(name) + "' already exists (owner uid " +
                    std::to_string(s.i64(0)) + ")");
  }
  const double t = now();
  Stmt ins(db,
           "INSERT INTO classes (owner, name, shared, allow_users, space, gamma, budget, mode, "
           "probe_batches, extra, state, created, updated, metric) "
           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'tuning', ?11, ?11, ?12)");
  ins.bind(1, static_cast<std::int64_t>(owner))
      .bind(2, name)
      .bind(3, shared ? 1 : 0)
      .bind(4, allow_users ? 1 : 0)
      .bind(5, st.space)
      .bind(6, st.gamma)
      .bind(7, st.budget)
      .bind(8, to_string(st.mode))
      .bind(9, st.probe_batches)
      .bind(10, st.extra)
      .bind(11, t)
      .bind(12, to_string(st.metric));
  ins.run();
  const std::int64_t id = db.last_insert_id();
  txn.commit();
  return *find_class_by_id(id);
}

void Store::set_allow_users(std::int64_t class_id, bool allow) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_, "UPDATE classes SET allow_users = ?1 WHERE id = ?2").bind(1, allow ? 1 : 0).bind(2, class_id).run();
  bump(*db_, class_id);
  txn.commit();
}

ClassMetric Store::fix_metric(std::int64_t class_id, ClassMetric measured) {
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  if (measured != ClassMetric::automatic) {
    Stmt u(db, "UPDATE classes SET metric = ?1 WHERE id = ?2 AND metric = 'auto'");
    u.bind(1, to_string(measured)).bind(2, class_id).run();
    if (db.changes() > 0) bump(db, class_id);
  }
  Stmt s(db, "SELECT metric FROM classes WHERE id = ?1");
  s.bind(1, class_id);
  if (!s.step()) throw Error(Errc::not_found, "class " + std::to_string(class_id) + " is gone");
  const ClassMetric m = class_metric_from(s.text(0));
  txn.commit();
  return m;
}

bool Store::forget_class(std::uint32_t owner, std::string_view name) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt s(*db_, "DELETE FROM classes WHERE owner = ?1 AND name = ?2");
  s.bind(1, static_cast<std::int64_t>(owner)).bind(2, name).run();
  const bool removed = db_->changes() > 0;
  txn.commit();
  return removed;
}

std::vector<TrialRecord> Store::trials(std::int64_t class_id) {
  std::vector<TrialRecord> out;
  Stmt s(*db_, std::string("SELECT ") + kTrialCols +
                   " FROM trials t LEFT JOIN measurements m ON m.trial_id = t.id WHERE t.class_id = ?1 ORDER BY t.seq");
  s.bind(1, class_id);
  while (s.step()) out.push_back(read_trial(s));
  return out;
}

std::vector<TrialRecord> Store::first_trials(std::int64_t class_id, std::size_t limit) {
  std::vector<TrialRecord> out;
  Stmt s(*db_, std::string("SELECT ") + kTrialCols +
                   " FROM trials t LEFT JOIN measurements m ON m.trial_id = t.id WHERE t.class_id = ?1 "
                   "ORDER BY t.seq LIMIT ?2");
  s.bind(1, class_id).bind(2, static_cast<std::int64_t>(limit));
  while (s.step()) out.push_back(read_trial(s));
  return out;
}

int Store::count_trials(std::int64_t class_id, std::initializer_list<TrialStatus> statuses) {
  std::string in;
  for (TrialStatus st : statuses) in += std::string(in.empty() ? "'" : ", '") + to_string(st) + "'";
  if (in.empty()) return 0;
  Stmt s(*db_, "SELECT count(*) FROM trials WHERE class_id = ?1 AND status IN (" + in + ")");
  s.bind(1, class_id);
  s.step();
  return static_cast<int>(s.i64(0));
}

std::optional<TrialRecord> Store::trial(std::int64_t trial_id) {
  Stmt s(*db_, std::string("SELECT ") + kTrialCols +
                   " FROM trials t LEFT JOIN measurements m ON m.trial_id = t.id WHERE t.id = ?1");
  s.bind(1, trial_id);
  if (!s.step()) return std::nullopt;
  return read_trial(s);
}

std::optional<TrialRecord> Store::trial_by_job(std::int64_t job_id, std::optional<std::int64_t> step_id) {
  Stmt s(*db_, std::string("SELECT ") + kTrialCols +
                   " FROM trials t LEFT JOIN measurements m ON m.trial_id = t.id "
                   "WHERE t.job_id = ?1 AND IFNULL(t.step_id, -1) = ?2");
  s.bind(1, job_id).bind(2, step_id.value_or(-1));
  if (!s.step()) return std::nullopt;
  return read_trial(s);
}

namespace {
// Inserts a trial; returns it as stored (no read-back).
TrialRecord insert_trial(Db &db, std::int64_t class_id, const std::string &config, TrialOrigin origin,
                         const std::string &reason, TrialStatus status, std::optional<std::int64_t> job_id,
                         std::optional<std::int64_t> step_id) {
  TrialRecord t;
  t.class_id = class_id;
  t.config = config;
  t.origin = origin;
  t.reason = reason;
  t.status = status;
  t.job_id = job_id;
  t.step_id = step_id;
  t.created = now();
  Stmt ins(db,
           "INSERT INTO trials (class_id, seq, config, status, origin, reason, job_id, step_id, created) "
           "VALUES (?1, (SELECT IFNULL(MAX(seq), 0) + 1 FROM trials WHERE class_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
           "RETURNING id, seq");
  ins.bind(1, class_id)
      .bind(2, config)
      .bind(3, to_string(status))
      .bind(4, to_string(origin))
      .bind(5, reason)
      .bind(6, job_id)
      .bind(7, step_id)
      .bind(8, t.created);
  if (!ins.step()) throw Error(Errc::internal, "INSERT ... RETURNING gave no row");
  t.id = ins.i64(0);
  t.seq = static_cast<int>(ins.i64(1));
  ins.run();
  bump(db, class_id);
  return t;
}

// Runs `s`, a statement on one trial that ends "RETURNING class_id", and bumps that class's
// version when it changed the trial.  Returns whether it did.
bool change_trial(Db &db, Stmt &s) {
  if (!s.step()) return false;
  const std::int64_t class_id = s.i64(0);
  s.run();
  bump(db, class_id);
  return true;
}
}  // namespace

std::optional<TrialRecord> Store::take_recommendation(std::int64_t class_id, std::optional<std::int64_t> job_id,
                                                      const std::function<bool(const std::string &)> &acceptable) {
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  Stmt head(db,
            std::string("SELECT position, config, origin, reason FROM recommendations WHERE class_id = ?1 "
                        "ORDER BY position") +
                (acceptable ? "" : " LIMIT 1"));
  head.bind(1, class_id);
  bool found = false;
  while (head.step())
    if (!acceptable || acceptable(head.text(1))) {
      found = true;
      break;
    }
  if (!found) return std::nullopt;
  const std::int64_t pos = head.i64(0);
  const std::string config = head.text(1);
  const TrialOrigin origin = trial_origin_from(head.text(2));
  const std::string reason = head.text(3);
  Stmt(db, "DELETE FROM recommendations WHERE class_id = ?1 AND position = ?2").bind(1, class_id).bind(2, pos).run();
  TrialRecord t = insert_trial(db, class_id, config, origin, reason, TrialStatus::pending, job_id, std::nullopt);
  txn.commit();
  return t;
}

TrialRecord Store::add_trial(std::int64_t class_id, const std::string &config, TrialOrigin origin,
                             const std::string &reason, TrialStatus status, std::optional<std::int64_t> job_id,
                             std::optional<std::int64_t> step_id) {
  Txn txn(*db_, Txn::Kind::write);
  TrialRecord t = insert_trial(*db_, class_id, config, origin, reason, status, job_id, step_id);
  txn.commit();
  return t;
}

void Store::mark_running(std::int64_t trial_id, std::int64_t job_id, double when) {
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  Stmt s(db,
         "UPDATE trials SET status = 'running', job_id = ?1, started = ?2 "
         "WHERE id = ?3 AND status IN ('pending', 'running') RETURNING class_id");
  s.bind(1, job_id).bind(2, when).bind(3, trial_id);
  change_trial(db, s);
  txn.commit();
}

bool Store::finish_trial(std::int64_t trial_id, TrialStatus status, const std::optional<Measurement> &m,
                         double when, const std::string &note) {
  if (!is_final(status)) throw Error(Errc::internal, "finish_trial with a non-final status");
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  std::int64_t class_id;
  {
    Stmt s(db, "SELECT class_id, status FROM trials WHERE id = ?1");
    s.bind(1, trial_id);
    if (!s.step()) throw Error(Errc::not_found, "no trial " + std::to_string(trial_id) + " in the store");
    class_id = s.i64(0);
    if (is_final(trial_status_from(s.text(1)))) return false;  // already recorded
  }
  Stmt(db,
       "UPDATE trials SET status = ?1, ended = ?2, started = IFNULL(started, ?2), "
       "reason = CASE WHEN ?4 = '' THEN reason WHEN reason = '' THEN ?4 ELSE reason || '; ' || ?4 END WHERE id = ?3")
      .bind(1, to_string(status))
      .bind(2, when)
      .bind(3, trial_id)
      .bind(4, note)
      .run();
  if (m) {
    Stmt ins(db,
             "INSERT INTO measurements (trial_id, samples_per_s, time_s, cost, score, worker_cpu, "
             "worker_mem_mb, server_cpu, server_mem_mb, nodes, raw) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    ins.bind(1, trial_id)
        .bind(2, m->samples_per_s)
        .bind(3, m->time_s)
        .bind(4, m->cost)
        .bind(5, m->score)
        .bind(6, m->worker_cpu)
        .bind(7, m->worker_mem_mb)
        .bind(8, m->server_cpu)
        .bind(9, m->server_mem_mb)
        .bind(10, m->nodes)
        .bind(11, m->raw);
    ins.run();
  }
  bump(db, class_id);
  txn.commit();
  return true;
}

void Store::drop_trial(std::int64_t trial_id, const std::string &why, double when) {
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  Stmt s(db,
         "UPDATE trials SET status = 'cancelled', ended = ?2, "
         "reason = CASE WHEN reason = '' THEN ?3 ELSE reason || '; ' || ?3 END "
         "WHERE id = ?1 AND status = 'pending' RETURNING class_id");
  s.bind(1, trial_id).bind(2, when).bind(3, "dropped: " + why);
  change_trial(db, s);
  txn.commit();
}

bool Store::requeue_trial(std::int64_t trial_id) {
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  Stmt s(db,
         "UPDATE trials SET status = 'pending', started = NULL WHERE id = ?1 AND status IN ('pending', 'running') "
         "RETURNING class_id");
  s.bind(1, trial_id);
  const bool changed = change_trial(db, s);
  txn.commit();
  return changed;
}

PruneResult Store::prune_trials(const PrunePolicy &policy) {
  if (policy.keep_last < 1) throw Error(Errc::invalid_argument, "prune: keep_last must be at least 1");
  Db &db = *db_;
  PruneResult out;
  // Per class, what is kept whatever its age: the best trial, the incumbent of a retune, the last
  // keep_last trials, and, while the class tunes, the trials of its current epoch.
  struct Due {
    std::int64_t id;
    std::int64_t below_seq;  // trials with seq < this may go
  };
  std::vector<Due> due;
  {
    Stmt s(db,
           "SELECT c.id, CASE WHEN c.state = 'tuning' THEN IFNULL(json_extract(c.extra, '$.epoch_start'), 0) END, "
           "(SELECT MAX(seq) FROM trials t WHERE t.class_id = c.id), "
           "(SELECT MIN(seq) FROM trials t WHERE t.class_id = c.id) FROM classes c ORDER BY c.id");
    while (s.step()) {
      if (s.is_null(2)) continue;  // no trials
      std::int64_t below = s.i64(2) - policy.keep_last + 1;
      if (!s.is_null(1)) below = std::min(below, s.i64(1));
      if (below <= s.i64(3)) continue;  // nothing old enough by position
      due.push_back({s.i64(0), below});
    }
  }
  const std::size_t batch = policy.batch > 0 ? policy.batch : 500;
  std::size_t in_txn = 0;
  std::optional<Txn> txn;
  for (const Due &d : due) {
    bool changed = false;
    for (;;) {  // this class, in as many transactions as it takes
      if (policy.max_trials && out.trials >= policy.max_trials) {
        out.complete = false;
        break;
      }
      if (!txn) txn.emplace(db, Txn::Kind::write);
      std::size_t room = batch - in_txn;
      if (policy.max_trials) room = std::min(room, policy.max_trials - out.trials);
      Stmt del(db,
               "DELETE FROM trials WHERE id IN (SELECT id FROM trials WHERE class_id = ?1 AND seq < ?2 "
               "AND status IN ('done', 'failed', 'timeout', 'cancelled') AND ended < ?3 "
               "AND id IS NOT (SELECT best_trial FROM classes WHERE id = ?1) "
               "AND id IS NOT (SELECT json_extract(extra, '$.incumbent') FROM classes WHERE id = ?1) "
               "ORDER BY seq LIMIT ?4)");
      // The best and the incumbent are read in the same transaction as the deletion: a refit
      // between the read above and here may have changed them.
      del.bind(1, d.id).bind(2, d.below_seq).bind(3, policy.ended_before).bind(4, static_cast<std::int64_t>(room));
      del.run();
      const auto n = static_cast<std::size_t>(db.changes());
      if (n > 0) {
        bump(db, d.id);
        out.trials += n;
        in_txn += n;
        changed = true;
      }
      if (in_txn >= batch) {
        txn->commit();
        txn.reset();
        in_txn = 0;
      }
      if (n < room) break;  // the class has nothing more that is due
    }
    if (changed) ++out.classes;
    if (!out.complete) break;
  }
  if (txn) txn->commit();
  return out;
}

std::vector<Recommendation> Store::queue(std::int64_t class_id) {
  std::vector<Recommendation> out;
  Stmt s(*db_,
         "SELECT config, origin, reason, predicted, stddev FROM recommendations WHERE class_id = ?1 ORDER BY position");
  s.bind(1, class_id);
  while (s.step()) {
    Recommendation r;
    r.config = s.text(0);
    r.origin = trial_origin_from(s.text(1));
    r.reason = s.text(2);
    r.predicted = s.opt_dbl(3);
    r.stddev = s.opt_dbl(4);
    out.push_back(std::move(r));
  }
  return out;
}

bool Store::apply_decision(std::int64_t class_id, std::int64_t expected_version, const Decision &d) {
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  {
    Stmt s(db, "SELECT version FROM classes WHERE id = ?1");
    s.bind(1, class_id);
    if (!s.step()) throw Error(Errc::not_found, "no class " + std::to_string(class_id) + " in the store");
    if (s.i64(0) != expected_version) return false;
  }
  Stmt(db,
       "UPDATE classes SET state = ?1, state_reason = ?2, stop_rule = ?3, best_trial = ?4, t_ref = ?5, "
       "c_ref = ?6 WHERE id = ?7")
      .bind(1, to_string(d.state))
      .bind(2, d.state_reason)
      .bind(3, d.stop_rule)
      .bind(4, d.best_trial)
      .bind(5, d.t_ref)
      .bind(6, d.c_ref)
      .bind(7, class_id)
      .run();
  if (d.extra) Stmt(db, "UPDATE classes SET extra = ?1 WHERE id = ?2").bind(1, *d.extra).bind(2, class_id).run();
  Stmt(db, "DELETE FROM recommendations WHERE class_id = ?1").bind(1, class_id).run();
  Stmt ins(db,
           "INSERT INTO recommendations (class_id, position, config, origin, reason, predicted, stddev) "
           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  int pos = 0;
  for (const auto &r : d.queue) {
    ins.reset();
    ins.bind(1, class_id)
        .bind(2, pos++)
        .bind(3, r.config)
        .bind(4, to_string(r.origin))
        .bind(5, r.reason)
        .bind(6, r.predicted)
        .bind(7, r.stddev);
    ins.run();
  }
  Stmt sc(db, "UPDATE measurements SET score = ?1 WHERE trial_id = ?2");
  for (const auto &[trial_id, score] : d.scores) {
    sc.reset();
    sc.bind(1, score).bind(2, trial_id);
    sc.run();
  }
  bump(db, class_id);
  txn.commit();
  return true;
}

void Store::update_node_speed(const std::string &node, double ratio, double alpha) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_,
       "INSERT INTO node_speed (node, score, samples, updated) VALUES (?1, ?2, 1, ?4) "
       "ON CONFLICT (node) DO UPDATE SET score = (1 - ?3) * score + ?3 * ?2, samples = samples + 1, updated = ?4")
      .bind(1, node)
      .bind(2, ratio)
      .bind(3, alpha)
      .bind(4, now())
      .run();
  txn.commit();
}

std::vector<NodeSpeed> Store::node_speeds() {
  std::vector<NodeSpeed> out;
  Stmt s(*db_, "SELECT node, score, samples, updated FROM node_speed ORDER BY node");
  while (s.step()) out.push_back({s.text(0), s.dbl(1), static_cast<int>(s.i64(2)), s.dbl(3)});
  return out;
}

std::string Store::integrity_check() {
  std::string out;
  {
    Stmt s(*db_, "PRAGMA integrity_check");
    while (s.step()) out += (out.empty() ? "" : "; ") + s.text(0);
  }
  Stmt fk(*db_, "PRAGMA foreign_key_check");
  while (fk.step()) out += "; foreign key violation in " + fk.text(0);
  return out;
}

}  // namespace autotune
