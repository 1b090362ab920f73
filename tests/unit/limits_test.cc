// Partition limits (MinNodes, MaxNodes, MaxCPUsPerNode, MaxMemPerNode, MaxMemPerCPU) and the
// accounting limits of the job's QOS and association: a configuration whose Slurm request breaks
// one is no candidate of a new class, because Slurm would keep its job pending for ever; a space
// with nothing within them is refused at submission with the limit named.  And how a job's QOS
// and association records reduce to those bounds (limits.hpp accounting_limits), one limit kind
// at a time.
#include <gtest/gtest.h>

#include <string>

#include "autotune/autotune.h"
#include "autotune/conf.hpp"
#include "autotune/config.hpp"
#include "autotune/error.hpp"
#include "autotune/limits.hpp"
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

// ---- accounting_limits(): a job's QOS and association records reduced to bounds ----------------

QosLimits qos(const std::string &name) {
  QosLimits q;
  q.name = name;
  return q;
}
AssocLimits user_assoc(const std::string &user, const std::string &account) {
  AssocLimits a;
  a.user = user;
  a.account = account;
  return a;
}
AssocLimits account_assoc(const std::string &account) { return user_assoc("", account); }

// A job of user u in account a (under root), in QOS `job_qos`, on a partition without a QOS.
JobAccounting job_in(const std::optional<QosLimits> &job_qos) {
  JobAccounting j;
  j.job_qos = job_qos;
  j.associations = {user_assoc("u", "a"), account_assoc("a"), account_assoc("root")};
  return j;
}

TEST(AccountingLimitsOf, NoLimitSetIsNoBound) {
  const AccountingLimits none = accounting_limits(JobAccounting{});
  EXPECT_FALSE(none.any());
  EXPECT_EQ(none.text, "");
  EXPECT_FALSE(accounting_limits(job_in(qos("normal"))).any());
  // 0 is no limit either.
  QosLimits zero = qos("zero");
  zero.max_per_job[Tres::cpu] = 0;
  zero.min_per_job[Tres::node] = 0;
  EXPECT_FALSE(accounting_limits(job_in(zero)).any());
}

TEST(AccountingLimitsOf, QosMaxTresPerJob) {
  QosLimits q = qos("small");
  q.max_per_job[Tres::cpu] = 4;
  q.max_per_job[Tres::node] = 2;
  q.max_per_job[Tres::mem] = 8000;
  q.max_per_job[Tres::gpu] = 1;
  const AccountingLimits l = accounting_limits(job_in(q));
  EXPECT_EQ(l.max_cpus, 4u);
  EXPECT_EQ(l.max_nodes, 2u);
  EXPECT_EQ(l.max_mem_mb, 8000u);
  EXPECT_EQ(l.max_gpus, 1u);
  EXPECT_EQ(l.max_cpus_per_node, 0u);
  EXPECT_EQ(l.min_cpus, 0u);
  EXPECT_EQ(l.text, "QOS small: MaxTRESPerJob=cpu=4,mem=8000M,node=2,gres/gpu=1");
}

TEST(AccountingLimitsOf, QosMaxTresPerNode) {
  QosLimits q = qos("narrow");
  q.max_per_node[Tres::cpu] = 2;
  q.max_per_node[Tres::mem] = 3000;
  q.max_per_node[Tres::gpu] = 1;
  q.max_per_node[Tres::node] = 5;  // no field holds it, but it binds: the text names it
  const AccountingLimits l = accounting_limits(job_in(q));
  EXPECT_EQ(l.max_cpus_per_node, 2u);
  EXPECT_EQ(l.max_mem_per_node_mb, 3000u);
  EXPECT_EQ(l.max_gpus_per_node, 1u);
  EXPECT_EQ(l.max_cpus, 0u);
  EXPECT_EQ(l.max_nodes, 0u);
  EXPECT_EQ(l.text, "QOS narrow: MaxTRESPerNode=cpu=2,mem=3000M,node=5,gres/gpu=1");
}

TEST(AccountingLimitsOf, QosGrpTresBoundsOneJobAndTheTighterLimitWins) {
  QosLimits q = qos("group");
  q.grp[Tres::mem] = 2000;
  q.grp[Tres::cpu] = 6;
  q.max_per_job[Tres::cpu] = 8;
  q.max_per_job[Tres::node] = 3;
  q.grp[Tres::node] = 3;  // a tie: the limit named first (MaxTRESPerJob) is kept
  const AccountingLimits l = accounting_limits(job_in(q));
  EXPECT_EQ(l.max_mem_mb, 2000u);
  EXPECT_EQ(l.max_cpus, 6u);
  EXPECT_EQ(l.max_nodes, 3u);
  EXPECT_EQ(l.text, "QOS group: GrpTRES=cpu=6,mem=2000M; QOS group: MaxTRESPerJob=node=3");
}

TEST(AccountingLimitsOf, QosMaxTresPerUserAndPerAccountOfEveryQos) {
  QosLimits part = qos("part"), job = qos("job");
  part.max_per_user[Tres::cpu] = 10;
  part.max_per_account[Tres::mem] = 5000;
  job.max_per_user[Tres::cpu] = 3;  // the second QOS's count too: a job cannot exceed them
  job.max_per_account[Tres::mem] = 9000;
  job.max_per_account[Tres::node] = 2;
  JobAccounting j = job_in(job);
  j.partition_qos = part;
  const AccountingLimits l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 3u);
  EXPECT_EQ(l.max_mem_mb, 5000u);
  EXPECT_EQ(l.max_nodes, 2u);
  EXPECT_EQ(l.text, "QOS job: MaxTRESPerUser=cpu=3; QOS part: MaxTRESPerAccount=mem=5000M; "
                    "QOS job: MaxTRESPerAccount=node=2");
}

TEST(AccountingLimitsOf, MinTresPerJobTakesTheLargest) {
  QosLimits part = qos("part"), job = qos("job");
  part.min_per_job[Tres::cpu] = 2;
  part.min_per_job[Tres::mem] = 4000;
  job.min_per_job[Tres::cpu] = 4;
  job.min_per_job[Tres::mem] = 1000;
  job.min_per_job[Tres::node] = 2;
  job.min_per_job[Tres::gpu] = 1;  // no field holds it; the text names it
  JobAccounting j = job_in(job);
  j.partition_qos = part;
  const AccountingLimits l = accounting_limits(j);
  EXPECT_EQ(l.min_cpus, 4u);
  EXPECT_EQ(l.min_mem_mb, 4000u);
  EXPECT_EQ(l.min_nodes, 2u);
  EXPECT_EQ(l.max_cpus, 0u);
  EXPECT_EQ(l.text, "QOS job: MinTRESPerJob=cpu=4,node=2,gres/gpu=1; QOS part: MinTRESPerJob=mem=4000M");
}

// The partition's QOS comes first unless the job's has OverPartQOS; the first QOS that sets a
// kind of limit (MaxTRESPerJob, MaxTRESPerNode, GrpTRES) for a resource decides it, even when a
// later one is tighter.
TEST(AccountingLimitsOf, ThePartitionQosComesFirstUnlessTheJobsHasOverPartQos) {
  QosLimits part = qos("part"), job = qos("big");
  part.max_per_job[Tres::cpu] = 32;
  job.max_per_job[Tres::cpu] = 4;
  part.max_per_node[Tres::mem] = 1000;
  job.max_per_node[Tres::mem] = 8000;
  part.grp[Tres::node] = 2;
  job.grp[Tres::node] = 8;
  JobAccounting j = job_in(job);
  j.partition_qos = part;
  AccountingLimits l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 32u);
  EXPECT_EQ(l.max_mem_per_node_mb, 1000u);
  EXPECT_EQ(l.max_nodes, 2u);
  EXPECT_EQ(l.text, "QOS part: MaxTRESPerJob=cpu=32; QOS part: GrpTRES=node=2; QOS part: MaxTRESPerNode=mem=1000M");

  j.job_qos->over_part_qos = true;
  l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 4u);
  EXPECT_EQ(l.max_mem_per_node_mb, 8000u);
  EXPECT_EQ(l.max_nodes, 8u);
  EXPECT_EQ(l.text, "QOS big: MaxTRESPerJob=cpu=4; QOS big: GrpTRES=node=8; QOS big: MaxTRESPerNode=mem=8000M");

  // The partition's QOS alone, when the job has none.
  j.job_qos.reset();
  EXPECT_EQ(accounting_limits(j).max_cpus, 32u);
}

TEST(AccountingLimitsOf, TheFirstQosThatSetsAKindDecidesItPerResource) {
  QosLimits part = qos("part"), job = qos("job");
  part.max_per_job[Tres::cpu] = 16;  // sets cpu only
  job.max_per_job[Tres::cpu] = 2;
  job.max_per_job[Tres::node] = 1;   // node: the partition's QOS sets none, so the job's decides
  JobAccounting j = job_in(job);
  j.partition_qos = part;
  const AccountingLimits l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 16u);
  EXPECT_EQ(l.max_nodes, 1u);
  EXPECT_EQ(l.text, "QOS part: MaxTRESPerJob=cpu=16; QOS job: MaxTRESPerJob=node=1");
}

TEST(AccountingLimitsOf, OneQosInBothRolesCountsOnce) {
  QosLimits normal = qos("normal");
  normal.max_per_job[Tres::cpu] = 8;
  normal.min_per_job[Tres::cpu] = 2;
  JobAccounting j = job_in(normal);
  j.partition_qos = normal;
  const AccountingLimits both = accounting_limits(j), alone = accounting_limits(job_in(normal));
  EXPECT_EQ(both.max_cpus, 8u);
  EXPECT_EQ(both.min_cpus, 2u);
  EXPECT_EQ(both.text, alone.text);
}

TEST(AccountingLimitsOf, TheAssociationsMaxTresWhereNoQosSetsMaxTresPerJob) {
  JobAccounting j = job_in(qos("normal"));
  j.associations[0].max_per_job[Tres::cpu] = 6;
  j.associations[0].max_per_job[Tres::node] = 3;
  j.associations[1].max_per_job[Tres::cpu] = 1;  // a parent's MaxTRES is not the job's
  AccountingLimits l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 6u);
  EXPECT_EQ(l.max_nodes, 3u);
  EXPECT_EQ(l.text, "association of user u, account a: MaxTRES=cpu=6,node=3");
  // A QOS's MaxTRESPerJob replaces the association's, looser or not, for its resource only.
  j.job_qos->max_per_job[Tres::cpu] = 12;
  l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 12u);
  EXPECT_EQ(l.max_nodes, 3u);
  EXPECT_EQ(l.text, "QOS normal: MaxTRESPerJob=cpu=12; association of user u, account a: MaxTRES=node=3");
}

TEST(AccountingLimitsOf, TheAssociationsMaxTresPerNodeWhereNoQosSetsIt) {
  JobAccounting j = job_in(std::nullopt);
  j.associations[0].max_per_node[Tres::cpu] = 4;
  j.associations[0].max_per_node[Tres::gpu] = 2;
  AccountingLimits l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus_per_node, 4u);
  EXPECT_EQ(l.max_gpus_per_node, 2u);
  EXPECT_EQ(l.text, "association of user u, account a: MaxTRESPerNode=cpu=4,gres/gpu=2");
  QosLimits q = qos("q");
  q.max_per_node[Tres::gpu] = 4;
  j.job_qos = q;
  l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus_per_node, 4u);
  EXPECT_EQ(l.max_gpus_per_node, 4u);
}

TEST(AccountingLimitsOf, GrpTresOfEveryAssociationUpTheTree) {
  JobAccounting j = job_in(qos("normal"));
  j.associations[0].grp[Tres::cpu] = 10;
  j.associations[1].grp[Tres::cpu] = 6;  // account a
  j.associations[2].grp[Tres::cpu] = 100;
  j.associations[2].grp[Tres::mem] = 2000;  // root
  j.associations[0].grp[Tres::mem] = 2000;  // a tie: the job's association, named first
  AccountingLimits l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 6u);
  EXPECT_EQ(l.max_mem_mb, 2000u);
  EXPECT_EQ(l.text, "association of account a: GrpTRES=cpu=6; association of user u, account a: GrpTRES=mem=2000M");
  // A QOS's GrpTRES replaces every association's, for its resource.
  j.job_qos->grp[Tres::cpu] = 20;
  l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 20u);
  EXPECT_EQ(l.max_mem_mb, 2000u);
}

TEST(AccountingLimitsOf, LimitFactorScalesTheAssociationsLimitsOnly) {
  QosLimits q = qos("scaled");
  q.limit_factor = 2.0;
  q.max_per_user[Tres::cpu] = 100;
  JobAccounting j = job_in(q);
  j.associations[0].max_per_job[Tres::cpu] = 3;
  j.associations[0].max_per_node[Tres::mem] = 1000;
  j.associations[1].grp[Tres::node] = 2;
  AccountingLimits l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 6u);
  EXPECT_EQ(l.max_mem_per_node_mb, 2000u);
  EXPECT_EQ(l.max_nodes, 4u);
  EXPECT_EQ(l.text, "association of user u, account a: MaxTRES=cpu=6; association of account a: GrpTRES=node=4; "
                    "association of user u, account a: MaxTRESPerNode=mem=2000M");
  // The factor of the first QOS in order that has one; scaled values are rounded down, and one
  // scaled to 0 is no limit.
  QosLimits part = qos("part");
  part.limit_factor = 0.5;
  j.partition_qos = part;
  l = accounting_limits(j);
  EXPECT_EQ(l.max_cpus, 1u);  // 3 x 0.5
  EXPECT_EQ(l.max_mem_per_node_mb, 500u);
  EXPECT_EQ(l.max_nodes, 1u);
  j.associations[1].grp[Tres::node] = 1;
  EXPECT_EQ(accounting_limits(j).max_nodes, 0u);  // 1 x 0.5
  // A factor of 0 (or less) is none: the next QOS's applies.
  j.partition_qos->limit_factor = 0;
  EXPECT_EQ(accounting_limits(j).max_cpus, 6u);
  // Scaled beyond 2^64 is no limit: the QOS's MaxTRESPerUser (not scaled) is what is left.
  j.associations[0].max_per_job[Tres::cpu] = std::uint64_t{1} << 63;
  EXPECT_EQ(accounting_limits(j).max_cpus, 100u);
}

TEST(AccountingLimitsOf, TheTextNamesEachBindingLimitByWhereItComesFrom) {
  QosLimits q = qos("small");
  q.max_per_job[Tres::cpu] = 4;
  q.max_per_job[Tres::node] = 2;
  JobAccounting j = job_in(q);
  j.associations[0].grp[Tres::mem] = 2000;
  EXPECT_EQ(accounting_limits(j).text,
            "QOS small: MaxTRESPerJob=cpu=4,node=2; association of user u, account a: GrpTRES=mem=2000M");
  // Unknown names read "?".
  JobAccounting unnamed;
  unnamed.job_qos = qos("");
  unnamed.job_qos->max_per_job[Tres::cpu] = 1;
  unnamed.associations = {user_assoc("u", ""), account_assoc("")};
  unnamed.associations[0].max_per_job[Tres::mem] = 100;
  unnamed.associations[1].grp[Tres::node] = 1;
  EXPECT_EQ(accounting_limits(unnamed).text,
            "QOS ?: MaxTRESPerJob=cpu=1; association of user u, account ?: MaxTRES=mem=100M; "
            "association of account ?: GrpTRES=node=1");
}

TEST(AccountingLimitsOf, BoundsAreWhatTheViolationChecks) {
  QosLimits q = qos("small");
  q.max_per_job[Tres::cpu] = 4;
  q.min_per_job[Tres::node] = 2;
  const AccountingLimits l = accounting_limits(job_in(q));
  EXPECT_EQ(l.violation(request(2, 4, 1, 100)), "");
  EXPECT_EQ(l.violation(request(2, 4, 2, 100)), "asks for 8 CPUs, at most 4");
  EXPECT_EQ(l.violation(request(1, 2, 1, 100)), "asks for 1 nodes, at least 2");
}

}  // namespace
