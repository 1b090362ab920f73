// The result document a user's job leaves for ingest: accepted when well-formed, rejected with
// a message naming the field otherwise.
#include "autotune/result.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "autotune/error.hpp"

using namespace autotune;

namespace {
const char *kGood = R"({"format":"autotune-run/1","status":"ok","exit_code":0,"signal":0,"reason":"",
  "wall_s":12.5,"config":"nodes=1,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M",
  "app":{"format":"autotune-result/1","samples_per_s":5120.5,"time_per_clock_s":0.2,"clocks":20,
         "roles":{"worker":{"ranks":1,"cpu_util_mean":0.95,"cpu_util_max":0.99,"cpus_allocated":1,"peak_rss_mb_max":180,"mem_limit_mb":256},
                  "server":{"ranks":1,"cpu_util_mean":0.1,"peak_rss_mb_max":50}},
         "per_rank":[{"rank":0,"role":"worker","node":"n1","samples_per_s":5120.5},{"rank":1,"role":"server","node":"n1"}],
         "future_field":[1,2,3]}})";

std::string error_of(const std::string &text) {
  try {
    parse_result(text);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

std::string with(const std::string &from, const std::string &to) {
  std::string s = kGood;
  const size_t p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return s.replace(p, from.size(), to);
}
}  // namespace

TEST(Result, ParsesAWellFormedDocument) {
  RunResult r = parse_result(kGood);
  EXPECT_EQ(r.status, "ok");
  ASSERT_TRUE(r.app);
  EXPECT_DOUBLE_EQ(r.app->samples_per_s, 5120.5);
  ASSERT_TRUE(r.app->worker);
  EXPECT_DOUBLE_EQ(*r.app->worker->cpu_util_mean, 0.95);
  ASSERT_TRUE(r.app->server);
  EXPECT_DOUBLE_EQ(*r.app->server->peak_rss_mb_max, 50);
  ASSERT_EQ(r.app->per_rank.size(), 2u);
  EXPECT_EQ(r.app->per_rank[0].node, "n1");
  EXPECT_FALSE(r.app->per_rank[1].samples_per_s);
}

TEST(Result, RejectsWithTheFieldNamed) {
  // Not JSON: the message says so and passes on where and why the parser stopped.
  const std::string not_json = error_of("not json");
  ASSERT_FALSE(not_json.empty()) << "accepted";
  EXPECT_EQ(not_json.rfind("result: not valid JSON (", 0), 0u) << not_json;
  EXPECT_NE(not_json.find("line 1, column 2"), std::string::npos) << not_json;
  EXPECT_NE(not_json.find("invalid literal"), std::string::npos) << not_json;
  EXPECT_EQ(not_json.back(), ')') << not_json;
  EXPECT_EQ(error_of("[1]"), "result: is not a JSON object");
  EXPECT_EQ(error_of(with("autotune-run/1", "autotune-run/9")), "result: format: 'autotune-run/9' is not autotune-run/1");
  EXPECT_EQ(error_of(with("\"status\":\"ok\"", "\"status\":\"great\"")),
            "result: status: 'great' is not one of ok, failed, timeout");
  EXPECT_EQ(error_of(with("\"samples_per_s\":5120.5,\"time", "\"samples_per_s\":-3,\"time")),
            "result: app.samples_per_s: -3 is below 0");
  EXPECT_EQ(error_of(with("\"samples_per_s\":5120.5,\"time", "\"samples_per_s\":\"fast\",\"time")),
            "result: app.samples_per_s: is not a number");
  EXPECT_EQ(error_of(with("\"cpu_util_mean\":0.95", "\"cpu_util_mean\":1e300")),
            "result: app.roles.worker.cpu_util_mean: 1e+300 is above 4096");
  EXPECT_EQ(error_of(R"({"format":"autotune-run/1","status":"ok"})"),
            "result: status ok without the app's measurements (app) needs the run's wall time (wall_s above 0)");
  EXPECT_EQ(error_of(R"({"format":"autotune-run/1","status":"ok","wall_s":0})"),
            "result: status ok without the app's measurements (app) needs the run's wall time (wall_s above 0)");
  EXPECT_EQ(error_of(R"({"format":"autotune-run/1","status":"ok","wall_s":1,"app":{"format":"x","samples_per_s":1}})"),
            "result: app.format: is not autotune-result/1 (see docs/reporting.md)");
  EXPECT_EQ(error_of(with("\"node\":\"n1\",\"samples", "\"node\":\"" + std::string(300, 'x') + "\",\"samples")),
            "result: app.per_rank[].node: longer than 256 characters");
}

TEST(Result, AProgramThatReportsNothingIsMeasuredByItsWallTime) {
  RunResult r = parse_result(R"({"format":"autotune-run/1","status":"ok","exit_code":0,"wall_s":2.5,"app":null})");
  EXPECT_EQ(r.status, "ok");
  EXPECT_DOUBLE_EQ(r.wall_s, 2.5);
  EXPECT_FALSE(r.app);
}

TEST(Result, FailedRunsNeedNoMeasurements) {
  RunResult r = parse_result(R"({"format":"autotune-run/1","status":"failed","exit_code":137,"reason":"killed"})");
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.exit_code, 137);
  EXPECT_FALSE(r.app);
}

TEST(Result, FileChecks) {
  char dir[] = "/tmp/autotune-result-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string good = std::string(dir) + "/1.json";
  std::ofstream(good) << kGood;
  EXPECT_EQ(read_result_file(good, getuid()).status, "ok");
  try {
    read_result_file(good, getuid() + 1);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::permission);
    EXPECT_NE(std::string(e.what()).find("not the job's user"), std::string::npos);
  }
  const std::string link = std::string(dir) + "/2.json";
  ASSERT_EQ(symlink(good.c_str(), link.c_str()), 0);
  try {
    read_result_file(link, std::nullopt);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::permission);
  }
  const std::string big = std::string(dir) + "/3.json";
  std::ofstream(big) << std::string(kMaxResultBytes + 1, ' ');
  try {
    read_result_file(big, std::nullopt);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("larger than the 1 MiB limit"), std::string::npos);
  }
  try {
    read_result_file(std::string(dir) + "/none.json", std::nullopt);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::not_found);
  }
  // Relative to an open directory (ingest opens the job owner's directory once): the same checks.
  const int dfd = ::open(dir, O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dfd, 0);
  EXPECT_EQ(read_result_at(dfd, "1.json", good, getuid()).status, "ok");
  try {
    read_result_at(dfd, "2.json", link, std::nullopt);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::permission);
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos);
  }
  try {
    read_result_at(dfd, "1.json", good, getuid() + 1);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::permission);
  }
  ::close(dfd);
  std::system((std::string("rm -rf ") + dir).c_str());
}

// What a job's burst buffer held per medium (a workflow's stage), validated like every field.
TEST(Result, TheBytesEachMediumOfTheBurstBufferHeld) {
  const std::string base = R"({"format":"autotune-run/1","status":"ok","wall_s":2,)";
  const RunResult r = parse_result(base + R"("tier":{"pmem":1048576,"disk":1951424}})");
  ASSERT_EQ(r.tier.size(), 2u);
  EXPECT_DOUBLE_EQ(r.tier.at("pmem"), 1048576);
  EXPECT_DOUBLE_EQ(r.tier.at("disk"), 1951424);
  EXPECT_TRUE(parse_result(base + R"("tier":null})").tier.empty());
  for (const char *bad : {R"("tier":[1]})", R"("tier":{"pmem":-1}})", R"("tier":{"Bad Name":1}})",
                          R"("tier":{"pmem":"1"}})"})
    try {
      parse_result(base + bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("tier"), std::string::npos) << e.what();
    }
}
