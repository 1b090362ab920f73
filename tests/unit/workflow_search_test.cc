// The workflow search and its replay: valid proposals, stopping, the exact optimum.
#include "autotune/workflow_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "autotune/design.hpp"
#include "autotune/error.hpp"
#include "autotune/table.hpp"
#include "autotune/workflow_replay.hpp"

using namespace autotune;

namespace {

// Three problems of five configurations: time falls and the rate grows with nodes, at different
// speeds, so the cheapest and the fastest configuration differ per problem.
std::string table_text() {
  std::string t = "w,nodes,size,time_s,cost,ok\n";
  const char *names[] = {"a", "b", "c", "d"};
  const double base[] = {100, 300, 60, 200};
  const double par[] = {0.9, 0.5, 0.2, 0.7};  // parallel fraction
  for (int p = 0; p < 4; ++p)
    for (int n : {1, 2, 4, 8, 16}) {
      const double time = base[p] * ((1 - par[p]) + par[p] / n);
      const double rate = 0.01 * n;
      char row[128];
      std::snprintf(row, sizeof row, "%s,%d,%d,%.6g,%.6g,1\n", names[p], n, n * 2, time,
                    rate * time);
      t += row;
    }
  return t;
}

struct Fixture {
  Table table = Table::parse_csv(table_text(), "t.csv");
  std::vector<ReplayProblem> problems;
  Fixture() {
    ReplaySpec spec;
    spec.group = "w";
    spec.features = {"nodes", "size"};
    problems = load_problems(table, spec);
  }
};

const char kForkJoin[] = R"({"workflow": "fj", "gamma": 0.5, "budget": 12, "functions": [
  {"name": "s", "problem": "a"},
  {"name": "x", "after": ["s"], "problem": "b"},
  {"name": "y", "after": ["s"], "problem": "c"},
  {"name": "e", "after": ["x", "y"], "problem": "d"}]})";

// Not fork-join: x -> z -> e, y -> e; y shares stage 1 with x but z does not wait for it.
const char kDag[] = R"({"workflow": "dag", "gamma": 0.5, "budget": 12, "functions": [
  {"name": "s", "problem": "a"},
  {"name": "x", "after": ["s"], "problem": "b"},
  {"name": "y", "after": ["s"], "problem": "c"},
  {"name": "z", "after": ["x"], "problem": "d"},
  {"name": "e", "after": ["z", "y"], "problem": "a"}]})";

// The optimum by trying every combination of rows.
double brute_force(const WorkflowReplay &r, double gamma) {
  const std::size_t nf = r.functions.size();
  std::vector<std::size_t> c(nf, 0);
  double best = INFINITY;
  for (;;) {
    best = std::min(best, workflow_replay_score(r, c, gamma));
    std::size_t f = 0;
    while (f < nf && ++c[f] == r.functions[f].candidates.size()) c[f++] = 0;
    if (f == nf) break;
  }
  return best;
}

}  // namespace

TEST(WorkflowOptimum, ExactOnATinyTable) {
  Fixture fx;
  for (const char *text : {kForkJoin, kDag})
    for (double gamma : {0.0, 0.3, 0.5, 0.7, 1.0}) {
      Workflow w = Workflow::parse(text);
      w.gamma = gamma;
      const WorkflowReplay r = make_workflow_replay(w, fx.problems);
      const WorkflowOptimum opt = workflow_optimum(r, gamma);
      EXPECT_EQ(opt.stage_by_stage, cut_stages(w).exact) << w.name;
      EXPECT_NEAR(opt.score, brute_force(r, gamma), 1e-12) << w.name << " gamma " << gamma;
      EXPECT_NEAR(workflow_replay_score(r, opt.choice, gamma), opt.score, 1e-12);
    }
}

TEST(WorkflowOptimum, ReferenceIsFastestAndCheapest) {
  Fixture fx;
  const WorkflowReplay r = make_workflow_replay(Workflow::parse(kForkJoin), fx.problems);
  // Fastest: 16 nodes each; a 100*(0.1+0.9/16) + max(b, c) + d.
  const double ta = 100 * (0.1 + 0.9 / 16), tb = 300 * (0.5 + 0.5 / 16), tc = 60 * (0.8 + 0.2 / 16),
               td = 200 * (0.3 + 0.7 / 16);
  EXPECT_NEAR(r.reference.time, ta + std::max(tb, tc) + td, 1e-3);
  // A rate per candidate: cost / time.
  ASSERT_EQ(r.functions[0].rate.size(), 5u);
  EXPECT_NEAR(r.functions[0].rate[4], 0.16, 1e-9);
}

TEST(WorkflowSearch, ProposesAValidConfigurationForEveryFunction) {
  Fixture fx;
  for (const char *text : {kForkJoin, kDag})
    for (auto strategy : {WorkflowStrategy::stage, WorkflowStrategy::function,
                          WorkflowStrategy::flat, WorkflowStrategy::random}) {
      const Workflow w = Workflow::parse(text);
      const WorkflowReplay r = make_workflow_replay(w, fx.problems);
      WorkflowSearchOptions o = workflow_search_options(w);
      o.strategy = strategy;
      o.flat_pool = 50;
      std::vector<WorkflowRun> runs;
      for (int k = 0; k < 6; ++k) {
        const WorkflowProposal p = propose_workflow(w, r.functions, runs, o);
        if (p.stopped()) break;
        ASSERT_EQ(p.functions.size(), w.functions.size());
        WorkflowRun run;
        for (std::size_t f = 0; f < w.functions.size(); ++f) {
          const auto &fp = p.functions[f];
          ASSERT_LT(fp.candidate, r.functions[f].candidates.size());
          EXPECT_EQ(fp.stage, cut_stages(w).level[f]);
          EXPECT_FALSE(fp.reason.empty());
          const ReplayProblem &pr = *r.problems[f];
          run.functions.push_back(
              {fp.candidate, false, pr.time[fp.candidate], pr.cost[fp.candidate]});
        }
        runs.push_back(run);
      }
      EXPECT_GE(runs.size(), 4u) << workflow_strategy_name(strategy);
    }
}

// Each function's best configuration measured, but in different runs: the budget's last run
// combines them; an earlier run, or exploit_last off, explores instead.
TEST(WorkflowSearch, LastRunOfTheBudgetCombinesTheBestMeasurements) {
  Fixture fx;
  const Workflow w = Workflow::parse(kForkJoin);
  const WorkflowReplay r = make_workflow_replay(w, fx.problems);
  const std::vector<std::size_t> opt = workflow_optimum(r, w.gamma).choice;
  ASSERT_EQ(opt.size(), 4u);
  auto measure = [&](const std::vector<std::size_t> &choice) {
    WorkflowRun run;
    for (std::size_t f = 0; f < choice.size(); ++f)
      run.functions.push_back(
          {choice[f], false, r.problems[f]->time[choice[f]], r.problems[f]->cost[choice[f]]});
    return run;
  };
  // Run 1 on 1 node everywhere; run 2 + f on function f's optimum, the others on 2 nodes.
  std::vector<WorkflowRun> runs{measure({0, 0, 0, 0})};
  for (std::size_t f = 0; f < 4; ++f) {
    std::vector<std::size_t> c(4, 1);
    c[f] = opt[f];
    runs.push_back(measure(c));
  }
  for (const auto &run : runs) {
    bool same = true;
    for (std::size_t f = 0; f < 4; ++f) same = same && run.functions[f].candidate == opt[f];
    ASSERT_FALSE(same) << "the optimum ran as a whole";
  }
  WorkflowSearchOptions o = workflow_search_options(w);
  o.reference = r.reference;  // the optimum's
  o.stop.budget = runs.size() + 1;
  const WorkflowProposal last = propose_workflow(w, r.functions, runs, o);
  ASSERT_FALSE(last.stopped()) << last.stop.reason;
  for (std::size_t f = 0; f < 4; ++f) {
    EXPECT_EQ(last.functions[f].candidate, opt[f]) << w.functions[f].name;
    EXPECT_NE(last.functions[f].reason.find("not yet run together"), std::string::npos)
        << last.functions[f].reason;
  }
  for (bool off : {false, true}) {
    WorkflowSearchOptions e = o;
    if (off)
      e.exploit_last = false;
    else
      e.stop.budget = runs.size() + 2;
    const WorkflowProposal p = propose_workflow(w, r.functions, runs, e);
    ASSERT_FALSE(p.stopped()) << p.stop.reason;
    for (const auto &fp : p.functions)
      EXPECT_EQ(fp.reason.find("not yet run together"), std::string::npos) << fp.reason;
  }
}

// Every function learns from every run: while a function has unmeasured candidates, the stage
// search never gives it one it has measured (but in the budget's last run).
TEST(WorkflowSearch, FunctionsAreNotMeasuredTwiceOnTheSameCandidate) {
  Fixture fx;
  for (const char *text : {kForkJoin, kDag}) {
    const Workflow w = Workflow::parse(text);
    const WorkflowReplay r = make_workflow_replay(w, fx.problems);
    WorkflowSearchOptions o = workflow_search_options(w);
    o.reference = r.reference;
    o.initial_runs = 2;
    o.stop.budget = 20;
    std::vector<WorkflowRun> runs;
    std::size_t fresh = 0;
    for (;;) {
      const WorkflowProposal p = propose_workflow(w, r.functions, runs, o);
      if (p.stopped()) break;
      WorkflowRun run;
      for (std::size_t f = 0; f < w.functions.size(); ++f) {
        const std::size_t i = p.functions[f].candidate;
        std::set<std::size_t> seen;
        for (const auto &past : runs) seen.insert(past.functions[f].candidate);
        const bool last = p.functions[f].reason.find("not yet run together") != std::string::npos;
        if (seen.size() < r.functions[f].candidates.size() && !last) {
          EXPECT_EQ(seen.count(i), 0u) << w.name << " run " << runs.size() + 1 << " function "
                                       << w.functions[f].name << ": " << p.functions[f].reason;
        }
        if (p.functions[f].reason.find("unmeasured") != std::string::npos) ++fresh;
        run.functions.push_back({i, false, r.problems[f]->time[i], r.problems[f]->cost[i]});
      }
      runs.push_back(run);
    }
    EXPECT_GT(fresh, 0u) << w.name << ": no function was moved off a measured choice";
  }
}

TEST(WorkflowSearch, StageProposalsCarryPredictionsAfterTheDesign) {
  Fixture fx;
  const Workflow w = Workflow::parse(kForkJoin);
  const WorkflowReplay r = make_workflow_replay(w, fx.problems);
  WorkflowSearchOptions o = workflow_search_options(w);
  std::vector<WorkflowRun> runs;
  for (std::size_t k = 0; k < o.initial_runs; ++k) {
    const WorkflowProposal p = propose_workflow(w, r.functions, runs, o);
    EXPECT_NE(p.functions[0].reason.find("initial design"), std::string::npos);
    EXPECT_TRUE(std::isnan(p.functions[0].time));
    WorkflowRun run;
    for (std::size_t f = 0; f < 4; ++f) {
      const std::size_t i = p.functions[f].candidate;
      run.functions.push_back({i, false, r.problems[f]->time[i], r.problems[f]->cost[i]});
    }
    runs.push_back(run);
  }
  const WorkflowProposal p = propose_workflow(w, r.functions, runs, o);
  ASSERT_FALSE(p.stopped()) << p.stop.reason;
  ASSERT_TRUE(p.best_run);
  EXPECT_TRUE(p.reference.valid());
  for (const auto &fp : p.functions) {
    EXPECT_GT(fp.time, 0);
    EXPECT_GT(fp.cost, 0);
    EXPECT_NE(fp.reason.find("stage "), std::string::npos) << fp.reason;
  }
  EXPECT_GT(p.score, 0);
  // y (at most 60 s) runs beside x (at least 159 s): off the critical path, x on it.
  EXPECT_NE(p.functions[2].reason.find("off the critical path by"), std::string::npos)
      << p.functions[2].reason;
  EXPECT_NE(p.functions[1].reason.find("on the critical path"), std::string::npos)
      << p.functions[1].reason;
}

TEST(WorkflowSearch, OtherAcquisitionsProposeValidConfigurations) {
  Fixture fx;
  using A = WorkflowSearchOptions::Acquisition;
  for (const char *text : {kForkJoin, kDag})
    for (auto acq : {A::lcb, A::thompson}) {
      const Workflow w = Workflow::parse(text);
      const WorkflowReplay r = make_workflow_replay(w, fx.problems);
      WorkflowSearchOptions o = workflow_search_options(w);
      o.acquisition = acq;
      const ReplayRun run = replay_workflow_once(r, workflow_optimum(r, w.gamma), o);
      EXPECT_GE(run.tried.size(), 4u);
      EXPECT_TRUE(std::isfinite(run.best_ratio.back()));
      EXPECT_GE(run.best_ratio.back(), 1.0);
    }
}

TEST(WorkflowSearch, StageSearchFindsTheOptimumOfATinyTable) {
  Fixture fx;
  for (const char *text : {kForkJoin, kDag}) {
    const Workflow w = Workflow::parse(text);
    const WorkflowReplay r = make_workflow_replay(w, fx.problems);
    const WorkflowOptimum opt = workflow_optimum(r, w.gamma);
    WorkflowSearchOptions o = workflow_search_options(w);
    const ReplayRun run = replay_workflow_once(r, opt, o);
    ASSERT_FALSE(run.best_ratio.empty());
    EXPECT_LE(run.best_ratio.back(), 1.10) << w.name;
  }
}

TEST(WorkflowSearch, StopsAtTheBudgetOfRuns) {
  Fixture fx;
  const Workflow w = Workflow::parse(kForkJoin);
  const WorkflowReplay r = make_workflow_replay(w, fx.problems);
  const WorkflowOptimum opt = workflow_optimum(r, w.gamma);
  WorkflowSearchOptions o = workflow_search_options(w);
  o.strategy = WorkflowStrategy::random;
  o.stop.budget = 5;
  const ReplayRun run = replay_workflow_once(r, opt, o);
  EXPECT_EQ(run.tried.size(), 5u);
  EXPECT_EQ(run.stop.rule, StopRule::budget);
  EXPECT_EQ(run.stop.reason, "the budget of 5 runs is spent");
}

TEST(WorkflowSearch, RefusesInconsistentInput) {
  Fixture fx;
  const Workflow w = Workflow::parse(kForkJoin);
  const WorkflowReplay r = make_workflow_replay(w, fx.problems);
  const WorkflowSearchOptions o = workflow_search_options(w);
  auto error_of = [&](const std::vector<FunctionCandidates> &fc,
                      const std::vector<WorkflowRun> &runs) {
    try {
      propose_workflow(w, fc, runs, o);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of({r.functions[0]}, {}), "workflow 'fj': 1 candidate sets for 4 functions");
  WorkflowRun short_run;
  short_run.functions.resize(3);
  EXPECT_EQ(error_of(r.functions, {short_run}),
            "workflow 'fj': run 0 has 3 measurements for 4 functions");
  WorkflowRun bad;
  bad.functions.assign(4, {0, false, 1.0, 1.0});
  bad.functions[2].candidate = 9;
  EXPECT_EQ(error_of(r.functions, {bad}),
            "workflow 'fj': run 0, function 'y': candidate 9 is out of range (5 candidates)");
  bad.functions[2] = {0, false, 0.0, 1.0};
  EXPECT_EQ(error_of(r.functions, {bad}),
            "workflow 'fj': run 0, function 'y': time and cost of a successful measurement must "
            "be > 0");
  EXPECT_THROW(parse_workflow_strategy("--strategy", "greedy"), Error);
}

TEST(WorkflowSearch, FailedFunctionsAreNotProposedAgain) {
  Fixture fx;
  const Workflow w = Workflow::parse(kForkJoin);
  const WorkflowReplay r = make_workflow_replay(w, fx.problems);
  WorkflowSearchOptions o = workflow_search_options(w);
  std::vector<WorkflowRun> runs;
  for (int k = 0; k < 8; ++k) {
    const WorkflowProposal p = propose_workflow(w, r.functions, runs, o);
    if (p.stopped()) break;
    WorkflowRun run;
    for (std::size_t f = 0; f < 4; ++f) {
      const std::size_t i = p.functions[f].candidate;
      if (k >= 3 && f == 1) {
        for (const auto &old : runs) {
          if (old.functions[1].failed) {
            EXPECT_NE(old.functions[1].candidate, i);
          }
        }
      }
      // Function x fails on one node.
      const bool fail = f == 1 && i == 0;
      run.functions.push_back(
          {i, fail, fail ? 0 : r.problems[f]->time[i], fail ? 0 : r.problems[f]->cost[i]});
    }
    runs.push_back(run);
  }
}

// A function of one configuration (a fixed space) has nothing to model but its measurements;
// it must not hold the other functions back in the initial design (on Slurm, the demo's prep and
// eval have spaces of one point).
TEST(WorkflowSearch, AFunctionOfOneConfigurationDoesNotHoldTheOthersBack) {
  Table table = Table::parse_csv(table_text() + "one,1,2,30,0.3,1\n", "t.csv");
  ReplaySpec spec;
  spec.group = "w";
  spec.features = {"nodes", "size"};
  const std::vector<ReplayProblem> problems = load_problems(table, spec);
  const Workflow w = Workflow::parse(R"({"workflow": "fixed", "gamma": 0.5, "budget": 12, "functions": [
    {"name": "prep", "problem": "one"},
    {"name": "x", "after": ["prep"], "problem": "b"},
    {"name": "y", "after": ["prep"], "problem": "c"},
    {"name": "eval", "after": ["x", "y"], "problem": "one"}]})");
  const WorkflowReplay r = make_workflow_replay(w, problems);
  ASSERT_EQ(r.functions[0].candidates.size(), 1u);
  WorkflowSearchOptions o = workflow_search_options(w);
  o.initial_runs = 3;
  std::vector<WorkflowRun> runs;
  const WorkflowOptimum opt = workflow_optimum(r, w.gamma);
  double best = INFINITY;
  for (int k = 0; k < 12; ++k) {
    const WorkflowProposal p = propose_workflow(w, r.functions, runs, o);
    if (p.stopped()) break;
    if (runs.size() >= o.initial_runs) {
      for (std::size_t f : {1u, 2u})
        EXPECT_TRUE(p.functions[f].reason.find("design continued") == std::string::npos &&
                    p.functions[f].reason.find("a random candidate") == std::string::npos)
            << "run " << runs.size() + 1 << " " << w.functions[f].name << ": " << p.functions[f].reason;
      EXPECT_TRUE(std::isfinite(p.time)) << "the proposal has a predicted time once every function has a model";
    }
    WorkflowRun run;
    std::vector<std::size_t> pick;
    for (std::size_t f = 0; f < w.functions.size(); ++f) {
      const std::size_t c = p.functions[f].candidate;
      const ReplayProblem &pr = *r.problems[f];
      run.functions.push_back({c, false, pr.time[c], pr.cost[c]});
      pick.push_back(c);
    }
    best = std::min(best, workflow_replay_score(r, pick, w.gamma));
    runs.push_back(run);
  }
  EXPECT_LE(best, opt.score * 1.10) << "within 10% of the optimum after the budget";
}

namespace {

// Four problems of 48 configurations (nodes x size), for searches long enough that the models'
// settings show in the proposals.
std::vector<ReplayProblem> larger_problems() {
  std::string t = "w,nodes,size,time_s,cost,ok\n";
  const char *names[] = {"a", "b", "c", "d"};
  const double base[] = {100, 300, 60, 200};
  const double par[] = {0.9, 0.5, 0.2, 0.7};
  for (int p = 0; p < 4; ++p)
    for (int n : {1, 2, 3, 4, 6, 8, 12, 16})
      for (int size : {1, 2, 3, 4, 6, 8}) {
        const double spill = size * n < 8 * (p + 1) ? 1.0 + 0.3 * (8 * (p + 1) - size * n) / 8.0 : 1.0;
        const double time = base[p] * ((1 - par[p]) + par[p] / n) * spill / (1 + 0.05 * size);
        const double rate = 0.01 * n * (1 + 0.4 * size);
        char row[128];
        std::snprintf(row, sizeof row, "%s,%d,%d,%.6g,%.6g,1\n", names[p], n, size, time,
                      rate * time);
        t += row;
      }
  ReplaySpec spec;
  spec.group = "w";
  spec.features = {"nodes", "size"};
  return load_problems(Table::parse_csv(t, "larger.csv"), spec);
}

// The candidates of `runs` runs of a search, answered from the table.
std::vector<std::size_t> search_trace(const Workflow &w, const WorkflowReplay &r,
                                      const WorkflowSearchOptions &o, int runs_wanted) {
  std::vector<WorkflowRun> runs;
  std::vector<std::size_t> trace;
  for (int k = 0; k < runs_wanted; ++k) {
    const WorkflowProposal p = propose_workflow(w, r.functions, runs, o);
    if (p.stopped()) break;
    WorkflowRun run;
    for (std::size_t f = 0; f < w.functions.size(); ++f) {
      const std::size_t c = p.functions[f].candidate;
      const ReplayProblem &pr = *r.problems[f];
      run.functions.push_back({c, false, pr.time[c], pr.cost[c]});
      trace.push_back(c);
    }
    runs.push_back(run);
  }
  return trace;
}

}  // namespace

// The function and flat strategies call propose() on the workflow's score, so its automatic
// choices are the workflow gamma's (at 0.5: the linear term, design.hpp), whatever gamma the
// engine options hold; the stage strategy's models of time and cost have the linear term only
// when it is asked for.
TEST(WorkflowSearch, AutomaticChoicesFollowTheWorkflowsGamma) {
  const std::vector<ReplayProblem> problems = larger_problems();
  const Workflow w = Workflow::parse(kForkJoin);
  ASSERT_EQ(w.gamma, 0.5);
  ASSERT_TRUE(automatic_linear_trend(0.5));
  ASSERT_FALSE(automatic_linear_trend(1.0));
  const WorkflowReplay r = make_workflow_replay(w, problems);
  for (auto strategy : {WorkflowStrategy::function, WorkflowStrategy::flat, WorkflowStrategy::stage}) {
    SCOPED_TRACE(workflow_strategy_name(strategy));
    WorkflowSearchOptions o = workflow_search_options(w);
    o.strategy = strategy;
    o.flat_pool = 200;
    const auto with = [&](double engine_gamma, Trend linear) {
      WorkflowSearchOptions x = o;
      x.engine.gamma = engine_gamma;
      x.engine.linear_trend = linear;
      return search_trace(w, r, x, 12);
    };
    const auto automatic = with(1.0, Trend::automatic);
    EXPECT_EQ(automatic, with(0.5, Trend::automatic));
    EXPECT_EQ(automatic, with(0.0, Trend::automatic));
    const bool linear = strategy != WorkflowStrategy::stage;
    EXPECT_EQ(automatic, with(1.0, linear ? Trend::yes : Trend::no));
    EXPECT_NE(automatic, with(1.0, linear ? Trend::no : Trend::yes));
  }
}
