// Space specs (good and bad, with the dimension named in the message), limits, placement and
// feasibility filtering.
#include "autotune/space.hpp"

#include <gtest/gtest.h>

#include "autotune/candidates.hpp"
#include "autotune/error.hpp"

using namespace autotune;

namespace {

std::string error_of(const std::string &spec) {
  try {
    SpaceSpec::parse(spec);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

DimValues mb(std::initializer_list<std::uint64_t> v) { return DimValues(v); }

}  // namespace

TEST(SpaceSpec, ParsesEveryForm) {
  const SpaceSpec s = SpaceSpec::parse(
      "nodes=4,workers=1-8,ps=0|1|2,cpus-per-worker=2-16:2,gpus-per-worker=1-16:x2,"
      "mem-per-worker=256M-2G,mem-per-ps=1G-4G:512M,cpus-per-ps=3-100:x3");
  EXPECT_EQ(s.given(Dim::nodes), mb({4}));
  EXPECT_EQ(s.given(Dim::workers), mb({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(s.given(Dim::ps), mb({0, 1, 2}));
  EXPECT_EQ(s.given(Dim::cpus_per_worker), mb({2, 4, 6, 8, 10, 12, 14, 16}));
  EXPECT_EQ(s.given(Dim::gpus_per_worker), mb({1, 2, 4, 8, 16}));
  EXPECT_EQ(s.given(Dim::mem_per_worker), mb({256, 512, 1024, 2048}));
  EXPECT_EQ(s.given(Dim::mem_per_ps), mb({1024, 1536, 2048, 2560, 3072, 3584, 4096}));
  EXPECT_EQ(s.given(Dim::cpus_per_ps), mb({3, 9, 27, 81}));  // the high end only when reached
  // Memory ranges step in powers of two from the low end; a set may be unsorted.
  EXPECT_EQ(SpaceSpec::parse("mem-per-worker=300M-1G").given(Dim::mem_per_worker), mb({300, 600}));
  EXPECT_EQ(SpaceSpec::parse("nodes=8|2|4|2").given(Dim::nodes), mb({2, 4, 8}));
  EXPECT_FALSE(s.has(Dim::cpus_per_worker) && !s.has(Dim::nodes));
  EXPECT_FALSE(SpaceSpec::parse("nodes=1").has(Dim::workers));
}

TEST(SpaceSpec, FormatRoundTrips) {
  const SpaceSpec s = SpaceSpec::parse("mem-per-worker=512M-2G,nodes=1-3");
  EXPECT_EQ(s.format(), "nodes=1|2|3,mem-per-worker=512M|1G|2G");
  EXPECT_EQ(SpaceSpec::parse(s.format()), s);
}

TEST(SpaceSpec, BadSpecsNameTheDimension) {
  struct Case {
    const char *spec, *message;
  } cases[] = {
      {"",
       "--autotune-space: empty space; allowed: comma-separated DIMENSION=VALUES items with "
       "DIMENSION one of nodes, workers, ps, cpus-per-worker, mem-per-worker, gpus-per-worker, "
       "cpus-per-ps, mem-per-ps"},
      {"cores=4",
       "--autotune-space: unknown dimension 'cores'; allowed: nodes, workers, ps, "
       "cpus-per-worker, mem-per-worker, gpus-per-worker, cpus-per-ps, mem-per-ps"},
      {"nodes=4,nodes=2", "--autotune-space: nodes: given twice in 'nodes=4,nodes=2'"},
      {"nodes", "--autotune-space: 'nodes' is not DIMENSION=VALUES"},
      {"nodes=4,", "--autotune-space: empty item in 'nodes=4,'"},
      {"nodes=",
       "--autotune-space: nodes: empty value; allowed: a number (4), a range (1-8, "
       "2-16:2, 1-16:x2) or a set (1|2|4)"},
      {"nodes=8-2",
       "--autotune-space: nodes: '8-2' is an empty range; allowed: LOW-HIGH with LOW <= HIGH"},
      {"nodes=0",
       "--autotune-space: nodes: '0' is out of range; allowed: a whole number from 1 to 100000"},
      {"workers=x",
       "--autotune-space: workers: 'x' is not a whole number; allowed: a whole number from 1 to "
       "1000000"},
      {"ps=1-4:0",
       "--autotune-space: ps step: '0' is out of range; allowed: a whole number from 1 to 1000000"},
      {"cpus-per-worker=1-16:x1",
       "--autotune-space: cpus-per-worker step: '1' is out of range; allowed: a whole number from "
       "2 to 1024"},
      {"cpus-per-worker=4:2",
       "--autotune-space: cpus-per-worker: '4:2': a step needs a range (LOW-HIGH:STEP); allowed: a "
       "number (4), a range (1-8, 2-16:2, 1-16:x2) or a set (1|2|4)"},
      {"nodes=1|2-4",
       "--autotune-space: nodes: '1|2-4' is not a set of single values; allowed: a number (4), a "
       "range (1-8, 2-16:2, 1-16:x2) or a set (1|2|4)"},
      {"mem-per-worker=2Q",
       "--autotune-space: mem-per-worker: '2Q' has an unknown unit 'Q'; allowed: a number with an "
       "optional unit K, M, G or T (e.g. 512M, 2G)"},
      {"mem-per-ps=4G-1G",
       "--autotune-space: mem-per-ps: '4G-1G' is an empty range; allowed: LOW-HIGH with LOW <= "
       "HIGH"},
      {"gpus-per-worker=65",
       "--autotune-space: gpus-per-worker: '65' is out of range; allowed: a whole number from 0 to "
       "64"},
      {"nodes=1-",
       "--autotune-space: nodes: '1-' is not a range; allowed: a number (4), a range (1-8, 2-16:2, "
       "1-16:x2) or a set (1|2|4)"},
      {"workers=1-100000",
       "--autotune-space: workers: '1-100000' has 100000 values; at most 4096 are allowed per dimension "
       "(use a larger step, or a factor: LOW-HIGH:x2)"},
  };
  for (const auto &c : cases) EXPECT_EQ(error_of(c.spec), c.message) << c.spec;
  try {
    SpaceSpec::parse("nodes=0", "autotune.conf:3: DefaultSpace");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("autotune.conf:3: DefaultSpace: nodes: '0'", 0), 0u)
        << e.what();
  }
}

TEST(SpaceSpec, LimitsRefuseAndDefaultsFill) {
  const SpaceSpec limits = SpaceSpec::parse("nodes=1-16,mem-per-worker=256M-8G");
  const SpaceSpec defaults = SpaceSpec::parse("nodes=1-4,workers=1-4,mem-per-worker=1G|16G");
  // Inside the limits: kept as given; missing dimensions come from the defaults, clamped.
  const SpaceSpec s = restrict_space(SpaceSpec::parse("nodes=2|8"), defaults, limits);
  EXPECT_EQ(s.given(Dim::nodes), mb({2, 8}));
  EXPECT_EQ(s.given(Dim::workers), mb({1, 2, 3, 4}));
  EXPECT_EQ(s.given(Dim::mem_per_worker), mb({1024}));  // 16G is outside the limits
  try {
    restrict_space(SpaceSpec::parse("nodes=1-64"), defaults, limits);
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "--autotune-space: nodes: 1-64 is outside the site's limits 1-16 "
                 "(SpaceLimits in autotune.conf)");
  }
  try {
    restrict_space(SpaceSpec::parse("mem-per-worker=128M-1G"), defaults, limits,
                   "--autotune-space");
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "--autotune-space: mem-per-worker: 128M-1G is outside the site's limits "
                 "256M-8G (SpaceLimits in autotune.conf)");
  }
}

TEST(Placement, BalancedBlockWorkersFirst) {
  Configuration c;
  c.counts = {3, 5, 2};  // 7 ranks on 3 nodes: 3, 2, 2
  const Placement p = place(c);
  EXPECT_EQ(p.workers, (std::vector<int>{3, 2, 0}));
  EXPECT_EQ(p.servers, (std::vector<int>{0, 0, 2}));
  c.counts = {2, 3, 1};  // 4 ranks: 2, 2
  const Placement q = place(c);
  EXPECT_EQ(q.workers, (std::vector<int>{2, 1}));
  EXPECT_EQ(q.servers, (std::vector<int>{0, 1}));
}

TEST(Feasibility, PerNodeCpuMemoryAndCount) {
  const NodeType t{"small", 2, 8, 16 * 1024, 0, {}, 1.0};
  Configuration c;
  c.counts = {2, 4, 0};
  c.worker = {4, 8 * 1024, 0};  // two workers per node: 8 CPUs, 16G: exactly fits
  EXPECT_EQ(infeasible_reason(c, t), "");
  c.worker.cpus = 5;
  EXPECT_EQ(infeasible_reason(c, t), "node 0 needs 10 CPUs, type 'small' has 8");
  c.worker = {4, 9 * 1024, 0};
  EXPECT_EQ(infeasible_reason(c, t), "node 0 needs 18G of memory, type 'small' has 16G");
  c.worker = {1, 1024, 1};
  EXPECT_EQ(infeasible_reason(c, t), "node 0 needs 2 GPUs, type 'small' has 0");
  c.worker.gpus = 0;
  c.counts = {3, 6, 0};
  EXPECT_EQ(infeasible_reason(c, t), "needs 3 nodes, type 'small' has 2");
  c.counts = {2, 1, 0};
  EXPECT_NE(infeasible_reason(c, t).find("every node needs at least one rank"), std::string::npos);
  // A parameter server lands on the last node with the remaining workers.
  c.counts = {2, 3, 1};
  c.worker = {2, 4096, 0};
  c.server = {4, 8192, 0};
  EXPECT_EQ(infeasible_reason(c, t), "");  // node 1: one worker (2 CPUs, 4G) + one ps (4, 8G)
  c.server.mem_mb = 16 * 1024;
  EXPECT_EQ(infeasible_reason(c, t), "node 1 needs 20G of memory, type 'small' has 16G");
}

TEST(Enumerate, KeepsOnlyFeasibleConfigurations) {
  Inventory inv;
  inv.types.push_back({"small", 4, 8, 16 * 1024, 0, {}, 1.0});
  inv.types.push_back({"big", 2, 32, 128 * 1024, 0, {"fat"}, 3.0});
  const SpaceSpec s =
      SpaceSpec::parse("nodes=1-4,workers=1-8,cpus-per-worker=1-16:x2,mem-per-worker=4G");
  const auto all = enumerate(s, inv);
  ASSERT_FALSE(all.empty());
  size_t on_big = 0;
  for (const auto &c : all) {
    EXPECT_EQ(infeasible_reason(c.config, inv.types[c.node_type]), "") << c.config.format();
    EXPECT_DOUBLE_EQ(c.billing_rate, inv.types[c.node_type].billing_weight * c.config.counts.nodes);
    on_big += c.node_type == 1;
  }
  // Hand count for "small": nodes n <= 4, workers w in [n, 8] (one rank per node at least), per
  // node ceil(w/n) workers of c CPUs <= 8 and of 4G <= 16G.
  size_t expect_small = 0;
  for (int n = 1; n <= 4; ++n)
    for (int w = n; w <= 8; ++w)
      for (int c = 1; c <= 16; c *= 2) {
        const int per = (w + n - 1) / n;
        expect_small += per * c <= 8 && per * 4 <= 16;
      }
  EXPECT_EQ(all.size() - on_big, expect_small);
  // Required features keep only the types that have them.
  EnumerateOptions fat;
  fat.required_features = {"fat"};
  for (const auto &c : enumerate(s, inv, fat)) EXPECT_EQ(c.node_type, 1u);
  // Defaults: one worker per node.
  const auto d = enumerate(SpaceSpec::parse("nodes=1-3"), inv);
  for (const auto &c : d) EXPECT_EQ(c.config.counts.workers, c.config.counts.nodes);
  // Nothing fits: the message says why for one configuration.
  try {
    enumerate(SpaceSpec::parse("nodes=1,cpus-per-worker=64"), inv);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("no configuration of the space fits the cluster"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("needs 64 CPUs"), std::string::npos) << e.what();
  }
  // Too large.
  EXPECT_THROW(enumerate(SpaceSpec::parse("nodes=1-4096,workers=1-4096"), inv), Error);
}

// job_submit's bounds: every size is refused before it is allocated or enumerated, and the
// message names the limit and what the space asked for.
TEST(SpaceBounds, TextLongerThanTheLimitIsRefusedUnparsed) {
  std::string text = "nodes=1";
  while (text.size() <= kMaxSpaceText) text += ",nodes=1";
  try {
    SpaceSpec::parse(text);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "--autotune-space: the space is " + std::to_string(text.size()) +
                                         " characters long; at most 4096 are allowed (use ranges: 1-64:x2)");
  }
  // At the limit: parsed (and refused for what it says, here a repeated key).
  text.resize(kMaxSpaceText);
  while (text.back() != '1') text.pop_back();
  try {
    SpaceSpec::parse(text);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("nodes: given twice"), std::string::npos) << e.what();
  }
}

TEST(SpaceBounds, ValuesPerDimensionAreCountedBeforeExpanding) {
  auto error_of = [](const std::string &spec) {
    try {
      SpaceSpec::parse(spec);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // The largest ranges each dimension accepts as values: counted, not expanded.
  EXPECT_EQ(error_of("mem-per-worker=1M-1073741824M:1M"),
            "--autotune-space: mem-per-worker: '1M-1073741824M:1M' has 1073741824 values; at most 4096 are "
            "allowed per dimension (use a larger step, or a factor: LOW-HIGH:x2)");
  EXPECT_EQ(error_of("ps=0-1000000"),
            "--autotune-space: ps: '0-1000000' has 1000001 values; at most 4096 are allowed per dimension "
            "(use a larger step, or a factor: LOW-HIGH:x2)");
  // Exactly the limit is accepted; one more is not.
  EXPECT_EQ(error_of("workers=1-4096"), "accepted");
  EXPECT_EQ(error_of("workers=2-8194:2"), "--autotune-space: workers: '2-8194:2' has 4097 values; at most 4096 "
                                          "are allowed per dimension (use a larger step, or a factor: LOW-HIGH:x2)");
  EXPECT_EQ(SpaceSpec::parse("workers=2-8192:2").given(Dim::workers).size(), 4096u);
  // Geometric ranges have few values whatever their ends.
  EXPECT_EQ(SpaceSpec::parse("mem-per-worker=1M-1073741824M").given(Dim::mem_per_worker).size(), 31u);
  EXPECT_EQ(SpaceSpec::parse("workers=1-1000000:x2").given(Dim::workers).size(), 20u);
  // A set within the text limit has at most 2045 values ("nodes=1|2|..."): accepted.
  std::string set = "nodes=1";
  for (int i = 2; set.size() + 2 <= kMaxSpaceText; ++i) set += "|1";
  EXPECT_EQ(error_of(set), "accepted");
  EXPECT_EQ(SpaceSpec::parse(set).given(Dim::nodes).size(), 1u);
}

TEST(SpaceBounds, CombinationsAreCountedBeforeEnumerating) {
  EXPECT_EQ(space_combinations(SpaceSpec::parse("nodes=1-4,workers=1-8")), 32.0);
  EXPECT_EQ(space_combinations(SpaceSpec::parse("nodes=1-4,workers=1-8"), 3), 96.0);
  // ps = 0 collapses the server dimensions: 1 + 2 x (2 x 3).
  EXPECT_EQ(space_combinations(SpaceSpec::parse("ps=0-2,cpus-per-ps=1-2,mem-per-ps=256M|512M|1G")), 13.0);
  EXPECT_EQ(space_combinations(SpaceSpec{}), 1.0);
  // At the limit: accepted.
  const SpaceSpec at = SpaceSpec::parse("nodes=1-4,workers=4-253,mem-per-worker=1M-10M:1M");
  EXPECT_EQ(space_combinations(at), static_cast<double>(kMaxCombinations));
  EXPECT_NO_THROW(check_space_size(at));
  try {
    check_space_size(at, 2);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "--autotune-space: the space has 20000 combinations (4 nodes x 250 workers x 10 mem-per-worker x 2 "
              "node types); at most 10000 are allowed (narrow a range or use a step, e.g. 1-64:x2)");
  }
  // Eight dimensions at their largest: the count does not overflow, and nothing is enumerated.
  const SpaceSpec huge = SpaceSpec::parse(
      "nodes=1-4096,workers=1-4096,ps=1-4096,cpus-per-worker=1-4096,mem-per-worker=1M-4096M:1M,"
      "gpus-per-worker=0-64,cpus-per-ps=1-4096,mem-per-ps=1M-4096M:1M");
  try {
    check_space_size(huge, 1, "--autotune-space");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("--autotune-space: the space has 1.2572828523992143e+27 combinations", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("combinations (4096 nodes x 4096 workers x 4096 ps x 4096 cpus-per-worker"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("at most 10000 are allowed"), std::string::npos) << e.what();
  }
  Inventory inv;
  inv.types.push_back({"big", 4096, 256, 1u << 20, 8, {}, 1.0});
  try {
    enumerate(huge, inv);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("the space has ", 0), 0u) << e.what();
  }
}

TEST(SpaceBounds, StoredSpacesAreWalkedWithTheEarlierLimit) {
  // A class created when 2,000,000 combinations were allowed keeps working outside slurmctld.
  Inventory inv;
  inv.types.push_back({"small", 4, 8, 16 * 1024, 0, {}, 1.0});
  const SpaceSpec old = SpaceSpec::parse("nodes=1-4,workers=1-100,mem-per-worker=1M-50M:1M");  // 20000
  EXPECT_THROW(enumerate(old, inv), Error);
  EnumerateOptions stored;
  stored.max_combinations = static_cast<double>(kMaxStoredCombinations);
  EXPECT_FALSE(enumerate(old, inv, stored).empty());
  try {
    check_space_size(old, 1, "class space", static_cast<double>(kMaxStoredCombinations) / 1000);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("at most 2000 are allowed"), std::string::npos) << e.what();
  }
}

TEST(SpaceBounds, FitsAgreesWithInfeasibleReason) {
  // fits() looks at a few nodes only; infeasible_reason() at every node.  Same verdict everywhere.
  const std::vector<NodeType> types = {{"a", 3, 8, 16 * 1024, 2, {}, 1.0}, {"b", 8, 5, 7000, 0, {}, 1.0}};
  int checked = 0, fit = 0;
  for (const NodeType &t : types)
    for (int n = 0; n <= 9; ++n)
      for (int w = 0; w <= 12; ++w)
        for (int s = 0; s <= 7; ++s)
          for (int wc : {1, 2, 3})
            for (int sc : {1, 4})
              for (std::uint64_t wm : {1000u, 2500u})
                for (std::uint64_t sm : {1u, 6000u})
                  for (int g : {0, 1}) {
                    Configuration c;
                    c.counts = {n, w, s};
                    c.worker = {wc, wm, g};
                    c.server = {sc, sm, 0};
                    const bool f = fits(c, t);
                    ASSERT_EQ(f, infeasible_reason(c, t).empty()) << c.format() << " on " << t.name;
                    ++checked;
                    fit += f;
                  }
  EXPECT_GT(fit, 100);
  EXPECT_GT(checked - fit, 100);
}

TEST(CandidateSet, EncodesOnUnitScalesWithTotals) {
  Inventory inv;
  inv.types.push_back({"small", 4, 8, 16 * 1024, 0, {}, 1.0});
  const auto cands = enumerate(SpaceSpec::parse("nodes=1-4,cpus-per-worker=1|2|4"), inv);
  const CandidateSet cs = CandidateSet::from_candidates(cands, inv);
  ASSERT_EQ(cs.size(), cands.size());
  // Varying: nodes, cpus-per-worker, total-cpus; workers (one per node) and total-mem (256M
  // each) repeat the encoding of nodes and are dropped.
  EXPECT_EQ(cs.group_names(), (std::vector<std::string>{"nodes", "cpus-per-worker", "total-cpus"}));
  EXPECT_DOUBLE_EQ(cs.encoded().minCoeff(), 0.0);
  EXPECT_DOUBLE_EQ(cs.encoded().maxCoeff(), 1.0);
  // Log scale: nodes 1, 2, 4 -> 0, 1/2, 1 (3 -> log 3 / log 4).
  for (size_t i = 0; i < cs.size(); ++i) {
    const double n = cands[i].config.counts.nodes;
    EXPECT_NEAR(cs.encoded()(static_cast<Eigen::Index>(i), 0), std::log(n) / std::log(4.0), 1e-12);
  }
  // Categorical columns: one-hot at 1/sqrt(2), distance 1 between levels.
  FeatureColumn f{"family", Scale::categorical, {}, {"c4", "m4", "c4"}};
  FeatureColumn g{"size", Scale::automatic, {2, 4, 4}, {}};
  const CandidateSet t({f, g});
  EXPECT_EQ(t.feature_groups(), 2);
  EXPECT_NEAR((t.encoded().row(0) - t.encoded().row(1)).head(2).norm(), 1.0, 1e-12);
  EXPECT_EQ(t.label(1), "family=m4,size=4");
  EXPECT_THROW(CandidateSet({FeatureColumn{"a", Scale::automatic, {1, 2}, {}},
                             FeatureColumn{"b", Scale::automatic, {1}, {}}}),
               Error);
}

// A space a user gives in few characters of ranges is stored as format(), which writes every value
// out; the class must still read it back (a fuzzing finding: workers=2-1662 formats to 7.6 kB).
TEST(SpaceBounds, StoredFormatLongerThanTheUserLimitReadsBack) {
  const SpaceSpec s = SpaceSpec::parse("nodes=1-4,workers=2-1662,mem-per-worker=1288M|1T");
  const std::string f = s.format();
  ASSERT_GT(f.size(), kMaxSpaceText);
  EXPECT_EQ(SpaceSpec::parse(f, "class space", kMaxStoredSpaceText), s);
  EXPECT_THROW(SpaceSpec::parse(f), Error);  // as a user's text, it is too long
}
