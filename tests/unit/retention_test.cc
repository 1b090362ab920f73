// Retention of finished trials: TrialRetentionDays / TrialRetainLast, Store::prune_trials() and
// the once-an-interval prune of ingest (policy/retention.hpp), on real stores.
#include "autotune/retention.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/store.hpp"
#include "conf_error.hpp"

using namespace autotune;

namespace {

const char *kCfg =
    "nodes=1,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
constexpr double kDay = 86400;
constexpr double kNow = 1.8e9;

class Retention : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/autotune-retention-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store_.emplace(Store::path_in(dir_), Store::Options{true, false, 1000});
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  Store &store() { return *store_; }

  // A class of `n` trials, trial k (1-based) finished `n + 1 - k` days before kNow, so trial 1 is
  // the oldest; the statuses of `unfinished` trials are left as given (pending or running).
  std::int64_t make_class(const std::string &name, int n,
                          const std::vector<std::pair<int, TrialStatus>> &unfinished = {}) {
    ClassSettings s;
    s.space = "workers=1-4";
    const std::int64_t id = store().ensure_class(1000, name, s).id;
    for (int k = 1; k <= n; ++k) {
      TrialStatus open = TrialStatus::running;
      bool finish = true;
      for (const auto &[seq, st] : unfinished)
        if (seq == k) {
          open = st;
          finish = false;
        }
      TrialRecord t = store().add_trial(id, kCfg, TrialOrigin::model, "", open);
      if (!finish) continue;
      Measurement m;
      m.samples_per_s = 100 + k;
      m.score = 1.0;
      store().finish_trial(t.id, k % 7 == 0 ? TrialStatus::failed : TrialStatus::done,
                           k % 7 == 0 ? std::nullopt : std::optional<Measurement>(m),
                           kNow - (n + 1 - k) * kDay);
    }
    return id;
  }
  std::int64_t id_of(std::int64_t cls, int seq) {
    for (const auto &t : store().trials(cls))
      if (t.seq == seq) return t.id;
    return 0;
  }
  void set_state(std::int64_t cls, ClassState state, std::optional<int> best_seq,
                 const std::string &extra) {
    const ClassRecord c = *store().find_class_by_id(cls);
    Decision d;
    d.state = state;
    if (best_seq) d.best_trial = id_of(cls, *best_seq);
    d.extra = extra;
    ASSERT_TRUE(store().apply_decision(cls, c.version, d));
  }
  std::set<int> seqs(std::int64_t cls) {
    std::set<int> out;
    for (const auto &t : store().trials(cls)) out.insert(t.seq);
    return out;
  }
  static std::set<int> range(int lo, int hi) {
    std::set<int> out;
    for (int i = lo; i <= hi; ++i) out.insert(i);
    return out;
  }
  long long count(const std::string &table) {
    sqlite3 *db = nullptr;
    sqlite3_open_v2(Store::path_in(dir_).c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt *s = nullptr;
    sqlite3_prepare_v2(db, ("SELECT count(*) FROM " + table).c_str(), -1, &s, nullptr);
    sqlite3_step(s);
    const long long n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  }
  PrunePolicy policy(double days, int keep_last) {
    PrunePolicy p;
    p.ended_before = kNow - days * kDay;
    p.keep_last = keep_last;
    return p;
  }

  std::string dir_;
  std::optional<Store> store_;
};

TEST_F(Retention, KeepsTheBestTheIncumbentAndTheLastN) {
  const std::int64_t c = make_class("conv", 40);
  set_state(c, ClassState::converged, 3, "{\"incumbent\": " + std::to_string(id_of(c, 5)) + "}");
  const PruneResult r = store().prune_trials(policy(0, 10));
  // Trials 1-30 are old and beyond the last 10; 3 is the best and 5 the incumbent.
  std::set<int> want = range(31, 40);
  want.insert({3, 5});
  EXPECT_EQ(seqs(c), want);
  EXPECT_EQ(r.trials, 28u);
  EXPECT_EQ(r.classes, 1u);
  EXPECT_TRUE(r.complete);
  // Their measurements went with them; the kept trials keep theirs.
  EXPECT_EQ(count("trials"), 12);
  long long measured = 0;
  for (const auto &t : store().trials(c)) measured += t.measurement ? 1 : 0;
  EXPECT_EQ(count("measurements"), measured);
  ASSERT_TRUE(store().trial(id_of(c, 3))->measurement.has_value());
  // The class's version moved: a refit computed before the prune is not applied.
  EXPECT_GT(store().find_class_by_id(c)->version, 0);
  // A second prune finds nothing more.
  EXPECT_EQ(store().prune_trials(policy(0, 10)).trials, 0u);
}

TEST_F(Retention, KeepsWhatEndedAfterTheCutoff) {
  const std::int64_t c = make_class("young", 40);
  set_state(c, ClassState::converged, 40, "{}");
  // Trial k ended 41-k days ago: older than 25 days are trials 1-15.
  store().prune_trials(policy(25, 5));
  EXPECT_EQ(seqs(c), range(16, 40));
}

TEST_F(Retention, NeverPrunesPendingOrRunningTrials) {
  const std::int64_t c =
      make_class("open", 30, {{2, TrialStatus::pending}, {4, TrialStatus::running}});
  set_state(c, ClassState::converged, 30, "{}");
  store().prune_trials(policy(0, 3));
  std::set<int> want = range(28, 30);
  want.insert({2, 4});
  EXPECT_EQ(seqs(c), want);
}

TEST_F(Retention, KeepsTheSearchOfATuningClass) {
  // A class tuning again since trial 12 (drift): trials 12-30 are its search and stay.
  const std::int64_t c = make_class("retune", 30);
  set_state(c, ClassState::tuning, 10, "{\"epoch_start\": 12}");
  store().prune_trials(policy(0, 3));
  std::set<int> want = range(12, 30);
  want.insert(10);
  EXPECT_EQ(seqs(c), want);
  // Once it converged, only the best and the last N are kept.
  set_state(c, ClassState::converged, 29, "{\"epoch_start\": 12}");
  store().prune_trials(policy(0, 3));
  EXPECT_EQ(seqs(c), range(28, 30));
}

TEST_F(Retention, StopsAtTheLimitAndContinuesLater) {
  const std::int64_t a = make_class("a", 30), b = make_class("b", 30);
  set_state(a, ClassState::converged, 30, "{}");
  set_state(b, ClassState::converged, 30, "{}");
  PrunePolicy p = policy(0, 5);
  p.max_trials = 30;
  p.batch = 7;  // several transactions
  PruneResult r = store().prune_trials(p);
  EXPECT_EQ(r.trials, 30u);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(seqs(a).size() + seqs(b).size(), 60u - 30u);
  r = store().prune_trials(p);
  EXPECT_EQ(r.trials, 20u);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(seqs(a), range(26, 30));
  EXPECT_EQ(seqs(b), range(26, 30));
}

TEST_F(Retention, IngestPrunesOnlyWhenOnAndAtMostOncePerInterval) {
  const std::int64_t c = make_class("hourly", 40);
  set_state(c, ClassState::converged, 40, "{}");
  const std::string stamp = dir_ + "/prune.stamp";
  Conf off = Conf::load_text("StateDir=" + dir_ + "\n");
  EXPECT_FALSE(prune_if_due(store(), off, kNow, stamp).has_value());
  EXPECT_EQ(seqs(c).size(), 40u);
  Conf on = Conf::load_text("StateDir=" + dir_ + "\nTrialRetentionDays=10\nTrialRetainLast=2\n");
  EXPECT_EQ(prune_stamp_path(on), dir_ + "/prune.stamp");
  // The stamp is now (the real clock): kNow lies years ahead, so the policy's cutoff is in 2026+.
  const double now = static_cast<double>(::time(nullptr));
  auto r = prune_if_due(store(), on, kNow, stamp);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->trials, 30u);  // ended more than 10 days before kNow: trials 1-30
  struct stat sb {};
  ASSERT_EQ(::stat(stamp.c_str(), &sb), 0);
  EXPECT_GE(static_cast<double>(sb.st_mtime), now - 5);
  // Within the interval: nothing is done, even with more due.
  EXPECT_FALSE(prune_if_due(store(), on, now + 60, stamp).has_value());
  // After it: due again.
  r = prune_if_due(store(), on, now + kPruneIntervalS + 1, stamp);
  ASSERT_TRUE(r.has_value());
}

TEST(RetentionConf, KeysAreValidated) {
  using test::conf_error;
  EXPECT_EQ(Conf::defaults().tuner.trial_retention_days, 0);
  EXPECT_EQ(Conf::defaults().tuner.trial_retain_last, 20);
  const Conf c = Conf::load_text("TrialRetentionDays=180\nTrialRetainLast=50\n");
  EXPECT_EQ(c.tuner.trial_retention_days, 180);
  EXPECT_EQ(c.tuner.trial_retain_last, 50);
  EXPECT_EQ(conf_error("TrialRetentionDays=-1\n"),
            "autotune.conf:1: TrialRetentionDays: '-1' is out of range; allowed: a whole number "
            "from 0 to 36500");
  EXPECT_EQ(conf_error("TrialRetentionDays=1y\n"),
            "autotune.conf:1: TrialRetentionDays: '1y' is not a whole number; allowed: a whole "
            "number from 0 to 36500");
  EXPECT_EQ(conf_error("TrialRetainLast=0\n"),
            "autotune.conf:1: TrialRetainLast: '0' is out of range; allowed: a whole number from 1 "
            "to 1000000");
  EXPECT_EQ(conf_error("TrialRetentionDays=30\nTrialRetainLast=1\nDriftConfirm=3\n"),
            "TrialRetainLast 1 is below DriftConfirm 3: pruning would remove the re-measurements "
            "drift is judged "
            "on; allowed: TrialRetainLast >= DriftConfirm");
  // Without retention the check does not apply.
  EXPECT_EQ(conf_error("TrialRetainLast=1\nDriftConfirm=3\n"), "");
}

}  // namespace
