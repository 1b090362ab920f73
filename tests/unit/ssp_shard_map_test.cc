// Logical-server shard mapping (no MPI).
#include <gtest/gtest.h>

#include <set>

#include "shard_map.hpp"

namespace {

TEST(SspShardMap, ShardsAreContiguousNonEmptyAndCoverAllRows) {
  for (std::int64_t rows : {1, 5, 16, 17, 785, 100003}) {
    ssp::ShardMap m(rows, 16, 3);
    EXPECT_EQ(m.shards(), std::min<std::int64_t>(16, rows));
    EXPECT_EQ(m.shard_begin(0), 0);
    EXPECT_EQ(m.shard_end(m.shards() - 1), rows);
    for (int l = 0; l < m.shards(); ++l)
      EXPECT_LT(m.shard_begin(l), m.shard_end(l)) << rows << " " << l;
    for (std::int64_t r = 0; r < rows; r += std::max<std::int64_t>(1, rows / 997)) {
      const int l = m.shard_of(r);
      EXPECT_LE(m.shard_begin(l), r);
      EXPECT_LT(r, m.shard_end(l));
    }
  }
}

TEST(SspShardMap, BoundariesDoNotDependOnTheServerCount) {
  ssp::ShardMap a(785, 16, 1), b(785, 16, 2), c(785, 16, 5);
  for (int l = 0; l <= 16; ++l) {
    EXPECT_EQ(a.shard_begin(l), b.shard_begin(l));
    EXPECT_EQ(a.shard_begin(l), c.shard_begin(l));
  }
}

TEST(SspShardMap, ShardsAreDealtRoundRobinToServers) {
  ssp::ShardMap m(1000, 10, 3);
  EXPECT_EQ(m.server_of_shard(0), 0);
  EXPECT_EQ(m.server_of_shard(4), 1);
  std::set<int> all;
  for (int s = 0; s < 3; ++s)
    for (int l : m.shards_of_server(s)) {
      EXPECT_EQ(m.server_of_shard(l), s);
      EXPECT_TRUE(all.insert(l).second);
    }
  EXPECT_EQ(all.size(), 10u);
  EXPECT_EQ(m.shards_of_server(0), (std::vector<int>{0, 3, 6, 9}));
}

TEST(SspShardMap, SplitCutsAtShardBoundaries) {
  ssp::ShardMap m(100, 4, 2);  // shards of 25 rows
  const auto p = m.split(20, 40);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].shard, 0);
  EXPECT_EQ(p[0].first, 20);
  EXPECT_EQ(p[0].count, 5);
  EXPECT_EQ(p[1].shard, 1);
  EXPECT_EQ(p[1].count, 25);
  EXPECT_EQ(p[2].shard, 2);
  EXPECT_EQ(p[2].first, 50);
  EXPECT_EQ(p[2].count, 10);
  EXPECT_TRUE(m.split(7, 0).empty());
}

}  // namespace
