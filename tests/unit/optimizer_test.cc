// The engine: batches with pending trials, failures, determinism, stopping inside propose().
#include "autotune/optimizer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "autotune/error.hpp"
#include "autotune/rng.hpp"

using namespace autotune;

namespace {

// A 2-D grid of candidates (x, y in 1..n) and a smooth score with its minimum at (a, b).
struct Grid {
  CandidateSet cs;
  std::vector<double> x, y;
  Grid(int n) {
    FeatureColumn fx{"x", Scale::linear, {}, {}}, fy{"y", Scale::linear, {}, {}};
    for (int i = 1; i <= n; ++i)
      for (int j = 1; j <= n; ++j) {
        fx.numbers.push_back(i);
        fy.numbers.push_back(j);
      }
    x = fx.numbers;
    y = fy.numbers;
    cs = CandidateSet({fx, fy});
  }
  double score(size_t i, double a = 3, double b = 7) const {
    return 1.0 + 0.1 * ((x[i] - a) * (x[i] - a) + (y[i] - b) * (y[i] - b));
  }
  // The same grid with a categorical feature beside (alternating "a" and "b").
  CandidateSet with_kind() const {
    FeatureColumn fx{"x", Scale::linear, x, {}}, fy{"y", Scale::linear, y, {}};
    FeatureColumn fc{"kind", Scale::categorical, {}, {}};
    for (size_t i = 0; i < cs.size(); ++i) fc.labels.push_back(i % 2 ? "a" : "b");
    return CandidateSet({fx, fy, fc});
  }
};

std::vector<Observation> run(const Grid &g, const EngineOptions &o, size_t trials,
                             const std::function<bool(size_t)> &fails = nullptr) {
  std::vector<Observation> done;
  for (size_t t = 0; t < trials; ++t) {
    const Proposal p = propose(g.cs, done, {}, 1, o);
    if (p.stop.stopped()) break;
    EXPECT_EQ(p.indices.size(), 1u);
    const size_t i = p.indices[0];
    done.push_back(fails && fails(i) ? Observation::failure(i) : Observation::ok(i, g.score(i)));
  }
  return done;
}

std::vector<size_t> indices(const std::vector<Observation> &v) {
  std::vector<size_t> out;
  for (const auto &o : v) out.push_back(o.index);
  return out;
}

}  // namespace

TEST(Propose, SameSeedSameSequenceAndHistoryContinuesIt) {
  const Grid g(10);
  EngineOptions o;
  o.seed = 42;
  o.stop.budget = 0;
  const auto a = run(g, o, 12), b = run(g, o, 12);
  EXPECT_EQ(indices(a), indices(b));
  // Recomputing from any prefix of the history gives the next element of the sequence.
  for (size_t k : {0u, 2u, 3u, 7u, 11u}) {
    const std::vector<Observation> prefix(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(k));
    EXPECT_EQ(propose(g.cs, prefix, {}, 1, o).indices.at(0), a[k].index) << "after " << k;
  }
  // The first batch depends only on the seed and the candidate set.
  const std::size_t design = o.effective_initial_trials(g.cs.has_categorical());
  const Proposal first = propose(g.cs, {}, {}, design, o);
  EXPECT_EQ(first.indices, initial_design(g.cs, design, o));
  const std::vector<size_t> seq = indices(a);
  EXPECT_EQ(first.indices, std::vector<size_t>(seq.begin(), seq.begin() + 3));
  EXPECT_FALSE(first.modelled);
  o.seed = 43;
  EXPECT_NE(indices(run(g, o, 12)), indices(a));
}

// A quadratic bowl on 144 points: the stationary model lands on its optimum within 15 trials in
// most runs.  Warping (the default) lets the model bend where nothing asks it to and takes longer
// on so smooth a function (18-25 trials in these runs; bench/README.md), but gets there.
TEST(Propose, FindsTheMinimumOfASmoothFunction) {
  const Grid g(12);
  EngineOptions o;
  o.stop.budget = 0;
  for (const bool warping : {false, true}) {
    o.input_warping = warping;
    const size_t trials = warping ? 30 : 15;
    int found = 0;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      o.seed = seed;
      const auto done = run(g, o, trials);
      double best = 1e9;
      for (const auto &ob : done) best = std::min(best, ob.score);
      found += best <= 1.0 + 1e-9;
    }
    EXPECT_GE(found, 4) << "the optimum of a quadratic bowl on 144 points within " << trials
                        << " trials, warping " << warping;
  }
}

// Both models warp their numeric inputs by default; without warping, or with a linear term,
// the search stays deterministic and the fitted hyperparameters show the choice.
TEST(Propose, InputWarpingAndLinearTrendAreOptionsOfBothModels) {
  const Grid g(8);
  EngineOptions o;
  o.stop.budget = 0;
  // Every 5th candidate fails, so the feasibility model is fitted too.
  const auto fails = [](size_t i) { return i % 5 == 0; };
  for (int variant = 0; variant < 3; ++variant) {
    o.input_warping = variant != 1;
    o.linear_trend = variant == 2 ? Trend::yes : Trend::no;
    const auto a = run(g, o, 8, fails), b = run(g, o, 8, fails);
    EXPECT_EQ(indices(a), indices(b)) << "variant " << variant;
    const Proposal p = propose(g.cs, a, {}, 1, o);
    ASSERT_TRUE(p.modelled);
    EXPECT_EQ(p.indices.size(), 1u);
    EXPECT_EQ(p.hyper.warp_columns, o.input_warping ? g.cs.numeric_columns() : std::vector<int>{});
    EXPECT_EQ(p.hyper.log_warp_a.size(), o.input_warping ? 2 : 0);
    EXPECT_EQ(p.hyper.linear(), variant == 2);
  }
}

// The kernel is an option of both models: the fitted hyperparameters have the additive terms it
// asks for, one weight per feature, and the search stays deterministic.
TEST(Propose, KernelIsAnOptionOfBothModels) {
  const Grid g(8);
  EngineOptions o;
  o.stop.budget = 0;
  const auto fails = [](size_t i) { return i % 5 == 0; };
  for (GpKernel k : {GpKernel::ard, GpKernel::additive, GpKernel::ard_additive}) {
    o.gp.kernel = k;
    const auto a = run(g, o, 8, fails), b = run(g, o, 8, fails);
    EXPECT_EQ(indices(a), indices(b)) << kernel_name(k);
    const Proposal p = propose(g.cs, a, {}, 1, o);
    ASSERT_TRUE(p.modelled);
    EXPECT_EQ(p.indices.size(), 1u);
    EXPECT_EQ(p.hyper.kernel(), k);
    EXPECT_EQ(p.hyper.log_additive_weight.size(), k == GpKernel::ard ? 0 : g.cs.feature_groups());
  }
}

TEST(Propose, PendingAwareBatchesAreDistinct) {
  const Grid g(10);
  EngineOptions o;
  o.stop.budget = 0;
  auto done = run(g, o, 6);
  std::set<size_t> tried;
  for (auto i : indices(done)) tried.insert(i);
  std::vector<size_t> pending;
  for (size_t i = 40; pending.size() < 3; ++i)
    if (!tried.count(i)) pending.push_back(i);
  for (auto mode : {BatchMode::kriging_believer, BatchMode::constant_liar}) {
    o.batch = mode;
    const Proposal p = propose(g.cs, done, pending, 5, o);
    ASSERT_TRUE(p.modelled);
    ASSERT_EQ(p.indices.size(), 5u);
    std::set<size_t> seen;
    for (auto i : p.indices) {
      EXPECT_TRUE(seen.insert(i).second) << "duplicate " << i;
      EXPECT_FALSE(tried.count(i)) << "already tried " << i;
      EXPECT_EQ(std::count(pending.begin(), pending.end(), i), 0) << "already running " << i;
    }
  }
  // During the initial design too.
  const Proposal first = propose(g.cs, {}, {7}, 4, o);
  EXPECT_EQ(first.indices.size(), 4u);
  EXPECT_EQ(std::set<size_t>(first.indices.begin(), first.indices.end()).size(), 4u);
  EXPECT_EQ(std::count(first.indices.begin(), first.indices.end(), 7u), 0);
  // The budget counts running trials: 6 done + 3 running of 10 leaves one.
  o.stop.budget = 10;
  EXPECT_EQ(propose(g.cs, done, pending, 5, o).indices.size(), 1u);
  EXPECT_THROW(propose(g.cs, done, {3, 3}, 1, o), Error);
}

TEST(Propose, FailedCandidatesAreNeverProposedAgainAndSteerAway) {
  const Grid g(10);
  // Every candidate with x <= 4 fails, including the best of the score alone (3, 7).
  auto fails = [&](size_t i) { return g.x[i] <= 4; };
  for (auto mode : {EngineOptions::Failures::classifier, EngineOptions::Failures::impute}) {
    // EI, and the exploration by default (at gamma 0.5 over numeric features a share of local
    // search: trials next to the incumbent, which here is next to the failing region).
    for (auto explore : {Explore::none, Explore::automatic}) {
      EngineOptions o;
      o.failures = mode;
      o.explore = explore;
      o.stop.budget = 0;
      o.bowl_mean_sd = 0;  // the failure model alone (the bowl pulls towards the centre, x = 5.5)
      size_t failures = 0;
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        o.seed = seed;
        const auto done = run(g, o, 25, fails);
        std::set<size_t> seen;
        for (const auto &ob : done) {
          EXPECT_TRUE(seen.insert(ob.index).second) << "proposed twice: " << ob.index;
          failures += ob.failed;
        }
      }
      // 40 of the 100 candidates fail; a search that ignored failures would keep probing toward
      // (3, 7).  Steered away, EI fails on far fewer than 40% of its trials, and the default
      // exploration on fewer.
      EXPECT_LT(failures, 3 * 25 * (explore == Explore::none ? 30 : 35) / 100)
          << "mode " << static_cast<int>(mode) << ", explore " << explore_name(explore);
    }
  }
  // A history with only failures continues the spread-out design.
  EngineOptions o;
  std::vector<Observation> done = {Observation::failure(0), Observation::failure(1)};
  const Proposal p = propose(g.cs, done, {}, 2, o);
  EXPECT_EQ(p.indices.size(), 2u);
  EXPECT_FALSE(p.modelled);
}

TEST(FailureEdge, FailuresBeyondEverySuccessAlongOneFeature) {
  // x from 1 to 10 (encoded 0 to 1 in steps of 1/9), y from 1 to 10.
  const Grid g(10);
  const Eigen::MatrixXd &X = g.cs.encoded();
  auto at = [&](int x, int y) { return static_cast<size_t>((x - 1) * 10 + (y - 1)); };
  const std::vector<int> numeric = g.cs.numeric_columns();
  // Three failures at x 1, 2 and 3, successes from x 5 on, and one time-out among them.
  std::vector<Observation> done = {Observation::failure(at(1, 4)), Observation::failure(at(3, 9)),
                                   Observation::ok(at(5, 2), 1.0), Observation::failure(at(2, 5)),
                                   Observation::ok(at(9, 8), 1.0), Observation::failure(at(7, 3)),
                                   Observation::ok(at(6, 6), 1.0)};
  FailureEdge e = failure_edge(X, numeric, done);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.column, 0);
  EXPECT_EQ(e.sign, 1.0);
  EXPECT_EQ(e.failures, 3);  // the time-out at x 7 is not beyond every success
  EXPECT_EQ(e.innermost, at(3, 9));
  auto factor = [&](int x) { return e.factor(X(static_cast<Eigen::Index>(at(x, 1)), 0)); };
  EXPECT_DOUBLE_EQ(factor(1), 0.2);  // 1 / (3 + 2) at and beyond the innermost failure
  EXPECT_DOUBLE_EQ(factor(3), 0.2);
  EXPECT_DOUBLE_EQ(factor(4), 0.6);  // half way to the nearest success
  EXPECT_DOUBLE_EQ(factor(5), 1.0);
  EXPECT_DOUBLE_EQ(factor(10), 1.0);
  // Two failures are not an edge (kFailureEdgeMinFailures).
  EXPECT_EQ(kFailureEdgeMinFailures, 3);
  const std::vector<Observation> two(done.begin(), done.begin() + 3);
  EXPECT_FALSE(failure_edge(X, numeric, two));
  // Three failures below every success in x, four above every success in y: the edge with the
  // most failures.
  done = {Observation::ok(at(4, 1), 1.0),      Observation::ok(at(5, 3), 1.0),
          Observation::ok(at(9, 6), 1.0),      Observation::failure(at(1, 2)),
          Observation::failure(at(2, 5)),      Observation::failure(at(3, 4)),
          Observation::failure(at(5, 8)),      Observation::failure(at(7, 9)),
          Observation::failure(at(6, 10)),     Observation::failure(at(9, 10))};
  e = failure_edge(X, numeric, done);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.column, 1);
  EXPECT_EQ(e.sign, -1.0);
  EXPECT_EQ(e.failures, 4);
  EXPECT_EQ(e.innermost, at(5, 8));
  auto y_factor = [&](int y) { return e.factor(X(static_cast<Eigen::Index>(at(1, y)), 1)); };
  EXPECT_DOUBLE_EQ(y_factor(10), 1.0 / 6);
  EXPECT_DOUBLE_EQ(y_factor(8), 1.0 / 6);
  EXPECT_DOUBLE_EQ(y_factor(7), 1.0 / 6 + (1 - 1.0 / 6) / 2);
  EXPECT_DOUBLE_EQ(y_factor(6), 1.0);
  EXPECT_DOUBLE_EQ(y_factor(1), 1.0);
  // No success: nothing to lie beyond.
  EXPECT_FALSE(failure_edge(X, numeric, {Observation::failure(0), Observation::failure(1),
                                         Observation::failure(2)}));
}

TEST(Propose, TheFailuresEdgeKeepsProposalsOffWhereTheFailuresLie) {
  // x (say, the total memory) and y from 1 to 10; the score rises with x, so expected
  // improvement points at small x, where the three failed trials are (x 1, 2 and 3, at small y).
  const Grid g(10);
  auto at = [&](int x, int y) { return static_cast<size_t>((x - 1) * 10 + (y - 1)); };
  std::vector<Observation> done = {Observation::failure(at(1, 1)), Observation::failure(at(2, 2)),
                                   Observation::failure(at(3, 1))};
  for (auto [x, y] : {std::pair{5, 9}, {7, 8}, {8, 10}, {10, 9}, {6, 7}})
    done.push_back(Observation::ok(at(x, y), x * x));
  int beyond[2] = {0, 0};  // proposals at x <= 3, without and with the edge
  for (bool edge : {false, true})
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      EngineOptions o;
      o.stop.budget = 0;
      o.seed = seed;
      o.failure_edge = edge;
      o.explore = Explore::none;
      const Proposal p = propose(g.cs, done, {}, 1, o);
      ASSERT_EQ(p.indices.size(), 1u);
      beyond[edge] += g.x[p.indices[0]] <= 3;
      // The proposal says which edge it used: x at most 3, three failures there.
      if (edge) {
        ASSERT_TRUE(p.failure_edge);
        EXPECT_EQ(*p.failure_edge, (EdgeUse{"x", true, 3.0, 3}));
      } else {
        EXPECT_FALSE(p.failure_edge);
      }
    }
  // With the edge, no proposal lies where the three failures are; without it, the failure
  // model (a GP over both features) leaves x 3 at large y open to expected improvement.
  EXPECT_EQ(beyond[1], 0);
  EXPECT_GT(beyond[0], 0);
  // In a space with a categorical feature the edge is not used: the same searches either way
  // (x <= 4 failing, as in FailedCandidatesAreNeverProposedAgainAndSteerAway).
  const CandidateSet kinds = g.with_kind();
  auto search = [&](bool edge, std::uint64_t seed) {
    EngineOptions o;
    o.stop.budget = 0;
    o.seed = seed;
    o.failure_edge = edge;
    std::vector<Observation> trials;
    for (size_t t = 0; t < 20; ++t) {
      const size_t i = propose(kinds, trials, {}, 1, o).indices.at(0);
      trials.push_back(g.x[i] <= 4 ? Observation::failure(i) : Observation::ok(i, g.score(i)));
    }
    return indices(trials);
  };
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    EXPECT_EQ(search(true, seed), search(false, seed)) << "seed " << seed;
}

TEST(Propose, APowerOfTheProbabilityOfRunningFailsFewerTrials) {
  const Grid g(10);
  // As above: x <= 4 fails, and the score alone is best at (3, 7), just past the edge.
  auto fails = [&](size_t i) { return g.x[i] <= 4; };
  auto failures = [&](double power) {
    EngineOptions o;
    o.stop.budget = 0;
    o.feasibility_power = power;
    size_t n = 0;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      o.seed = seed;
      for (const auto &ob : run(g, o, 20, fails)) n += ob.failed;
    }
    return n;
  };
  // A likely failure is taken only for a gain eight powers larger: fewer wasted trials.
  const size_t plain = failures(1.0), weighted = failures(8.0);
  EXPECT_LT(weighted, plain) << weighted << " against " << plain << " failed trials";
  // By default, constrained EI as published at gamma 1 and below 0.75, the power
  // kFeasibilityPowerAuto from 0.75 to below 1.
  EXPECT_FALSE(EngineOptions{}.feasibility_power.has_value());
  for (double gamma : {0.0, 0.5, 0.74, 1.0}) EXPECT_EQ(automatic_feasibility_power(gamma), 1.0) << gamma;
  for (double gamma : {0.75, 0.9, 0.99})
    EXPECT_EQ(automatic_feasibility_power(gamma), kFeasibilityPowerAuto) << gamma;
  // Cold in a space with a categorical feature, from gamma 0.5 on (with a warm start as above:
  // history_test.cc, Explore.AutomaticFollowsTheObjectivesGamma).
  for (double gamma : {0.0, 0.25, 0.49, 1.0})
    EXPECT_EQ(automatic_feasibility_power(gamma, false, true), 1.0) << gamma;
  for (double gamma : {0.5, 0.6, 0.74, 0.75, 0.99})
    EXPECT_EQ(automatic_feasibility_power(gamma, false, true), kFeasibilityPowerAuto) << gamma;
  EXPECT_EQ(automatic_feasibility_power(1.0, true, true), kTimeModelFeasibilityPower);
  EngineOptions o;
  for (double bad : {0.5, 65.0, std::nan("")}) {
    o.feasibility_power = bad;
    try {
      o.validate();
      ADD_FAILURE() << "accepted a power of " << bad;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("the power of the probability of running"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Propose, BetweenGammaThreeQuartersAndOneTheDefaultPowerIsFour) {
  const Grid g(10);
  auto fails = [&](size_t i) { return g.x[i] <= 4; };
  auto searched = [&](double gamma, std::optional<double> power) {
    EngineOptions o;
    o.stop.budget = 0;
    o.seed = 2;
    o.gamma = gamma;
    o.feasibility_power = power;
    return indices(run(g, o, 16, fails));
  };
  // The default is the power 4 at gamma 0.9 and 1 at gamma 1 and 0.5, trial for trial; and
  // the power changes the search, so the comparisons can fail.
  EXPECT_EQ(searched(0.9, std::nullopt), searched(0.9, 4.0));
  EXPECT_NE(searched(0.9, 1.0), searched(0.9, 4.0));
  EXPECT_EQ(searched(1.0, std::nullopt), searched(1.0, 1.0));
  EXPECT_EQ(searched(0.5, std::nullopt), searched(0.5, 1.0));
  EngineOptions o;
  o.gamma = 0.8;
  EXPECT_EQ(o.effective_feasibility_power(), kFeasibilityPowerAuto);
  o.feasibility_power = 2;
  EXPECT_EQ(o.effective_feasibility_power(), 2.0);
}

TEST(Propose, StoppingRulesInsidePropose) {
  const Grid g(6);
  EngineOptions o;
  o.stop.budget = 5;
  auto done = run(g, o, 10);
  EXPECT_EQ(done.size(), 5u);
  Proposal p = propose(g.cs, done, {}, 1, o);
  EXPECT_EQ(p.stop.rule, StopRule::budget);
  EXPECT_TRUE(p.indices.empty());
  // Everything tried: exhausted.
  o.stop.budget = 0;
  done.clear();
  for (size_t i = 0; i < g.cs.size(); ++i) done.push_back(Observation::ok(i, g.score(i)));
  EXPECT_EQ(propose(g.cs, done, {}, 1, o).stop.rule, StopRule::exhausted);
  // The ei rule: with most of the bowl measured, nothing untried can improve by 50%.
  done.pop_back();
  o.stop.ei_fraction = 0.5;
  o.stop.min_trials = 6;
  p = propose(g.cs, done, {}, 1, o);
  EXPECT_EQ(p.stop.rule, StopRule::ei);
  EXPECT_LT(p.max_ei, 0.5 * p.best_score);
  o.stop.ei_fraction = 0;
  p = propose(g.cs, done, {}, 1, o);
  EXPECT_EQ(p.stop.rule, StopRule::none);
  EXPECT_EQ(p.indices, std::vector<size_t>{g.cs.size() - 1});
  // The improvement rule, through propose.
  o.stop.min_improvement = 0.01;
  o.stop.round_trials = 2;
  o.stop.min_trials = 4;
  std::vector<Observation> flat = {Observation::ok(0, 2.0), Observation::ok(1, 1.5),
                                   Observation::ok(2, 1.6), Observation::ok(3, 1.7)};
  EXPECT_EQ(propose(g.cs, flat, {}, 1, o).stop.rule, StopRule::improvement);
}

TEST(Propose, PredictionsInScoreUnits) {
  const Grid g(8);
  EngineOptions o;
  o.stop.budget = 0;
  // A fixed design (every other row and column of the grid) rather than a search's trials, so
  // the check is of the units, not of where one search happened to go; and the stationary model,
  // which fits this smooth bowl closely (the warped one smooths it: up to 23% off at a measured
  // point, see FindsTheMinimumOfASmoothFunction).
  o.input_warping = false;
  std::vector<Observation> done;
  for (size_t i = 0; i < g.cs.size(); ++i)
    if (static_cast<int>(g.x[i]) % 2 == 1 && static_cast<int>(g.y[i]) % 2 == 1)
      done.push_back(Observation::ok(i, g.score(i)));
  const Proposal p = propose(g.cs, done, {}, 1, o);
  ASSERT_TRUE(p.modelled);
  ASSERT_EQ(p.predictions.size(), g.cs.size());
  for (const auto &ob : done) {
    // At a measured candidate the prediction is close to the measurement, and confident.
    EXPECT_NEAR(p.predictions[ob.index].mean, ob.score, 0.1 * ob.score);
    EXPECT_LT(p.predictions[ob.index].std, 0.1 * ob.score);
  }
  EXPECT_EQ(p.hyper.log_lengthscale.size(), 2);
  ASSERT_TRUE(p.best_index.has_value());
  EXPECT_DOUBLE_EQ(p.best_score, g.score(*p.best_index));
}

namespace {

// The predicted score at candidate `at` after trials on a checkerboard of the 5 x 5 middle
// (x and y from 3 to 7, x + y even) of a 9 x 9 grid whose score is `score`, with the bowl prior
// mean's standard deviation `sd` (0: off).
double predicted_after_inner_trials(const CandidateSet &cs, const std::vector<double> &x,
                                    const std::vector<double> &y,
                                    const std::function<double(double, double)> &score, double sd,
                                    size_t at) {
  EngineOptions o;
  o.stop.budget = 0;
  o.bowl_mean_sd = sd;
  std::vector<Observation> done;
  for (size_t i = 0; i < cs.size(); ++i)
    if (x[i] >= 3 && x[i] <= 7 && y[i] >= 3 && y[i] <= 7 && static_cast<int>(x[i] + y[i]) % 2 == 0)
      done.push_back(Observation::ok(i, score(x[i], y[i])));
  const Proposal p = propose(cs, done, {}, 1, o);
  EXPECT_TRUE(p.modelled);
  return p.predictions.at(at).mean;
}

}  // namespace

TEST(Propose, TheColdBowlPriorMeanIsFittedToTheTrials) {
  const Grid g(9);
  const size_t corner = 0;  // (1, 1)
  // Trials inside the box whose scores rise towards its edges: the unexplored corner is
  // predicted dearer with the bowl than without.
  auto bowl = [](double x, double y) { return 1.0 + 0.1 * ((x - 5) * (x - 5) + (y - 5) * (y - 5)); };
  const double rising_on = predicted_after_inner_trials(g.cs, g.x, g.y, bowl, 0.5, corner);
  const double rising_off = predicted_after_inner_trials(g.cs, g.x, g.y, bowl, 0.0, corner);
  EXPECT_GT(rising_on, rising_off * 1.02) << rising_on << " against " << rising_off;
  // Scores that fall towards the edges: the amplitude is fitted, not fixed, so the corner is
  // predicted cheaper.
  auto dome = [](double x, double y) { return 3.0 - 0.1 * ((x - 5) * (x - 5) + (y - 5) * (y - 5)); };
  const double falling_on = predicted_after_inner_trials(g.cs, g.x, g.y, dome, 0.5, corner);
  const double falling_off = predicted_after_inner_trials(g.cs, g.x, g.y, dome, 0.0, corner);
  EXPECT_LT(falling_on, falling_off * 0.99) << falling_on << " against " << falling_off;

  // With a categorical feature the bowl is off: the same predictions as without it.
  const CandidateSet mixed = g.with_kind();
  EXPECT_EQ(predicted_after_inner_trials(mixed, g.x, g.y, bowl, 0.5, corner),
            predicted_after_inner_trials(mixed, g.x, g.y, bowl, 0.0, corner));

  EngineOptions o;
  EXPECT_EQ(o.bowl_mean_sd, 0.5);
  for (double bad : {-0.1, 10.5, std::nan("")}) {
    o.bowl_mean_sd = bad;
    EXPECT_THROW(o.validate(), Error) << bad;
  }
}

TEST(Propose, RandomAndExhaustiveBaselines) {
  const Grid g(5);
  EngineOptions o;
  o.strategy = Strategy::exhaustive;
  std::vector<Observation> done = {Observation::ok(0, 1.0), Observation::ok(1, 1.0)};
  EXPECT_EQ(propose(g.cs, done, {2}, 2, o).indices, (std::vector<size_t>{3, 4}));
  o.strategy = Strategy::random;
  o.stop.budget = 0;
  const auto r = propose(g.cs, {}, {}, 25, o).indices;
  EXPECT_EQ(std::set<size_t>(r.begin(), r.end()).size(), 25u);
  EXPECT_EQ(parse_strategy("--strategy", "random"), Strategy::random);
  try {
    parse_strategy("--strategy", "anneal");
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "--strategy: unknown strategy 'anneal'; allowed: bo, random, exhaustive");
  }
}

TEST(Propose, RejectsBadHistory) {
  const Grid g(3);
  EngineOptions o;
  EXPECT_THROW(propose(g.cs, {Observation::ok(9, 1.0)}, {}, 1, o), Error);
  EXPECT_THROW(propose(g.cs, {Observation::ok(0, 0.0)}, {}, 1, o), Error);
  EXPECT_THROW(propose(g.cs, {}, {9}, 1, o), Error);
  EXPECT_THROW(propose(g.cs, {}, {}, 0, o), Error);
}

// The time model (EngineOptions::time_model): a score is a run time times a factor known per
// candidate.
namespace {

// A 12 x 12 grid whose run time is smooth (lowest at (6, 6)) and whose factor f is drawn per
// candidate from [1, 8): a rate that does not vary smoothly with the features (e.g. prices).
struct Priced : Grid {
  std::shared_ptr<std::vector<double>> f = std::make_shared<std::vector<double>>();
  Priced() : Grid(12) {
    Rng rng(5, 0);
    for (size_t i = 0; i < cs.size(); ++i) f->push_back(1 + 7 * rng.uniform());
  }
  double time(size_t i) const { return score(i, 6, 6); }
  // The rate of rank floor(share x n): a design drawn from that share is at most this dear.
  double rate_cut(double share) const {
    std::vector<double> sorted(*f);
    std::sort(sorted.begin(), sorted.end());
    return sorted[static_cast<size_t>(std::floor(share * static_cast<double>(sorted.size())))];
  }
  // A search at `gamma` with the time model `m` and these factors (seed 3, no budget).
  EngineOptions options(EngineOptions::TimeModel m, double gamma) const {
    EngineOptions o;
    o.seed = 3;
    o.stop.budget = 0;
    o.gamma = gamma;
    o.time_model = m;
    o.score_factor = f;
    return o;
  }
};

}  // namespace

TEST(TimeModel, AConstantFactorChangesNothing) {
  const Grid g(10);
  EngineOptions o;
  o.seed = 4;
  o.stop.budget = 0;
  const auto plain = indices(run(g, o, 12));
  o.score_factor = std::make_shared<const std::vector<double>>(g.cs.size(), 2.5);
  for (auto m : {EngineOptions::TimeModel::yes, EngineOptions::TimeModel::automatic}) {
    o.time_model = m;
    EXPECT_EQ(indices(run(g, o, 12)), plain) << time_model_name(m);
  }
}

TEST(TimeModel, AKnownFactorIsNotLearntAndAutomaticChoosesTheModelThatOrdersTheTrials) {
  const Priced g;
  // A search of `trials` trials; returns the trials it took to within 10% of the optimum of
  // `score` (trials + 1 if never), and whether its last step used the time model.
  auto search = [&](EngineOptions::TimeModel m, std::uint64_t seed,
                    const std::function<double(size_t)> &score, size_t trials, bool *time_modelled) {
    double optimum = 1e300;
    for (size_t i = 0; i < g.cs.size(); ++i) optimum = std::min(optimum, score(i));
    EngineOptions o;
    o.seed = seed;
    o.stop.budget = 0;
    o.time_model = m;
    o.score_factor = g.f;
    std::vector<Observation> done;
    size_t to10 = trials + 1;
    for (size_t t = 0; t < trials; ++t) {
      const Proposal p = propose(g.cs, done, {}, 1, o);
      if (time_modelled) *time_modelled = p.time_modelled;
      const size_t i = p.indices.at(0);
      done.push_back(Observation::ok(i, score(i)));
      if (score(i) <= 1.1 * optimum) to10 = std::min(to10, t + 1);
    }
    return to10;
  };
  auto priced = [&](size_t i) { return g.time(i) * (*g.f)[i]; };
  // Scores that are run time x factor: the time model knows the rough part, the score model
  // must learn it from the trials.
  size_t with = 0, without = 0;
  bool used = false;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    with += search(EngineOptions::TimeModel::yes, seed, priced, 20, &used);
    EXPECT_TRUE(used);
    without += search(EngineOptions::TimeModel::no, seed, priced, 20, &used);
    EXPECT_FALSE(used);
  }
  EXPECT_LT(2 * with, without) << "trials to within 10%, summed over 8 seeds";
  // auto: the time model orders such trials better, so it is chosen.
  search(EngineOptions::TimeModel::automatic, 1, priced, 8, &used);
  EXPECT_TRUE(used);
  // Scores that do not follow the factor at all: auto keeps the score model.
  search(EngineOptions::TimeModel::automatic, 1, [&](size_t i) { return g.time(i); }, 8, &used);
  EXPECT_FALSE(used);
  // Too few successful trials to compare the two: the score model.
  search(EngineOptions::TimeModel::automatic, 1, priced, kTimeModelMinTrials, &used);
  EXPECT_FALSE(used);
}

TEST(TimeModel, FromGammaHalfToBelowOneAutomaticAlsoTakesTurns) {
  const Priced g;
  // The same trials for every choice: configurations spread over the grid, scored as run time x
  // the square root of the factor, so that neither model orders them clearly better.
  std::vector<Observation> trials;
  for (size_t k = 0; k < 10; ++k) {
    const size_t i = (k * 37 + 5) % g.cs.size();
    trials.push_back(Observation::ok(i, g.time(i) * std::sqrt((*g.f)[i])));
  }
  // Whether the step after the first n trials models the run times.
  auto time_modelled = [&](const CandidateSet &cs, EngineOptions::TimeModel m, double gamma, size_t n) {
    return propose(cs, {trials.begin(), trials.begin() + static_cast<std::ptrdiff_t>(n)}, {}, 1,
                   g.options(m, gamma))
        .time_modelled;
  };
  using M = EngineOptions::TimeModel;
  size_t turns = 0;
  for (size_t n = kTimeModelMinTrials; n <= trials.size(); ++n) {
    const bool better = time_modelled(g.cs, M::better, 0.5, n);
    const bool automatic = time_modelled(g.cs, M::automatic, 0.5, n);
    if (n % 2 == 0) {
      EXPECT_EQ(automatic, better) << n << " successes: an even count, the choice by concordance";
    } else {
      EXPECT_TRUE(automatic || !better) << n;
      turns += automatic && !better;
    }
    // Below gamma 0.5 and at gamma 1 there are no turns.
    for (double gamma : {0.25, 1.0})
      EXPECT_EQ(time_modelled(g.cs, M::automatic, gamma, n), time_modelled(g.cs, M::better, gamma, n))
          << n << " at gamma " << gamma;
  }
  EXPECT_FALSE(automatic_time_model_turns(0.49, false));
  EXPECT_TRUE(automatic_time_model_turns(0.5, false));
  EXPECT_TRUE(automatic_time_model_turns(0.99, false));
  EXPECT_FALSE(automatic_time_model_turns(1, false));
  EXPECT_FALSE(automatic_time_model_turns(0.75, true));
  EXPECT_GT(turns, 0u) << "an odd count lets the time model propose where concordance alone would not";
  // Nor with a categorical feature.
  const CandidateSet mixed = g.with_kind();
  for (size_t n = kTimeModelMinTrials; n <= trials.size(); ++n)
    EXPECT_EQ(time_modelled(mixed, M::automatic, 0.5, n), time_modelled(mixed, M::better, 0.5, n)) << n;
  // Scores that do not follow the factor at all (the smooth run time alone): the score model
  // orders them (nearly) right, the time model, which adds the factor back, far worse, and gets
  // no turn.
  trials.clear();
  for (size_t k = 0; k < 41; ++k) {
    const size_t i = (k * 37 + 5) % g.cs.size();
    trials.push_back(Observation::ok(i, g.time(i)));
  }
  for (size_t n = 35; n <= trials.size(); n += 2) EXPECT_FALSE(time_modelled(g.cs, M::automatic, 0.5, n)) << n;
}

TEST(TimeModel, BetweenGammaThreeQuartersAndOneTheTimeModelHasTheLinearTerm) {
  const Priced g;
  // Trials spread over the grid, scored as run time x factor, two of them failed: the time
  // model proposes, and the failure model starts from its hyperparameters.
  std::vector<Observation> trials;
  for (size_t k = 0; k < 8; ++k) {
    const size_t i = (k * 37 + 5) % g.cs.size();
    trials.push_back(k % 4 == 3 ? Observation::failure(i) : Observation::ok(i, g.time(i) * (*g.f)[i]));
  }
  auto step = [&](double gamma, EngineOptions::TimeModel m, Trend linear, Trend time_linear) {
    EngineOptions o = g.options(m, gamma);
    o.linear_trend = linear;
    o.time_linear_trend = time_linear;
    return propose(g.cs, trials, {}, 1, o);
  };
  using M = EngineOptions::TimeModel;
  const Trend A = Trend::automatic;
  // Above 0.75 and below 1: the time model has the linear term, the score model does not.
  for (double gamma : {0.8, 0.9, 0.99}) {
    const Proposal t = step(gamma, M::yes, A, A), s = step(gamma, M::no, A, A);
    EXPECT_TRUE(t.time_modelled && t.hyper.linear()) << gamma;
    EXPECT_TRUE(!s.time_modelled && !s.hyper.linear()) << gamma;
    EXPECT_EQ(t.indices.size(), 1u);
  }
  // At gamma 1 neither has it; at 0.75 both (automatic_linear_trend()).
  EXPECT_FALSE(step(1.0, M::yes, A, A).hyper.linear());
  EXPECT_TRUE(step(0.75, M::yes, A, A).hyper.linear());
  EXPECT_TRUE(step(0.75, M::no, A, A).hyper.linear());
  // As set: the time model's own option first, then the models' linear term.
  EXPECT_FALSE(step(0.9, M::yes, A, Trend::no).hyper.linear());
  EXPECT_FALSE(step(0.9, M::yes, Trend::no, A).hyper.linear());
  EXPECT_TRUE(step(1.0, M::yes, A, Trend::yes).hyper.linear());
  EXPECT_FALSE(step(1.0, M::no, A, Trend::yes).hyper.linear());
  EXPECT_TRUE(automatic_time_linear_trend(0.76));
  EXPECT_TRUE(automatic_time_linear_trend(0.6));
  EXPECT_TRUE(automatic_time_linear_trend(0.1));
  EXPECT_FALSE(automatic_time_linear_trend(0.3));
  EXPECT_FALSE(automatic_time_linear_trend(1.0));
}

// At gamma 1 the time model's proposals weigh the probability of running to the power 8 by
// default, the score model's to the power 1; an explicit power holds for both.
TEST(TimeModel, AtGammaOneTheTimeModelsProposalsWeighTheChanceOfRunningMore) {
  const Priced g;
  auto fails = [&](size_t i) { return g.x[i] <= 4 || g.y[i] <= 2; };
  auto searched = [&](EngineOptions::TimeModel m, std::optional<double> power) {
    EngineOptions o;
    o.seed = 6;
    o.stop.budget = 0;
    o.gamma = 1;
    o.time_model = m;
    o.score_factor = g.f;
    o.feasibility_power = power;
    std::vector<Observation> done;
    std::vector<size_t> tried;
    for (size_t t = 0; t < 20; ++t) {
      const Proposal p = propose(g.cs, done, {}, 1, o);
      if (p.stop.stopped()) break;
      const size_t i = p.indices.at(0);
      tried.push_back(i);
      done.push_back(fails(i) ? Observation::failure(i) : Observation::ok(i, g.time(i) * (*g.f)[i]));
    }
    return tried;
  };
  using M = EngineOptions::TimeModel;
  EXPECT_EQ(searched(M::yes, std::nullopt), searched(M::yes, kTimeModelFeasibilityPower));
  EXPECT_NE(searched(M::yes, std::nullopt), searched(M::yes, 1.0));
  EXPECT_EQ(searched(M::no, std::nullopt), searched(M::no, 1.0));
  EXPECT_NE(searched(M::no, std::nullopt), searched(M::no, kTimeModelFeasibilityPower));
  EngineOptions o;
  o.gamma = 1;
  EXPECT_EQ(o.effective_feasibility_power(false), 1.0);
  EXPECT_EQ(o.effective_feasibility_power(true), kTimeModelFeasibilityPower);
  o.gamma = 0.9;  // between 0.75 and 1 both models' proposals weigh it to the power 4
  EXPECT_EQ(o.effective_feasibility_power(true), kFeasibilityPowerAuto);
  o.gamma = 0.5;
  EXPECT_EQ(o.effective_feasibility_power(true), 1.0);
  o.gamma = 1;
  o.feasibility_power = 2;
  EXPECT_EQ(o.effective_feasibility_power(true), 2.0);
}

TEST(CheapDesign, AtGammaOneWithACategoricalFeatureTheDesignIsAmongTheCheapestRates) {
  const Priced g;
  const CandidateSet kind = g.with_kind();
  const double cut = g.rate_cut(kCheapDesignShare);  // the design's candidates at most this dear
  auto design = [&](const CandidateSet &cs, double gamma, bool rates, std::optional<double> share,
                    std::uint64_t seed) {
    EngineOptions o;
    o.seed = seed;
    o.stop.budget = 0;
    o.gamma = gamma;
    if (rates) o.rate = g.f;
    o.cheap_design = share;
    const Proposal p = propose(cs, {}, {}, 3, o);
    EXPECT_EQ(p.indices.size(), 3u);
    return p.indices;
  };
  size_t dear_without = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    for (size_t i : design(kind, 1, true, std::nullopt, seed))
      EXPECT_LE((*g.f)[i], cut) << "seed " << seed << ", candidate " << i;
    // Without the rates, at another gamma, over numeric features only, or with the share 1: the
    // design over the whole space, as before.
    const auto whole = design(kind, 1, false, std::nullopt, seed);
    for (size_t i : whole) dear_without += (*g.f)[i] > cut;
    EXPECT_EQ(design(kind, 0.9, true, std::nullopt, seed), design(kind, 0.9, false, std::nullopt, seed));
    EXPECT_EQ(design(kind, 1, true, 1.0, seed), whole);
    EXPECT_EQ(design(g.cs, 1, true, std::nullopt, seed), design(g.cs, 1, false, std::nullopt, seed));
    // A share given holds over numeric features too.
    const double half = g.rate_cut(0.5);
    for (size_t i : design(g.cs, 1, true, 0.5, seed)) EXPECT_LE((*g.f)[i], half) << "seed " << seed;
  }
  EXPECT_GT(dear_without, 10u);  // the whole space's designs are mostly dearer than the cut
  // That design has kCheapDesignTrials trials; without the rates, or with the share 1, as before.
  EngineOptions o;
  o.gamma = 1;
  EXPECT_EQ(o.effective_initial_trials(true), kInitialTrials);
  o.rate = g.f;
  EXPECT_EQ(o.effective_initial_trials(true), kCheapDesignTrials);
  EXPECT_EQ(o.effective_initial_trials(false), kInitialTrials);
  o.cheap_design = 1.0;
  EXPECT_EQ(o.effective_initial_trials(true), kInitialTrials);
  o.cheap_design = std::nullopt;
  o.initial_trials = 6;
  EXPECT_EQ(o.effective_initial_trials(true), 6u);
  EXPECT_EQ(design(kind, 1, true, std::nullopt, 1).size(), 3u);
  {
    EngineOptions e;
    e.gamma = 1;
    e.rate = g.f;
    e.stop.budget = 0;
    const Proposal p = propose(kind, {}, {}, kCheapDesignTrials, e);
    ASSERT_EQ(p.indices.size(), kCheapDesignTrials);
    for (size_t i : p.indices) EXPECT_LE((*g.f)[i], cut);
  }
  EXPECT_EQ(automatic_cheap_design(1, false, true), kCheapDesignShare);
  EXPECT_EQ(automatic_cheap_design(1, true, true), 1.0);  // a warm start's design is the history's
  EXPECT_EQ(automatic_cheap_design(1, false, false), 1.0);
  EXPECT_EQ(automatic_cheap_design(0.9, false, true), 1.0);
}

// While its trials fail, a design among the cheapest continues among the cheaper half of the
// rates (kCheapContinuationShare), not at the dearest corners of the space.
TEST(CheapDesign, WhileItsTrialsFailItContinuesAmongTheCheaperHalf) {
  const Priced g;
  const CandidateSet kind = g.with_kind();
  const size_t n = g.cs.size();
  const double half = g.rate_cut(kCheapContinuationShare);
  // 14 trials that all fail: the design (kCheapDesignTrials) and its continuation.
  auto failing = [&](std::optional<double> share, std::uint64_t seed) {
    EngineOptions o;
    o.seed = seed;
    o.stop.budget = 0;
    o.gamma = 1;
    o.rate = g.f;
    o.cheap_design = share;
    std::vector<Observation> done;
    std::vector<size_t> tried;
    for (size_t t = 0; t < 14; ++t) {
      const Proposal p = propose(kind, done, {}, 1, o);
      EXPECT_EQ(p.designed, 1u);
      const size_t i = p.indices.at(0);
      tried.push_back(i);
      done.push_back(Observation::failure(i));
    }
    return tried;
  };
  size_t dear_whole = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto tried = failing(std::nullopt, seed);
    for (size_t t = kCheapDesignTrials; t < tried.size(); ++t)
      EXPECT_LE((*g.f)[tried[t]], half) << "seed " << seed << ", trial " << t + 1;
    // A design over the whole space (share 1) continues over it: mostly dearer than the half.
    const auto whole = failing(1.0, seed);
    for (size_t t = kInitialTrials; t < whole.size(); ++t) dear_whole += (*g.f)[whole[t]] > half;
    // A larger share than the half holds for the continuation too.
    const double most = g.rate_cut(0.8);
    for (size_t i : failing(0.8, seed)) EXPECT_LE((*g.f)[i], most) << "seed " << seed;
  }
  EXPECT_GT(dear_whole, 20u);
  // Once the cheaper half is used up, the continuation goes on over every candidate.
  EngineOptions o;
  o.seed = 1;
  o.stop.budget = 0;
  o.gamma = 1;
  o.rate = g.f;
  const size_t cheaper = static_cast<size_t>(
      std::count_if(g.f->begin(), g.f->end(), [&](double r) { return r <= half; }));
  std::vector<Observation> done;
  for (size_t t = 0; t < n; ++t) {
    const Proposal p = propose(kind, done, {}, 1, o);
    if (p.stop.stopped()) break;
    const size_t i = p.indices.at(0);
    if (t < cheaper) {
      EXPECT_LE((*g.f)[i], half) << "trial " << t + 1;
    }
    done.push_back(Observation::failure(i));
  }
  EXPECT_EQ(done.size(), n);  // every candidate, the dearer half after the cheaper one
}

TEST(CheapDesign, BadRatesAndSharesAreRefused) {
  const Grid g(4);
  EngineOptions o;
  std::vector<double> bad(g.cs.size(), 1.0);
  bad[2] = 0;
  o.rate = std::make_shared<const std::vector<double>>(bad);
  EXPECT_THROW(o.validate(), Error);
  bad[2] = std::numeric_limits<double>::infinity();
  o.rate = std::make_shared<const std::vector<double>>(bad);
  EXPECT_THROW(o.validate(), Error);
  o.rate = nullptr;
  for (double share : {0.0, -0.1, 1.5, std::nan("")}) {
    o.cheap_design = share;
    EXPECT_THROW(o.validate(), Error) << share;
  }
  o.cheap_design = 1.0;
  EXPECT_NO_THROW(o.validate());
  // A rate per candidate, no fewer.
  o.cheap_design = 0.5;
  o.rate = std::make_shared<const std::vector<double>>(3, 1.0);
  EXPECT_THROW(propose(g.cs, {}, {}, 1, o), Error);
}

TEST(FeasibilityIterations, FifteenWhereTheDesignIsAmongTheCheapestElseFive) {
  const Grid g(4);
  EngineOptions o;
  o.gamma = 1;
  // Without rates no design is among the cheapest.
  EXPECT_EQ(o.effective_feasibility_iterations(true), kFeasibilityIterations);
  o.rate = std::make_shared<const std::vector<double>>(g.cs.size(), 1.0);
  EXPECT_EQ(o.effective_feasibility_iterations(true), kFeasibilityIterationsCheap);
  EXPECT_EQ(o.effective_feasibility_iterations(false), kFeasibilityIterations);
  o.gamma = 0.9;
  EXPECT_EQ(o.effective_feasibility_iterations(true), kFeasibilityIterations);
  // A share given holds over numeric features too; the share 1 is the whole space.
  o.cheap_design = 0.25;
  EXPECT_EQ(o.effective_feasibility_iterations(false), kFeasibilityIterationsCheap);
  o.gamma = 1;
  o.cheap_design = 1.0;
  EXPECT_EQ(o.effective_feasibility_iterations(true), kFeasibilityIterations);
  o.feasibility_iterations = 7;
  EXPECT_EQ(o.effective_feasibility_iterations(true), 7);
  EXPECT_NO_THROW(o.validate());
  for (int bad : {0, -1, 51}) {
    o.feasibility_iterations = bad;
    EXPECT_THROW(o.validate(), Error) << bad;
  }
}

TEST(TimeModel, AtGammaOneWithACategoricalFeatureAutomaticModelsTheRunTimesAtEveryStep) {
  const Priced g;
  const CandidateSet kind = g.with_kind();
  // Whether each model step of a 10-trial search modelled the run times.
  auto steps = [&](const CandidateSet &cs, EngineOptions::TimeModel m, double gamma) {
    const EngineOptions o = g.options(m, gamma);
    std::vector<Observation> done;
    std::vector<bool> timed;
    for (size_t t = 0; t < 10; ++t) {
      const Proposal p = propose(cs, done, {}, 1, o);
      const size_t i = p.indices.at(0);
      if (p.modelled && p.designed == 0) timed.push_back(p.time_modelled);
      done.push_back(Observation::ok(i, g.time(i) * (*g.f)[i]));
    }
    return timed;
  };
  using M = EngineOptions::TimeModel;
  const std::vector<bool> always = steps(kind, M::automatic, 1);
  ASSERT_GE(always.size(), 5u);
  for (size_t s = 0; s < always.size(); ++s) EXPECT_TRUE(always[s]) << "model step " << s;
  // better, at gamma 0.9, or over numeric features only: the scores' model until the run times'
  // orders the trials better, from kTimeModelMinTrials successes on -- not at the first step.
  EXPECT_FALSE(steps(kind, M::better, 1).at(0));
  EXPECT_FALSE(steps(kind, M::automatic, 0.9).at(0));
  EXPECT_FALSE(steps(g.cs, M::automatic, 1).at(0));
}

TEST(TimeModel, BadFactorsAreRefused) {
  const Grid g(4);
  EngineOptions o;
  o.score_factor = std::make_shared<const std::vector<double>>(g.cs.size(), 1.0);
  std::vector<double> bad(g.cs.size(), 1.0);
  bad[3] = 0;
  o.score_factor = std::make_shared<const std::vector<double>>(bad);
  EXPECT_THROW(o.validate(), Error);
  bad[3] = std::nan("");
  o.score_factor = std::make_shared<const std::vector<double>>(bad);
  EXPECT_THROW(o.validate(), Error);
  // A factor per candidate, no fewer.
  o.score_factor = std::make_shared<const std::vector<double>>(3, 1.0);
  std::vector<Observation> done;
  for (size_t i : {0u, 5u, 10u, 15u}) done.push_back(Observation::ok(i, 1.0 + static_cast<double>(i)));
  EXPECT_THROW(propose(g.cs, done, {}, 1, o), Error);
  EXPECT_EQ(parse_time_model("--time-model", "auto"), EngineOptions::TimeModel::automatic);
  EXPECT_EQ(parse_time_model("--time-model", "off"), EngineOptions::TimeModel::no);
  EXPECT_EQ(parse_time_model("--time-model", "better"), EngineOptions::TimeModel::better);
  EXPECT_STREQ(time_model_name(EngineOptions::TimeModel::better), "better");
  try {
    parse_time_model("--time-model", "maybe");
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "--time-model: 'maybe' is not allowed; allowed: auto, better, yes, no (or true, false, 1, 0, on, off)");
  }
}
