// The profiling result format and environment of libssp (no MPI).
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "profile.hpp"
#include "ssp/error.hpp"

namespace {

ssp::RankRecord rec(int rank, int role, double wall, double cpu, std::uint64_t samples,
                    std::int64_t clocks) {
  ssp::RankRecord r;
  r.rank = rank;
  r.role = role;
  std::snprintf(r.node, sizeof r.node, "n%d", rank + 1);
  r.wall_s = wall;
  r.cpu_s = cpu;
  r.samples = samples;
  r.clocks = clocks;
  r.peak_rss_mb = 10.0 * (rank + 1);
  return r;
}

TEST(SspProfile, ResultHasTheDocumentedFields) {
  ssp::ResultHeader h;
  h.app = "logreg";
  h.ranks = 3;
  h.workers = 2;
  h.servers = 1;
  h.consistency = "SSP(2)";
  h.staleness = 2;
  h.warmup_clocks = 2;
  auto s = rec(0, 0, 2.0, 0.5, 0, 0);
  s.mem_limit_mb = 512;
  const auto j =
      ssp::build_result(h, {s, rec(1, 1, 2.0, 2.0, 1000, 10), rec(2, 1, 4.0, 2.0, 1000, 10)});
  EXPECT_EQ(j["format"], "autotune-result/1");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["app"], "logreg");
  EXPECT_EQ(j["workers"], 2);
  EXPECT_EQ(j["clocks"], 10);
  EXPECT_EQ(j["samples"], 2000);
  EXPECT_DOUBLE_EQ(j["wall_s"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["samples_per_s"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(j["time_per_clock_s"].get<double>(), 0.4);
  EXPECT_EQ(j["roles"]["worker"]["ranks"], 2);
  EXPECT_DOUBLE_EQ(j["roles"]["worker"]["cpu_util_mean"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["roles"]["worker"]["cpu_util_max"].get<double>(), 1.0);
  EXPECT_TRUE(j["roles"]["worker"]["mem_limit_mb"].is_null());
  EXPECT_DOUBLE_EQ(j["roles"]["server"]["mem_limit_mb"].get<double>(), 512.0);
  EXPECT_DOUBLE_EQ(j["roles"]["server"]["cpu_util_mean"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["roles"]["worker"]["peak_rss_mb_max"].get<double>(), 30.0);
  ASSERT_EQ(j["per_rank"].size(), 3u);
  EXPECT_EQ(j["per_rank"][1]["node"], "n2");
  EXPECT_EQ(j["per_rank"][0]["role"], "server");
  EXPECT_DOUBLE_EQ(j["per_rank"][2]["samples_per_s"].get<double>(), 250.0);
}

TEST(SspProfile, NothingMeasuredIsEmpty) {
  ssp::ResultHeader h;
  const auto j = ssp::build_result(h, {rec(0, 0, 0, 0, 0, 0), rec(1, 1, 0, 0, 0, 0)});
  EXPECT_EQ(j["status"], "empty");
  EXPECT_EQ(j["samples_per_s"], 0.0);
}

TEST(SspProfile, EnvironmentIsValidated) {
  setenv("AUTOTUNE_PROFILE_BATCHES", "12", 1);
  setenv("AUTOTUNE_PROFILE_ONLY", "1", 1);
  setenv("AUTOTUNE_RESULT", "/tmp/x.json", 1);
  auto e = ssp::read_profile_env(-1);
  EXPECT_EQ(e.batches, 12);
  EXPECT_TRUE(e.only);
  EXPECT_EQ(e.warmup, 2);
  EXPECT_EQ(e.result_path, "/tmp/x.json");
  EXPECT_EQ(ssp::read_profile_env(0).warmup, 0);
  setenv("AUTOTUNE_PROFILE_BATCHES", "ten", 1);
  try {
    ssp::read_profile_env(-1);
    FAIL() << "no error";
  } catch (const ssp::Error &err) {
    EXPECT_NE(std::string(err.what()).find("AUTOTUNE_PROFILE_BATCHES: 'ten'"), std::string::npos);
  }
  unsetenv("AUTOTUNE_PROFILE_BATCHES");
  EXPECT_THROW(ssp::read_profile_env(-1), ssp::Error);  // ONLY without BATCHES
  unsetenv("AUTOTUNE_PROFILE_ONLY");
  unsetenv("AUTOTUNE_RESULT");
  EXPECT_EQ(ssp::read_profile_env(-1).batches, 0);
}

}  // namespace
