// libautotune-report (report.h): the per-rank report it writes for the reporting contract, and
// every bad value refused with EINVAL and a message naming the field, writing nothing.
#include "autotune/report.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace {

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/report_test.XXXXXX";
    ASSERT_TRUE(mkdtemp(tmpl));
    dir_ = tmpl;
    result_ = dir_ + "/result.json";
    setenv("AUTOTUNE_RESULT", result_.c_str(), 1);
    setenv("SLURM_PROCID", "2", 1);
    setenv("SLURMD_NODENAME", "n3", 1);
    setenv("SLURM_CPUS_PER_TASK", "2", 1);
    setenv("SLURM_MEM_PER_CPU", "100", 1);
  }
  void TearDown() override {
    unlink((result_ + ".rank.2").c_str());
    rmdir(dir_.c_str());
  }
  std::string written() {
    std::ifstream in(result_ + ".rank.2");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string dir_, result_;
};

}  // namespace

TEST_F(ReportTest, WritesThisRanksReport) {
  ASSERT_EQ(at_report_batches(1000, 2.5, 10), 0) << at_report_error();
  const std::string j = written();
  EXPECT_EQ(j.rfind("{\"format\":\"autotune-rank/1\",\"rank\":2,\"role\":\"worker\",\"node\":\"n3\",\"samples\":1000,"
                    "\"wall_s\":2.5,\"batches\":10,",
                    0),
            0u)
      << j;
  EXPECT_NE(j.find("\"cpus_allocated\":2,\"mem_limit_mb\":200"), std::string::npos) << j;
  EXPECT_STREQ(at_report_error(), "");
  ASSERT_EQ(at_report(5, 1), 0);
  EXPECT_EQ(written().find("batches"), std::string::npos) << "not counted";
}

TEST_F(ReportTest, NothingToDoWithoutAutotuneResult) {
  unsetenv("AUTOTUNE_RESULT");
  EXPECT_EQ(at_report(1, 1), 1);
  EXPECT_EQ(written(), "");
}

TEST_F(ReportTest, RefusesBadValuesNamingTheField) {
  struct Bad {
    double samples, seconds;
    long long batches;
    const char *msg;
  } const bad[] = {
      {-1, 1, -1, "at_report: samples: -1 is below 0"},
      {NAN, 1, -1, "at_report: samples: is not a finite number"},
      {INFINITY, 1, -1, "at_report: samples: is not a finite number"},
      {2e18, 1, -1, "at_report: samples: 2e+18 is above 1e18"},
      {1, 0, -1, "at_report: seconds: 0 is not above 0"},
      {1, -3, -1, "at_report: seconds: -3 is not above 0"},
      {1, NAN, -1, "at_report: seconds: is not a finite number"},
      {1, 2e9, -1, "at_report: seconds: 2000000000 is above 1e9"},
      {1, 1, -2, "at_report: batches: -2 is not from 0 to 1e12 (or -1: not counted)"},
  };
  for (const Bad &b : bad) {
    errno = 0;
    EXPECT_EQ(at_report_batches(b.samples, b.seconds, b.batches), -1) << b.msg;
    EXPECT_EQ(errno, EINVAL) << b.msg;
    EXPECT_STREQ(at_report_error(), b.msg);
  }
  setenv("SLURM_PROCID", "two", 1);
  EXPECT_EQ(at_report(1, 1), -1);
  EXPECT_STREQ(at_report_error(), "at_report: SLURM_PROCID: is not a whole number from 0 to 10000000");
  setenv("SLURM_PROCID", "2", 1);
  EXPECT_EQ(written(), "") << "nothing written for a bad value";
}

TEST_F(ReportTest, ReportsTheIoError) {
  setenv("AUTOTUNE_RESULT", "/nonexistent-dir/result.json", 1);
  EXPECT_EQ(at_report(1, 1), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(std::string(at_report_error()).rfind("at_report: cannot create /nonexistent-dir/result.json.rank.2.tmp.", 0), 0u)
      << at_report_error();
}
