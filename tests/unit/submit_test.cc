// at_submit() for a converged class answers from memory while the store is unchanged, and
// reads the store again as soon as anything changed it: ingest recording a new best from another
// connection, or the class being forgotten.  Job arrays wait until their class has converged.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "autotune/autotune.h"
#include "autotune/config.hpp"
#include "autotune/space.hpp"
#include "autotune/store.hpp"
#include "submit_fixture.hpp"

using namespace autotune;

namespace {

std::string stats() {
  char buf[512];
  at_submit_stats(buf, sizeof buf);
  return buf;
}

// "K answers for converged classes from memory" -> K
long from_memory() {
  const std::string s = stats();
  const auto end = s.find(" answers for converged classes from memory");
  if (end == std::string::npos) return -1;
  const auto start = s.rfind(' ', end - 1);
  return std::stol(s.substr(start + 1, end - start - 1));
}

class SubmitCache : public test::SubmitFixture {
 protected:
  at_submit_decision submit(const std::string &cls) {
    return submit_env(kUid, {"AUTOTUNE_CLASS=" + cls, "AUTOTUNE_SPACE=nodes=1-2,workers=1-2,ps=1,cpus-per-worker=1-2"});
  }

  // What ingest does, from a connection of its own: the trial ran and measured `samples_per_s`;
  // the class converges on `best`.
  void finish_and_converge(Store &s, std::int64_t trial_id, double samples_per_s, std::int64_t best,
                           const std::string &cls = "sweep",
                           std::vector<std::pair<std::int64_t, double>> scores = {}) {
    Measurement m;
    m.samples_per_s = samples_per_s;
    m.time_s = 1 / samples_per_s;
    m.cost = 2 / samples_per_s;
    ASSERT_TRUE(s.finish_trial(trial_id, TrialStatus::done, m, 1.0));
    auto c = s.find_class(kUid, cls);
    Decision d;
    d.state = ClassState::converged;
    d.best_trial = best;
    d.t_ref = 0.001;
    d.c_ref = 0.002;
    d.scores = std::move(scores);
    ASSERT_TRUE(s.apply_decision(c->id, c->version, d));
  }

  static constexpr unsigned kUid = 4242;
};

TEST_F(SubmitCache, ConvergedAnswerFollowsChangesMadeByOtherConnections) {
  // Two jobs of a new class get two trials of the initial design.
  for (const char *want : {" trial=1 ", " trial=2 "}) {
    const at_submit_decision d = submit("sweep");
    ASSERT_TRUE(d.rewrite);
    EXPECT_NE(std::string(d.admin_comment).find(want), std::string::npos) << d.admin_comment;
  }
  Store s(Store::path_in(state_dir()), {false, false, 1000});
  const auto c = s.find_class(kUid, "sweep");
  ASSERT_TRUE(c);
  const std::vector<TrialRecord> trials = s.trials(c->id);
  ASSERT_EQ(trials.size(), 2u);
  const TrialRecord &t1 = trials[0], &t2 = trials[1];
  ASSERT_NE(t1.config, t2.config);
  finish_and_converge(s, t1.id, 1000, t1.id);

  const long before = from_memory();
  const at_submit_decision a = submit("sweep");
  EXPECT_NE(std::string(a.admin_comment).find("best config=" + t1.config + " from 1 trials"), std::string::npos)
      << a.admin_comment;
  const at_submit_decision b = submit("sweep");
  EXPECT_STREQ(b.admin_comment, a.admin_comment);
  EXPECT_EQ(b.nodes, a.nodes);
  EXPECT_EQ(b.ntasks, a.ntasks);
  EXPECT_EQ(b.cpus_per_task, a.cpus_per_task);
  EXPECT_EQ(b.mem_per_cpu_mb, a.mem_per_cpu_mb);
  EXPECT_EQ(b.env_count, a.env_count);
  EXPECT_EQ(from_memory(), before + 1) << stats();

  // Ingest, from another connection, records the second trial, faster, as the new best: the next
  // job of the class runs on it.
  finish_and_converge(s, t2.id, 2000, t2.id);
  const at_submit_decision after = submit("sweep");
  EXPECT_NE(std::string(after.admin_comment).find("best config=" + t2.config + " from 2 trials"), std::string::npos)
      << after.admin_comment;
  EXPECT_EQ(from_memory(), before + 1) << stats();

  // Forgotten by its owner (`autotune forget`): the next job starts a new search.
  ASSERT_TRUE(s.forget_class(kUid, "sweep"));
  const at_submit_decision fresh = submit("sweep");
  EXPECT_NE(std::string(fresh.admin_comment).find(" trial=1 "), std::string::npos) << fresh.admin_comment;
  EXPECT_EQ(std::string(fresh.admin_comment).find("best config"), std::string::npos) << fresh.admin_comment;
}

// A class keeps the limits of the job that created it.  A later job whose QOS or association
// allows less than the class's best configuration (another QOS, another user of a shared class)
// runs the best configuration the class measured within its limits, or as submitted when there
// is none, saying why, rather than waiting for ever; the answer kept in memory is checked against
// each job's own limits too.  Neither run is recorded as a re-measurement of the best: the
// AdminComment does not read "class=C best config=" (what ingest looks for).
TEST_F(SubmitCache, ABestBeyondTheJobsOwnLimitsRunsTheBestMeasuredWithinThem) {
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(submit("small").rewrite);  // the initial design
  Store s(Store::path_in(state_dir()), {false, false, 1000});
  const auto c = s.find_class(kUid, "small");
  ASSERT_TRUE(c);
  const std::vector<TrialRecord> trials = s.trials(c->id);
  ASSERT_EQ(trials.size(), 3u);
  auto cpus_of = [](const std::string &config) {
    const SlurmRequest r = slurm_request(Configuration::parse(config));
    return static_cast<unsigned>(r.ntasks * r.cpus_per_task);
  };
  // The largest of the three becomes the best; a smaller one was measured too, slower.
  const TrialRecord *big = &trials[0], *small = nullptr;
  for (const auto &t : trials)
    if (cpus_of(t.config) > cpus_of(big->config)) big = &t;
  for (const auto &t : trials)
    if (cpus_of(t.config) < cpus_of(big->config) && (!small || cpus_of(t.config) > cpus_of(small->config))) small = &t;
  ASSERT_TRUE(small) << "the initial design has configurations of different sizes";
  Measurement m;
  m.samples_per_s = 500;
  m.time_s = 0.002;
  m.cost = 0.004;
  ASSERT_TRUE(s.finish_trial(small->id, TrialStatus::done, m, 1.0));
  finish_and_converge(s, big->id, 1000, big->id, "small", {{big->id, 1.0}, {small->id, 1.25}});
  const at_submit_decision best = submit("small");
  ASSERT_TRUE(best.rewrite) << best.admin_comment;
  const unsigned cpus = best.ntasks * best.cpus_per_task;
  ASSERT_EQ(cpus, cpus_of(big->config));

  at_accounting_limits a{};
  a.max_cpus = cpus - 1;
  a.text = "QOS tiny: MaxTRESPerJob=cpu=N";
  set_accounting(a);
  const std::string over = "autotune: class=small: best config=" + big->config + " asks for " + std::to_string(cpus) +
                           " CPUs, at most " + std::to_string(cpus - 1) +
                           " by this job's QOS and association limits (QOS tiny: MaxTRESPerJob=cpu=N)";
  for (int k = 0; k < 2; ++k) {  // the class's answer computed, then kept in memory
    const at_submit_decision d = submit("small");
    EXPECT_TRUE(d.is_autotune);
    ASSERT_TRUE(d.rewrite) << d.admin_comment;
    EXPECT_EQ(std::string(d.admin_comment),
              over + "; runs config=" + small->config + ", the best measured within them (score 1.25 against 1)");
    EXPECT_EQ(d.ntasks * d.cpus_per_task, cpus_of(small->config));
    std::string env;
    for (int i = 0; i < d.env_count; ++i) env += std::string(d.env[i]) + "\n";
    EXPECT_NE(env.find("AUTOTUNE_CONFIG=" + small->config + "\n"), std::string::npos) << env;
    EXPECT_EQ(env.find("AUTOTUNE_CONFIG=" + big->config), std::string::npos) << env;
    EXPECT_EQ(env.find("AUTOTUNE_TRIAL="), std::string::npos) << env;
  }
  // Nothing measured within the limits: the job runs as submitted.
  a.max_cpus = cpus_of(small->config) - 1;
  set_accounting(a);
  const at_submit_decision none = submit("small");
  EXPECT_FALSE(none.rewrite) << none.admin_comment;
  const std::string over2 = "autotune: class=small: best config=" + big->config + " asks for " +
                            std::to_string(cpus) + " CPUs, at most " + std::to_string(cpus_of(small->config) - 1) +
                            " by this job's QOS and association limits (QOS tiny: MaxTRESPerJob=cpu=N)";
  EXPECT_EQ(std::string(none.admin_comment), over2 + "; no measured configuration is within them; job runs as submitted");
  for (int i = 0; i < none.env_count; ++i) {
    EXPECT_NE(std::string(none.env[i]).rfind("AUTOTUNE_CONFIG=", 0), 0u) << none.env[i];
    EXPECT_NE(std::string(none.env[i]).rfind("AUTOTUNE_WORKERS=", 0), 0u) << none.env[i];
  }
  // Within its limits, the same class's job gets the best again, from memory.
  a.max_cpus = cpus;
  set_accounting(a);
  const long before = from_memory();
  const at_submit_decision again = submit("small");
  EXPECT_TRUE(again.rewrite) << again.admin_comment;
  EXPECT_STREQ(again.admin_comment, best.admin_comment);
  EXPECT_EQ(from_memory(), before + 1) << stats();
}

// A class whose search ended with every trial failed has nothing to run on: its jobs run as
// submitted, and the AdminComment says why and how to start over (no error in slurmctld's log).
TEST_F(SubmitCache, ClassWithoutASuccessfulTrialRunsJobsAsSubmitted) {
  const at_submit_decision first = submit("broken");
  ASSERT_TRUE(first.rewrite);
  Store s(Store::path_in(state_dir()), {false, false, 1000});
  const auto c = s.find_class(kUid, "broken");
  ASSERT_TRUE(c);
  const TrialRecord t = s.trials(c->id).front();
  ASSERT_TRUE(s.finish_trial(t.id, TrialStatus::failed, std::nullopt, 1.0, "exit code 1"));
  Decision d;
  d.state = ClassState::stale;
  d.state_reason = "stopped by budget without a successful trial";
  ASSERT_TRUE(s.apply_decision(c->id, s.find_class(kUid, "broken")->version, d));
  for (int i = 0; i < 2; ++i) {
    const at_submit_decision a = submit("broken");
    EXPECT_TRUE(a.is_autotune);
    EXPECT_FALSE(a.rewrite);
    EXPECT_NE(std::string(a.admin_comment).find("class=broken: no trial succeeded (1 ended; stopped by budget without a "
                                                "successful trial); job runs as submitted; 'autotune forget broken' "
                                                "starts a new search"),
              std::string::npos)
        << a.admin_comment;
  }
}

}  // namespace

namespace {

// The tasks of a job array share one request: while a class tunes across jobs an array is refused
// (every task would run the same trial); once the class converged, every task runs the best.
TEST_F(SubmitCache, JobArraysAreRefusedWhileTheClassTunes) {
  const std::vector<std::string> env = {"AUTOTUNE_CLASS=arr",
                                        "AUTOTUNE_SPACE=nodes=1-2,workers=1-2,ps=1,cpus-per-worker=1-2"};
  at_submit_decision d;
  std::string err;
  EXPECT_EQ(try_submit(kUid, env, &d, &err, nullptr, {}, true), AT_EINVAL);
  EXPECT_EQ(err, "--autotune: class arr is new: every task of a job array would run the same trial, so arrays are "
                 "refused until the class has converged; submit the tasks as separate jobs, or use "
                 "--autotune-mode=steps");
  const at_submit_decision first = submit_env(kUid, env);  // a single job: trial 1, the class exists now
  ASSERT_TRUE(first.rewrite);
  Store s(Store::path_in(state_dir()), {false, false, 1000});
  EXPECT_EQ(s.trials(s.find_class(kUid, "arr")->id).size(), 1u) << "the refused array created no trial";
  EXPECT_EQ(try_submit(kUid, env, &d, &err, nullptr, {}, true), AT_EINVAL);
  EXPECT_NE(err.find("class arr is still tuning: every task"), std::string::npos) << err;

  const TrialRecord t1 = s.trials(s.find_class(kUid, "arr")->id).at(0);
  finish_and_converge(s, t1.id, 1000, t1.id, "arr");
  ASSERT_EQ(try_submit(kUid, env, &d, &err, nullptr, {}, true), AT_OK) << err;
  EXPECT_TRUE(d.rewrite);
  EXPECT_NE(std::string(d.admin_comment).find("best config=" + t1.config), std::string::npos) << d.admin_comment;

  // In steps mode each task tunes inside its own allocation: arrays are fine.
  ASSERT_EQ(try_submit(kUid, {"AUTOTUNE_CLASS=arrsteps", "AUTOTUNE_MODE=steps"}, &d, &err, nullptr, {}, true), AT_OK)
      << err;
  EXPECT_NE(std::string(d.admin_comment).find("mode=steps"), std::string::npos) << d.admin_comment;
}

// A component of a heterogeneous job is refused in every mode and state: each component would be
// given a configuration (a trial) of its own.
TEST_F(SubmitCache, HeterogeneousJobsAreRefused) {
  at_submit_decision d;
  std::string err;
  for (const char *mode : {"AUTOTUNE_MODE=jobs", "AUTOTUNE_MODE=steps"}) {
    EXPECT_EQ(try_submit(kUid, {"AUTOTUNE_CLASS=het", mode}, &d, &err, nullptr, {}, false, true), AT_EINVAL);
    EXPECT_EQ(err, "--autotune: class het: a heterogeneous job cannot be tuned (each component would be given a "
                   "configuration of its own); submit a job of one component");
  }
  const at_submit_decision one = submit_env(kUid, {"AUTOTUNE_CLASS=het"});
  EXPECT_NE(std::string(one.admin_comment).find("class=het trial=1 "), std::string::npos)
      << "the refused components took no trial: " << one.admin_comment;
}

// job_submit's bounds: every --autotune* value is refused, before it is parsed or enumerated, when
// it is larger than the documented limit, with a message naming the limit and what was asked for;
// nothing is stored for a refused job.
TEST_F(SubmitCache, ValuesBeyondTheLimitsAreRefusedNamingTheLimit) {
  struct Case {
    std::vector<std::string> env;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"AUTOTUNE_CLASS=big", "AUTOTUNE_SPACE=nodes=1-5,workers=1-4050"},
       "--autotune-space: the space has 20250 combinations (5 nodes x 4050 workers); at most 10000 are allowed "
       "(narrow a range or use a step, e.g. 1-64:x2)"},
      {{"AUTOTUNE_CLASS=big", "AUTOTUNE_SPACE=workers=1-1000000"},
       "--autotune-space: workers: '1-1000000' has 1000000 values; at most 4096 are allowed per dimension (use a "
       "larger step, or a factor: LOW-HIGH:x2)"},
      {{"AUTOTUNE_CLASS=big", "AUTOTUNE_SPACE=" + std::string(4097, 'n')},
       "--autotune-space: the value is longer than 4096 characters; at most 4096 are allowed"},
      {{"AUTOTUNE_CLASS=big", "AUTOTUNE_GAMMA=0." + std::string(63, '5')},
       "--autotune-gamma: the value is longer than 64 characters; at most 64 are allowed"},
      {{"AUTOTUNE_CLASS=big", "AUTOTUNE_BUDGET=" + std::string(65, '1')},
       "--autotune-budget: the value is longer than 64 characters; at most 64 are allowed"},
      {{"AUTOTUNE_CLASS=big", "AUTOTUNE_MODE=" + std::string(100000, 'j')},
       "--autotune-mode: the value is longer than 64 characters; at most 64 are allowed"},
      {{"AUTOTUNE_CLASS=big", "AUTOTUNE_PROBE_BATCHES=" + std::string(65, '1')},
       "--autotune-probe-batches: the value is longer than 64 characters; at most 64 are allowed"},
      {{"AUTOTUNE_CLASS=" + std::string(4097, 'c')},
       "--autotune: the class name is longer than 4096 characters; allowed: 1-64 characters from A-Z a-z 0-9 . _ -"},
      {{"AUTOTUNE_CLASS=" + std::string(65, 'c')},
       "--autotune: the class name is 65 characters long; allowed: 1-64 characters from A-Z a-z 0-9 . _ -"},
  };
  for (const Case &c : cases) {
    at_submit_decision d;
    std::string err;
    EXPECT_EQ(try_submit(kUid, c.env, &d, &err), AT_EINVAL) << c.message;
    EXPECT_EQ(err, c.message);
  }
  // At the limits: accepted.
  EXPECT_NE(std::string(submit_env(kUid, {"AUTOTUNE_CLASS=big", "AUTOTUNE_GAMMA=0." + std::string(62, '5')})
                            .admin_comment)
                .find("class=big trial=1 "),
            std::string::npos);
  Store s(Store::path_in(state_dir()), {false, false, 1000});
  EXPECT_EQ(s.list_classes().size(), 1u) << "only the accepted job created a class";
}

TEST_F(SubmitCache, ALargeSpaceGetsItsFirstConfigurationsFromASample) {
  // 4 x 4 x 2 x 250 = 8000 combinations; on four 2-CPU nodes of 4000 MB, more than kNewClassPool
  // of them fit.  The new class's queue holds configurations of the space that fit the nodes.
  const at_submit_decision d = submit_env(
      kUid, {"AUTOTUNE_CLASS=wide", "AUTOTUNE_SPACE=nodes=1-4,workers=1-4,cpus-per-worker=1-2,mem-per-worker=1M-250M:1M"});
  ASSERT_TRUE(d.rewrite);
  Store s(Store::path_in(state_dir()), {false, false, 1000});
  const auto c = s.find_class(kUid, "wide");
  ASSERT_TRUE(c.has_value());
  const auto queue = s.queue(c->id);
  ASSERT_FALSE(queue.empty());
  const NodeType node{"cpus2-mem4000", 4, 2, 4000, 0, {}, 1.0};
  std::vector<std::string> configs = {s.trials(c->id).at(0).config};
  for (const auto &r : queue) configs.push_back(r.config);
  for (const auto &text : configs) {
    const Configuration cfg = Configuration::parse(text);
    EXPECT_TRUE(fits(cfg, node)) << text;
    EXPECT_LE(cfg.worker.mem_mb, 250u) << text;
    EXPECT_LE(cfg.counts.workers, 4) << text;
  }
  // Spread out: not all the same memory size (a sample of the whole space, not its first rows).
  std::set<std::uint64_t> mems;
  for (const auto &text : configs) mems.insert(Configuration::parse(text).worker.mem_mb);
  EXPECT_GT(mems.size(), 1u);
}

}  // namespace

// --autotune-metric: fixed when the class is created, shown last in the AdminComment; bad values,
// and time in steps mode, refused naming the option.
TEST_F(SubmitCache, MetricIsFixedAtCreationAndValidated) {
  at_submit_decision d;
  std::string err;
  const at_submit_decision open = submit_env(kUid, {"AUTOTUNE_CLASS=m2"});
  const std::string c2 = open.admin_comment;
  EXPECT_EQ(c2.substr(c2.size() - 12), " metric=auto") << c2;
  EXPECT_EQ(try_submit(kUid, {"AUTOTUNE_CLASS=m1", "AUTOTUNE_METRIC=speed"}, &d, &err), AT_EINVAL);
  EXPECT_EQ(err, "--autotune-metric: 'speed' is not one of: time, throughput");
  EXPECT_EQ(try_submit(kUid, {"AUTOTUNE_CLASS=m1", "AUTOTUNE_METRIC=time", "AUTOTUNE_MODE=steps"}, &d, &err), AT_EINVAL);
  EXPECT_EQ(err.rfind("--autotune-metric: 'time' measures a job's whole run, but in steps mode", 0), 0u) << err;
  EXPECT_EQ(try_submit(kUid, {"AUTOTUNE_METRIC=time"}, &d, &err), AT_EINVAL);
  EXPECT_EQ(err, "--autotune-metric needs --autotune=CLASS");
  Store s(Store::path_in(state_dir()), {false, false, 1000});
  EXPECT_FALSE(s.find_class(kUid, "m1")) << "a refused job creates no class";

  const at_submit_decision timed = submit_env(kUid, {"AUTOTUNE_CLASS=m1", "AUTOTUNE_METRIC=time"});
  const std::string c1 = timed.admin_comment;
  EXPECT_EQ(c1.substr(c1.size() - 12), " metric=time") << c1;
  EXPECT_EQ(s.find_class(kUid, "m1")->settings.metric, ClassMetric::time);
  // A later job's option does not change the class.
  submit_env(kUid, {"AUTOTUNE_CLASS=m1", "AUTOTUNE_METRIC=throughput"});
  EXPECT_EQ(s.find_class(kUid, "m1")->settings.metric, ClassMetric::time);
  EXPECT_EQ(s.find_class(kUid, "m2")->settings.metric, ClassMetric::automatic);
}
