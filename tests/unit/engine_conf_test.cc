// The engine's keys of autotune.conf.
#include "autotune/engine_conf.hpp"

#include <gtest/gtest.h>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/optimizer.hpp"
#include "conf_error.hpp"

using namespace autotune;

using test::conf_error;

TEST(EngineConf, DefaultsAndEveryKey) {
  const EngineConf d = Conf::defaults().engine;
  EXPECT_FALSE(d.initial_trials);  // auto: by the class's objective
  EXPECT_EQ(d.default_budget, 20u);
  EXPECT_DOUBLE_EQ(d.ei_fraction, 0.0);
  EXPECT_TRUE(d.default_space.empty());
  EXPECT_TRUE(d.input_warping);
  EXPECT_EQ(d.linear_trend, Trend::automatic);
  EXPECT_EQ(d.kernel, GpKernel::ard);
  EXPECT_EQ(d.time_model, TimeModel::automatic);
  const Conf c = Conf::load_text(
      "InitialTrials=5\nDefaultBudget=30\nMaxBudget=40\nDefaultGamma=0.25\nSeed=7\n"
      "StopImprovement=0.02\nRoundTrials=4\nStopEIFraction=0.05\nMinTrials=8\n"
      "ExplorationMargin=0\nBatchMode=liar\nDefaultSpace=nodes=1-4\nSpaceLimits=nodes=1-16\n"
      "InputWarping=no\nLinearTrend=yes\nKernel=ard+additive\nTimeModel=no\n");
  const EngineConf &e = c.engine;
  EXPECT_EQ(e.initial_trials, 5u);
  EXPECT_EQ(e.default_budget, 30u);
  EXPECT_EQ(e.max_budget, 40u);
  EXPECT_DOUBLE_EQ(e.default_gamma, 0.25);
  EXPECT_EQ(e.seed, 7u);
  EXPECT_EQ(e.batch, BatchMode::constant_liar);
  EXPECT_EQ(e.default_space.given(Dim::nodes), (DimValues{1, 2, 3, 4}));
  const StoppingOptions s = e.stopping(12);
  EXPECT_EQ(s.budget, 12u);
  EXPECT_DOUBLE_EQ(s.min_improvement, 0.02);
  EXPECT_EQ(s.round_trials, 4u);
  EXPECT_DOUBLE_EQ(s.ei_fraction, 0.05);
  EXPECT_EQ(s.min_trials, 8u);
  const EngineOptions o = engine_options(e, 25);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.initial_trials, 5u);
  EXPECT_EQ(o.batch, BatchMode::constant_liar);
  EXPECT_DOUBLE_EQ(o.xi, 0.0);
  EXPECT_FALSE(o.input_warping);
  EXPECT_EQ(o.linear_trend, Trend::yes);
  EXPECT_TRUE(o.effective_linear_trend());
  EXPECT_EQ(o.gp.kernel, GpKernel::ard_additive);
  EXPECT_EQ(o.time_model, TimeModel::no);
  EXPECT_EQ(o.stop.budget, 25u);
  EXPECT_NO_THROW(o.validate());
}

TEST(EngineConf, BadValuesFailClosed) {
  EXPECT_EQ(conf_error("InitialTrials=0\n"),
            "autotune.conf:1: InitialTrials: '0' is out of range; allowed: a whole number from 1 "
            "to 1000, or auto");
  EXPECT_EQ(conf_error("InitialTrials=some\n"),
            "autotune.conf:1: InitialTrials: 'some' is not a whole number; allowed: a whole number "
            "from 1 to 1000, or auto");
  EXPECT_FALSE(Conf::load_text("InitialTrials=auto\n").engine.initial_trials);
  EXPECT_EQ(
      conf_error("StopEIFraction=lots\n"),
      "autotune.conf:1: StopEIFraction: 'lots' is not a number; allowed: a number from 0 to 1");
  EXPECT_EQ(conf_error("InputWarping=sometimes\n"),
            "autotune.conf:1: InputWarping: 'sometimes' is not a boolean; allowed: yes, no, true, "
            "false, 1, 0, on, off");
  EXPECT_EQ(conf_error("LinearTrend=sometimes\n"),
            "autotune.conf:1: LinearTrend: 'sometimes' is not allowed; allowed: auto, yes, no (or "
            "true, false, 1, 0, on, off)");
  EXPECT_EQ(Conf::load_text("LinearTrend=auto\n").engine.linear_trend, Trend::automatic);
  EXPECT_EQ(Conf::load_text("LinearTrend=off\n").engine.linear_trend, Trend::no);
  EXPECT_EQ(conf_error("TimeModel=maybe\n"),
            "autotune.conf:1: TimeModel: 'maybe' is not allowed; allowed: auto, better, yes, no (or "
            "true, false, 1, 0, on, off)");
  EXPECT_EQ(Conf::load_text("TimeModel=yes\n").engine.time_model, TimeModel::yes);
  EXPECT_EQ(Conf::load_text("TimeModel=auto\n").engine.time_model, TimeModel::automatic);
  EXPECT_EQ(Conf::load_text("TimeModel=better\n").engine.time_model, TimeModel::better);
  EXPECT_EQ(conf_error("Kernel=sum\n"),
            "autotune.conf:1: Kernel: 'sum' is not a kernel; allowed: ard, additive, ard+additive");
  EXPECT_EQ(conf_error("BatchMode=greedy\n"),
            "autotune.conf:1: BatchMode: unknown batch mode 'greedy'; allowed: believer, liar");
  EXPECT_EQ(conf_error("DefaultSpace=nodes=0\n"),
            "autotune.conf:1: DefaultSpace: nodes: '0' is out of range; allowed: a whole number "
            "from 1 to 100000");
  EXPECT_EQ(conf_error("DefaultBudget=50\nMaxBudget=40\n"),
            "autotune.conf:1: DefaultBudget 50 is above MaxBudget 40");
  EXPECT_EQ(conf_error("DefaultBudget=200\n"),
            "autotune.conf:1: DefaultBudget 200 is above MaxBudget 100");
  EXPECT_EQ(conf_error("DefaultSpace=nodes=1-32\nSpaceLimits=nodes=1-16\n"),
            "autotune.conf:1: DefaultSpace: nodes: 1-32 is outside the site's limits 1-16 "
            "(SpaceLimits in autotune.conf)");
  EXPECT_EQ(conf_error("DefaultSpace=nodes=1-101,workers=1-100\n"),
            "autotune.conf:1: DefaultSpace: the space has 10100 combinations (101 nodes x 100 workers); at "
            "most 10000 are allowed (narrow a range or use a step, e.g. 1-64:x2)");
  EXPECT_EQ(conf_error("Seed=1\nSeed=2\n"),
            "autotune.conf:2: Seed is given twice (first at autotune.conf:1)");
}
