// The tuner's decisions (tuner.hpp decide): convergence by budget, drift confirmed by
// re-measurements in a row, retune or stale, and the hysteresis of a retune's winner.
#include "autotune/optimizer.hpp"
#include "autotune/tuner.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "autotune/conf.hpp"
#include "autotune/history.hpp"
#include "autotune/store.hpp"

using namespace autotune;

namespace {

Conf conf_of(const std::string &text) { return Conf::load_text(text); }

// A class of four candidates (nodes 1|2 x workers 1|2 on 4-CPU nodes), gamma 0 (time only).
ClassRecord make_class(const Conf &conf, int budget = 4) {
  Inventory inv;
  NodeType t;
  t.name = "n";
  t.count = 4;
  t.cpus = 4;
  t.mem_mb = 4000;
  inv.types.push_back(t);
  const SpaceSpec space =
      SpaceSpec::parse("nodes=1|2,workers=1|2,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  ClassRecord c;
  c.id = 1;
  c.name = "sweep";
  c.settings.space = space.format();
  c.settings.gamma = 0;
  c.settings.budget = budget;
  c.settings.extra = make_class_extra(space, inv, "", conf, static_cast<std::size_t>(budget), 7);
  return c;
}

std::string cfg(int nodes, int workers) {
  return "nodes=" + std::to_string(nodes) + ",workers=" + std::to_string(workers) +
         ",ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
}

class TunerTest : public ::testing::Test {
 protected:
  // A finished trial; samples_per_s 0 records a failure.
  void add(const std::string &config, double samples_per_s) {
    TrialRecord t;
    t.id = t.seq = static_cast<int>(trials_.size()) + 1;
    t.class_id = 1;
    t.config = config;
    t.created = t.seq;
    t.ended = t.seq + 0.5;
    if (samples_per_s > 0) {
      t.status = TrialStatus::done;
      Measurement m;
      m.samples_per_s = samples_per_s;
      t.measurement = m;
    } else {
      t.status = TrialStatus::failed;
    }
    trials_.push_back(t);
  }
  // decide(), then apply the decision to the class as the store would.
  Decision step(ClassRecord &c, const Conf &conf) {
    Decision d = decide(c, trials_, conf, propose);
    c.state = d.state;
    c.state_reason = d.state_reason;
    c.stop_rule = d.stop_rule;
    c.best_trial = d.best_trial;
    c.t_ref = d.t_ref;
    c.c_ref = d.c_ref;
    if (d.extra) c.settings.extra = *d.extra;
    return d;
  }
  // The four candidates measured: (2,2) is fastest at 400 samples/s.
  void search(ClassRecord &c, const Conf &conf) {
    add(cfg(1, 1), 100);
    add(cfg(1, 2), 200);
    add(cfg(2, 1), 150);
    add(cfg(2, 2), 400);
    step(c, conf);
  }
  std::vector<TrialRecord> trials_;
};

}  // namespace

TEST_F(TunerTest, ConvergesOnTheFastestWhenTheBudgetIsUsed) {
  const Conf conf = conf_of("");
  ClassRecord c = make_class(conf);
  search(c, conf);
  EXPECT_EQ(c.state, ClassState::converged);
  EXPECT_EQ(c.stop_rule, "budget");
  ASSERT_TRUE(c.best_trial);
  EXPECT_EQ(*c.best_trial, 4);
  const Decision d = step(c, conf);
  ASSERT_EQ(d.queue.size(), 1u);
  EXPECT_EQ(d.queue[0].config, cfg(2, 2));
  EXPECT_EQ(d.queue[0].origin, TrialOrigin::best);
}

// InitialTrials=auto (the default): a class at gamma 0 spreads 2 trials, and its third is the
// model's; InitialTrials=3 keeps a third design trial; at gamma 1 auto is 3.
TEST_F(TunerTest, TheInitialDesignFollowsInitialTrialsAndTheObjective) {
  for (const char *text : {"", "InitialTrials=auto\n", "InitialTrials=3\n"}) {
    for (double gamma : {0.0, 1.0}) {
      const Conf conf = conf_of(text);
      ClassRecord c = make_class(conf);
      c.settings.gamma = gamma;
      trials_.clear();
      add(cfg(1, 1), 100);
      add(cfg(2, 2), 400);
      const Decision d = step(c, conf);
      ASSERT_FALSE(d.queue.empty());
      const bool small = std::string(text) != "InitialTrials=3\n" && gamma == 0;
      EXPECT_EQ(d.queue[0].origin, small ? TrialOrigin::model : TrialOrigin::initial)
          << "'" << text << "' gamma " << gamma;
    }
  }
}

TEST_F(TunerTest, OneSlowReMeasurementIsNotDrift) {
  const Conf conf = conf_of("");  // DriftThreshold 0.25, DriftConfirm 2
  ClassRecord c = make_class(conf);
  search(c, conf);
  add(cfg(2, 2), 200);  // 2x slower once
  step(c, conf);
  EXPECT_EQ(c.state, ClassState::converged);
  add(cfg(2, 2), 390);  // back to normal
  add(cfg(2, 2), 200);  // slow again, but not twice in a row
  step(c, conf);
  EXPECT_EQ(c.state, ClassState::converged);
  EXPECT_EQ(*c.best_trial, 4);
}

TEST_F(TunerTest, DriftConfirmedTwiceInARowRetunes) {
  const Conf conf = conf_of("");
  ClassRecord c = make_class(conf);
  search(c, conf);
  add(cfg(2, 2), 200);
  add(cfg(2, 2), 250);
  const Decision d = step(c, conf);
  EXPECT_EQ(c.state, ClassState::tuning);
  EXPECT_NE(c.state_reason.find("worse on re-measurement"), std::string::npos) << c.state_reason;
  EXPECT_NE(c.state_reason.find("in trials 5, 6"), std::string::npos) << c.state_reason;
  EXPECT_NE(c.state_reason.find("tuning again with 6 more trials"), std::string::npos) << c.state_reason;
  EXPECT_FALSE(d.queue.empty());
  EXPECT_EQ(c.stop_rule, "");
}

TEST_F(TunerTest, DriftConfirmOfOneRetunesAtOnce) {
  const Conf conf = conf_of("DriftConfirm=1\nDriftThreshold=0.5\n");
  ClassRecord c = make_class(conf);
  search(c, conf);
  add(cfg(2, 2), 300);  // 33% worse: below the threshold
  step(c, conf);
  EXPECT_EQ(c.state, ClassState::converged);
  add(cfg(2, 2), 200);  // 100% worse
  step(c, conf);
  EXPECT_EQ(c.state, ClassState::tuning);
  EXPECT_NE(c.state_reason.find("trial 6)"), std::string::npos) << c.state_reason;
}

TEST_F(TunerTest, DriftWithoutRetuneBudgetIsStale) {
  const Conf conf = conf_of("RetuneBudget=0\n");
  ClassRecord c = make_class(conf);
  search(c, conf);
  add(cfg(2, 2), 100);
  add(cfg(2, 2), 100);
  const Decision d = step(c, conf);
  EXPECT_EQ(c.state, ClassState::stale);
  EXPECT_NE(c.state_reason.find("RetuneBudget=0"), std::string::npos) << c.state_reason;
  ASSERT_EQ(d.queue.size(), 1u);
  EXPECT_EQ(d.queue[0].config, cfg(2, 2));  // jobs keep running it
}

TEST_F(TunerTest, RetuneKeepsTheOldBestUnlessTheNewOneIsBetterByTheMargin) {
  const Conf conf = conf_of("RetuneBudget=2\nChangeMargin=0.2\n");
  ClassRecord c = make_class(conf);
  search(c, conf);
  add(cfg(2, 2), 200);
  add(cfg(2, 2), 200);  // drift: the best now runs at 200 samples/s
  step(c, conf);
  ASSERT_EQ(c.state, ClassState::tuning);
  add(cfg(1, 2), 220);  // 10% better than the best's latest: within the margin
  step(c, conf);  // (ingest refits after every trial)
  add(cfg(2, 1), 150);
  step(c, conf);
  EXPECT_EQ(c.state, ClassState::converged);
  ASSERT_TRUE(c.best_trial);
  EXPECT_EQ(trials_[static_cast<std::size_t>(*c.best_trial - 1)].config, cfg(2, 2));  // the earlier best is kept
  EXPECT_NE(c.state_reason.find("the earlier best is kept"), std::string::npos) << c.state_reason;
}

TEST_F(TunerTest, RetuneTakesANewBestThatBeatsTheMargin) {
  const Conf conf = conf_of("RetuneBudget=2\nChangeMargin=0.2\n");
  ClassRecord c = make_class(conf);
  search(c, conf);
  add(cfg(2, 2), 200);
  add(cfg(2, 2), 200);
  step(c, conf);
  ASSERT_EQ(c.state, ClassState::tuning);
  add(cfg(1, 2), 300);  // 33% faster than the best's latest
  step(c, conf);
  add(cfg(2, 1), 150);
  step(c, conf);
  EXPECT_EQ(c.state, ClassState::converged);
  EXPECT_EQ(*c.best_trial, 7);
}

TEST_F(TunerTest, TheFirstSearchTakesItsBestWithoutAMargin) {
  const Conf conf = conf_of("ChangeMargin=0.5\n");
  ClassRecord c = make_class(conf);
  add(cfg(1, 1), 100);
  step(c, conf);
  add(cfg(1, 2), 200);
  step(c, conf);
  add(cfg(2, 1), 150);
  step(c, conf);
  add(cfg(2, 2), 220);  // 10% better than the best so far
  step(c, conf);
  EXPECT_EQ(c.state, ClassState::converged);
  EXPECT_EQ(*c.best_trial, 4);
}

TEST_F(TunerTest, FailedTrialsAreNeverProposedAgain) {
  const Conf conf = conf_of("");
  ClassRecord c = make_class(conf, 6);
  add(cfg(2, 2), 0);  // failed
  add(cfg(1, 1), 100);
  add(cfg(1, 2), 150);
  const Decision d = step(c, conf);
  EXPECT_EQ(c.state, ClassState::tuning);
  for (const auto &r : d.queue) EXPECT_NE(r.config, cfg(2, 2));
  for (const auto &r : d.queue) EXPECT_NE(r.config, cfg(1, 1));
}

namespace {
EngineOptions seen_options;  // what the engine was last called with
Proposal recording_propose(const CandidateSet &cs, const std::vector<Observation> &done,
                           const std::vector<std::size_t> &pending, std::size_t k, const EngineOptions &o) {
  seen_options = o;
  return propose(cs, done, pending, k, o);
}
}  // namespace

// The model autotune.conf chose when the class was created (InputWarping, LinearTrend, Kernel)
// and the class's objective (its gamma, which chooses the exploration) reach the engine.
TEST_F(TunerTest, TheClassesModelAndObjectiveReachTheEngine) {
  const Conf conf = conf_of("InputWarping=no\nLinearTrend=yes\nKernel=additive\nTimeModel=no\n");
  ClassRecord c = make_class(conf, 6);
  c.settings.gamma = 0.5;
  add(cfg(1, 1), 100);
  add(cfg(1, 2), 150);
  add(cfg(2, 1), 120);
  decide(c, trials_, conf_of(""), recording_propose);  // the class keeps what it was created with
  EXPECT_FALSE(seen_options.input_warping);
  EXPECT_EQ(seen_options.linear_trend, Trend::yes);
  EXPECT_EQ(seen_options.gp.kernel, GpKernel::additive);
  EXPECT_EQ(seen_options.time_model, TimeModel::no);
  EXPECT_EQ(seen_options.history_time_model, TimeModel::no);
  EXPECT_EQ(seen_options.explore, Explore::automatic);
  EXPECT_DOUBLE_EQ(seen_options.gamma, 0.5);
  double share = 0;
  EXPECT_EQ(seen_options.effective_explore(&share), Explore::local);
  EXPECT_DOUBLE_EQ(share, kLocalShare);
  // Under the defaults, at gamma 0 (time only): ard with warping, the linear term, and EI with a
  // share of local search.
  ClassRecord d = make_class(conf_of(""), 6);
  decide(d, trials_, conf_of(""), recording_propose);
  EXPECT_TRUE(seen_options.input_warping);
  EXPECT_EQ(seen_options.linear_trend, Trend::automatic);
  EXPECT_TRUE(seen_options.effective_linear_trend());
  EXPECT_EQ(seen_options.gp.kernel, GpKernel::ard);
  EXPECT_EQ(seen_options.time_model, TimeModel::automatic);
  EXPECT_EQ(seen_options.history_time_model, TimeModel::automatic);
  EXPECT_DOUBLE_EQ(seen_options.gamma, 0);
  EXPECT_EQ(seen_options.effective_explore(&share), Explore::local);
  // The defaults at gamma 0.5: local search on a share of the proposals, and the linear term;
  // at 0.3 Thompson sampling.
  ClassRecord h = make_class(conf_of(""), 6);
  h.settings.gamma = 0.5;
  decide(h, trials_, conf_of(""), recording_propose);
  EXPECT_TRUE(seen_options.effective_linear_trend());
  EXPECT_EQ(seen_options.effective_explore(&share), Explore::local);
  seen_options.gamma = 0.3;
  EXPECT_EQ(seen_options.effective_explore(&share), Explore::thompson);
  seen_options.gamma = 0.5;
  // A class stored before the model's keys were goes on as it began: EI alone, no linear term,
  // no time model.
  for (const std::string key : {R"("explore":"auto",)", R"("linear_trend":"auto",)", R"("time_model":"auto",)"}) {
    const auto at = h.settings.extra.find(key);
    ASSERT_NE(at, std::string::npos) << h.settings.extra;
    h.settings.extra.erase(at, key.size());
  }
  decide(h, trials_, conf_of(""), recording_propose);
  EXPECT_FALSE(seen_options.effective_linear_trend());
  EXPECT_EQ(seen_options.effective_explore(&share), Explore::none);
  EXPECT_EQ(seen_options.time_model, TimeModel::no);
}

// The engine's time model (design.hpp) gets every candidate's score factor: its billing rate
// against the class's references, weighted by the class's gamma.
TEST_F(TunerTest, TheCandidatesBillingRatesReachTheEngineAsScoreFactors) {
  const Conf conf = conf_of("");
  ClassRecord c = make_class(conf, 6);
  c.settings.gamma = 0.75;
  add(cfg(1, 1), 100);
  add(cfg(1, 2), 150);
  add(cfg(2, 1), 120);
  const Decision d = decide(c, trials_, conf, recording_propose);
  ASSERT_TRUE(d.t_ref && d.c_ref);
  const ClassProblem p = load_problem(c);
  ASSERT_TRUE(seen_options.score_factor);
  ASSERT_EQ(seen_options.score_factor->size(), p.candidates.size());
  std::set<double> distinct;
  for (std::size_t j = 0; j < p.candidates.size(); ++j) {
    EXPECT_DOUBLE_EQ((*seen_options.score_factor)[j],
                     0.25 / *d.t_ref + 0.75 * p.candidates[j].billing_rate / *d.c_ref);
    distinct.insert(p.candidates[j].billing_rate);
  }
  EXPECT_GT(distinct.size(), 1u);  // the factors differ: the time model has something to know
  EXPECT_EQ(seen_options.time_model, EngineOptions::TimeModel::automatic);
  // Before any trial succeeded there is no reference, and no factor.
  ClassRecord fresh = make_class(conf, 6);
  fresh.settings.gamma = 0.75;
  decide(fresh, {}, conf, recording_propose);
  EXPECT_FALSE(seen_options.score_factor);
}

// The engine's proposal, as if its step had (not) been a model step that used the time model and
// a failures' edge.
template <bool Modelled, bool TimeModelled, bool Edge = false, bool Form = false>
Proposal step_as(const CandidateSet &cs, const std::vector<Observation> &done, const std::vector<std::size_t> &pending,
                 std::size_t k, const EngineOptions &o) {
  Proposal p = propose(cs, done, pending, k, o);
  p.modelled = Modelled;
  p.time_modelled = TimeModelled;
  p.form_modelled = Form;
  if (Edge) p.failure_edge = EdgeUse{"total-mem", true, 512, 3};
  else p.failure_edge.reset();
  return p;
}

// Whether the last model step used the time model, and the failures' edge it used, are kept for
// autotune show; a step without a model (the initial design, a stop) leaves them as they were.
TEST_F(TunerTest, TheLastModelStepsUseOfTheTimeModelAndItsFailuresEdgeAreKept) {
  ClassRecord c = make_class(conf_of(""), 6);
  add(cfg(1, 1), 100);
  add(cfg(1, 2), 150);
  add(cfg(2, 1), 120);
  Decision d = decide(c, trials_, conf_of(""), step_as<true, true>);
  ASSERT_TRUE(d.extra);
  c.settings.extra = *d.extra;
  EXPECT_TRUE(class_extra(c).time_modelled);
  d = decide(c, trials_, conf_of(""), step_as<false, false>);
  EXPECT_FALSE(d.extra) << *d.extra;  // nothing to store: the flag stays
  d = decide(c, trials_, conf_of(""), step_as<true, false>);
  ASSERT_TRUE(d.extra);
  c.settings.extra = *d.extra;
  EXPECT_FALSE(class_extra(c).time_modelled);
  // The failures' edge: kept, left by a step without a model, cleared by a model step without.
  d = decide(c, trials_, conf_of(""), step_as<true, false, true>);
  ASSERT_TRUE(d.extra);
  c.settings.extra = *d.extra;
  ASSERT_TRUE(class_extra(c).failure_edge);
  EXPECT_EQ(*class_extra(c).failure_edge, (EdgeUse{"total-mem", true, 512, 3}));
  d = decide(c, trials_, conf_of(""), step_as<false, false>);
  EXPECT_FALSE(d.extra) << *d.extra;
  d = decide(c, trials_, conf_of(""), step_as<true, false, true>);
  EXPECT_FALSE(d.extra) << *d.extra;  // the same edge: nothing to store
  d = decide(c, trials_, conf_of(""), step_as<true, false>);
  ASSERT_TRUE(d.extra);
  c.settings.extra = *d.extra;
  EXPECT_FALSE(class_extra(c).failure_edge);
  // Whether the run time's form proposed: kept, left by a step without a model, cleared by a
  // model step without it.
  d = decide(c, trials_, conf_of(""), step_as<true, false, false, true>);
  ASSERT_TRUE(d.extra);
  c.settings.extra = *d.extra;
  EXPECT_TRUE(class_extra(c).form_modelled);
  d = decide(c, trials_, conf_of(""), step_as<false, false>);
  EXPECT_FALSE(d.extra) << *d.extra;
  EXPECT_TRUE(class_extra(c).form_modelled);
  d = decide(c, trials_, conf_of(""), step_as<true, false>);
  ASSERT_TRUE(d.extra);
  c.settings.extra = *d.extra;
  EXPECT_FALSE(class_extra(c).form_modelled);
}

// A pending trial whose job ended before it started (or is gone from slurmctld) is abandoned; one
// whose job still waits, one that started (it has a job id) and a fresh one are kept.
TEST(AbandonedTrials, OnlyTrialsWhoseJobWillNeverRun) {
  auto trial = [](std::int64_t id, TrialStatus st, double created, std::optional<std::int64_t> job = std::nullopt) {
    TrialRecord t;
    t.id = t.seq = static_cast<int>(id);
    t.status = st;
    t.created = created;
    t.job_id = job;
    return t;
  };
  const std::vector<TrialRecord> trials = {
      trial(1, TrialStatus::pending, 100),          // its job was cancelled while pending
      trial(2, TrialStatus::pending, 100),          // its job still waits
      trial(3, TrialStatus::pending, 100),          // no job names it, taken 900 s ago: gone
      trial(4, TrialStatus::pending, 990),          // no job names it yet, taken 10 s ago
      trial(5, TrialStatus::running, 100, 55),      // started
      trial(6, TrialStatus::done, 100, 56),         // finished
      trial(7, TrialStatus::pending, 100),          // two records of its job: one ended, one waiting
      trial(8, TrialStatus::pending, 100, 58),      // requeued re-measurement of a best: named by job id
      trial(9, TrialStatus::pending, 100, 59),      // the same, but its job was then cancelled
  };
  const std::vector<TrialJob> jobs = {{1, 51, true}, {2, 52, false}, {5, 55, true}, {6, 56, true},
                                      {7, 57, true}, {7, 57, false}, {0, 58, false}, {0, 59, true}};
  EXPECT_EQ(abandoned_trials(trials, jobs, 1000, 60), (std::vector<std::int64_t>{1, 3, 9}));
  EXPECT_EQ(abandoned_trials(trials, jobs, 1000, 1000), (std::vector<std::int64_t>{1, 9}));
  EXPECT_TRUE(abandoned_trials(trials, {{1, 51, false}, {2, 52, false}, {3, 53, false}, {7, 57, false}, {0, 58, false},
                                        {0, 59, false}},
                               1000, 2000)
                  .empty());
}

// Warm start across classes (tuner.hpp history_classes, decide with history): a class learns
// from its owner's classes of the same space, never from another user's unless an administrator
// offered it, and the decision names the classes that informed it.
class HistoryStore : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/autotune-history-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store_.emplace(Store::path_in(dir_), Store::Options{true, false, 1000});
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  // A class of `owner` like make_class()'s (or with another space), with its four candidates
  // measured when `measured` (at these rates).
  ClassRecord add_class(std::uint32_t owner, const std::string &name, bool measured,
                        const std::string &space_text = "",
                        std::array<double, 4> rate = {100, 200, 150, 400}) {
    ClassRecord proto = make_class(conf_);
    ClassSettings s = proto.settings;
    if (!space_text.empty()) {
      ClassExtra x = class_extra(proto);
      x.space = space_text;
      s.extra = format_class_extra(x);
      s.space = space_text;
    }
    const ClassRecord c = store_->ensure_class(owner, name, s);
    if (measured) {
      int k = 0;
      for (int nodes : {1, 2})
        for (int workers : {1, 2}) {
          const TrialRecord t = store_->add_trial(c.id, cfg(nodes, workers), TrialOrigin::model, "test",
                                                  TrialStatus::running);
          Measurement m;
          m.samples_per_s = rate[k++];
          store_->finish_trial(t.id, TrialStatus::done, m, 100.0 + k);
        }
    }
    return *store_->find_class_by_id(c.id);
  }
  // Finished trials of class `class_id`, in order: each configuration with its samples/s (0: it
  // failed).
  static std::vector<TrialRecord> finished(std::int64_t class_id,
                                           const std::vector<std::pair<std::string, double>> &measured) {
    std::vector<TrialRecord> trials;
    for (const auto &[config, rate] : measured) {
      TrialRecord t;
      t.id = t.seq = static_cast<int>(trials.size()) + 1;
      t.class_id = class_id;
      t.config = config;
      t.created = t.seq;
      t.ended = t.seq + 0.5;
      t.status = rate > 0 ? TrialStatus::done : TrialStatus::failed;
      if (rate > 0) {
        Measurement m;
        m.samples_per_s = rate;
        t.measurement = m;
      }
      trials.push_back(t);
    }
    return trials;
  }
  static std::vector<std::string> names(const std::vector<HistoryClass> &h) {
    std::vector<std::string> out;
    for (const auto &c : h) out.push_back(std::to_string(c.cls.owner) + "/" + c.cls.name);
    return out;
  }
  Conf conf_ = conf_of("");
  std::string dir_;
  std::optional<Store> store_;
};

TEST_F(HistoryStore, OwnMatchingClassesOnlyUnlessOffered) {
  add_class(1001, "old", true);
  add_class(1001, "other-space", true,
            "nodes=1|2,workers=1|2,ps=1,cpus-per-worker=1|2,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  add_class(1001, "unmeasured", false);
  const ClassRecord mine = add_class(1001, "new", false);
  const ClassRecord theirs = add_class(1002, "new", false);
  EXPECT_EQ(names(history_classes(*store_, mine)), std::vector<std::string>{"1001/old"});
  EXPECT_TRUE(history_classes(*store_, theirs).empty());

  const ClassRecord old = *store_->find_class(1001, "old");
  store_->set_history_shared(old.id, true);
  EXPECT_TRUE(class_extra(*store_->find_class_by_id(old.id)).history_shared);
  EXPECT_EQ(names(history_classes(*store_, theirs)), std::vector<std::string>{"1001/old"});
  store_->set_history_shared(old.id, false);
  EXPECT_TRUE(history_classes(*store_, theirs).empty());

  // The decision of the new class names the class that informed it, with the weights.
  const std::vector<HistoryClass> h = history_classes(*store_, mine);
  const Decision d = decide(mine, {}, conf_, propose, &h, prepare_warm_start);
  ASSERT_TRUE(d.extra);
  ClassRecord after = mine;
  after.settings.extra = *d.extra;
  const ClassExtra x = class_extra(after);
  ASSERT_EQ(x.history.size(), 1u);
  EXPECT_EQ(x.history[0].name, "old");
  EXPECT_EQ(x.history[0].owner, 1001u);
  EXPECT_NEAR(x.history[0].weight + x.own_weight.value_or(0), 1.0, 1e-9);
  // No failed trial in the history: nothing to trust about where runs fail (autotune show says
  // nothing of it); the key reads back as written.
  ASSERT_TRUE(x.history_failure_trust);
  EXPECT_EQ(*x.history_failure_trust, 0.0);
  ClassExtra y = x;
  y.history_failure_trust = 0.75;
  after.settings.extra = format_class_extra(y);
  EXPECT_EQ(class_extra(after).history_failure_trust.value_or(-1), 0.75);
  ASSERT_FALSE(d.queue.empty());
  // Its first proposal is the history's best: (2,2), the fastest of the old class.
  EXPECT_EQ(d.queue[0].config, cfg(2, 2));
  EXPECT_EQ(d.queue[0].reason, "warm start: the best predicted by the classes it learns from");
}

// An earlier class whose best configuration fails in the new class: once the new class has its
// own model, the earlier class gets no weight, and the class's settings say why (autotune show).
TEST_F(HistoryStore, AClassWhoseBestFailsHereHasNoWeight) {
  const std::string space =
      "nodes=1|2|3,workers=1|2|3,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
  add_class(1001, "old", true, space);  // (2,2) the fastest, at 400 samples/s
  ClassRecord mine = add_class(1001, "new", false, space);
  mine.settings.budget = 12;
  {
    ClassExtra x = class_extra(mine);
    x.epoch_budget = 12;
    mine.settings.extra = format_class_extra(x);
  }
  const std::vector<HistoryClass> h = history_classes(*store_, mine);
  ASSERT_EQ(h.size(), 1u);
  auto decide_with = [&](double rate_2_2) {
    const std::vector<TrialRecord> trials =
        finished(mine.id, {{cfg(2, 2), rate_2_2}, {cfg(1, 1), 100}, {cfg(1, 2), 200}, {cfg(2, 1), 150}});
    const Decision d = decide(mine, trials, conf_, propose, &h, prepare_warm_start);
    EXPECT_TRUE(d.extra);
    ClassRecord after = mine;
    after.settings.extra = d.extra.value_or(mine.settings.extra);
    return class_extra(after);
  };
  const ClassExtra failed = decide_with(0);
  ASSERT_EQ(failed.history.size(), 1u);
  EXPECT_EQ(failed.history[0].name, "old");
  EXPECT_TRUE(failed.history_top_failed);
  EXPECT_EQ(failed.history[0].weight, 0.0);
  EXPECT_EQ(failed.own_weight.value_or(0), 1.0);
  // Where the earlier class's best runs, it is not flagged (and the key is not written).
  const ClassExtra ran = decide_with(420);
  ASSERT_EQ(ran.history.size(), 1u);
  EXPECT_FALSE(ran.history_top_failed);
  EXPECT_NEAR(ran.history[0].weight + ran.own_weight.value_or(0), 1.0, 1e-9);
}

std::shared_ptr<const WarmStart> prepared;  // what recording_warm() last prepared
std::shared_ptr<const WarmStart> recording_warm(const CandidateSet &cs, const std::vector<HistoryProblem> &h,
                                                const EngineOptions &o) {
  prepared = prepare_warm_start(cs, h, o);
  return prepared;
}

// The earlier class's run times reach the warm start (its time bases), and once the new class
// has its references, its search at gamma 0.5 sees them times its score factors
// (EngineOptions::history_time_model); at gamma 1 the earlier class's scores as they are.
TEST_F(HistoryStore, TheEarlierClassesRunTimesTimesTheFactorsBetweenTheEnds) {
  add_class(1001, "old", true);
  ClassRecord mine = add_class(1001, "new", false);
  const std::vector<HistoryClass> h = history_classes(*store_, mine);
  ASSERT_EQ(h.size(), 1u);
  const std::vector<TrialRecord> trials = finished(mine.id, {{cfg(1, 1), 90}, {cfg(2, 1), 160}});
  mine.settings.gamma = 0.5;
  decide(mine, trials, conf_, recording_propose, &h, recording_warm);
  ASSERT_TRUE(prepared && prepared->size() == 1);
  ASSERT_EQ(prepared->log_time_mean.size(), 1u);
  ASSERT_TRUE(seen_options.score_factor && seen_options.history);
  EXPECT_NE(seen_options.history, prepared);
  const auto expect = time_scored(prepared, *seen_options.score_factor);
  ASSERT_EQ(seen_options.history->mean[0].size(), expect->mean[0].size());
  EXPECT_LT((seen_options.history->mean[0] - expect->mean[0]).cwiseAbs().maxCoeff(), 1e-12);
  mine.settings.gamma = 1;
  decide(mine, trials, conf_, recording_propose, &h, recording_warm);
  EXPECT_EQ(seen_options.history, prepared);
  // Before the class has a success there are no factors, and the scores are used.
  mine.settings.gamma = 0.5;
  decide(mine, {}, conf_, recording_propose, &h, recording_warm);
  EXPECT_FALSE(seen_options.score_factor);
  EXPECT_EQ(seen_options.history, prepared);
}

// Two earlier classes that order the same configurations oppositely do not predict each other:
// they are set aside, named with their coherence, and the new class searches cold.
TEST_F(HistoryStore, ClassesThatDisagreeAreSetAside) {
  add_class(1001, "old", true);
  add_class(1001, "reversed", true, "", {400, 150, 200, 100});
  const ClassRecord mine = add_class(1001, "new", false);
  const std::vector<HistoryClass> h = history_classes(*store_, mine);
  ASSERT_EQ(h.size(), 2u);
  const Decision d = decide(mine, {}, conf_, propose, &h, prepare_warm_start);
  ASSERT_TRUE(d.extra);
  ClassRecord after = mine;
  after.settings.extra = *d.extra;
  const ClassExtra x = class_extra(after);
  EXPECT_TRUE(x.history.empty());
  EXPECT_FALSE(x.own_weight);
  ASSERT_EQ(x.history_set_aside.size(), 2u);
  std::set<std::string> set_aside;
  for (const auto &u : x.history_set_aside) {
    set_aside.insert(u.name);
    EXPECT_EQ(u.owner, 1001u);
  }
  EXPECT_EQ(set_aside, (std::set<std::string>{"old", "reversed"}));
  ASSERT_TRUE(x.history_coherence);
  EXPECT_LT(*x.history_coherence, kHistoryCoherenceMin);
  ASSERT_FALSE(d.queue.empty());
  EXPECT_NE(d.queue[0].reason, "warm start: the best predicted by the classes it learns from");
  // Without the earlier classes the decision is the same.
  const Decision cold = decide(mine, {}, conf_, propose);
  ASSERT_EQ(cold.queue.size(), d.queue.size());
  for (size_t i = 0; i < d.queue.size(); ++i) EXPECT_EQ(cold.queue[i].config, d.queue[i].config);
}
