// The profile store: one SQLite database (WAL mode) holding, per tuning class, what was tried,
// what was measured, what won, and the precomputed recommendations that job_submit takes.
//
// Storage only: the decisions (what to try next, when to stop, hysteresis and drift) are the
// tuner's (tuner.hpp), which computes them from a snapshot and applies them with
// apply_decision().  See docs/architecture.md, "Store and trust".
//
// Schema: versioned (PRAGMA user_version); opening a store of an older version migrates it in
// one transaction, opening one of a newer version fails with Errc::unsupported, opening a file
// that is not a store fails with Errc::corrupt.
//
// Concurrency: every method runs in its own transaction.  Writers take the write lock up front
// (BEGIN IMMEDIATE) and hold it for a few statements only; readers never block writers (WAL).
// A lock not obtained within the busy timeout raises Errc::busy.  A Store object is not
// thread-safe; open one per thread or process.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autotune/workflow_store.hpp"

namespace autotune {

namespace sql {
class Db;
}

enum class ClassState { tuning, converged, stale };
enum class TrialStatus { pending, running, done, failed, timeout, cancelled };
// Why a configuration was tried: initial (the seeded first batch), model (Bayesian optimization's
// proposal), best (the winner, re-measured by a later job), adjust (per-role resources changed
// from measured use), manual (given by an administrator).
enum class TrialOrigin { initial, model, best, adjust, manual };

const char *to_string(ClassState s);
const char *to_string(TrialStatus s);
const char *to_string(TrialOrigin o);
ClassState class_state_from(std::string_view s);
TrialStatus trial_status_from(std::string_view s);
TrialOrigin trial_origin_from(std::string_view s);
// done, failed, timeout, cancelled
bool is_final(TrialStatus s);

// How a class tunes: jobs (job_submit rewrites each job to one trial's configuration) or steps
// (each job searches inside its own allocation, autotune-run).
enum class ClassMode { jobs, steps };
const char *to_string(ClassMode m);  // "jobs", "steps" (the store's text, the export's)
ClassMode class_mode_from(std::string_view s);  // as the store spells it; Error(corrupt) otherwise
// An option's value ("jobs" or "steps"); throws Error(invalid_argument) "FIELD: 'V' is not one
// of: jobs, steps".
ClassMode parse_class_mode(std::string_view field, std::string_view value);

// What a trial of a class is measured by (--autotune-metric): the wall time of the job's whole
// run (time: any program, nothing to report) or the samples per second the program reports
// (throughput).  automatic: the first measured trial fixes it (throughput when the program
// reported samples, else time); a class is never scored on a mix of both.
enum class ClassMetric { automatic, time, throughput };
const char *to_string(ClassMetric m);              // "auto", "time", "throughput" (the store's text)
ClassMetric class_metric_from(std::string_view s);  // as the store spells it; Error(corrupt) otherwise
// An option's value ("time" or "throughput"); throws Error(invalid_argument) naming `field`.
ClassMetric parse_class_metric(std::string_view field, std::string_view value);

// What a class is tuned for; fixed when the class is created.
struct ClassSettings {
  std::string space;      // space spec (already clamped to the administrator's limits)
  double gamma = 0.5;     // 0 fastest .. 1 cheapest
  int budget = 10;        // most trials
  ClassMode mode = ClassMode::jobs;
  int probe_batches = 20;     // K: batches profiled per trial in steps mode
  std::string extra = "{}";   // JSON: engine options, inventory snapshot, billing
  ClassMetric metric = ClassMetric::automatic;
};

struct ClassRecord {
  std::int64_t id = 0;
  std::uint32_t owner = 0;  // uid
  std::string name;
  bool shared = false;       // created by an administrator for all users
  bool allow_users = false;  // shared class: ordinary users' jobs may add measurements
  ClassSettings settings;
  ClassState state = ClassState::tuning;
  std::string state_reason;  // e.g. "stopped by ei-threshold after 7 trials"
  std::string stop_rule;     // the rule that stopped the search ("" while tuning)
  std::optional<std::int64_t> best_trial;
  std::optional<double> t_ref, c_ref;  // objective references: the first successful trial
  std::int64_t version = 0;            // bumped by every change to the class or its trials
  double created = 0, updated = 0;     // unix seconds
};

struct Measurement {
  double samples_per_s = 0;  // throughput
  double time_s = 0;         // T of the objective (per sample or per job, per the class)
  double cost = 0;           // C of the objective (billing x time)
  std::optional<double> score;
  std::optional<double> worker_cpu, worker_mem_mb, server_cpu, server_mem_mb;  // measured use
  std::string nodes;   // Slurm node list the trial ran on
  std::string raw;     // the result document as received (JSON), for `autotune show`
};

struct TrialRecord {
  std::int64_t id = 0;
  std::int64_t class_id = 0;
  int seq = 0;  // 1, 2, ... within the class
  std::string config;
  TrialStatus status = TrialStatus::pending;
  TrialOrigin origin = TrialOrigin::initial;
  std::string reason;
  std::optional<std::int64_t> job_id, step_id;
  double created = 0;
  std::optional<double> started, ended;
  std::optional<Measurement> measurement;
};

struct Recommendation {
  std::string config;
  TrialOrigin origin = TrialOrigin::model;
  std::string reason;
  std::optional<double> predicted, stddev;  // model's score prediction, when there is a model
};

// What the tuner decided for a class, applied atomically by Store::apply_decision().
struct Decision {
  ClassState state = ClassState::tuning;
  std::string state_reason;
  std::string stop_rule;
  std::optional<std::int64_t> best_trial;
  std::optional<double> t_ref, c_ref;
  std::vector<Recommendation> queue;                      // replaces the class's queue
  std::vector<std::pair<std::int64_t, double>> scores;    // (trial id, score) to store
  std::optional<std::string> extra;                       // replaces ClassSettings::extra
};

// What Store::prune_trials() may remove: finished trials (done, failed, timeout, cancelled) that
// ended before `ended_before` (unix seconds), except, per class, its best trial, the incumbent a
// retune must beat, its last `keep_last` trials (the highest sequence numbers, whatever their
// status), and every trial of the search epoch a tuning class is in.  Pending and running trials
// are never pruned.
struct PrunePolicy {
  double ended_before = 0;
  int keep_last = 20;          // >= 1
  std::size_t max_trials = 0;  // stop after this many (0: no limit)
  std::size_t batch = 500;     // trials per write transaction (the write lock is held that long)
};
struct PruneResult {
  std::size_t trials = 0;   // trials removed (with their measurements)
  std::size_t classes = 0;  // classes that lost trials
  bool complete = true;     // false when max_trials stopped it before everything due was removed
};

struct NodeSpeed {
  std::string node;
  double score = 1.0;  // relative speed: 1 = the median of its trials; < 1 slower
  int samples = 0;
  double updated = 0;
};

class Store {
 public:
  struct Options {
    bool create = false;     // create the file (and its schema) if missing
    bool read_only = false;  // open read-only (queries only)
    int busy_timeout_ms = 5000;
    // Leave WAL checkpoints (which fsync) to other connections: for job_submit inside slurmctld.
    bool no_checkpoints = false;
  };
  static constexpr int kSchemaVersion = 4;
  // "<state_dir>/store.db"
  static std::string path_in(const std::string &state_dir);

  Store(const std::string &path, Options options);
  ~Store();
  Store(Store &&) noexcept;
  Store &operator=(Store &&) noexcept;

  const std::string &path() const { return path_; }
  int schema_version();
  // Differs from the value an earlier call returned whenever the store's content may have changed
  // in between: a commit by another connection (any process) or a row changed by this one.  One
  // short read transaction (PRAGMA data_version); no table is read.
  std::pair<std::int64_t, std::int64_t> change_token();

  // ---- classes
  std::optional<ClassRecord> find_class(std::uint32_t owner, std::string_view name);
  std::optional<ClassRecord> find_class_by_id(std::int64_t id);
  // The shared class of that name, if an administrator created one.
  std::optional<ClassRecord> find_shared_class(std::string_view name);
  // All classes, or those of one owner; ordered by owner, name.
  std::vector<ClassRecord> list_classes(std::optional<std::uint32_t> owner = std::nullopt);
  // The shared classes (an index, not a scan of every class); ordered by owner, name.
  std::vector<ClassRecord> list_shared_classes();
  // The classes an administrator marked as history for every user's classes (the key
  // history_shared of their extra JSON; `autotune admin history`); a scan of the classes.
  std::vector<ClassRecord> list_history_classes();
  // Sets or clears that mark (one key of the extra JSON; the class's version is bumped).
  void set_history_shared(std::int64_t class_id, bool shared);
  // Creates the class, or returns the existing one unchanged (settings are fixed at creation).
  ClassRecord ensure_class(std::uint32_t owner, std::string_view name, const ClassSettings &settings,
                           bool shared = false, bool allow_users = false);
  void set_allow_users(std::int64_t class_id, bool allow);
  // Deletes the class with its trials, measurements and queue.  False when there was none.
  bool forget_class(std::uint32_t owner, std::string_view name);
  // The class's metric once a trial was measured by `measured`: a class still `automatic` takes
  // it (atomically: of two concurrent ingests the first wins), any other keeps its own.  Returns
  // the class's metric after the call; `automatic` only reads it.  Error(not_found) when the
  // class is gone.
  ClassMetric fix_metric(std::int64_t class_id, ClassMetric measured);

  // ---- trials
  std::vector<TrialRecord> trials(std::int64_t class_id);
  // The class's first `limit` trials by seq: a bounded read (for job_submit).
  std::vector<TrialRecord> first_trials(std::int64_t class_id, std::size_t limit);
  // How many trials of the class have one of `statuses` (an indexed count).
  int count_trials(std::int64_t class_id, std::initializer_list<TrialStatus> statuses);
  std::optional<TrialRecord> trial(std::int64_t trial_id);
  std::optional<TrialRecord> trial_by_job(std::int64_t job_id, std::optional<std::int64_t> step_id);
  // Pops the head of the class's queue and records it as a pending trial, in one transaction.
  // With `acceptable`, the first queued configuration it accepts instead.  nullopt when the queue
  // is empty (or holds nothing acceptable).
  std::optional<TrialRecord> take_recommendation(
      std::int64_t class_id, std::optional<std::int64_t> job_id = std::nullopt,
      const std::function<bool(const std::string &config)> &acceptable = {});
  TrialRecord add_trial(std::int64_t class_id, const std::string &config, TrialOrigin origin,
                        const std::string &reason, TrialStatus status,
                        std::optional<std::int64_t> job_id = std::nullopt,
                        std::optional<std::int64_t> step_id = std::nullopt);
  void mark_running(std::int64_t trial_id, std::int64_t job_id, double when);
  // Records how a trial ended, with `note` (why it failed) appended to its reason.  Idempotent:
  // returns false (and changes nothing) when the trial already has a final status.
  bool finish_trial(std::int64_t trial_id, TrialStatus status, const std::optional<Measurement> &m,
                    double when, const std::string &note = "");
  // A pending trial that will never run (its job was cancelled before it started, or is gone):
  // cancelled, with "dropped: <why>" in its reason, so that `autotune show` says it; not counted,
  // and its configuration goes back to the search.
  void drop_trial(std::int64_t trial_id, const std::string &why, double when);
  // A running trial whose job was requeued (scontrol requeue, preemption): pending again until the
  // job's next run starts.  False (and nothing changed) when the trial has a final status.
  bool requeue_trial(std::int64_t trial_id);

  // Removes old finished trials by `policy` (see PrunePolicy), in write transactions of at most
  // policy.batch trials each, bumping each class it changes.  Cost: one read of the classes (an
  // indexed range per class) and the deletions.
  PruneResult prune_trials(const PrunePolicy &policy);

  // ---- recommendations
  std::vector<Recommendation> queue(std::int64_t class_id);
  // Applies `d` unless the class changed since the snapshot at `expected_version` (then returns
  // false and changes nothing; the caller recomputes from a fresh snapshot).
  bool apply_decision(std::int64_t class_id, std::int64_t expected_version, const Decision &d);

  // ---- nodes
  // Blends `ratio` (this trial's speed on the node relative to the trial's median) into the
  // node's score: score = (1-alpha)*score + alpha*ratio.
  void update_node_speed(const std::string &node, double ratio, double alpha);
  std::vector<NodeSpeed> node_speeds();

  // ---- workflows (workflow_store.hpp; store/workflow_store.cc)
  // Registers a workflow of `owner`, or returns the one of that name when its definition is the
  // same; a different definition under a defined name is refused (Error(invalid_argument)).
  WorkflowRecord define_workflow(std::uint32_t owner, const WorkflowRecord &w);
  std::optional<WorkflowRecord> find_workflow(std::uint32_t owner, std::string_view name);
  std::optional<WorkflowRecord> find_workflow_by_id(std::int64_t id);
  std::vector<WorkflowRecord> list_workflows(std::optional<std::uint32_t> owner = std::nullopt);
  // Deletes the workflow with its runs.  False when there was none.
  bool forget_workflow(std::uint32_t owner, std::string_view name);
  // The run a job of `function` joins (workflow_store.hpp, "Runs"), opened when needed.
  WorkflowRunRecord join_workflow_run(std::int64_t workflow_id, const std::string &function);
  // Records what a function of a run was given (the row join_workflow_run's caller adds).
  void add_workflow_function(const WorkflowFunctionRun &f);
  std::vector<WorkflowRunRecord> workflow_runs(std::int64_t workflow_id);
  std::vector<WorkflowFunctionRun> workflow_functions(std::int64_t run_id);
  // How a function's job ended; false (nothing changed) when it was already recorded.
  bool finish_workflow_function(const WorkflowFunctionRun &f);
  // How a run ended (state done or incomplete) and its totals.
  void finish_workflow_run(const WorkflowRunRecord &r);
  // The bytes each medium held for a run's data between stages (JSON object).
  void set_workflow_run_tier(std::int64_t run_id, const std::string &tier_json);
  // The workflow's state and its next run's proposal, as the planner decided.
  void set_workflow_plan(std::int64_t workflow_id, const WorkflowPlan &plan);

  // PRAGMA integrity_check + foreign_key_check: "ok" or the problems found.
  std::string integrity_check();

 private:
  std::string path_;
  std::unique_ptr<sql::Db> db_;
};

}  // namespace autotune
