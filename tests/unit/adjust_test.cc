// Per-role adjustment from measured use (adjust.hpp) and its autotune.conf keys.
#include "autotune/adjust.hpp"

#include <gtest/gtest.h>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "conf_error.hpp"

using namespace autotune;

namespace {

Configuration cfg(const std::string &s) { return Configuration::parse(s); }

// Every combination of the given per-role values around a base of nodes=2,workers=1,ps=1.
std::vector<Configuration> grid(std::vector<int> wcpu, std::vector<int> wmem, std::vector<int> scpu,
                                std::vector<int> smem, int ps = 1) {
  std::vector<Configuration> out;
  for (int a : wcpu)
    for (int b : wmem)
      for (int c : scpu)
        for (int d : smem) {
          Configuration x;
          x.counts = {2, ps == 0 ? 2 : 1, ps};
          x.worker = {a, static_cast<std::uint64_t>(b), 0};
          x.server = {c, static_cast<std::uint64_t>(d), 0};
          out.push_back(x);
        }
  return out;
}

RoleMeasure use(std::optional<double> cpu, std::optional<double> rss) {
  return RoleMeasure{cpu, rss};
}

}  // namespace

using test::conf_error;

TEST(Adjust, IdleParameterServerGetsFewerCpus) {
  const Configuration c = cfg(
      "nodes=2,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=2,mem-per-ps=256M");
  const auto allowed = grid({1}, {256}, {1, 2}, {256});
  auto a = adjust(c, use(0.7, 100), use(0.21, 100), allowed, AdjustConf{});
  ASSERT_TRUE(a);
  EXPECT_EQ(
      a->config.format(),
      "nodes=2,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  EXPECT_EQ(a->reason,
            "parameter servers' busiest rank used 0.21 of 2 CPUs (below AdjustCpuIdle=0.5 of "
            "them): cpus-per-ps 2 -> 1");
}

TEST(Adjust, FewestCpusThatKeepUseBelowTheTarget) {
  // 2.5 cores busy of 8: 4 CPUs keep it at 62% (below 80%), 2 would not.
  Configuration c = cfg(
      "nodes=2,workers=1,ps=1,cpus-per-worker=8,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  auto a =
      adjust(c, use(2.5, 100), use(0.1, 100), grid({1, 2, 4, 8}, {256}, {1}, {256}), AdjustConf{});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->config.worker.cpus, 4);
  EXPECT_NE(a->reason.find("workers' busiest rank used 2.5 of 8 CPUs"), std::string::npos)
      << a->reason;
}

TEST(Adjust, WorkersNearTheirMemoryGetMore) {
  const Configuration c = cfg(
      "nodes=2,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  auto a = adjust(c, use(0.9, 240), use(0.1, 100), grid({1}, {256, 512, 1024}, {1}, {256}),
                  AdjustConf{});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->config.worker.mem_mb, 512u);
  EXPECT_EQ(a->reason,
            "workers peaked at 240 MB of their 256M (94%, above AdjustMemHigh=85%): mem-per-worker "
            "256M -> 512M");
  // Far beyond the limit: the smallest value that keeps the peak below 85% of it.
  a = adjust(c, use(0.9, 700), use(0.1, 100), grid({1}, {256, 512, 1024}, {1}, {256}),
             AdjustConf{});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->config.worker.mem_mb, 1024u);
  // Beyond every allowed value: the largest.
  a = adjust(c, use(0.9, 2000), use(0.1, 100), grid({1}, {256, 512, 1024}, {1}, {256}),
             AdjustConf{});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->config.worker.mem_mb, 1024u);
  // Nothing larger allowed: no change.
  EXPECT_FALSE(
      adjust(c, use(0.9, 250), use(0.1, 100), grid({1}, {128, 256}, {1}, {256}), AdjustConf{}));
}

TEST(Adjust, MemoryFarAboveUseIsLowered) {
  const Configuration c = cfg(
      "nodes=2,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=1G,cpus-per-ps=1,mem-per-ps=256M");
  auto a = adjust(c, use(0.9, 68), use(0.1, 60), grid({1}, {128, 256, 512, 1024}, {1}, {256}),
                  AdjustConf{});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->config.worker.mem_mb, 128u);  // 68 MB is 53% of 128M: below 85%
  EXPECT_NE(a->reason.find("below AdjustMemLow=25%"), std::string::npos) << a->reason;
  AdjustConf off;
  off.mem_low = 0;
  EXPECT_FALSE(
      adjust(c, use(0.9, 68), use(0.1, 60), grid({1}, {128, 256, 512, 1024}, {1}, {256}), off));
}

TEST(Adjust, NothingToChange) {
  const Configuration c = cfg(
      "nodes=2,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  const auto allowed = grid({1, 2}, {128, 256, 512}, {1, 2}, {128, 256, 512});
  // Busy single-CPU ranks are never given more CPUs; memory within the thresholds stays.
  const Configuration two = cfg(
      "nodes=2,workers=1,ps=1,cpus-per-worker=2,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  // 0.9 of 2 CPUs is idle, but one CPU would be 90% busy, above AdjustCpuTarget: no change.
  EXPECT_FALSE(adjust(two, use(0.9, 150), use(0.3, 100), allowed, AdjustConf{}));
  EXPECT_FALSE(adjust(c, use(0.99, 150), use(0.3, 100), allowed, AdjustConf{}));
  // No measurements at all.
  EXPECT_FALSE(adjust(c, use(std::nullopt, std::nullopt), use(std::nullopt, std::nullopt), allowed,
                      AdjustConf{}));
}

TEST(Adjust, OnlyAllowedConfigurations) {
  const Configuration c = cfg(
      "nodes=2,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=2,mem-per-ps=256M");
  // cpus-per-ps=1 is not a candidate (e.g. outside the class's space): no change.
  EXPECT_FALSE(adjust(c, use(0.7, 100), use(0.1, 100), grid({1}, {256}, {2}, {256}), AdjustConf{}));
}

TEST(Adjust, NoServersNoServerRules) {
  const Configuration c = cfg(
      "nodes=2,workers=2,ps=0,cpus-per-worker=2,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M");
  auto a = adjust(c, use(0.6, 100), use(0.0, 1.0), grid({1, 2}, {256}, {1}, {128, 256}, 0),
                  AdjustConf{});
  ASSERT_TRUE(a);  // workers: 0.6 of 2 CPUs is below half, and below 80% of 1: 2 -> 1; nothing
                   // about servers
  EXPECT_EQ(a->config.worker.cpus, 1);
  EXPECT_EQ(a->reason.find("parameter servers"), std::string::npos) << a->reason;
}

TEST(Adjust, SeveralChangesAtOnce) {
  const Configuration c = cfg(
      "nodes=2,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=2,mem-per-ps=256M");
  auto a =
      adjust(c, use(0.9, 240), use(0.1, 100), grid({1}, {256, 512}, {1, 2}, {256}), AdjustConf{});
  ASSERT_TRUE(a);
  EXPECT_EQ(
      a->config.format(),
      "nodes=2,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=512M,cpus-per-ps=1,mem-per-ps=256M");
  EXPECT_NE(a->reason.find("mem-per-worker 256M -> 512M; parameter servers' busiest rank"),
            std::string::npos)
      << a->reason;
}

TEST(AdjustConf, DefaultsKeysAndErrors) {
  const AdjustConf d = Conf::defaults().adjust;
  EXPECT_EQ(d.trials, 2);
  EXPECT_DOUBLE_EQ(d.cpu_idle, 0.5);
  EXPECT_DOUBLE_EQ(d.cpu_target, 0.8);
  EXPECT_DOUBLE_EQ(d.mem_high, 0.85);
  EXPECT_DOUBLE_EQ(d.mem_low, 0.25);
  const Conf c = Conf::load_text(
      "AdjustTrials=0\nAdjustCpuIdle=0.3\nAdjustCpuTarget=0.9\nAdjustMemHigh=0.9\nAdjustMemLow="
      "0\n");
  EXPECT_EQ(c.adjust.trials, 0);
  EXPECT_DOUBLE_EQ(c.adjust.cpu_idle, 0.3);
  EXPECT_DOUBLE_EQ(c.adjust.cpu_target, 0.9);
  EXPECT_DOUBLE_EQ(c.adjust.mem_high, 0.9);
  EXPECT_DOUBLE_EQ(c.adjust.mem_low, 0.0);
  EXPECT_EQ(conf_error("AdjustCpuIdle=0.9\n"),
            "autotune.conf:1: AdjustCpuIdle 0.9 must be below AdjustCpuTarget 0.8");
  EXPECT_EQ(conf_error("AdjustMemLow=0.9\n"),
            "autotune.conf:1: AdjustMemLow 0.9 must be below AdjustMemHigh 0.85");
  EXPECT_NE(conf_error("AdjustMemHigh=1.5\n").find("autotune.conf:1: AdjustMemHigh"),
            std::string::npos);
  EXPECT_NE(conf_error("AdjustTrials=-1\n").find("autotune.conf:1: AdjustTrials"),
            std::string::npos);
}
