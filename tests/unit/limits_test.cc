// Partition limits (MinNodes, MaxNodes, MaxCPUsPerNode, MaxMemPerNode, MaxMemPerCPU) and the
// accounting limits of the job's QOS and association: a configuration whose Slurm request breaks
// one is no candidate of a new class, because Slurm would keep its job pending for ever; a space
// with nothing within them is refused at submission with the limit named.
#include <gtest/gtest.h>

#include <string>

#include "autotune/autotune.h"
#include "autotune/conf.hpp"
#include "autotune/config.hpp"
#include "autotune/error.hpp"
#include "autotune/store.hpp"
#include "autotune/tuner.hpp"
#include "submit_fixture.hpp"

using namespace autotune;

namespace {

SlurmRequest request(int nodes, int ntasks, int cpus_per_task, std::uint64_t mem_per_cpu_mb) {
  SlurmRequest r;
  r.nodes = nodes;
  r.ntasks = ntasks;
  r.cpus_per_task = cpus_per_task;
  r.mem_per_cpu_mb = mem_per_cpu_mb;
  return r;
}

TEST(PartitionLimits, EachLimitNamesWhatBreaksIt) {
  PartitionLimits none;
  EXPECT_FALSE(none.any());
  EXPECT_EQ(none.describe(), "");
  EXPECT_EQ(none.violation(request(64, 128, 8, 100000)), "");

  PartitionLimits l;
  l.min_nodes = 2;
  l.max_nodes = 3;
  l.max_cpus_per_node = 4;
  l.max_mem_per_node_mb = 8000;
  l.max_mem_per_cpu_mb = 3000;
  EXPECT_TRUE(l.any());
  EXPECT_EQ(l.describe(), "MinNodes=2, MaxNodes=3, MaxCPUsPerNode=4, MaxMemPerNode=8000, MaxMemPerCPU=3000");
  EXPECT_EQ(l.violation(request(2, 4, 2, 1000)), "");  // 4 CPUs and 4000 MB per node
  EXPECT_EQ(l.violation(request(1, 1, 1, 1000)), "asks for 1 node, MinNodes=2");
  EXPECT_EQ(l.violation(request(4, 4, 1, 1000)), "asks for 4 nodes, MaxNodes=3");
  // ceil(5 / 2) = 3 tasks of 2 CPUs on the busiest node.
  EXPECT_EQ(l.violation(request(2, 5, 2, 1000)), "asks for 6 CPUs per node, MaxCPUsPerNode=4");
  EXPECT_EQ(l.violation(request(2, 4, 2, 2500)), "asks for 10000 MB per node, MaxMemPerNode=8000");
  EXPECT_EQ(l.violation(request(2, 2, 1, 3500)), "asks for 3500 MB per CPU, MaxMemPerCPU=3000");
  // Exactly at a limit is within it.
  EXPECT_EQ(l.violation(request(3, 3, 4, 2000)), "");
}

TEST(AccountingLimits, EachBoundNamesWhatBreaksIt) {
  AccountingLimits none;
  EXPECT_FALSE(none.any());
  EXPECT_EQ(none.violation(request(64, 128, 8, 100000)), "");

  AccountingLimits a;
  a.max_nodes = 3;
  a.max_cpus = 8;
  a.max_mem_mb = 8000;
  a.max_cpus_per_node = 4;
  a.max_mem_per_node_mb = 6000;
  a.min_cpus = 2;
  EXPECT_TRUE(a.any());
  EXPECT_EQ(a.violation(request(2, 4, 2, 1000)), "");  // 8 CPUs, 8000 MB, 4 CPUs and 4000 MB per node
  EXPECT_EQ(a.violation(request(4, 4, 1, 1000)), "asks for 4 nodes, at most 3");
  EXPECT_EQ(a.violation(request(3, 9, 1, 100)), "asks for 9 CPUs, at most 8");
  // Memory is Slurm's TRES of a --mem-per-cpu job: CPUs x MB per CPU.
  EXPECT_EQ(a.violation(request(3, 3, 2, 1500)), "asks for 9000 MB of memory, at most 8000");
  EXPECT_EQ(a.violation(request(1, 3, 2, 100)), "asks for 6 CPUs per node, at most 4");
  EXPECT_EQ(a.violation(request(1, 2, 2, 1600)), "asks for 6400 MB of memory per node, at most 6000");
  EXPECT_EQ(a.violation(request(1, 1, 1, 100)), "asks for 1 CPUs, at least 2");

  AccountingLimits g;
  g.max_gpus = 2;
  g.max_gpus_per_node = 1;
  SlurmRequest r = request(2, 2, 1, 100);
  r.gpus_per_task = 1;
  EXPECT_EQ(g.violation(r), "");
  r.ntasks = 4;
  EXPECT_EQ(g.violation(r), "asks for 4 GPUs, at most 2");
  r.nodes = 1;
  r.ntasks = 2;
  EXPECT_EQ(g.violation(r), "asks for 2 GPUs per node, at most 1");

  // A partition's violation() covers its accounting limits too, after its own.
  PartitionLimits p;
  p.max_nodes = 2;
  p.accounting.max_cpus = 2;
  EXPECT_FALSE(p.describe().empty());
  EXPECT_EQ(p.violation(request(3, 1, 1, 100)), "asks for 3 nodes, MaxNodes=2");
  EXPECT_EQ(p.violation(request(2, 4, 1, 100)), "asks for 4 CPUs, at most 2");
}

// A class of nodes=1-4, workers=1-4, cpus-per-worker=1-2 on four 2-CPU, 4000 MB nodes.
ClassRecord make_class(const PartitionLimits &limits) {
  Inventory inv;
  NodeType t;
  t.name = "cpus2-mem4000";
  t.count = 4;
  t.cpus = 2;
  t.mem_mb = 4000;
  inv.types.push_back(t);
  const SpaceSpec space = SpaceSpec::parse("nodes=1-4,workers=1-4,ps=0,cpus-per-worker=1-2,mem-per-worker=256M-1G");
  ClassRecord c;
  c.id = 1;
  c.name = "limited";
  c.settings.space = space.format();
  c.settings.budget = 8;
  c.settings.extra = make_class_extra(space, inv, "", Conf::defaults(), 8, 7, limits);
  return c;
}

TEST(PartitionLimits, ConfigurationsBeyondThemAreNoCandidates) {
  const ClassProblem open = load_problem(make_class({}));
  PartitionLimits l;
  l.max_nodes = 2;
  l.max_cpus_per_node = 1;
  l.max_mem_per_cpu_mb = 512;
  const ClassRecord c = make_class(l);
  const ClassProblem p = load_problem(c);
  EXPECT_EQ(class_limits(c).describe(), "MaxNodes=2, MaxCPUsPerNode=1, MaxMemPerCPU=512");
  ASSERT_FALSE(p.candidates.empty());
  EXPECT_LT(p.candidates.size(), open.candidates.size());
  std::size_t beyond = 0;
  for (const auto &cand : open.candidates) beyond += !l.violation(slurm_request(cand.config)).empty();
  EXPECT_GT(beyond, 0u);
  EXPECT_EQ(p.candidates.size() + beyond, open.candidates.size());
  for (const auto &cand : p.candidates) {
    const SlurmRequest r = slurm_request(cand.config);
    EXPECT_LE(r.nodes, 2) << cand.config.format();
    EXPECT_LE(r.cpus_per_node(), 1) << cand.config.format();
    EXPECT_LE(r.mem_per_cpu_mb, 512u) << cand.config.format();
  }
  EXPECT_FALSE(class_limits(make_class({})).any());
}

TEST(PartitionLimits, NothingWithinThemIsAClearError) {
  PartitionLimits l;
  l.min_nodes = 8;
  try {
    load_problem(make_class(l));
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("is within the partition's limits (MinNodes=8; e.g. nodes=1,"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("asks for 1 node, MinNodes=8)"), std::string::npos) << e.what();
  }
}

class SubmitLimits : public test::SubmitFixture {};

TEST_F(SubmitLimits, EveryTrialOfANewClassIsWithinThePartitionsLimits) {
  at_partition_limits l{};
  l.max_nodes = 2;
  l.max_cpus_per_node = 1;
  const std::vector<std::string> env = {"AUTOTUNE_CLASS=lim", "AUTOTUNE_BUDGET=6",
                                        "AUTOTUNE_SPACE=nodes=1-4,workers=1-4,ps=0,cpus-per-worker=1-2"};
  for (int k = 0; k < 6; ++k) {
    const at_submit_decision d = submit_env(77, env, nullptr, l);
    ASSERT_TRUE(d.is_autotune);
    if (!d.rewrite) break;  // the queue is empty until a trial ends
    const unsigned per_node = d.cpus_per_task * ((d.ntasks + d.nodes - 1) / d.nodes);
    EXPECT_LE(d.nodes, 2u) << d.admin_comment;
    EXPECT_LE(per_node, 1u) << d.admin_comment;
  }
}

TEST_F(SubmitLimits, ASpaceBeyondThemIsRefusedWithTheLimitNamed) {
  at_partition_limits l{};
  l.max_nodes = 2;
  at_submit_decision d;
  std::string err;
  EXPECT_EQ(try_submit(77, {"AUTOTUNE_CLASS=big", "AUTOTUNE_SPACE=nodes=3-4,workers=4"}, &d, &err, nullptr, l),
            AT_EINVAL);
  EXPECT_NE(err.find("within the partition's limits (MaxNodes=2; e.g. nodes=3,workers=4"), std::string::npos) << err;
  EXPECT_NE(err.find("asks for 3 nodes, MaxNodes=2); give --autotune-space values within them, or submit to "
                     "another partition"),
            std::string::npos)
      << err;
  // Nothing was created: without the limit the same class starts normally.
  const at_submit_decision ok = submit_env(77, {"AUTOTUNE_CLASS=big", "AUTOTUNE_SPACE=nodes=3-4,workers=4"});
  EXPECT_TRUE(ok.rewrite);
  EXPECT_GE(ok.nodes, 3u);
}

TEST_F(SubmitLimits, EveryTrialOfANewClassIsWithinTheJobsAccountingLimits) {
  at_accounting_limits a{};
  a.max_cpus = 3;         // e.g. QOS MaxTRESPerJob=cpu=3
  a.max_mem_per_node_mb = 3000;
  a.text = "QOS small: MaxTRESPerJob=cpu=3; QOS small: MaxTRESPerNode=mem=3000M";
  set_accounting(a);
  const std::vector<std::string> env = {"AUTOTUNE_CLASS=acct", "AUTOTUNE_BUDGET=8",
                                        "AUTOTUNE_SPACE=nodes=1-4,workers=1-4,ps=0,cpus-per-worker=1-2,"
                                        "mem-per-worker=1G-2G"};
  int rewritten = 0, submitted = 0;
  for (int k = 0; k < 8; ++k) {
    const at_submit_decision d = submit_env(77, env);
    ++submitted;
    ASSERT_TRUE(d.is_autotune);
    if (!d.rewrite) break;
    ++rewritten;
    const unsigned cpus = d.ntasks * d.cpus_per_task;
    const unsigned long long per_node = d.mem_per_cpu_mb * d.cpus_per_task * ((d.ntasks + d.nodes - 1) / d.nodes);
    EXPECT_LE(cpus, 3u) << d.admin_comment;
    EXPECT_LE(per_node, 3000u) << d.admin_comment;
  }
  EXPECT_GE(rewritten, 3);
  // Asked once per job: for the class's limits when it was created, then for each job's own.
  EXPECT_EQ(acct_calls_, submitted);
}

// A class created without limits, then a job whose QOS allows one node: it gets the first queued
// configuration within them, out of order, or runs as submitted when the queue has none.
TEST_F(SubmitLimits, ALaterJobTakesTheFirstQueuedConfigurationWithinItsOwnLimits) {
  const std::vector<std::string> env = {"AUTOTUNE_CLASS=later", "AUTOTUNE_BUDGET=8",
                                        "AUTOTUNE_SPACE=nodes=1-4,workers=1-4,ps=0,cpus-per-worker=1"};
  const at_submit_decision first = submit_env(77, env);  // no accounting limits
  ASSERT_TRUE(first.rewrite);
  at_accounting_limits a{};
  a.max_nodes = 1;
  a.text = "QOS one: MaxTRESPerJob=node=1";
  set_accounting(a);
  for (int k = 0; k < 3; ++k) {
    const at_submit_decision d = submit_env(77, env);
    ASSERT_TRUE(d.is_autotune);
    if (d.rewrite) {
      EXPECT_EQ(d.nodes, 1u) << d.admin_comment;
    } else {
      EXPECT_NE(std::string(d.admin_comment).find("is within this job's QOS and association limits (QOS one: "
                                                  "MaxTRESPerJob=node=1); job runs as submitted"),
                std::string::npos)
          << d.admin_comment;
    }
  }
}

TEST_F(SubmitLimits, ASpaceBeyondTheAccountingLimitsIsRefusedNamingThem) {
  at_accounting_limits a{};
  a.max_nodes = 2;
  a.text = "QOS small: MaxTRESPerJob=node=2";
  set_accounting(a);
  at_submit_decision d;
  std::string err;
  EXPECT_EQ(try_submit(77, {"AUTOTUNE_CLASS=big", "AUTOTUNE_SPACE=nodes=3-4,workers=4"}, &d, &err), AT_EINVAL);
  EXPECT_NE(err.find("is within the job's QOS and association limits (QOS small: MaxTRESPerJob=node=2; e.g. "
                     "nodes=3,workers=4"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("asks for 3 nodes, at most 2); give --autotune-space values within them, or use another QOS "
                     "or account"),
            std::string::npos)
      << err;
  // Both kinds at once name both.
  at_partition_limits l{};
  l.max_cpus_per_node = 1;
  EXPECT_EQ(try_submit(77, {"AUTOTUNE_CLASS=big", "AUTOTUNE_SPACE=nodes=3-4,workers=4"}, &d, &err, nullptr, l),
            AT_EINVAL);
  EXPECT_NE(err.find("is within the partition's limits (MaxCPUsPerNode=1) and the job's QOS and association limits "
                     "(QOS small: MaxTRESPerJob=node=2; e.g."),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("or submit elsewhere"), std::string::npos) << err;
}

TEST_F(SubmitLimits, TheClassKeepsItsAccountingLimits) {
  at_accounting_limits a{};
  a.max_nodes = 1;
  a.min_cpus = 2;
  a.text = "association of user u, account a: MaxTRES=node=1";
  set_accounting(a);
  ASSERT_TRUE(submit_env(77, {"AUTOTUNE_CLASS=kept", "AUTOTUNE_SPACE=nodes=1-4,workers=1-4,ps=0"}).rewrite);
  Store store(Store::path_in(state_dir()), {false, false, 1000});
  const auto c = store.find_class(77, "kept");
  ASSERT_TRUE(c);
  const PartitionLimits l = class_limits(*c);
  EXPECT_FALSE(l.any());
  EXPECT_EQ(l.accounting.max_nodes, 1u);
  EXPECT_EQ(l.accounting.min_cpus, 2u);
  EXPECT_EQ(l.accounting.text, "association of user u, account a: MaxTRES=node=1");
  for (const auto &cand : load_problem(*c).candidates) {
    EXPECT_EQ(cand.config.counts.nodes, 1) << cand.config.format();
    EXPECT_GE(cand.config.counts.workers * cand.config.worker.cpus, 2) << cand.config.format();
  }
}

}  // namespace
