// A class's extra settings (class_extra.hpp): what make_class_extra() writes, read back as one
// typed struct; a store written before a key existed reads with the default it always had; a
// damaged one is refused as corrupt.
#include <gtest/gtest.h>

#include <string>

#include "autotune/class_extra.hpp"
#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/tuner.hpp"

using namespace autotune;

namespace {

ClassRecord with_extra(const std::string &extra, int budget = 9) {
  ClassRecord c;
  c.name = "x";
  c.settings.budget = budget;
  c.settings.extra = extra;
  return c;
}

Inventory two_types() {
  Inventory inv;
  NodeType t;
  t.name = "n1";
  t.count = 4;
  t.cpus = 8;
  t.mem_mb = 16000;
  t.gpus = 2;
  t.features = {"a", "b"};
  t.billing_weight = 1.5;
  inv.types.push_back(t);
  NodeType u;
  u.name = "n2";
  u.count = 2;
  u.cpus = 4;
  u.mem_mb = 8000;
  inv.types.push_back(u);
  return inv;
}

// Stores hold these texts: what make_class_extra() writes must not change (the batch mode is
// "believer" or "liar", as `autotune export` shows it too).
TEST(ClassExtra, MakeClassExtraWritesTheStoredForm) {
  const SpaceSpec space = SpaceSpec::parse("nodes=1-2,workers=1-4,ps=0-1,cpus-per-worker=1-2");
  PartitionLimits l;
  l.accounting.max_cpus = 6;
  l.accounting.min_nodes = 1;
  l.accounting.text = "QOS x: MaxTRESPerJob=cpu=6";
  EXPECT_EQ(
      make_class_extra(space, two_types(), "", Conf::defaults(), 5, 3, l),
      R"({"accounting_limits":{"max_cpus":6,"max_cpus_per_node":0,"max_gpus":0,"max_gpus_per_node":0,)"
      R"("max_mem_mb":0,"max_mem_per_node_mb":0,"max_nodes":0,"min_cpus":0,"min_mem_mb":0,"min_nodes":1,)"
      R"("text":"QOS x: MaxTRESPerJob=cpu=6"},"batch":"believer","billing_weights":"","change_margin":0.05,)"
      R"("drift_confirm":2,"drift_threshold":0.25,"epoch_budget":5,"epoch_start":0,"explore":"auto","initial_trials":"auto",)"
      R"("input_warping":true,"inventory":[{"billing_weight":1.5,"count":4,"cpus":8,"features":["a","b"],"gpus":2,"mem_mb":16000,)"
      R"("name":"n1"},{"billing_weight":1.0,"count":2,"cpus":4,"features":[],"gpus":0,"mem_mb":8000,)"
      R"("name":"n2"}],"kernel":"ard","linear_trend":"auto","queue_depth":4,"retune_budget":6,"seed":3,)"
      R"("space":"nodes=1|2,workers=1|2|3|4,ps=0|1,cpus-per-worker=1|2","stop":{"budget":5,)"
      R"("ei_fraction":0.0,"min_improvement":0.0,"min_trials":6,"round_trials":3},"time_model":"auto",)"
      R"("xi":0.01})");

  Conf conf = Conf::defaults();
  conf.engine.batch = BatchMode::constant_liar;
  PartitionLimits p;
  p.max_nodes = 2;
  p.max_mem_per_cpu_mb = 4000;
  const std::string liar = make_class_extra(SpaceSpec{}, two_types(), "CPU=1", conf, 12, 7, p);
  EXPECT_NE(liar.find(R"("batch":"liar")"), std::string::npos) << liar;
  EXPECT_NE(
      liar.find(
          R"("limits":{"max_cpus_per_node":0,"max_mem_per_cpu_mb":4000,"max_mem_per_node_mb":0,)"
          R"("max_nodes":2,"min_nodes":0})"),
      std::string::npos)
      << liar;
  EXPECT_EQ(liar.find("accounting_limits"), std::string::npos) << liar;
  EXPECT_EQ(liar.find("incumbent"), std::string::npos) << liar;
}

TEST(ClassExtra, ReadsBackWhatWasWritten) {
  Conf conf = Conf::defaults();
  conf.engine.batch = BatchMode::constant_liar;
  conf.engine.initial_trials = 5;
  conf.engine.exploration_margin = 0.2;
  conf.engine.min_improvement = 0.01;
  conf.engine.round_trials = 4;
  conf.engine.ei_fraction = 0.1;
  conf.engine.min_trials = 7;
  conf.tuner.queue_depth = 7;
  conf.tuner.change_margin = 0.1;
  conf.tuner.drift_threshold = 0.3;
  conf.tuner.drift_confirm = 3;
  conf.tuner.retune_budget = 2;
  conf.engine.input_warping = false;
  conf.engine.linear_trend = Trend::yes;
  conf.engine.kernel = GpKernel::ard_additive;
  conf.engine.time_model = TimeModel::yes;
  PartitionLimits l;
  l.min_nodes = 1;
  l.accounting.max_gpus = 2;
  l.accounting.text = "QOS g: MaxTRESPerJob=gres/gpu=2";
  const std::string text =
      make_class_extra(SpaceSpec::parse("nodes=1-2"), two_types(), "CPU=2", conf, 30, 11, l);
  const ClassExtra x = class_extra(with_extra(text));
  EXPECT_EQ(x.space, SpaceSpec::parse("nodes=1-2").format());
  ASSERT_EQ(x.inventory.types.size(), 2u);
  EXPECT_EQ(x.inventory.types[0].name, "n1");
  EXPECT_EQ(x.inventory.types[0].features, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(x.inventory.types[0].billing_weight, 1.5);
  EXPECT_EQ(x.inventory.types[1].mem_mb, 8000u);
  EXPECT_EQ(x.billing_weights, "CPU=2");
  EXPECT_EQ(x.seed, 11u);
  EXPECT_EQ(x.initial_trials, 5u);
  EXPECT_DOUBLE_EQ(x.xi, 0.2);
  EXPECT_EQ(x.batch, BatchMode::constant_liar);
  EXPECT_EQ(x.stop.budget, 30u);
  EXPECT_DOUBLE_EQ(x.stop.min_improvement, 0.01);
  EXPECT_EQ(x.stop.round_trials, 4u);
  EXPECT_DOUBLE_EQ(x.stop.ei_fraction, 0.1);
  EXPECT_EQ(x.stop.min_trials, 7u);
  EXPECT_EQ(x.queue_depth, 7);
  EXPECT_DOUBLE_EQ(x.change_margin, 0.1);
  EXPECT_DOUBLE_EQ(x.drift_threshold, 0.3);
  EXPECT_EQ(x.drift_confirm, 3);
  EXPECT_EQ(x.retune_budget, 2);
  EXPECT_FALSE(x.input_warping);
  EXPECT_EQ(x.linear_trend, Trend::yes);
  EXPECT_EQ(x.kernel, GpKernel::ard_additive);
  EXPECT_EQ(x.explore, Explore::automatic);
  EXPECT_EQ(x.time_model, TimeModel::yes);
  EXPECT_FALSE(x.time_modelled);
  EXPECT_NE(text.find(R"("kernel":"ard+additive")"), std::string::npos) << text;
  EXPECT_EQ(x.epoch_start, 0);
  EXPECT_EQ(x.epoch_budget, 30u);
  EXPECT_FALSE(x.incumbent);
  const PartitionLimits back = x.partition_limits();
  EXPECT_EQ(back.describe(), "MinNodes=1");
  EXPECT_EQ(back.accounting.max_gpus, 2u);
  EXPECT_EQ(back.accounting.text, "QOS g: MaxTRESPerJob=gres/gpu=2");
  // Written again, it is the same text.
  EXPECT_EQ(format_class_extra(x), text);
}

// A class created by an older version lacks keys: each reads as it always did, which is
// autotune.conf's default (the literals below are those defaults: changing one in TunerConf or
// EngineConf changes how such a class searches).
TEST(ClassExtra, AMissingKeyTakesTheDefaultItAlwaysHad) {
  const ClassExtra x =
      class_extra(with_extra(R"({"inventory":[{"name":"x","count":2,"cpus":4,"mem_mb":8000}]})"));
  EXPECT_EQ(x.space, "");
  EXPECT_EQ(x.billing_weights, "");
  EXPECT_EQ(x.seed, 1u);
  EXPECT_EQ(x.initial_trials, 3u);  // autotune.conf's default is auto now; it was 3
  EXPECT_DOUBLE_EQ(x.xi, 0.01);
  EXPECT_EQ(x.batch, BatchMode::kriging_believer);
  EXPECT_FALSE(x.stop.budget);
  EXPECT_DOUBLE_EQ(x.stop.min_improvement, 0.0);
  EXPECT_EQ(x.stop.round_trials, 3u);
  EXPECT_DOUBLE_EQ(x.stop.ei_fraction, 0.0);
  EXPECT_EQ(x.stop.min_trials, 6u);
  EXPECT_EQ(x.queue_depth, 4);
  EXPECT_DOUBLE_EQ(x.change_margin, 0.05);
  EXPECT_DOUBLE_EQ(x.drift_threshold, 0.25);
  EXPECT_EQ(x.drift_confirm, 2);
  EXPECT_EQ(x.retune_budget, 6);
  // The model: what the tuner always used before these keys were stored (not autotune.conf's
  // defaults, which now choose the linear term and the exploration by gamma).
  EXPECT_TRUE(x.input_warping);
  EXPECT_EQ(x.linear_trend, Trend::no);
  EXPECT_EQ(x.kernel, GpKernel::ard);
  EXPECT_EQ(x.explore, Explore::none);
  EXPECT_EQ(x.time_model, TimeModel::no);
  EXPECT_FALSE(x.time_modelled);
  EXPECT_EQ(x.epoch_start, 0);
  EXPECT_FALSE(x.epoch_budget);
  EXPECT_FALSE(x.incumbent);
  EXPECT_FALSE(x.limits);
  EXPECT_FALSE(x.accounting_limits);
  EXPECT_FALSE(x.partition_limits().any());
  EXPECT_FALSE(x.partition_limits().accounting.any());
  // ... and those are autotune.conf's.
  const EngineConf e;
  const TunerConf t;
  EXPECT_EQ(x.seed, e.seed);
  EXPECT_EQ(x.xi, e.exploration_margin);
  EXPECT_EQ(x.batch, e.batch);
  EXPECT_EQ(x.stop.round_trials, e.round_trials);
  EXPECT_EQ(x.stop.min_trials, e.min_trials);
  EXPECT_EQ(x.queue_depth, t.queue_depth);
  EXPECT_EQ(x.change_margin, t.change_margin);
  EXPECT_EQ(x.drift_threshold, t.drift_threshold);
  EXPECT_EQ(x.drift_confirm, t.drift_confirm);
  EXPECT_EQ(x.retune_budget, t.retune_budget);
  EXPECT_EQ(x.input_warping, e.input_warping);
  EXPECT_EQ(x.kernel, e.kernel);
  // A node type's missing keys.
  const ClassExtra bare = class_extra(with_extra(R"({"inventory":[{}]})"));
  ASSERT_EQ(bare.inventory.types.size(), 1u);
  EXPECT_EQ(bare.inventory.types[0].name, "node");
  EXPECT_EQ(bare.inventory.types[0].count, 1);
  EXPECT_EQ(bare.inventory.types[0].cpus, 1);
  EXPECT_EQ(bare.inventory.types[0].mem_mb, 1u);
  EXPECT_EQ(bare.inventory.types[0].gpus, 0);
  EXPECT_TRUE(bare.inventory.types[0].features.empty());
  EXPECT_DOUBLE_EQ(bare.inventory.types[0].billing_weight, 1.0);
  // A null is a missing key.
  const ClassExtra nulls =
      class_extra(with_extra(R"({"seed":null,"xi":null,"stop":{"budget":null},"limits":null})"));
  EXPECT_EQ(nulls.seed, 1u);
  EXPECT_DOUBLE_EQ(nulls.xi, 0.01);
  EXPECT_FALSE(nulls.stop.budget);
  EXPECT_FALSE(nulls.limits);
}

// The budget of the current search: the epoch's, else the one recorded with the stopping rules,
// else the class's.
TEST(ClassExtra, TheSearchsBudget) {
  EXPECT_EQ(class_extra(with_extra("{}")).stopping(9).budget, 9u);
  EXPECT_EQ(class_extra(with_extra(R"({"stop":{"budget":4}})")).stopping(9).budget, 4u);
  const StoppingOptions s =
      class_extra(with_extra(R"({"stop":{"budget":4,"round_trials":2},"epoch_budget":7})"))
          .stopping(9);
  EXPECT_EQ(s.budget, 7u);
  EXPECT_EQ(s.round_trials, 2u);
  EXPECT_EQ(s.min_trials, 6u);
  // load_problem() takes them so.
  const ClassProblem p = load_problem(with_extra(
      R"({"inventory":[{"name":"x","count":2,"cpus":4,"mem_mb":8000}],"stop":{"budget":4},"epoch_budget":7,)"
      R"("epoch_start":3,"batch":"liar"})"));
  EXPECT_EQ(p.stop.budget, 7u);
  EXPECT_EQ(p.settings.epoch_start, 3);
  EXPECT_EQ(p.settings.batch, BatchMode::constant_liar);
}

TEST(ClassExtra, TheModelsKeysRead) {
  EXPECT_EQ(class_extra(with_extra(R"({"linear_trend":true})")).linear_trend, Trend::yes);
  EXPECT_EQ(class_extra(with_extra(R"({"linear_trend":"no"})")).linear_trend, Trend::no);
  EXPECT_EQ(class_extra(with_extra(R"({"linear_trend":"auto"})")).linear_trend, Trend::automatic);
  EXPECT_EQ(class_extra(with_extra(R"({"explore":"thompson"})")).explore, Explore::thompson);
  EXPECT_FALSE(class_extra(with_extra(R"({"input_warping":false})")).input_warping);
  EXPECT_EQ(class_extra(with_extra(R"({"time_model":"yes"})")).time_model, TimeModel::yes);
  EXPECT_EQ(class_extra(with_extra(R"({"time_model":"auto"})")).time_model, TimeModel::automatic);
  EXPECT_EQ(class_extra(with_extra(R"({"time_model":"better"})")).time_model, TimeModel::better);
  EXPECT_TRUE(class_extra(with_extra(R"({"time_modelled":true})")).time_modelled);
  // Written and read back: the last model step's use of the time model is kept.
  ClassExtra x = class_extra(with_extra(R"({"time_model":"auto"})"));
  x.time_modelled = true;
  const ClassExtra back = class_extra(with_extra(format_class_extra(x)));
  EXPECT_EQ(back.time_model, TimeModel::automatic);
  EXPECT_TRUE(back.time_modelled);
  EXPECT_FALSE(back.form_modelled);
  x.form_modelled = true;
  EXPECT_TRUE(class_extra(with_extra(format_class_extra(x))).form_modelled);
  EXPECT_TRUE(class_extra(with_extra(R"({"form_modelled":true})")).form_modelled);
  try {
    class_extra(with_extra(R"({"time_model":"maybe"})"));
    ADD_FAILURE() << "a damaged time_model was read";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::corrupt);
    EXPECT_NE(std::string(e.what()).find("time_model: 'maybe' is not allowed"), std::string::npos) << e.what();
  }
}

// The failures' edge of the last model step is written and read back; a damaged one is damage.
TEST(ClassExtra, TheFailuresEdgeReadsBack) {
  ClassExtra x = class_extra(with_extra("{}"));
  EXPECT_FALSE(x.failure_edge);
  x.failure_edge = EdgeUse{"total-mem", false, 2048.5, 4};
  const ClassExtra back = class_extra(with_extra(format_class_extra(x)));
  ASSERT_TRUE(back.failure_edge);
  EXPECT_EQ(*back.failure_edge, (EdgeUse{"total-mem", false, 2048.5, 4}));
  for (const char *bad : {R"({"failure_edge":{"feature":1,"below":true,"value":1,"failures":3}})",
                          R"({"failure_edge":{"feature":"nodes","below":true,"value":1}})",
                          R"({"failure_edge":"nodes"})"}) {
    try {
      class_extra(with_extra(bad));
      ADD_FAILURE() << "a damaged failure_edge was read: " << bad;
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), Errc::corrupt) << bad;
      EXPECT_NE(std::string(e.what()).find("its settings are damaged"), std::string::npos) << e.what();
    }
  }
}

// InitialTrials=auto is stored as "auto" and resolved by the class's objective at each step; a
// count reads as that count; anything else is damage.
TEST(ClassExtra, TheInitialDesignsSizeReads) {
  EXPECT_EQ(class_extra(with_extra(R"({"initial_trials":4})")).initial_trials, 4u);
  const ClassExtra a = class_extra(with_extra(R"({"initial_trials":"auto"})"));
  EXPECT_FALSE(a.initial_trials);
  EXPECT_NE(format_class_extra(a).find(R"("initial_trials":"auto")"), std::string::npos);
  EXPECT_FALSE(class_extra(with_extra(format_class_extra(a))).initial_trials);
  EXPECT_EQ(a.engine_options(0.5).effective_initial_trials(false), kSmallDesign);
  EXPECT_EQ(a.engine_options(1).effective_initial_trials(false), kInitialTrials);
  for (const char *bad : {R"({"initial_trials":0})", R"({"initial_trials":"some"})",
                          R"({"initial_trials":1001})", R"({"initial_trials":[3]})",
                          R"({"initial_trials":2.5})", R"({"initial_trials":true})"}) {
    try {
      class_extra(with_extra(bad));
      ADD_FAILURE() << "a damaged initial_trials was read: " << bad;
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), Errc::corrupt) << bad;
    }
  }
}

TEST(ClassExtra, UnknownKeysAreIgnored) {
  const ClassExtra x = class_extra(with_extra(R"({"seed":5,"future_key":[1,2]})"));
  EXPECT_EQ(x.seed, 5u);
  EXPECT_EQ(format_class_extra(x).find("future_key"), std::string::npos);
}

TEST(ClassExtra, DamagedSettingsAreCorrupt) {
  for (const char *text : {"{", "[1]", "3", R"({"batch":"nope"})", R"({"seed":"one"})",
                           R"({"inventory":{"a":1}})", R"({"stop":[]})", R"({"kernel":"sum"})",
                           R"({"kernel":1})", R"({"linear_trend":"maybe"})",
                           R"({"explore":"far"})"}) {
    try {
      class_extra(with_extra(text));
      ADD_FAILURE() << text << ": expected an error";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), Errc::corrupt) << text;
      EXPECT_EQ(std::string(e.what()).rfind("class x: its settings are damaged (", 0), 0u)
          << e.what();
    }
  }
  try {
    class_extra(with_extra(R"({"batch":"nope"})"));
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("unknown batch mode 'nope'; allowed: believer, liar"),
              std::string::npos)
        << e.what();
  }
}

TEST(ClassExtra, PartitionLimitsAreKeptOnlyWhenSet) {
  ClassExtra x;
  x.set_partition_limits({});
  EXPECT_FALSE(x.limits);
  EXPECT_FALSE(x.accounting_limits);
  PartitionLimits l;
  l.accounting.max_nodes = 2;
  x.set_partition_limits(l);
  EXPECT_FALSE(x.limits);
  ASSERT_TRUE(x.accounting_limits);
  EXPECT_EQ(x.partition_limits().accounting.max_nodes, 2u);
  l.max_cpus_per_node = 4;
  x.set_partition_limits(l);
  ASSERT_TRUE(x.limits);
  EXPECT_FALSE(x.limits->accounting.any());  // kept as accounting_limits
  EXPECT_EQ(x.partition_limits().max_cpus_per_node, 4);
  EXPECT_EQ(x.partition_limits().accounting.max_nodes, 2u);
}

}  // namespace
