// CSV tables, the replay problems built from them, and replayed searches.
#include "autotune/replay.hpp"

#include <gtest/gtest.h>

#include "autotune/error.hpp"

using namespace autotune;

namespace {

std::string error_of(const std::string &csv, const ReplaySpec &spec) {
  try {
    load_problems(Table::parse_csv(csv, "t.csv"), spec);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

const char kTable[] =
    "w,nodes,family,time_s,cost,ok\r\n"
    "a,1,x,100,1.0,1\r\n"
    "a,2,x,60,1.2,1\r\n"
    "a,4,x,50,2.0,1\r\n"
    "a,1,y,,,0\r\n"
    "b,1,x,10,3,1\r\n"
    "b,2,y,4,2,1\r\n";

}  // namespace

TEST(Table, ParsesQuotesAndLineEnds) {
  const Table t =
      Table::parse_csv("a,b\n\"x,1\",\"say \"\"hi\"\"\"\r\n\n3,\"multi\nline\"\n", "q.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.cell(0, 0), "x,1");
  EXPECT_EQ(t.cell(0, 1), "say \"hi\"");
  EXPECT_EQ(t.cell(1, 1), "multi\nline");
  EXPECT_EQ(t.where(1), "q.csv:4");
  EXPECT_EQ(t.column("b", "--x"), 1u);
  try {
    t.column("c", "--group");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_STREQ(e.what(), "--group: no column 'c' in q.csv; columns: a, b");
  }
  EXPECT_THROW(Table::parse_csv("a,b\n1\n", "r.csv"), Error);
  EXPECT_THROW(Table::parse_csv("a,a\n1,2\n", "r.csv"), Error);
  EXPECT_THROW(Table::parse_csv("a\n\"open\n", "r.csv"), Error);
  EXPECT_THROW(Table::read_csv("/nonexistent/x.csv"), Error);
}

TEST(Replay, LoadsProblemsAndDetectsFeatureKinds) {
  ReplaySpec spec;
  spec.group = "w";
  const auto probs = load_problems(Table::parse_csv(kTable, "t.csv"), spec);
  ASSERT_EQ(probs.size(), 2u);
  EXPECT_EQ(probs[0].name, "a");
  EXPECT_EQ(probs[0].candidates.size(), 4u);
  EXPECT_EQ(probs[0].candidates.columns()[0].scale, Scale::automatic);
  EXPECT_EQ(probs[0].candidates.columns()[1].scale, Scale::categorical);
  EXPECT_EQ(probs[0].ok, (std::vector<char>{1, 1, 1, 0}));
  // Derived features: products of numeric columns.
  spec.features = {"nodes"};
  spec.derived = {DerivedFeature::parse("n2=nodes*nodes")};
  const auto d = load_problems(Table::parse_csv(kTable, "t.csv"), spec);
  EXPECT_EQ(d[0].candidates.columns()[1].numbers, (std::vector<double>{1, 4, 16, 1}));
}

TEST(Replay, DerivedFeatureDividesAfterASlash) {
  // A learning rate per sample of the batch: lr / batch, and a product and a ratio in one.
  const char table[] =
      "w,batch,lr,time_s,cost,ok\n"
      "a,32,0.01,10,1,1\n"
      "a,64,0.01,10,1,1\n"
      "a,128,0.04,10,1,0\n";
  ReplaySpec spec;
  spec.group = "w";
  spec.features = {"batch"};
  spec.derived = {DerivedFeature::parse("lr_per_sample=lr/batch"),
                  DerivedFeature::parse("mixed=batch*lr/batch")};
  const auto d = load_problems(Table::parse_csv(table, "t.csv"), spec);
  ASSERT_EQ(d.size(), 1u);
  const auto &cols = d[0].candidates.columns();
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_EQ(cols[1].name, "lr_per_sample");
  EXPECT_DOUBLE_EQ(cols[1].numbers[0], 0.01 / 32);
  EXPECT_DOUBLE_EQ(cols[1].numbers[1], 0.01 / 64);
  EXPECT_DOUBLE_EQ(cols[1].numbers[2], 0.04 / 128);
  EXPECT_DOUBLE_EQ(cols[2].numbers[2], 128 * 0.04 / 128);
  // A divisor of 0 is refused with the row and the column; an empty factor either side of '/'.
  EXPECT_EQ(error_of("w,batch,lr,time_s,cost,ok\na,0,0.1,1,1,1\n",
                     ReplaySpec{"w", {"batch"}, {DerivedFeature::parse("r=lr/batch")}}),
            "t.csv:2: batch: '0' is 0, a divisor of --derive r; allowed: a number other than 0");
  EXPECT_THROW(DerivedFeature::parse("r=lr/"), Error);
  EXPECT_THROW(DerivedFeature::parse("r=/lr"), Error);
  EXPECT_THROW(DerivedFeature::parse("r=lr*/batch"), Error);
}

TEST(Replay, BadInputGetsOneClearMessage) {
  ReplaySpec spec;
  spec.group = "w";
  EXPECT_EQ(error_of("w,nodes,time_s,cost\na,1,1,1\n", spec),
            "ok column: no column 'ok' in t.csv; columns: w, nodes, time_s, cost");
  EXPECT_EQ(error_of("w,nodes,time_s,cost,ok\n", spec), "t.csv: the table has no data rows");
  EXPECT_EQ(error_of("w,nodes,time_s,cost,ok\na,1,fast,1,1\n", spec),
            "t.csv:2: time_s: 'fast' is not a number");
  EXPECT_EQ(error_of("w,nodes,time_s,cost,ok\na,1,0,1,1\n", spec),
            "t.csv:2: time_s: '0' must be greater than 0 on a row with ok=1");
  EXPECT_EQ(error_of("w,nodes,time_s,cost,ok\na,1,1,1,yes\n", spec),
            "t.csv:2: ok: 'yes' is not 0 or 1");
  EXPECT_EQ(error_of("w,nodes,time_s,cost,ok\na,1,1,1,1\nb,2,,,0\n", spec),
            "t.csv: problem 'b' (w): no row has ok=1, so there is no optimum to compare with");
  EXPECT_EQ(error_of("w,nodes,time_s,cost,ok\na,,1,1,1\n", spec),
            "t.csv:2: nodes: empty value; every feature needs one");
  spec.features = {"nodes", "size"};
  EXPECT_EQ(error_of(kTable, spec),
            "--features: no column 'size' in t.csv; columns: w, nodes, family, time_s, cost, ok");
  spec.features = {"nodes", "time_s"};
  EXPECT_EQ(error_of(kTable, spec),
            "--features: 'time_s' is the group or a measurement column, not a feature");
  spec.features = {};
  spec.derived = {DerivedFeature::parse("z=nodes*family")};
  EXPECT_EQ(error_of(kTable, spec),
            "t.csv:2: family: 'x' is not a number (a factor of --derive z)");
  EXPECT_THROW(DerivedFeature::parse("z=nodes**x"), Error);
  EXPECT_THROW(DerivedFeature::parse("nodes"), Error);
}

TEST(Replay, ExhaustiveFindsTheOptimumWhereExpected) {
  ReplaySpec spec;
  spec.group = "w";
  const auto probs = load_problems(Table::parse_csv(kTable, "t.csv"), spec);
  EngineOptions o;
  o.strategy = Strategy::exhaustive;
  o.stop.budget = 10;
  // gamma = 1 (cost): the first row is the cheapest; gamma = 0 (time): the third.
  ReplayRun cost = replay_once(probs[0], 1.0, o);
  EXPECT_EQ(cost.tried, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(cost.stop.rule, StopRule::exhausted);
  EXPECT_EQ(cost.trials_to_within(0.0), 1u);
  ReplayRun time = replay_once(probs[0], 0.0, o);
  EXPECT_EQ(time.trials_to_within(0.0), 3u);
  EXPECT_EQ(time.trials_to_within(0.25), 2u);   // 60 s is within 25% of 50 s... 20%
  EXPECT_DOUBLE_EQ(time.regret_after(1), 1.0);  // 100 s against 50 s
  EXPECT_DOUBLE_EQ(time.regret_after(10), 0.0);
  // A failed first trial: the reference is the first success.
  o.stop.budget = 2;
  ReplayRun bo = replay_once(probs[0], 0.5, o);
  EXPECT_EQ(bo.stop.rule, StopRule::budget);
  EXPECT_EQ(bo.tried.size(), 2u);
}

TEST(Replay, BoRunsAreReproducible) {
  ReplaySpec spec;
  spec.group = "w";
  const auto probs = load_problems(Table::parse_csv(kTable, "t.csv"), spec);
  EngineOptions o;
  o.seed = 9;
  o.stop.budget = 4;
  EXPECT_EQ(replay_once(probs[0], 1.0, o).tried, replay_once(probs[0], 1.0, o).tried);
  EXPECT_THROW(replay_once(probs[0], 1.5, o), Error);
}

TEST(Replay, RatesAreCostOverTimeAndEstimatedWhereARowHasNone) {
  // Two node counts of type x with their rates (0.01 per node-second), and two failed rows
  // without time or cost: on a log scale the rate is linear in the encoded node count, so the
  // least-squares estimate recovers it.
  const char csv[] =
      "w,nodes,time_s,cost,ok\n"
      "a,1,100,1.0,1\n"
      "a,4,50,2.0,1\n"
      "a,2,,,0\n"
      "a,8,,,0\n";
  ReplaySpec spec;
  spec.group = "w";
  const auto probs = load_problems(Table::parse_csv(csv, "r.csv"), spec);
  ASSERT_EQ(probs[0].rate.size(), 4u);
  EXPECT_DOUBLE_EQ(probs[0].rate[0], 0.01);
  EXPECT_DOUBLE_EQ(probs[0].rate[1], 0.04);
  EXPECT_NEAR(probs[0].rate[2], 0.02, 1e-6);
  EXPECT_NEAR(probs[0].rate[3], 0.08, 1e-6);
  // The score factors: (1 - gamma) / T_ref + gamma rate / C_ref.
  const std::vector<double> f = score_factors(probs[0], Reference{100, 1.0}, 0.5);
  EXPECT_DOUBLE_EQ(f[0], 0.5 / 100 + 0.5 * 0.01 / 1.0);
  EXPECT_DOUBLE_EQ(f[1], 0.5 / 100 + 0.5 * 0.04 / 1.0);
  // A run of the time model is reproducible, and --time-model no replays the score model.
  EngineOptions o;
  o.seed = 3;
  o.stop.budget = 4;
  o.time_model = EngineOptions::TimeModel::yes;
  EXPECT_EQ(replay_once(probs[0], 1.0, o).tried, replay_once(probs[0], 1.0, o).tried);
}
