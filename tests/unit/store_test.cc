// The profile store on real SQLite files in a temporary directory.
#include "autotune/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "autotune/error.hpp"

using namespace autotune;

namespace {

const char *kCfgA = "nodes=1,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
const char *kCfgB = "nodes=2,workers=3,ps=1,cpus-per-worker=1,mem-per-worker=512M,cpus-per-ps=1,mem-per-ps=256M";

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/autotune-store-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = Store::path_in(dir_);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  Store open(bool create = true) { return Store(path_, {create, false, 1000}); }
  ClassSettings settings() {
    ClassSettings s;
    s.space = "workers=1-4,ps=1-2";
    s.gamma = 0.3;
    s.budget = 6;
    return s;
  }
  std::string dir_, path_;
};

Errc code_of(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e.code();
  }
  return static_cast<Errc>(0);
}

}  // namespace

TEST_F(StoreTest, CreatesWithPrivateModeAndCurrentSchema) {
  Store s = open();
  EXPECT_EQ(s.schema_version(), Store::kSchemaVersion);
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the store must not be readable by other users";
  EXPECT_EQ(s.integrity_check(), "ok");
}

TEST_F(StoreTest, MissingStoreWithoutCreateIsNotFound) {
  EXPECT_EQ(code_of([&] { open(false); }), Errc::not_found);
}

TEST_F(StoreTest, ClassesAreKeyedByOwnerAndName) {
  Store s = open();
  ClassRecord a = s.ensure_class(1000, "mnist", settings());
  ClassRecord b = s.ensure_class(1001, "mnist", settings());
  EXPECT_NE(a.id, b.id);
  ClassSettings other = settings();
  other.gamma = 0.9;
  ClassRecord again = s.ensure_class(1000, "mnist", other);
  EXPECT_EQ(again.id, a.id);
  EXPECT_DOUBLE_EQ(again.settings.gamma, 0.3) << "settings are fixed at creation";
  EXPECT_EQ(s.list_classes(1000).size(), 1u);
  EXPECT_EQ(s.list_classes().size(), 2u);
  EXPECT_FALSE(s.find_class(1002, "mnist"));
  EXPECT_EQ(a.state, ClassState::tuning);
}

// A class's mode is kept as the text "jobs" or "steps".
TEST_F(StoreTest, TheClassModeIsStoredByName) {
  EXPECT_STREQ(to_string(ClassMode::jobs), "jobs");
  EXPECT_STREQ(to_string(ClassMode::steps), "steps");
  EXPECT_EQ(parse_class_mode("--mode", "steps"), ClassMode::steps);
  EXPECT_EQ(class_mode_from("jobs"), ClassMode::jobs);
  EXPECT_EQ(code_of([] { parse_class_mode("--mode", "batch"); }), Errc::invalid_argument);
  try {
    parse_class_mode("--mode", "Jobs");
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "--mode: 'Jobs' is not one of: jobs, steps");
  }
  EXPECT_EQ(code_of([] { class_mode_from(""); }), Errc::corrupt);
  Store s = open();
  ClassSettings st = settings();
  EXPECT_EQ(st.mode, ClassMode::jobs);
  st.mode = ClassMode::steps;
  EXPECT_EQ(s.ensure_class(1000, "stepwise", st).settings.mode, ClassMode::steps);
  EXPECT_EQ(s.ensure_class(1000, "jobwise", settings()).settings.mode, ClassMode::jobs);
  sqlite3 *db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt *q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT mode FROM classes ORDER BY name", -1, &q, nullptr), SQLITE_OK);
  std::string modes;
  while (sqlite3_step(q) == SQLITE_ROW) modes += reinterpret_cast<const char *>(sqlite3_column_text(q, 0)) + std::string(" ");
  sqlite3_finalize(q);
  sqlite3_close(db);
  EXPECT_EQ(modes, "jobs steps ");
}

TEST_F(StoreTest, SharedClassesAreSeparateAndUnique) {
  Store s = open();
  s.ensure_class(0, "resnet", settings(), /*shared=*/true);
  EXPECT_TRUE(s.find_shared_class("resnet"));
  EXPECT_FALSE(s.find_class(0, "resnet")) << "find_class looks at private classes only";
  EXPECT_EQ(code_of([&] { s.ensure_class(5, "resnet", settings(), true); }), Errc::invalid_argument);
}

TEST_F(StoreTest, SharedClassesAreListedThroughTheirIndex) {
  {
    Store s = open();
    s.ensure_class(7, "mine", settings());
    s.ensure_class(0, "zeta", settings(), true);
    s.ensure_class(3, "alpha", settings(), true);
    std::vector<std::string> names;
    for (const auto &c : s.list_shared_classes()) names.push_back(std::to_string(c.owner) + "/" + c.name);
    EXPECT_EQ(names, (std::vector<std::string>{"0/zeta", "3/alpha"}));
  }
  // A store made before the index existed gets it from the next writer that opens it.
  sqlite3 *db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP INDEX classes_shared_name", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto has_index = [&] {
    sqlite3 *d = nullptr;
    sqlite3_open_v2(path_.c_str(), &d, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt *st = nullptr;
    sqlite3_prepare_v2(d, "SELECT count(*) FROM sqlite_master WHERE name = 'classes_shared_name'", -1, &st, nullptr);
    sqlite3_step(st);
    const bool found = sqlite3_column_int(st, 0) == 1;
    sqlite3_finalize(st);
    sqlite3_close(d);
    return found;
  };
  EXPECT_FALSE(has_index());
  { Store reader(path_, {false, true, 1000}); EXPECT_EQ(reader.list_shared_classes().size(), 2u); }
  EXPECT_FALSE(has_index()) << "a reader changes nothing";
  { Store writer = open(false); }
  EXPECT_TRUE(has_index());
}

TEST_F(StoreTest, TakeRecommendationPopsInOrderAndRecordsPendingTrials) {
  Store s = open();
  ClassRecord c = s.ensure_class(1000, "mnist", settings());
  Decision d;
  d.queue = {{kCfgA, TrialOrigin::initial, "first batch", std::nullopt, std::nullopt},
             {kCfgB, TrialOrigin::initial, "first batch", std::nullopt, std::nullopt}};
  ASSERT_TRUE(s.apply_decision(c.id, c.version, d));
  auto t1 = s.take_recommendation(c.id);
  auto t2 = s.take_recommendation(c.id, 42);
  ASSERT_TRUE(t1 && t2);
  EXPECT_EQ(t1->config, kCfgA);
  EXPECT_EQ(t2->config, kCfgB);
  EXPECT_EQ(t1->seq, 1);
  EXPECT_EQ(t2->seq, 2);
  EXPECT_EQ(t2->job_id, 42);
  EXPECT_EQ(t1->status, TrialStatus::pending);
  EXPECT_FALSE(s.take_recommendation(c.id)) << "empty queue";
  EXPECT_TRUE(s.queue(c.id).empty());
}

TEST_F(StoreTest, FinishTrialIsIdempotent) {
  Store s = open();
  ClassRecord c = s.ensure_class(1000, "mnist", settings());
  TrialRecord t = s.add_trial(c.id, kCfgA, TrialOrigin::model, "ei", TrialStatus::pending, 7);
  s.mark_running(t.id, 7, 100.0);
  EXPECT_EQ(s.trial(t.id)->status, TrialStatus::running);
  Measurement m;
  m.samples_per_s = 1234;
  m.time_s = 2.0;
  m.cost = 3.0;
  m.nodes = "n[1-2]";
  EXPECT_TRUE(s.finish_trial(t.id, TrialStatus::done, m, 200.0));
  Measurement m2 = m;
  m2.samples_per_s = 1;
  EXPECT_FALSE(s.finish_trial(t.id, TrialStatus::failed, m2, 300.0)) << "a second result is ignored";
  TrialRecord back = *s.trial(t.id);
  EXPECT_EQ(back.status, TrialStatus::done);
  ASSERT_TRUE(back.measurement);
  EXPECT_DOUBLE_EQ(back.measurement->samples_per_s, 1234);
  EXPECT_EQ(back.measurement->nodes, "n[1-2]");
  EXPECT_DOUBLE_EQ(*back.ended, 200.0);
  EXPECT_DOUBLE_EQ(*back.started, 100.0);
  EXPECT_EQ(s.trial_by_job(7, std::nullopt)->id, t.id);
  EXPECT_FALSE(s.trial_by_job(7, 0));
}

TEST_F(StoreTest, ARequeuedTrialIsPendingAgainUntilItsJobRunsAgain) {
  Store s = open();
  ClassRecord c = s.ensure_class(1000, "mnist", settings());
  TrialRecord t = s.add_trial(c.id, kCfgA, TrialOrigin::model, "ei", TrialStatus::pending);
  s.mark_running(t.id, 7, 100.0);
  const std::int64_t version = s.find_class_by_id(c.id)->version;
  EXPECT_TRUE(s.requeue_trial(t.id));
  TrialRecord back = *s.trial(t.id);
  EXPECT_EQ(back.status, TrialStatus::pending);
  EXPECT_FALSE(back.started);
  EXPECT_EQ(back.job_id, 7) << "the job keeps its id when requeued";
  EXPECT_GT(s.find_class_by_id(c.id)->version, version) << "the class changed: the tuner refits";
  s.mark_running(t.id, 7, 150.0);
  EXPECT_EQ(s.trial(t.id)->status, TrialStatus::running);
  EXPECT_DOUBLE_EQ(*s.trial(t.id)->started, 150.0);
  Measurement m;
  m.samples_per_s = 10;
  ASSERT_TRUE(s.finish_trial(t.id, TrialStatus::done, m, 200.0));
  EXPECT_FALSE(s.requeue_trial(t.id)) << "a finished trial stays finished";
  EXPECT_EQ(s.trial(t.id)->status, TrialStatus::done);
}

TEST_F(StoreTest, OneTrialPerJobStep) {
  Store s = open();
  ClassRecord c = s.ensure_class(1000, "mnist", settings());
  s.add_trial(c.id, kCfgA, TrialOrigin::model, "", TrialStatus::running, 9, 1);
  EXPECT_EQ(code_of([&] { s.add_trial(c.id, kCfgB, TrialOrigin::model, "", TrialStatus::running, 9, 1); }),
            Errc::invalid_argument);
  EXPECT_NO_THROW(s.add_trial(c.id, kCfgB, TrialOrigin::model, "", TrialStatus::running, 9, 2));
}

TEST_F(StoreTest, ApplyDecisionRefusesAStaleSnapshot) {
  Store s = open();
  ClassRecord c = s.ensure_class(1000, "mnist", settings());
  Decision d;
  d.queue = {{kCfgA, TrialOrigin::initial, "", std::nullopt, std::nullopt}};
  ASSERT_TRUE(s.apply_decision(c.id, c.version, d));
  // Someone takes a recommendation between the snapshot and the write.
  ClassRecord snap = *s.find_class_by_id(c.id);
  s.take_recommendation(c.id);
  Decision d2;
  d2.queue = {{kCfgB, TrialOrigin::model, "", 1.0, 0.1}};
  EXPECT_FALSE(s.apply_decision(c.id, snap.version, d2));
  EXPECT_TRUE(s.queue(c.id).empty()) << "nothing changed";
  ClassRecord fresh = *s.find_class_by_id(c.id);
  d2.state = ClassState::converged;
  d2.stop_rule = "budget";
  d2.state_reason = "budget of 6 trials used";
  EXPECT_TRUE(s.apply_decision(c.id, fresh.version, d2));
  ClassRecord after = *s.find_class_by_id(c.id);
  EXPECT_EQ(after.state, ClassState::converged);
  EXPECT_EQ(after.stop_rule, "budget");
  ASSERT_EQ(s.queue(c.id).size(), 1u);
  EXPECT_DOUBLE_EQ(*s.queue(c.id)[0].predicted, 1.0);
}

TEST_F(StoreTest, ForgetRemovesEverything) {
  Store s = open();
  ClassRecord c = s.ensure_class(1000, "mnist", settings());
  TrialRecord t = s.add_trial(c.id, kCfgA, TrialOrigin::model, "", TrialStatus::pending, 3);
  Measurement m;
  s.finish_trial(t.id, TrialStatus::done, m, 1.0);
  EXPECT_FALSE(s.forget_class(1001, "mnist")) << "another user's class is not touched";
  EXPECT_TRUE(s.forget_class(1000, "mnist"));
  EXPECT_FALSE(s.trial(t.id));
  EXPECT_EQ(s.integrity_check(), "ok");
}

TEST_F(StoreTest, NodeSpeedBlends) {
  Store s = open();
  s.update_node_speed("n1", 0.5, 0.5);
  s.update_node_speed("n1", 1.0, 0.5);
  auto v = s.node_speeds();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_DOUBLE_EQ(v[0].score, 0.75);
  EXPECT_EQ(v[0].samples, 2);
}

TEST_F(StoreTest, MigratesFromVersion1KeepingData) {
  std::ifstream in(std::string(std::getenv("top_srcdir") ? std::getenv("top_srcdir") : ".") +
                   "/tests/unit/fixtures/store-v1.sql");
  ASSERT_TRUE(in) << "fixture store-v1.sql not found (top_srcdir)";
  std::stringstream sql;
  sql << in.rdbuf();
  sqlite3 *db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.str().c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  Store s = open(false);
  EXPECT_EQ(s.schema_version(), Store::kSchemaVersion);
  auto c = s.find_class(1000, "mnist");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->state, ClassState::converged);
  EXPECT_DOUBLE_EQ(c->settings.gamma, 0.3);
  EXPECT_EQ(*c->best_trial, 2);
  EXPECT_FALSE(c->allow_users);
  auto trials = s.trials(c->id);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[1].origin, TrialOrigin::initial);
  EXPECT_DOUBLE_EQ(*trials[1].measurement->score, 0.84);
  ASSERT_EQ(s.queue(c->id).size(), 1u);
  EXPECT_EQ(s.queue(c->id)[0].origin, TrialOrigin::model);
  EXPECT_EQ(s.integrity_check(), "ok");
  // The new features work on the migrated store.
  EXPECT_NO_THROW(s.update_node_speed("n1", 1.0, 0.2));
  // A class measured by throughput before metrics existed keeps being measured so.
  EXPECT_EQ(c->settings.metric, ClassMetric::throughput);
  EXPECT_EQ(s.fix_metric(c->id, ClassMetric::time), ClassMetric::throughput);
}

TEST_F(StoreTest, MetricIsFixedByTheFirstMeasuredTrialOnly) {
  Store s = open();
  ClassRecord c = s.ensure_class(1000, "generic", settings());
  EXPECT_EQ(c.settings.metric, ClassMetric::automatic);
  EXPECT_EQ(s.fix_metric(c.id, ClassMetric::automatic), ClassMetric::automatic) << "only reads";
  EXPECT_EQ(s.fix_metric(c.id, ClassMetric::time), ClassMetric::time);
  EXPECT_EQ(s.fix_metric(c.id, ClassMetric::throughput), ClassMetric::time) << "never a mix";
  EXPECT_EQ(s.find_class(1000, "generic")->settings.metric, ClassMetric::time);
  ClassSettings st = settings();
  st.metric = ClassMetric::throughput;
  ClassRecord d = s.ensure_class(1000, "given", st);
  EXPECT_EQ(d.settings.metric, ClassMetric::throughput);
  EXPECT_EQ(s.fix_metric(d.id, ClassMetric::time), ClassMetric::throughput);
  EXPECT_EQ(parse_class_metric("--autotune-metric", "time"), ClassMetric::time);
  EXPECT_THROW(parse_class_metric("--autotune-metric", "auto"), Error);
  EXPECT_THROW(parse_class_metric("--autotune-metric", "Time"), Error);
}

TEST_F(StoreTest, RefusesNewerSchemaAndForeignFiles) {
  {
    sqlite3 *db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  try {
    open(false);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_NE(std::string(e.what()).find("schema version 99, newer than this build's"), std::string::npos);
  }
  const std::string other = dir_ + "/other.db";
  std::ofstream(other) << "this is not a database, just some text that is long enough to have a header......";
  EXPECT_EQ(code_of([&] { Store(other, {false, false, 100}); }), Errc::corrupt);
  const std::string tables = dir_ + "/tables.db";
  {
    sqlite3 *db = nullptr;
    ASSERT_EQ(sqlite3_open(tables.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE x(a)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  EXPECT_EQ(code_of([&] { Store(tables, {false, false, 100}); }), Errc::corrupt);
}

// Workflows (schema 4): keyed by owner and name, a definition fixed once defined, and runs that a
// second job of a function opens.
TEST_F(StoreTest, WorkflowsRunsAndTheirFunctions) {
  Store s = open();
  WorkflowRecord w;
  w.name = "nightly";
  w.definition = R"({"workflow":"nightly"})";
  w.functions = {{"prep", {}, "workers=1-2"}, {"train", {"prep"}, ""}};
  w.gamma = 0.3;
  w.budget = 5;
  const WorkflowRecord a = s.define_workflow(1000, w);
  EXPECT_EQ(s.define_workflow(1000, w).id, a.id);  // the same definition again: unchanged
  ASSERT_EQ(a.functions.size(), 2u);
  EXPECT_EQ(a.functions[1].after, std::vector<std::string>{"prep"});
  EXPECT_EQ(a.functions[0].space, "workers=1-2");
  WorkflowRecord other = w;
  other.definition = R"({"workflow":"nightly","gamma":0.9})";
  EXPECT_EQ(code_of([&] { s.define_workflow(1000, other); }), Errc::invalid_argument);
  EXPECT_NE(s.define_workflow(1001, other).id, a.id);  // another owner's of the same name
  EXPECT_FALSE(s.find_workflow(1002, "nightly"));

  const WorkflowRunRecord r1 = s.join_workflow_run(a.id, "prep");
  EXPECT_EQ(r1.seq, 1);
  WorkflowFunctionRun f;
  f.run_id = r1.id;
  f.function = "prep";
  f.config = kCfgA;
  s.add_workflow_function(f);
  EXPECT_EQ(s.join_workflow_run(a.id, "train").seq, 1);  // a function the run has not got: joins
  f.function = "train";
  s.add_workflow_function(f);
  const WorkflowRunRecord r2 = s.join_workflow_run(a.id, "prep");  // prep again: the next run
  EXPECT_EQ(r2.seq, 2);
  auto runs = s.workflow_runs(a.id);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].state, "closed");
  EXPECT_EQ(runs[1].state, "open");

  f.function = "prep";
  f.status = "done";
  f.time_s = 3;
  f.cost = 6;
  EXPECT_TRUE(s.finish_workflow_function(f));
  EXPECT_FALSE(s.finish_workflow_function(f));  // once
  WorkflowRunRecord done = runs[0];
  done.state = "done";
  done.time_s = 5;
  done.score = 1;
  s.finish_workflow_run(done);
  WorkflowPlan plan;
  plan.best_run = 1;
  plan.proposal = format_workflow_proposal({{"prep", kCfgB, "model", "stage 1: why", 2.5, std::nullopt}});
  s.set_workflow_plan(a.id, plan);
  const auto got = parse_workflow_proposal(s.find_workflow(1000, "nightly")->proposal);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].config, kCfgB);
  EXPECT_DOUBLE_EQ(*got[0].time, 2.5);
  EXPECT_FALSE(got[0].cost);
  EXPECT_EQ(got[0].why, "stage 1: why");
  EXPECT_EQ(s.workflow_runs(a.id)[0].state, "done");
  EXPECT_EQ(s.workflow_functions(runs[0].id)[0].status, "done");
  EXPECT_EQ(code_of([] { parse_workflow_proposal("prep\tonly two\n"); }), Errc::corrupt);
  EXPECT_TRUE(s.forget_workflow(1000, "nightly"));
  EXPECT_TRUE(s.workflow_runs(a.id).empty());
  EXPECT_TRUE(s.find_workflow(1001, "nightly"));
}
