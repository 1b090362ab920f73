// autotune-run without a configuration (no --autotune, or the tuner could not answer): the ranks
// and roles it runs the app with on the job's own allocation, and the srun command.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_step.hpp"

using autotune::StepRequest;
using autotune::untuned_ranks;
using autotune::UntunedRanks;

namespace {

TEST(UntunedRanks, TheJobsTasksOneServerTheRestWorkers) {
  const UntunedRanks u = untuned_ranks("4", "2(x2)", nullptr);
  EXPECT_EQ(u.ranks, 4);
  EXPECT_EQ(u.servers, 1);
  EXPECT_FALSE(u.overcommit);
  EXPECT_EQ(u.why, "the job's 4 tasks");
}

TEST(UntunedRanks, WithoutATaskCountOnePerAllocatedCpu) {
  const UntunedRanks u = untuned_ranks(nullptr, "2(x3),1", nullptr);
  EXPECT_EQ(u.ranks, 7);
  EXPECT_EQ(u.servers, 1);
  EXPECT_FALSE(u.overcommit);
}

TEST(UntunedRanks, OneCpuRunsAServerAndAWorkerOnIt) {
  for (const auto &[nt, cpn] : std::vector<std::pair<const char *, const char *>>{{nullptr, "1"}, {"1", "1"}, {"", ""}}) {
    const UntunedRanks u = untuned_ranks(nt, cpn, nullptr);
    EXPECT_EQ(u.ranks, 2);
    EXPECT_EQ(u.servers, 1);
    EXPECT_TRUE(u.overcommit);
    EXPECT_NE(u.why.find("at least 2"), std::string::npos) << u.why;
  }
}

TEST(UntunedRanks, TheServersTheUserAskedForLeavingAWorker) {
  EXPECT_EQ(untuned_ranks("6", nullptr, "2").servers, 2);
  const UntunedRanks all = untuned_ranks("3", nullptr, "3");
  EXPECT_EQ(all.servers, 2);
  EXPECT_NE(all.why.find("AUTOTUNE_PS=3 leaves no worker"), std::string::npos) << all.why;
  const UntunedRanks bad = untuned_ranks("3", nullptr, "two");
  EXPECT_EQ(bad.servers, 1);
  EXPECT_NE(bad.why.find("AUTOTUNE_PS='two' is not a whole number"), std::string::npos) << bad.why;
}

TEST(UntunedRanks, MalformedCountsAreIgnored) {
  for (const char *cpn : {"2(x", "x", "2(x0)", "-1", "99999999", "2,,1", "2(x3"}) {
    const UntunedRanks u = untuned_ranks("abc", cpn, nullptr);
    EXPECT_EQ(u.ranks, 2) << cpn;
    EXPECT_TRUE(u.overcommit) << cpn;
  }
}

TEST(UntunedRanks, TheSrunCommandAsksForThem) {
  StepRequest req;
  req.app = {"app", "--x"};
  req.untuned = untuned_ranks(nullptr, "1", nullptr);
  const std::vector<std::string> want = {"srun", "--mpi=pmix", "--kill-on-bad-exit=1", "--ntasks=2", "--overcommit",
                                         "app", "--x"};
  EXPECT_EQ(autotune::srun_command(req), want);
  req.untuned = untuned_ranks("4", nullptr, nullptr);
  const std::vector<std::string> four = {"srun", "--mpi=pmix", "--kill-on-bad-exit=1", "--ntasks=4", "app", "--x"};
  EXPECT_EQ(autotune::srun_command(req), four);
}

}  // namespace
