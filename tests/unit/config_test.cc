#include "autotune/config.hpp"

#include <gtest/gtest.h>

#include "autotune/error.hpp"

using namespace autotune;

TEST(Configuration, RoundTrip) {
  Configuration c;
  c.counts = {2, 3, 1};
  c.worker = {2, 1024, 0};
  c.server = {1, 256, 0};
  const std::string text = c.format();
  EXPECT_EQ(text,
            "nodes=2,workers=3,ps=1,cpus-per-worker=2,mem-per-worker=1G,cpus-per-ps=1,mem-per-ps=256M");
  EXPECT_EQ(Configuration::parse(text), c);
  c.worker.gpus = 2;
  EXPECT_EQ(Configuration::parse(c.format()), c);
}

TEST(Configuration, RejectsWithNamedDimension) {
  struct Case {
    const char *text, *fragment;
  } cases[] = {
      {"nodes=2,workers=3,ps=1,cpus-per-worker=1,mem-per-worker=1G,cpus-per-ps=1", "'mem-per-ps' is missing"},
      {"nodes=2,workers=3,ps=1,ps=2,cpus-per-worker=1,mem-per-worker=1G,cpus-per-ps=1,mem-per-ps=1G", "given twice"},
      {"nodes=2,workers=3,ps=1,cpus-per-worker=1,mem-per-worker=1G,cpus-per-ps=1,mem-per-ps=1G,foo=1", "unknown dimension 'foo'"},
      {"nodes=x,workers=3,ps=1,cpus-per-worker=1,mem-per-worker=1G,cpus-per-ps=1,mem-per-ps=1G", "nodes: 'x'"},
      {"nodes=5,workers=3,ps=1,cpus-per-worker=1,mem-per-worker=1G,cpus-per-ps=1,mem-per-ps=1G", "every node needs"},
      {"", "empty item"},
  };
  for (const auto &c : cases) {
    try {
      Configuration::parse(c.text);
      ADD_FAILURE() << "accepted " << c.text;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << e.what();
    }
  }
}

TEST(Configuration, SlurmRequestTakesTheLargerRole) {
  Configuration c = Configuration::parse(
      "nodes=2,workers=3,ps=1,cpus-per-worker=1,mem-per-worker=1G,cpus-per-ps=2,mem-per-ps=512M");
  SlurmRequest r = slurm_request(c);
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.ntasks, 4);
  EXPECT_EQ(r.cpus_per_task, 2);
  EXPECT_EQ(r.mem_per_cpu_mb, 512u);  // 1024 MB per task over 2 CPUs
  EXPECT_EQ(r.max_tasks_per_node(), 2);
  EXPECT_EQ(r.cpus_per_node(), 4);
  EXPECT_EQ(r.mem_per_node_mb(), 2048u);
  c.counts.servers = 0;
  r = slurm_request(c);
  EXPECT_EQ(r.cpus_per_task, 1) << "without parameter servers only the workers count";
  EXPECT_EQ(r.mem_per_cpu_mb, 1024u);
  c.worker.mem_mb = 1001;
  c.worker.cpus = 2;
  EXPECT_EQ(slurm_request(c).mem_per_cpu_mb, 501u) << "rounded up";
}
