// autotune-run without a configuration (no --autotune, or the tuner could not answer): the ranks
// and roles it runs the app with on the job's own allocation, and the srun command.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "autotune/error.hpp"

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

// Sets environment variables for one test and restores them.
struct Env {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  void set(const std::string &k, const std::string &v) {
    const char *old = std::getenv(k.c_str());
    saved.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
    setenv(k.c_str(), v.c_str(), 1);
  }
  ~Env() {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
  }
};

TEST(InsideStep, SharesTheStepsResourcesAndWaitsABoundedTime) {
  Env env;
  env.set("SLURM_STEP_ID", "0");
  StepRequest req;
  req.app = {"app"};
  req.untuned = untuned_ranks("1", nullptr, nullptr);
  const std::vector<std::string> want = {"srun", "--mpi=pmix", "--kill-on-bad-exit=1", "--ntasks=2", "--overcommit",
                                         "--overlap", "--immediate=60", "app"};
  EXPECT_EQ(autotune::srun_command(req), want);
  env.set("AUTOTUNE_STEP_WAIT", "5");
  EXPECT_EQ(autotune::srun_command(req)[6], "--immediate=5");
  env.set("AUTOTUNE_STEP_WAIT", "0");
  EXPECT_THROW(autotune::step_wait_s(), autotune::Error);
  env.set("AUTOTUNE_STEP_WAIT", "soon");
  try {
    autotune::step_wait_s();
    FAIL() << "AUTOTUNE_STEP_WAIT=soon accepted";
  } catch (const autotune::Error &e) {
    EXPECT_NE(std::string(e.what()).find("AUTOTUNE_STEP_WAIT"), std::string::npos) << e.what();
  }
}

// srun that cannot create the step (as Slurm's srun says it after --immediate): the app did not
// run, and the outcome says why instead of "the app exited with status 1".
TEST(InsideStep, AStepSlurmCannotCreateFailsSayingWhy) {
  char dir[] = "/tmp/run_step_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string srun = std::string(dir) + "/srun";
  {
    std::ofstream f(srun);
    f << "#!/bin/sh\n"
         "echo 'srun: Job 7 step creation temporarily disabled, retrying (Requested nodes are busy)' >&2\n"
         "echo 'srun: error: Unable to create step for job 7: Requested nodes are busy' >&2\n"
         "exit 1\n";
  }
  chmod(srun.c_str(), 0755);
  Env env;
  env.set("PATH", std::string(dir) + ":" + std::getenv("PATH"));
  env.set("SLURM_STEP_ID", "0");
  env.set("AUTOTUNE_STEP_WAIT", "3");
  StepRequest req;
  req.app = {"true"};
  req.untuned = untuned_ranks("2", nullptr, nullptr);
  const autotune::StepOutcome out = autotune::run_step(req);
  EXPECT_EQ(out.status, autotune::StepStatus::failed);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.reason.find("Slurm could not create the app's job step (Requested nodes are busy) within 3 s"),
            std::string::npos)
      << out.reason;
  unlink(srun.c_str());
  rmdir(dir);
}

}  // namespace
