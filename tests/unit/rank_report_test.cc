// The per-rank reports of the helpers (docs/reporting.md): accepted when well formed, refused
// naming the field otherwise, and merged into the app's result the way libssp's rank 0 writes it.
#include "autotune/rank_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "autotune/error.hpp"
#include "autotune/result.hpp"

using namespace autotune;

namespace {

std::string error_of(const std::string &text) {
  try {
    parse_rank_report(text);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

const char *kRank0 =
    R"({"format":"autotune-rank/1","rank":0,"role":"worker","node":"n1","samples":1000,"wall_s":2,)"
    R"("batches":10,"cpu_s":1.5,"peak_rss_mb":100,"cpus_allocated":1,"mem_limit_mb":512})";
const char *kRank1 =
    R"({"format":"autotune-rank/1","rank":1,"node":"n2","samples":1000,"wall_s":4,"batches":8,"cpu_s":4,)"
    R"("peak_rss_mb":150})";

}  // namespace

TEST(RankReport, Parses) {
  const RankReport r = parse_rank_report(kRank0);
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.role, "worker");
  EXPECT_EQ(r.node, "n1");
  EXPECT_DOUBLE_EQ(r.samples, 1000);
  EXPECT_DOUBLE_EQ(r.wall_s, 2);
  EXPECT_DOUBLE_EQ(r.batches, 10);
  const RankReport minimal = parse_rank_report(R"({"format":"autotune-rank/1","rank":3,"samples":0,"wall_s":0.5})");
  EXPECT_EQ(minimal.role, "worker");
  EXPECT_LT(minimal.cpu_s, 0) << "not given";
}

TEST(RankReport, RefusesBadValuesNamingTheField) {
  EXPECT_EQ(error_of("[]"), "rank report: is not a JSON object");
  EXPECT_EQ(error_of("{"), error_of("{")) << "stable";
  EXPECT_EQ(error_of("{").rfind("rank report: not valid JSON", 0), 0u);
  EXPECT_EQ(error_of(R"({"rank":0,"samples":1,"wall_s":1})"), "rank report: format: is not autotune-rank/1");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","samples":1,"wall_s":1})"), "rank report: rank: missing");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","rank":1.5,"samples":1,"wall_s":1})"),
            "rank report: rank: is not a whole number");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","rank":0,"samples":-1,"wall_s":1})"),
            "rank report: samples: -1 is below 0");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","rank":0,"samples":"many","wall_s":1})"),
            "rank report: samples: is not a number");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","rank":0,"samples":1,"wall_s":0})"),
            "rank report: wall_s: 0 is not above 0");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","rank":0,"samples":1})"), "rank report: wall_s: missing");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","rank":0,"samples":1,"wall_s":1,"role":"boss"})"),
            "rank report: role: 'boss' is not one of worker, server");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","rank":0,"samples":1,"wall_s":1,"cpu_s":-2})"),
            "rank report: cpu_s: -2 is below 0");
  EXPECT_EQ(error_of(R"({"format":"autotune-rank/1","rank":0,"samples":1,"wall_s":1,"profile_only":"yes"})"),
            "rank report: profile_only: is not true or false");
  EXPECT_EQ(error_of(std::string(70000, ' ')), "rank report: larger than 64 KiB");
}

TEST(RankReport, MergesLikeLibssp) {
  const std::string text = merge_rank_reports({parse_rank_report(kRank1), parse_rank_report(kRank0)});
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], "autotune-result/1");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["workers"], 2);
  EXPECT_DOUBLE_EQ(j["samples_per_s"].get<double>(), 500.0) << "2000 samples in the longest rank's 4 s";
  EXPECT_DOUBLE_EQ(j["clocks"].get<double>(), 8.0) << "the fewest batches";
  EXPECT_DOUBLE_EQ(j["roles"]["worker"]["cpu_util_mean"].get<double>(), (0.75 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(j["roles"]["worker"]["peak_rss_mb_max"].get<double>(), 150.0);
  ASSERT_EQ(j["per_rank"].size(), 2u);
  EXPECT_EQ(j["per_rank"][0]["rank"], 0) << "in rank order";
  // What ingest reads of it, inside autotune-run's document.
  nlohmann::json doc = {{"format", "autotune-run/1"}, {"status", "ok"}, {"wall_s", 5.0}, {"app", j}};
  const RunResult r = parse_result(doc.dump());
  ASSERT_TRUE(r.app);
  EXPECT_DOUBLE_EQ(r.app->samples_per_s, 500.0);
  ASSERT_TRUE(r.app->worker);
  EXPECT_DOUBLE_EQ(*r.app->worker->cpu_util_mean, 0.875);
}

TEST(RankReport, MissingRanksAreEstimatedFromTheReportedOnes) {
  // Rank 1 ran on a node that could not reach autotune-run's scratch directory: the
  // configuration's 2 workers processed about twice what rank 0 reported.
  const auto j = nlohmann::json::parse(merge_rank_reports({parse_rank_report(kRank0)}, 2));
  EXPECT_DOUBLE_EQ(j["samples_per_s"].get<double>(), 1000.0) << "2 x 1000 samples in 2 s";
  EXPECT_EQ(j["workers"], 2);
  EXPECT_EQ(j["workers_reported"], 1);
  const auto all = nlohmann::json::parse(merge_rank_reports({parse_rank_report(kRank0), parse_rank_report(kRank1)}, 2));
  EXPECT_FALSE(all.contains("workers_reported"));
}
