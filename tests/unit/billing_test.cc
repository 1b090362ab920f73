// Cost C of the gamma objective uses the partition's TRESBillingWeights as Slurm reports them:
// job_submit/autotune hands the partition's billing_weights_str to at_submit, which fixes it in a
// new class's problem; both modes (a trial job's measurement, a steps-mode search) bill with it.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "autotune/autotune.h"
#include "autotune/optimizer.hpp"
#include "autotune/steps.hpp"
#include "autotune/store.hpp"
#include "autotune/tuner.hpp"
#include "submit_fixture.hpp"

using namespace autotune;

namespace {

// The request Slurm bills for `c` under weights CPU=1.0,Mem=0.25G: CPUs + 0.25 per GB.
double slurm_billing(const Configuration &c) {
  const SlurmRequest r = slurm_request(c);
  const double cpus = static_cast<double>(r.ntasks) * r.cpus_per_task;
  return 1.0 * cpus + 0.25 * cpus * static_cast<double>(r.mem_per_cpu_mb) / 1024.0;
}

class Billing : public test::SubmitFixture {
 protected:
  // Submit a job of class `name` from the partition with `weights` (as slurmctld has them).
  ClassRecord submit(const std::string &name, const char *weights, const std::string &mode) {
    const unsigned uid = static_cast<unsigned>(getuid());
    submit_env(uid, {"AUTOTUNE_CLASS=" + name, "AUTOTUNE_MODE=" + mode,
                     "AUTOTUNE_SPACE=nodes=1-2,workers=1-2,ps=1,cpus-per-ps=1-2"},
               weights);
    Store::Options o;
    o.read_only = true;
    Store store(Store::path_in(state_dir()), o);
    auto c = store.find_class(uid, name);
    EXPECT_TRUE(c.has_value());
    return c ? *c : ClassRecord{};
  }
};

TEST_F(Billing, JobsModeCostIsThePartitionsBillingTimesTime) {
  const ClassRecord c = submit("jobs-billing", "CPU=1.0,Mem=0.25G", "jobs");
  const ClassProblem p = load_problem(c);
  EXPECT_EQ(p.billing.text, "CPU=1.0,Mem=0.25G");
  ASSERT_FALSE(p.candidates.empty());
  for (const Candidate &cand : p.candidates)
    EXPECT_DOUBLE_EQ(cand.billing_rate, slurm_billing(cand.config)) << cand.config.format();
  TrialRecord t;
  t.config = p.candidates.front().config.format();
  t.measurement = Measurement{};
  t.measurement->samples_per_s = 1000;
  const auto tc = time_cost(p, t);
  ASSERT_TRUE(tc);
  EXPECT_DOUBLE_EQ(tc->cost, slurm_billing(p.candidates.front().config) / 1000);
}

TEST_F(Billing, StepsModeSearchBillsWithTheSameWeights) {
  const ClassRecord c = submit("steps-billing", "CPU=1.0,Mem=0.25G", "steps");
  AllocationSearch s(c, {}, Allocation{4, 2, 4000, 0}, propose);
  EXPECT_EQ(s.problem().billing.text, "CPU=1.0,Mem=0.25G");
  for (const Candidate &cand : s.problem().candidates)
    EXPECT_DOUBLE_EQ(cand.billing_rate, slurm_billing(cand.config)) << cand.config.format();
}

TEST_F(Billing, WithoutWeightsSlurmBillsCpus) {
  const ClassRecord c = submit("cpu-billing", nullptr, "jobs");
  const ClassProblem p = load_problem(c);
  EXPECT_EQ(p.billing.text, "");
  for (const Candidate &cand : p.candidates) {
    const SlurmRequest r = slurm_request(cand.config);
    EXPECT_DOUBLE_EQ(cand.billing_rate, static_cast<double>(r.ntasks) * r.cpus_per_task);
  }
}

}  // namespace
