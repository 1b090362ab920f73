// In-allocation tuning (steps.hpp): the allocation, the search inside it, the summary it leaves,
// and how the class converges on its winner (tuner.hpp converge_on).
#include "autotune/optimizer.hpp"
#include "autotune/steps.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/result.hpp"

using namespace autotune;

namespace {

// A class as job_submit creates it on the local cluster: 4 nodes of 2 CPUs and 4000 MB.
ClassRecord make_class(const std::string &space, int budget, double gamma = 0.0,
                       const std::string &billing = "") {
  Inventory inv;
  NodeType t;
  t.name = "n";
  t.count = 4;
  t.cpus = 2;
  t.mem_mb = 4000;
  inv.types.push_back(t);
  ClassRecord c;
  c.id = 7;
  c.name = "steps";
  c.settings.space = space;
  c.settings.gamma = gamma;
  c.settings.budget = budget;
  c.settings.mode = ClassMode::steps;
  c.settings.extra = make_class_extra(SpaceSpec::parse(space), inv, billing, Conf::defaults(),
                                      static_cast<std::size_t>(budget), 11);
  return c;
}

Allocation alloc(int nodes, int cpus = 2, std::uint64_t mem = 4000) {
  Allocation a;
  a.nodes = nodes;
  a.cpus_per_node = cpus;
  a.mem_per_node_mb = mem;
  return a;
}

// A made-up throughput: more workers help, parameter servers are needed, extra nodes cost.
double throughput(const Configuration &c) {
  return 1000.0 * c.counts.workers * (c.counts.servers > 0 ? 1.0 : 0.5) /
         (1.0 + 0.3 * (c.counts.nodes - 1));
}

TrialRecord trial(std::int64_t id, const std::string &config, TrialStatus st, double sps,
                  double ended) {
  TrialRecord t;
  t.id = id;
  t.class_id = 7;
  t.seq = static_cast<int>(id);
  t.config = config;
  t.status = st;
  t.created = ended - 1;
  t.ended = ended;
  if (st == TrialStatus::done) {
    Measurement m;
    m.samples_per_s = sps;
    t.measurement = m;
  }
  return t;
}

const char kSpace[] = "nodes=1-4,workers=1-4,ps=0-1,cpus-per-worker=1-2,mem-per-worker=256M";

}  // namespace

TEST(Allocation, CpusPerNode) {
  EXPECT_EQ(parse_cpus_per_node("SLURM_JOB_CPUS_PER_NODE", "2(x3),1"),
            (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(parse_cpus_per_node("f", "4"), (std::vector<int>{4}));
  EXPECT_EQ(parse_cpus_per_node("f", "8,4(x2)"), (std::vector<int>{8, 4, 4}));
  for (const char *bad : {"", "2(3)", "x", "2(x0)", "2,,1", "2(x3"}) {
    try {
      parse_cpus_per_node("SLURM_JOB_CPUS_PER_NODE", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_EQ(std::string(e.what()).rfind("SLURM_JOB_CPUS_PER_NODE", 0), 0u) << e.what();
    }
  }
  EXPECT_EQ(alloc(4).describe(), "4 nodes x 2 CPUs, 4000 MB");
}

TEST(Allocation, Fits) {
  auto c = Configuration::parse(
      "nodes=2,workers=3,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  EXPECT_TRUE(fits(c, alloc(2)));
  EXPECT_FALSE(fits(c, alloc(1)));          // needs 2 nodes
  EXPECT_FALSE(fits(c, alloc(2, 1)));       // 2 tasks per node, 1 CPU each
  EXPECT_FALSE(fits(c, alloc(2, 2, 500)));  // 2 x 256 MB per node
  c.server.cpus = 2;                        // every task gets 2 CPUs: 4 per node
  EXPECT_FALSE(fits(c, alloc(4)));
}

TEST(AllocationSearch, CandidatesFitTheAllocationAndTheSearchStopsByTheBudget) {
  const ClassRecord c = make_class(kSpace, 5);
  AllocationSearch s(c, {}, alloc(2), propose);
  ASSERT_FALSE(s.candidates().empty());
  for (const auto &x : s.candidates()) EXPECT_TRUE(fits(x, alloc(2))) << x.format();
  EXPECT_EQ(s.budget(), 5u);
  EXPECT_EQ(s.used_before(), 0u);
  std::set<std::string> seen;
  int n = 0;
  for (;;) {
    auto next = s.next();
    if (!next.config) {
      EXPECT_EQ(next.stop_rule, "budget");
      break;
    }
    ASSERT_TRUE(s.is_candidate(*next.config));
    EXPECT_TRUE(seen.insert(next.config->format()).second)
        << "proposed twice: " << next.config->format();
    // gamma 0 and numeric features, no warm start: the smaller design (design.hpp).
    const bool design = n < static_cast<int>(kSmallDesign);
    EXPECT_EQ(next.origin, design ? TrialOrigin::initial : TrialOrigin::model);
    auto score = s.record(*next.config, throughput(*next.config), false);
    ASSERT_TRUE(score);
    if (n == 0) {
      EXPECT_DOUBLE_EQ(*score, 1.0);  // the first measured trial is the reference
    }
    ++n;
  }
  EXPECT_EQ(n, 5);
  EXPECT_EQ(s.recorded(), 5u);
  auto best = s.best();
  ASSERT_TRUE(best);
  EXPECT_TRUE(best->here);
  for (const auto &cfg : seen)
    EXPECT_LE(throughput(Configuration::parse(cfg)), best->samples_per_s + 1e-9) << cfg;
}

TEST(AllocationSearch, RankedByMeanScoreSoASecondProfileCanChangeTheWinner) {
  const ClassRecord c = make_class(kSpace, 3);
  AllocationSearch s(c, {}, alloc(2), propose);
  std::vector<Configuration> tried;
  for (auto n = s.next(); n.config; n = s.next()) {
    tried.push_back(*n.config);
    s.record(*n.config, 1000.0 * static_cast<double>(tried.size()), false);  // the last is fastest
  }
  ASSERT_EQ(tried.size(), 3u);
  auto r = s.ranked();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].config, tried[2]);
  EXPECT_EQ(r[1].config, tried[1]);
  EXPECT_EQ(r[0].measured, 1);
  EXPECT_LT(r[0].score, r[1].score);
  // The lucky profile of the leader is followed by a slow one: the runner-up wins on the mean.
  s.record(tried[2], 1000.0, false);
  s.record(tried[1], 2000.0, false);
  r = s.ranked();
  EXPECT_EQ(r[0].config, tried[1]);
  EXPECT_EQ(r[0].measured, 2);
  EXPECT_EQ(s.best()->config, tried[1]);
}

TEST(AllocationSearch, WarmStartFromTheClassHistory) {
  const ClassRecord c = make_class(kSpace, 6);
  const std::string a =
      "nodes=1,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
  const std::string b =
      "nodes=2,workers=2,ps=0,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
  const std::string bad =
      "nodes=1,workers=2,ps=0,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
  const std::string wide =
      "nodes=4,workers=4,ps=0,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
  std::vector<TrialRecord> h = {
      trial(1, a, TrialStatus::done, 900, 100), trial(2, b, TrialStatus::done, 1500, 101),
      trial(3, bad, TrialStatus::failed, 0, 102), trial(4, wide, TrialStatus::done, 9000, 103)};
  AllocationSearch s(c, h, alloc(2), propose);
  EXPECT_EQ(s.used_before(), 3u);  // the 4-node trial does not fit: not counted here
  EXPECT_TRUE(s.tried(Configuration::parse(bad)));
  auto best = s.best();
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config.format(), b);  // the fastest that fits (gamma 0), from the history
  EXPECT_FALSE(best->here);
  std::set<std::string> proposed;
  for (;;) {
    auto next = s.next();
    if (!next.config) {
      EXPECT_EQ(next.stop_rule, "budget");
      break;
    }
    const std::string f = next.config->format();
    EXPECT_NE(f, a);
    EXPECT_NE(f, b);
    EXPECT_NE(f, bad);  // a failed configuration is never proposed again
    proposed.insert(f);
    s.record(*next.config, throughput(*next.config), false);
  }
  EXPECT_EQ(proposed.size(), 3u);  // 6 - 3 used by the history
}

TEST(AllocationSearch, FailuresAndTimeoutsCountAndExhaustion) {
  // A space of two configurations that fit one node.
  const ClassRecord c =
      make_class("nodes=1,workers=1-2,ps=0,cpus-per-worker=1,mem-per-worker=256M", 10);
  AllocationSearch s(c, {}, alloc(1), propose);
  EXPECT_EQ(s.candidates().size(), 2u);
  auto n1 = s.next();
  ASSERT_TRUE(n1.config);
  EXPECT_FALSE(s.record(*n1.config, std::nullopt, true));  // timed out: no score
  auto n2 = s.next();
  ASSERT_TRUE(n2.config);
  EXPECT_NE(n1.config->format(), n2.config->format());
  EXPECT_TRUE(s.record(*n2.config, 500.0, false));
  auto n3 = s.next();
  EXPECT_FALSE(n3.config);
  EXPECT_EQ(n3.stop_rule, "exhausted");
  ASSERT_TRUE(s.best());
  EXPECT_EQ(s.best()->config.format(), n2.config->format());
}

TEST(AllocationSearch, NothingFits) {
  const ClassRecord c = make_class("nodes=2-4,workers=2-4,mem-per-worker=256M", 5);
  try {
    AllocationSearch s(c, {}, alloc(1, 1, 100), propose);
    FAIL() << "a search without candidates";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("no configuration of class steps's space fits this job's "
                                         "allocation (1 node x 1 CPU, 100 MB)"),
              std::string::npos)
        << e.what();
  }
}

TEST(AllocationSearch, CostUsesThePartitionsBillingWeights) {
  // gamma 1: cost only.  With memory billed heavily, the cheapest is the one with the least memory.
  ClassRecord c = make_class("nodes=1,workers=1,ps=0,cpus-per-worker=1,mem-per-worker=256M-1G", 3,
                             1.0, "CPU=1.0,Mem=4G");
  AllocationSearch s(c, {}, alloc(1), propose);
  ASSERT_EQ(s.candidates().size(), 3u);
  const double r256 =
      billing_rate(Configuration::parse("nodes=1,workers=1,ps=0,cpus-per-worker=1,mem-per-worker="
                                        "256M,cpus-per-ps=1,mem-per-ps=256M"),
                   s.problem().billing);
  EXPECT_DOUBLE_EQ(r256, 1.0 + 4.0 * 256 / 1024);
  for (int i = 0; i < 3; ++i) {
    auto n = s.next();
    ASSERT_TRUE(n.config);
    s.record(*n.config, 1000.0, false);  // the same speed for all
  }
  ASSERT_TRUE(s.best());
  EXPECT_EQ(s.best()->config.worker.mem_mb, 256u);
}

TEST(SearchSummary, ParseAndReject) {
  auto s = parse_search_summary(
      R"({"format":"autotune-search/1","stop_rule":"budget","reason":"6 trials","winner":"nodes=1,workers=1,ps=0,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M","trials":6})");
  EXPECT_EQ(s.stop_rule, "budget");
  EXPECT_EQ(s.trials, 6);
  EXPECT_EQ(s.reason, "6 trials");
  auto err = [](const std::string &t) {
    try {
      parse_search_summary(t);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(err(R"({"format":"autotune-search/1","stop_rule":"later"})"),
            "search: stop_rule: 'later' is not one of budget, exhausted, improvement, ei, none");
  EXPECT_EQ(err(R"({"format":"x","stop_rule":"budget"})"),
            "search: format: 'x' is not autotune-search/1");
  EXPECT_EQ(err(R"({"format":"autotune-search/1","stop_rule":"budget","trials":-1})"),
            "search: trials: is not a whole number from 0 to 1000000");
  EXPECT_EQ(err("[1]"), "search: is not a JSON object");
}

TEST(ConvergeOn, TheJobsWinnerBecomesTheClassBest) {
  ClassRecord c = make_class(kSpace, 10);
  const std::string a =
      "nodes=1,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
  const std::string b =
      "nodes=2,workers=2,ps=0,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";
  std::vector<TrialRecord> t = {trial(1, a, TrialStatus::done, 1000, 100),
                                trial(2, b, TrialStatus::done, 800, 101),
                                trial(3, b, TrialStatus::done, 700, 102)};
  t[2].job_id = 42;
  Decision d = converge_on(c, t, Conf::defaults(), propose, b, 42, "exhausted",
                           "stopped by exhausted in the allocation of job 42");
  EXPECT_EQ(d.state, ClassState::converged);
  EXPECT_EQ(d.stop_rule, "exhausted");
  ASSERT_TRUE(d.best_trial);
  EXPECT_EQ(*d.best_trial, 3);  // the job's own trial of the winner
  ASSERT_EQ(d.queue.size(), 1u);
  EXPECT_EQ(d.queue[0].config, b);
  EXPECT_EQ(d.queue[0].origin, TrialOrigin::best);
  EXPECT_THROW(converge_on(c, t, Conf::defaults(), propose,
                           "nodes=3,workers=3,ps=0,cpus-per-worker=1,mem-per-worker=256M,cpus-per-"
                           "ps=1,mem-per-ps=256M",
                           42, "budget", ""),
               Error);
  c.state = ClassState::converged;
  c.best_trial = 1;
  d = converge_on(c, t, Conf::defaults(), propose, b, 42, "budget", "");
  EXPECT_EQ(*d.best_trial, 1);  // a converged class is left alone
}
