// The tier store on real files: a pmem tier in /dev/shm mapped with libpmem2 and a disk tier in a
// temporary directory on the local disk.  Bandwidths are configured (pmem 3G/s, disk 1G/s) so
// that the bandwidth-proportional split is known: 3/4 on pmem, 1/4 on disk.  Nothing here needs
// root; the burst buffers of jobs, which do, are tested in tier_root_test.cc.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <thread>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier_test_util.hpp"
#include "tier/placement.hpp"
#include "tier/record.hpp"

using namespace autotune;

namespace {

using tier_test::MiB;
using tier_test::bytes;
using tier_test::code_of;
using tier_test::make_temp_dir;

class TierStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shm = make_temp_dir("/dev/shm");
    disk = make_temp_dir("/tmp");
  }
  void TearDown() override {
    ::unsetenv("PMEM2_FORCE_GRANULARITY");
    tierfs::remove_tree(shm);
    tierfs::remove_tree(disk);
  }
  TierStoreOptions options(std::uint64_t pmem_cap = 8 * MiB, std::uint64_t disk_cap = 64 * MiB,
                           PlacementPolicy p = PlacementPolicy::bandwidth_proportional) {
    TierStoreOptions o;
    o.tiers = {{"pm", TierKind::pmem, shm + "/pm", pmem_cap, 3ull << 30},
               {"disk", TierKind::disk, disk + "/disk", disk_cap, 1ull << 30}};
    o.placement = p;
    o.demotion = false;
    o.min_part = 64 * 1024;
    return o;
  }
  std::uint64_t free_on(TierStore &s, const std::string &tier) {
    for (const auto &u : s.usage())
      if (u.name == tier) return u.free;
    return ~0ull;
  }
  std::size_t files_in(const std::string &dir) { return tierfs::list_dir(dir).size(); }
  std::string shm, disk;
};

}  // namespace

// ---- autotune.conf ---------------------------------------------------------------------------

TEST(TierConf, ParsesTiersAndDefaults) {
  Conf c = Conf::load_text(
      "Tier=fast Kind=pmem Path=/mnt/pmem0/bb Capacity=64G Bandwidth=8G/s\n"
      "tier=slow kind=disk path=/var/spool/bb/ capacity=2T\n");
  ASSERT_EQ(c.tier.tiers.size(), 2u);
  EXPECT_EQ(c.tier.tiers[0].kind, TierKind::pmem);
  EXPECT_EQ(c.tier.tiers[0].capacity, 64ull << 30);
  EXPECT_EQ(c.tier.tiers[0].bandwidth, 8ull << 30);
  EXPECT_EQ(c.tier.tiers[1].path, "/var/spool/bb");
  EXPECT_EQ(c.tier.tiers[1].bandwidth, 0u);  // measured
  EXPECT_EQ(c.tier.placement, PlacementPolicy::automatic);
  EXPECT_TRUE(c.tier.demotion);
  Conf d = Conf::load_text("TierPlacement=fill-fastest\nTierDemotion=no\n");
  EXPECT_EQ(d.tier.placement, PlacementPolicy::fill_fastest);
  EXPECT_FALSE(d.tier.demotion);
  EXPECT_TRUE(Conf::defaults().tier.tiers.empty());
  // The line format_tier_line writes reads back the same.
  Conf e = Conf::load_text(format_tier_line(c.tier.tiers[0]) + "\n");
  EXPECT_EQ(e.tier.tiers[0].capacity, c.tier.tiers[0].capacity);
  EXPECT_EQ(e.tier.tiers[0].bandwidth, c.tier.tiers[0].bandwidth);
}

TEST(TierConf, BadLinesFailWithOneClearMessage) {
  const std::string ok = " Kind=disk Path=/d Capacity=1G";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Tier=a Kind=tape Path=/d Capacity=1G",
       "autotune.conf:1: Tier=a Kind: 'tape' is not a tier kind; allowed: pmem, disk"},
      {"Tier=a Kind=disk Path=rel Capacity=1G",
       "autotune.conf:1: Tier=a Path: 'rel' is not an absolute path"},
      {"Tier=a Kind=disk Path=/x/../etc Capacity=1G",
       "autotune.conf:1: Tier=a Path: '/x/../etc' has a '..' component; write the path without it"},
      {"Tier=a Kind=disk Path=/d Capacity=2X",
       "autotune.conf:1: Tier=a Capacity: '2X' has an unknown unit 'X'; allowed: a number with an "
       "optional unit K, M, G or T (e.g. 512M, 2G)"},
      {"Tier=a Kind=disk Path=/d Capacity=100K",
       "autotune.conf:1: Tier=a Capacity: '100K' is smaller than the minimum 1M"},
      {"Tier=a Kind=pmem Path=/d Capacity=2000001",
       "autotune.conf:1: Tier=a Capacity: '2000001' is not a multiple of 4K, the page size a pmem "
       "tier is mapped in"},
      {"Tier=a Kind=disk Path=/d Capacity=1G Bandwidth=fast",
       "autotune.conf:1: Tier=a Bandwidth: 'fast' is not a bandwidth; allowed: 'measured' or a "
       "size per second such as 2G/s or 500M/s"},
      {"Tier=a Kind=disk Path=/d Capacity=1G Bandwidth=0/s",
       "autotune.conf:1: Tier=a Bandwidth: '0/s' is zero; allowed: 'measured' or a size per second "
       "such as 2G/s or 500M/s"},
      {"Tier=a Kind=disk Path=/d Capacity=1G Speed=1",
       "autotune.conf:1: Tier=a has an unknown field 'Speed'; allowed: Kind, Path, Capacity, "
       "Bandwidth"},
      {"Tier=a Path=/d Capacity=1G", "autotune.conf:1: Tier=a has no Kind= (allowed: pmem, disk)"},
      {"Tier=a Kind=disk Capacity=1G",
       "autotune.conf:1: Tier=a has no Path= (an absolute directory)"},
      {"Tier=a Kind=disk Path=/d", "autotune.conf:1: Tier=a has no Capacity= (e.g. Capacity=64G)"},
      {"Tier=a Kind=disk Kind=pmem Path=/d Capacity=1G",
       "autotune.conf:1: Tier=a Kind is given twice on the line"},
      {"Tier=a/b" + ok,
       "autotune.conf:1: Tier: the tier name 'a/b' contains a character that is not allowed; "
       "allowed: 1-32 characters from A-Z a-z 0-9 _ -"},
      {"Tier=a" + ok + "\nTier=A Kind=disk Path=/e Capacity=1G",
       "autotune.conf:2: Tier=A is defined twice (first at autotune.conf:1)"},
      {"Tier=a" + ok + "\nTier=b Kind=disk Path=/d Capacity=1G",
       "autotune.conf:2: Tier=b Path: '/d' is already the path of tier 'a' (autotune.conf:1)"},
      {"Tier=a Kind=pmem Path=/p Capacity=1G\nTier=b Kind=pmem Path=/q Capacity=1G",
       "autotune.conf:2: Tier=b: a second pmem tier (tier 'a' at autotune.conf:1 is one); at most "
       "one is allowed"},
      {"TierPlacement=fastest",
       "autotune.conf:1: TierPlacement: 'fastest' is not a placement policy; allowed: "
       "auto, bandwidth-proportional, fill-fastest"},
      {"TierDemotion=maybe",
       "autotune.conf:1: TierDemotion: 'maybe' is not a boolean; allowed: yes, no, true, false, 1, "
       "0, on, off"},
  };
  for (const auto &[text, want] : cases) {
    std::string got;
    try {
      Conf::load_text(text + "\n", "autotune.conf");
    } catch (const Error &e) {
      got = e.what();
    }
    EXPECT_EQ(got, want) << "for: " << text;
  }
}

// ---- keys ------------------------------------------------------------------------------------

TEST(TierKey, ValidationRejectsTraversal) {
  for (const char *good : {"a", "ckpt/42/rank3", "x.y_z-1", "a/b.c/d"})
    EXPECT_NO_THROW(validate_tier_key(good)) << good;
  for (std::string bad :
       std::vector<std::string>{"", "../etc/passwd", "/abs", "a//b", "a/./b", "a/..", ".hidden",
                                "a b", "a\\b", "a%b", "a/", std::string(201, 'k')}) {
    std::string msg;
    EXPECT_EQ(code_of([&] { validate_tier_key(bad); }, &msg), Errc::invalid_argument) << bad;
    EXPECT_NE(msg.find("allowed:"), std::string::npos) << msg;
  }
}

// ---- object records --------------------------------------------------------------------------

// Pieces whose 64-bit sum wraps around must not pass for a cover of [0, size): 0+(2^64-1) and
// (2^64-1)+2 "end" at 1 (a record the fuzzer built, tests/fuzz/record/crash-piece-wraps-around).
TEST(TierRecord, PiecesThatWrapAroundAreCorrupt) {
  ObjectRecord r;
  r.key = "a";
  r.id = "x-1";
  r.size = 1;
  PieceRecord p;
  p.tier = "d";
  p.file = "f1";
  p.length = ~0ull;
  r.pieces.push_back(p);
  p.file = "f2";
  p.offset = ~0ull;
  p.length = 2;
  r.pieces.push_back(p);
  std::string msg;
  EXPECT_EQ(code_of([&] { decode_record(encode_record(r), "objects/a"); }, &msg), Errc::corrupt);
  EXPECT_NE(msg.find("pieces do not cover the object"), std::string::npos) << msg;
  r.size = 3;  // a piece longer than the object
  r.pieces.pop_back();
  EXPECT_EQ(code_of([&] { decode_record(encode_record(r), "objects/a"); }, &msg), Errc::corrupt);
  r.pieces[0].length = 3;
  EXPECT_EQ(decode_record(encode_record(r), "objects/a").pieces.size(), 1u);
}

// Extents of a pmem piece whose total or whose end wraps around 2^64 (tests/fuzz/record/
// crash-extents-wrap-around, crash-extent-end-wraps-around): the store would read outside its pool.
TEST(TierRecord, ExtentsThatWrapAroundAreCorrupt) {
  ObjectRecord r;
  r.key = "a";
  r.id = "x-1";
  r.size = 4096;
  PieceRecord p;
  p.tier = "pm";
  p.length = 4096;
  p.extents = {{0, 4096}, {0, ~0ull - 4095}, {0, 4096}};  // 4096 + (2^64 - 4096) + 4096
  r.pieces.push_back(p);
  std::string msg;
  EXPECT_EQ(code_of([&] { decode_record(encode_record(r), "objects/a"); }, &msg), Errc::corrupt);
  EXPECT_NE(msg.find("extents do not span the piece"), std::string::npos) << msg;
  r.pieces[0].extents = {{~0ull - 4095, 4096}};  // the last page below 2^64: its end is 2^64
  EXPECT_EQ(code_of([&] { decode_record(encode_record(r), "objects/a"); }, &msg), Errc::corrupt);
  EXPECT_NE(msg.find("beyond 2^64"), std::string::npos) << msg;
  r.pieces[0].extents = {{8192, 4096}};
  EXPECT_EQ(decode_record(encode_record(r), "objects/a").pieces[0].extents[0].off, 8192u);
}

// ---- placement (pure) ------------------------------------------------------------------------

TEST(PlacementPolicy, FillFastestFillsInOrder) {
  std::vector<TierRoom> t = {{3e9, 8 * MiB, 4096}, {1e9, 64 * MiB, 1}};
  EXPECT_EQ(plan_placement(PlacementPolicy::fill_fastest, 5 * MiB, t, MiB),
            (std::vector<std::uint64_t>{5 * MiB, 0}));
  EXPECT_EQ(plan_placement(PlacementPolicy::fill_fastest, 8 * MiB, t, MiB),
            (std::vector<std::uint64_t>{8 * MiB, 0}));
  EXPECT_EQ(plan_placement(PlacementPolicy::fill_fastest, 8 * MiB + 1, t, MiB),
            (std::vector<std::uint64_t>{8 * MiB, 1}));
  EXPECT_TRUE(plan_placement(PlacementPolicy::fill_fastest, 72 * MiB + 1, t, MiB).empty());
  EXPECT_EQ(plan_placement(PlacementPolicy::fill_fastest, 0, t, MiB), (std::vector<std::uint64_t>{0, 0}));
}

TEST(PlacementPolicy, BandwidthProportionalFinishesTogether) {
  std::vector<TierRoom> t = {{3e9, 64 * MiB, 4096}, {1e9, 64 * MiB, 1}};
  // 3:1 when both have room.
  EXPECT_EQ(plan_placement(PlacementPolicy::bandwidth_proportional, 8 * MiB, t, MiB),
            (std::vector<std::uint64_t>{6 * MiB, 2 * MiB}));
  // pmem share capped at its free space; the rest re-split (here: all) to the disk.
  t[0].free = 4 * MiB;
  EXPECT_EQ(plan_placement(PlacementPolicy::bandwidth_proportional, 32 * MiB, t, MiB),
            (std::vector<std::uint64_t>{4 * MiB, 28 * MiB}));
  // Three tiers: the capped tier's excess is split 2:1 between the other two.
  std::vector<TierRoom> three = {{4e9, 1 * MiB, 4096}, {2e9, 64 * MiB, 1}, {1e9, 64 * MiB, 1}};
  EXPECT_EQ(plan_placement(PlacementPolicy::bandwidth_proportional, 7 * MiB, three, 4096),
            (std::vector<std::uint64_t>{1 * MiB, 4 * MiB, 2 * MiB}));
  // Rounding: the pmem piece's pages fit its free space, the pieces add up, the split is 3:1.
  std::vector<TierRoom> r = {{3e9, 64 * MiB, 4096}, {1e9, 64 * MiB, 1}};
  auto s = plan_placement(PlacementPolicy::bandwidth_proportional, 10000000, r, 4096);
  EXPECT_EQ(s[0] + s[1], 10000000u);
  EXPECT_NEAR(static_cast<double>(s[0]) / 10000000, 0.75, 0.001);
  r[0].free = 7500000 / 4096 * 4096;  // less than 3/4: capped to whole pages
  s = plan_placement(PlacementPolicy::bandwidth_proportional, 10000000, r, 4096);
  EXPECT_EQ(s[0], r[0].free);
  EXPECT_EQ(s[1], 10000000 - r[0].free);
  // Small objects are not split.
  EXPECT_EQ(plan_placement(PlacementPolicy::bandwidth_proportional, MiB, r, MiB),
            (std::vector<std::uint64_t>{MiB, 0}));
  // A sliver below min_part is folded into the big piece.
  std::vector<TierRoom> sliver = {{100e9, 64 * MiB, 4096}, {1e9, 64 * MiB, 1}};
  EXPECT_EQ(plan_placement(PlacementPolicy::bandwidth_proportional, 10 * MiB, sliver, MiB),
            (std::vector<std::uint64_t>{10 * MiB, 0}));
  EXPECT_TRUE(plan_placement(PlacementPolicy::bandwidth_proportional, 129 * MiB, r, MiB).empty());
}

TEST(PlacementPolicy, BandwidthProportionalCountsEachTiersLatency) {
  // pmem 3 GB/s, no latency; disk 1 GB/s, 10 ms per piece (its fsync).
  std::vector<TierRoom> t = {{3e9, 1024 * MiB, 4096, 0}, {1e9, 1024 * MiB, 1, 0.010}};
  // 8 MiB: pmem alone is done in 2.8 ms, before the disk's latency is over: no disk piece.
  EXPECT_EQ(plan_placement(PlacementPolicy::bandwidth_proportional, 8 * MiB, t, MiB),
            (std::vector<std::uint64_t>{8 * MiB, 0}));
  // 256 MiB: both finish together at T = (S + 1e9 * 0.01) / 4e9.
  const double S = 256.0 * MiB, T = (S + 1e9 * 0.010) / 4e9;
  auto s = plan_placement(PlacementPolicy::bandwidth_proportional, 256 * MiB, t, MiB);
  EXPECT_NEAR(static_cast<double>(s[0]), 3e9 * T, 8192);
  EXPECT_NEAR(static_cast<double>(s[1]), 1e9 * (T - 0.010), 8192);
  EXPECT_EQ(s[0] + s[1], 256 * MiB);
}

TEST(PlacementPolicy, AutoKeepsWhatFitsOnTheFastestTierAndSplitsTheRest) {
  std::vector<TierRoom> t = {{3e9, 64 * MiB, 4096}, {1e9, 1024 * MiB, 1}};
  // Fits in the fastest tier's free space: one piece there, as fill-fastest.
  EXPECT_EQ(plan_placement(PlacementPolicy::automatic, 8 * MiB, t, MiB),
            (std::vector<std::uint64_t>{8 * MiB, 0}));
  EXPECT_EQ(plan_placement(PlacementPolicy::automatic, 64 * MiB, t, MiB),
            (std::vector<std::uint64_t>{64 * MiB, 0}));
  // Beyond it: the bandwidth-proportional split (pmem capped at its free space).
  EXPECT_EQ(plan_placement(PlacementPolicy::automatic, 256 * MiB, t, MiB),
            plan_placement(PlacementPolicy::bandwidth_proportional, 256 * MiB, t, MiB));
  EXPECT_EQ(plan_placement(PlacementPolicy::automatic, 256 * MiB, t, MiB)[0], 64 * MiB);
  // A full fastest tier: everything on the next.
  t[0].free = 0;
  EXPECT_EQ(plan_placement(PlacementPolicy::automatic, 8 * MiB, t, MiB),
            (std::vector<std::uint64_t>{0, 8 * MiB}));
  EXPECT_TRUE(plan_placement(PlacementPolicy::automatic, 2048 * MiB, t, MiB).empty());
  EXPECT_EQ(parse_placement("TierPlacement", "AUTO"), PlacementPolicy::automatic);
  EXPECT_STREQ(placement_name(PlacementPolicy::automatic), "auto");
}

// ---- the store -------------------------------------------------------------------------------

TEST_F(TierStoreTest, ZeroBytes) {
  TierStore s(options());
  ObjectInfo o = s.put("empty", nullptr, 0);
  EXPECT_EQ(o.size, 0u);
  EXPECT_TRUE(o.pieces.empty());
  EXPECT_TRUE(s.get("empty").empty());
  EXPECT_EQ(s.stat("empty").size, 0u);
  EXPECT_TRUE(s.verify().empty());
}

TEST_F(TierStoreTest, RealPmem2MappingOnTmpfs) {
  TierStore s(options());
  EXPECT_EQ(s.pmem_granularity(), PmemGranularity::page);
  struct stat st;
  ASSERT_EQ(::stat((shm + "/pm/pool").c_str(), &st), 0);
  EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), 8 * MiB);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_GE(static_cast<std::uint64_t>(st.st_blocks) * 512, 8 * MiB);  // preallocated
  auto u = s.usage();
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].name, "pm");  // fastest first
  EXPECT_NE(u[0].media.find("tmpfs"), std::string::npos) << u[0].media;
  EXPECT_NE(u[0].media.find("page granularity (msync)"), std::string::npos) << u[0].media;
}

TEST_F(TierStoreTest, FillFastestAtThePmemBoundary) {
  TierStore s(options(8 * MiB, 64 * MiB, PlacementPolicy::fill_fastest));
  auto a = bytes(8 * MiB, 1);
  ObjectInfo o = s.put("exact", a.data(), a.size());  // exactly the pmem free space
  EXPECT_EQ(o.bytes_on("pm"), 8 * MiB);
  EXPECT_EQ(o.bytes_on("disk"), 0u);
  EXPECT_EQ(free_on(s, "pm"), 0u);
  EXPECT_EQ(s.get("exact"), a);
  auto b = bytes(3 * MiB + 1, 2);
  o = s.put("spill", b.data(), b.size());  // pmem full: all of it on disk
  EXPECT_EQ(o.bytes_on("disk"), 3 * MiB + 1);
  EXPECT_EQ(s.get("spill"), b);
  s.remove("exact");
  auto c = bytes(8 * MiB + 1, 3);  // one byte more than the pmem free space
  o = s.put("plus1", c.data(), c.size());
  EXPECT_EQ(o.bytes_on("pm"), 8 * MiB);
  EXPECT_EQ(o.bytes_on("disk"), 1u);
  ASSERT_EQ(o.pieces.size(), 2u);
  EXPECT_EQ(o.pieces[1].offset, 8 * MiB);
  EXPECT_EQ(s.get("plus1"), c);
  EXPECT_TRUE(s.verify().empty());
}

TEST_F(TierStoreTest, BandwidthProportionalSplitAndReassembly) {
  TierStore s(options(8 * MiB, 64 * MiB, PlacementPolicy::bandwidth_proportional));
  auto a = bytes(8 * MiB, 4);  // exactly the pmem free space: still split 3:1
  ObjectInfo o = s.put("a", a.data(), a.size());
  EXPECT_EQ(o.bytes_on("pm"), 6 * MiB);
  EXPECT_EQ(o.bytes_on("disk"), 2 * MiB);
  EXPECT_EQ(s.get("a"), a);
  // Larger than the pmem free space (2M left): pmem capped, the rest on disk.
  auto b = bytes(20 * MiB + 12345, 5);
  o = s.put("b", b.data(), b.size());
  EXPECT_EQ(o.bytes_on("pm"), 2 * MiB);
  EXPECT_EQ(o.bytes_on("disk"), 18 * MiB + 12345);
  EXPECT_EQ(s.get("b"), b);
  // get_into a caller's buffer; too small a buffer is refused.
  std::vector<unsigned char> buf(b.size());
  EXPECT_EQ(s.get_into("b", buf.data(), buf.size()).size, b.size());
  EXPECT_EQ(buf, b);
  std::string msg;
  EXPECT_EQ(code_of([&] { s.get_into("b", buf.data(), 100); }, &msg), Errc::invalid_argument);
  EXPECT_EQ(msg, "get 'b': the object is 20983865 bytes, the buffer 100");
}

TEST_F(TierStoreTest, GatherPutFromSegments) {
  TierStore s(options());
  auto a = bytes(3 * MiB + 7, 6), b = bytes(5, 7), c = bytes(2 * MiB, 8);
  ObjectInfo o = s.put("g", {{a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}});
  std::vector<unsigned char> all(a);
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  EXPECT_EQ(o.size, all.size());
  EXPECT_EQ(o.pieces.size(), 2u);
  EXPECT_EQ(s.get("g"), all);
  // The checksum depends on the bytes, not on how they were handed over.
  ObjectInfo o2 = s.put("g2", all.data(), all.size());
  EXPECT_EQ(o2.checksum, o.checksum);
}

TEST_F(TierStoreTest, LargerThanBothTiersIsAClearErrorAndLeavesNothing) {
  TierStore s(options(4 * MiB, 8 * MiB));
  auto a = bytes(12 * MiB + 1, 9);
  std::string msg;
  EXPECT_EQ(code_of([&] { s.put("big", a.data(), a.size()); }, &msg), Errc::no_space);
  EXPECT_EQ(msg,
            "put 'big': 12582913B does not fit in the free space of the store's tiers "
            "(pm: 4M free of 4M, disk: 8M free of 8M)");
  EXPECT_FALSE(s.exists("big"));
  for (const auto &u : s.usage()) {
    EXPECT_EQ(u.used, 0u) << u.name;
    EXPECT_EQ(u.in_flight, 0u) << u.name;
  }
  EXPECT_EQ(files_in(disk + "/disk/data"), 0u);
  EXPECT_EQ(files_in(disk + "/disk/meta/pending"), 0u);
  // Exactly both tiers together fits.
  auto b = bytes(12 * MiB, 10);
  EXPECT_NO_THROW(s.put("full", b.data(), b.size()));
  EXPECT_EQ(s.get("full"), b);
}

TEST_F(TierStoreTest, AFailingPieceFailsThePutCleanly) {
  TierStore s(options());
  auto a = bytes(8 * MiB, 24);
  // The disk piece cannot be created: the put fails (it must not wait forever for the disk
  // piece before writing the pmem one), and leaves nothing behind.
  ASSERT_EQ(::rename((disk + "/disk/data").c_str(), (disk + "/disk/data.away").c_str()), 0);
  std::string msg;
  EXPECT_EQ(code_of([&] { s.put("f", a.data(), a.size()); }, &msg), Errc::not_found);
  EXPECT_NE(msg.find("/disk/data/"), std::string::npos) << msg;
  ASSERT_EQ(::rename((disk + "/disk/data.away").c_str(), (disk + "/disk/data").c_str()), 0);
  EXPECT_FALSE(s.exists("f"));
  EXPECT_TRUE(tierfs::list_dir(disk + "/disk/meta/pending").empty());
  for (const auto &u : s.usage()) EXPECT_EQ(u.used + u.in_flight, 0u) << u.name;
  s.put("f", a.data(), a.size());
  EXPECT_EQ(s.get("f"), a);
}

TEST_F(TierStoreTest, OverwriteRemoveListUsage) {
  TierStore s(options());
  auto a = bytes(4 * MiB, 11), b = bytes(6 * MiB, 12);
  s.put("run/1/x", a.data(), a.size());
  s.put("run/1/x", b.data(), b.size());  // replaces
  EXPECT_EQ(s.get("run/1/x"), b);
  EXPECT_EQ(files_in(disk + "/disk/data"), 1u);  // the old disk piece is gone
  s.put("run/2/y", a.data(), a.size());
  s.put("other", a.data(), 10);
  auto l = s.list("run/");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].key, "run/1/x");
  EXPECT_EQ(l[1].key, "run/2/y");
  EXPECT_EQ(s.list().size(), 3u);
  auto u = s.usage();
  EXPECT_EQ(u[0].used + u[1].used, 6 * MiB + 4 * MiB + 4096);  // pmem counts whole pages
  EXPECT_EQ(u[0].objects, 3u);
  EXPECT_TRUE(s.remove("run/1/x"));
  EXPECT_FALSE(s.remove("run/1/x"));
  EXPECT_EQ(code_of([&] { s.get("run/1/x"); }), Errc::not_found);
  EXPECT_EQ(code_of([&] { s.stat("run/1/x"); }), Errc::not_found);
  EXPECT_EQ(code_of([&] { s.put("../escape", a.data(), 1); }), Errc::invalid_argument);
}

TEST_F(TierStoreTest, SurvivesReopen) {
  auto a = bytes(5 * MiB, 13);
  {
    TierStore s(options());
    s.put("keep", a.data(), a.size());
  }
  TierStore s(options());
  EXPECT_EQ(s.get("keep"), a);
  EXPECT_TRUE(s.verify().empty());
  // Shrinking the pmem tier below what objects use is refused.
  std::string msg;
  EXPECT_EQ(code_of([&] { TierStore t(options(2 * MiB)); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("tier 'pm': Capacity 2M is smaller than"), std::string::npos) << msg;
}

// The fault a TierFault reports; a test failure when `fn` throws none.
static std::optional<TierFault> fault_of(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const TierFault &f) {
    return f;
  }
  ADD_FAILURE() << "no TierFault was thrown";
  return std::nullopt;
}

static const ObjectHealth *health_of(const std::vector<ObjectHealth> &v, const std::string &key) {
  for (const auto &h : v)
    if (h.info.key == key) return &h;
  return nullptr;
}

TEST_F(TierStoreTest, AMissingPoolUnderObjectsIsReportedNotRecreated) {
  const auto o = options(8 * MiB, 64 * MiB, PlacementPolicy::fill_fastest);
  auto a = bytes(8 * MiB, 17), b = bytes(3 * MiB + 1, 18);
  {
    TierStore s(o);
    ASSERT_EQ(s.put("lost", a.data(), a.size()).bytes_on("pm"), 8 * MiB);
    ASSERT_EQ(s.put("kept", b.data(), b.size()).bytes_on("disk"), 3 * MiB + 1);  // pmem is full
  }
  const std::string pool = shm + "/pm/pool";
  ASSERT_EQ(::unlink(pool.c_str()), 0);
  struct stat st;
  // The store opens; the pmem tier is lost, and no empty pool is made under 'lost'.
  TierStore s(o);
  EXPECT_NE(::stat(pool.c_str(), &st), 0) << "no empty pool was made under the object";
  auto f = fault_of([&] { s.get("lost"); });
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code(), Errc::corrupt);
  EXPECT_EQ(f->kind(), TierFault::Kind::pool_missing);
  EXPECT_EQ(f->state(), ObjectState::missing);
  EXPECT_EQ(f->key(), "lost");
  EXPECT_EQ(f->tier(), "pm");
  EXPECT_EQ(f->tier_kind(), TierKind::pmem);
  EXPECT_EQ(std::string(f->what()),
            "object 'lost': missing (pool missing): bytes 0..8388608 were on tier 'pm' (pmem), "
            "whose pool " + pool + " is gone");
  EXPECT_NE(::stat(pool.c_str(), &st), 0) << "get made no pool";
  // What is wholly on the disk tier is still there.
  EXPECT_EQ(s.get("kept"), b);
  // ls (cheap) and check (reading) say which object is missing, and on which tier.
  for (bool read : {false, true}) {
    const auto h = s.check("", read);
    ASSERT_EQ(h.size(), 2u);
    const ObjectHealth *l = health_of(h, "lost"), *k = health_of(h, "kept");
    ASSERT_TRUE(l && k);
    EXPECT_EQ(l->state, ObjectState::missing);
    EXPECT_EQ(l->tier, "pm");
    EXPECT_EQ(l->message, f->what());
    EXPECT_EQ(k->state, ObjectState::ok);
    EXPECT_EQ(k->message, "");
  }
  ASSERT_EQ(s.verify().size(), 1u);
  EXPECT_EQ(s.verify()[0].key, "lost");
  // Nothing is placed on the lost tier: new objects go to the disk.
  bool seen = false;
  for (const auto &u : s.usage())
    if (u.name == "pm") {
      seen = true;
      EXPECT_TRUE(u.pool_missing);
      EXPECT_EQ(u.free, 0u);
      EXPECT_NE(u.media.find("pool missing"), std::string::npos) << u.media;
    }
  EXPECT_TRUE(seen);
  auto c = bytes(MiB, 19);
  EXPECT_EQ(s.put("late", c.data(), c.size()).bytes_on("disk"), MiB);
  EXPECT_EQ(s.get("late"), c);
  EXPECT_NE(::stat(pool.c_str(), &st), 0) << "put made no pool";
  // Once the lost objects are removed, the next open makes a new, empty pool.
  EXPECT_TRUE(s.remove("lost"));
  TierStore t(o);
  EXPECT_EQ(::stat(pool.c_str(), &st), 0) << "a pool under no object is made anew";
  EXPECT_EQ(t.put("fresh", c.data(), c.size()).bytes_on("pm"), MiB);
  EXPECT_EQ(t.get("fresh"), c);
  EXPECT_EQ(t.get("kept"), b);
  EXPECT_TRUE(t.verify().empty());
}

TEST_F(TierStoreTest, AMissingPmemDirectoryIsAMissingPoolAndIsNotMadeAgain) {
  // /dev/shm wiped: the pmem tier's directory is gone with its pool.  (In a job's buffer the
  // user could not make it again: its parent belongs to root.)
  const auto o = options(8 * MiB, 64 * MiB, PlacementPolicy::fill_fastest);
  auto a = bytes(2 * MiB, 20);
  { TierStore s(o); s.put("gone", a.data(), a.size()); }
  tierfs::remove_tree(shm + "/pm");
  TierStore s(o);
  struct stat st;
  EXPECT_NE(::stat((shm + "/pm").c_str(), &st), 0) << "the lost tier's directory is not made";
  auto f = fault_of([&] { s.get("gone"); });
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind(), TierFault::Kind::pool_missing);
  EXPECT_EQ(s.put("late", a.data(), a.size()).bytes_on("disk"), 2 * MiB);
}

TEST_F(TierStoreTest, APoolThatIsALinkToAnotherFileIsRefused) {
  { TierStore s(options()); }
  // A second name for the pool (what a planted hard link looks like from inside) or a symbolic
  // link instead of it: the store does not map a file that may be read through another path.
  ASSERT_EQ(::link((shm + "/pm/pool").c_str(), (shm + "/elsewhere").c_str()), 0) << std::strerror(errno);
  std::string msg;
  EXPECT_EQ(code_of([&] { TierStore t(options()); }, &msg), Errc::permission);
  EXPECT_NE(msg.find("is not a regular file of uid " + std::to_string(::geteuid()) + " with one link"),
            std::string::npos)
      << msg;
  ASSERT_EQ(::unlink((shm + "/pm/pool").c_str()), 0);
  ASSERT_EQ(::symlink((shm + "/elsewhere").c_str(), (shm + "/pm/pool").c_str()), 0);
  EXPECT_THROW({ TierStore t(options()); }, Error);
}

TEST_F(TierStoreTest, DemotesColdObjectsWhenPmemIsFull) {
  auto o = options(4 * MiB, 64 * MiB, PlacementPolicy::fill_fastest);
  o.demotion = true;
  TierStore s(o);
  auto a = bytes(MiB, 14), b = bytes(MiB, 15), c = bytes(3 * MiB, 16);
  s.put("a", a.data(), a.size());
  s.put("b", b.data(), b.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  s.get("a");                                      // a is now hotter than b
  ObjectInfo oc = s.put("c", c.data(), c.size());  // needs 3M of pmem; 2M free
  EXPECT_EQ(oc.bytes_on("pm"), 3 * MiB);
  EXPECT_EQ(s.stat("b").bytes_on("disk"), MiB) << "the coldest object moves";
  EXPECT_EQ(s.stat("a").bytes_on("pm"), MiB) << "the hot one stays";
  EXPECT_EQ(s.get("a"), a);
  EXPECT_EQ(s.get("b"), b);
  EXPECT_EQ(s.get("c"), c);
  // Explicit demotion frees the fastest tier.
  EXPECT_GE(s.demote(4 * MiB), 4 * MiB);
  EXPECT_EQ(free_on(s, "pm"), 4 * MiB);
  EXPECT_EQ(s.get("c"), c);
  EXPECT_EQ(s.stat("c").bytes_on("disk"), 3 * MiB);
  EXPECT_TRUE(s.verify().empty());
}

TEST_F(TierStoreTest, WithoutDemotionANewObjectSpills) {
  TierStore s(options(4 * MiB, 64 * MiB, PlacementPolicy::fill_fastest));
  auto a = bytes(3 * MiB, 17), c = bytes(3 * MiB, 18);
  s.put("a", a.data(), a.size());
  ObjectInfo oc = s.put("c", c.data(), c.size());
  EXPECT_EQ(oc.bytes_on("pm"), MiB);
  EXPECT_EQ(s.stat("a").bytes_on("pm"), 3 * MiB);
}

TEST_F(TierStoreTest, ChecksumMismatchIsDetectedAndReported) {
  TierStore s(options());
  auto a = bytes(8 * MiB, 19);
  s.put("victim", a.data(), a.size());  // 6M on pmem at pool offset 0, 2M on disk
  {
    auto fd = tierfs::open_file(shm + "/pm/pool", O_RDWR);
    unsigned char x = a[12345] ^ 0xff;
    tierfs::pwrite_all(fd.get(), &x, 1, 12345, "pool");
  }
  std::string msg;
  EXPECT_EQ(code_of([&] { s.get("victim"); }, &msg), Errc::corrupt);
  EXPECT_EQ(msg, "object 'victim': damaged: checksum mismatch in bytes 0..6291456 on tier 'pm' (pmem)");
  auto problems = s.verify();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].key, "victim");
  // The disk piece.
  auto b = bytes(8 * MiB, 20);
  s.put("victim2", b.data(), b.size());  // 2M left on pmem, 6M on disk
  for (const auto &name : tierfs::list_dir(disk + "/disk/data")) {
    auto fd = tierfs::open_file(disk + "/disk/data/" + name, O_RDWR);
    unsigned char x = 0;
    tierfs::pread_all(fd.get(), &x, 1, 7, name);
    x ^= 1;
    tierfs::pwrite_all(fd.get(), &x, 1, 7, name);
  }
  EXPECT_EQ(code_of([&] { s.get("victim2"); }, &msg), Errc::corrupt);
  EXPECT_EQ(msg, "object 'victim2': damaged: checksum mismatch in bytes 2097152..8388608 on tier 'disk' (disk)");
  // A tampered record.
  {
    auto fd = tierfs::open_file(disk + "/disk/meta/objects/victim2", O_RDWR);
    tierfs::pwrite_all(fd.get(), "X", 1, 30, "record");
  }
  EXPECT_EQ(code_of([&] { s.get("victim2"); }, &msg), Errc::corrupt);
  EXPECT_NE(msg.find("not a valid object record (its crc does not match)"), std::string::npos)
      << msg;
  EXPECT_EQ(s.verify().size(), 2u);
}

TEST_F(TierStoreTest, APoolDeletedUnderAnOpenStoreTakesNoMoreObjects) {
  // A long-lived process (a training job checkpointing) keeps its mapping of a pool that was
  // deleted under it; what it puts afterwards goes to the disk, where other processes find it.
  const auto o = options(8 * MiB, 64 * MiB, PlacementPolicy::fill_fastest);
  TierStore s(o);
  auto a = bytes(2 * MiB, 24), b = bytes(2 * MiB, 25);
  ASSERT_EQ(s.put("before", a.data(), a.size()).bytes_on("pm"), 2 * MiB);
  ASSERT_EQ(::unlink((shm + "/pm/pool").c_str()), 0);
  EXPECT_EQ(s.put("after", b.data(), b.size()).bytes_on("disk"), 2 * MiB);
  TierStore other(o);
  EXPECT_EQ(other.get("after"), b);
  auto f = fault_of([&] { other.get("before"); });
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind(), TierFault::Kind::pool_missing);
}

TEST_F(TierStoreTest, AMissingDiskPieceIsMissing) {
  TierStore s(options());
  auto a = bytes(8 * MiB, 21);
  const ObjectInfo info = s.put("m", a.data(), a.size());  // 6M on pmem, 2M on disk
  ASSERT_EQ(info.bytes_on("disk"), 2 * MiB);
  const auto names = tierfs::list_dir(disk + "/disk/data");
  ASSERT_EQ(names.size(), 1u);
  const std::string file = disk + "/disk/data/" + names[0];
  ASSERT_EQ(::unlink(file.c_str()), 0);
  auto f = fault_of([&] { s.get("m"); });
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind(), TierFault::Kind::piece_missing);
  EXPECT_EQ(f->state(), ObjectState::missing);
  EXPECT_EQ(f->tier(), "disk");
  EXPECT_EQ(f->tier_kind(), TierKind::disk);
  EXPECT_EQ(std::string(f->what()), "object 'm': missing (piece missing): bytes 6291456..8388608 were "
                                    "on tier 'disk' (disk) in " + file + ", which is gone");
  const auto h = s.check();
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].state, ObjectState::missing);
  EXPECT_EQ(h[0].tier, "disk");
  EXPECT_EQ(h[0].message, f->what());
}

TEST_F(TierStoreTest, AShortDiskPieceIsDamaged) {
  TierStore s(options());
  auto a = bytes(8 * MiB, 22);
  s.put("short", a.data(), a.size());
  const auto names = tierfs::list_dir(disk + "/disk/data");
  ASSERT_EQ(names.size(), 1u);
  const std::string file = disk + "/disk/data/" + names[0];
  ASSERT_EQ(::truncate(file.c_str(), 1000), 0);
  auto f = fault_of([&] { s.get("short"); });
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind(), TierFault::Kind::damaged);
  EXPECT_EQ(f->state(), ObjectState::damaged);
  EXPECT_EQ(std::string(f->what()), "object 'short': damaged: its piece on tier 'disk' (disk), " +
                                        file + ", is 1000 bytes, not 2097152");
  EXPECT_EQ(s.check()[0].state, ObjectState::damaged);
}

TEST_F(TierStoreTest, ChangedBytesAreDamagedAndOnlyAReadingCheckSeesThem) {
  TierStore s(options());
  auto a = bytes(8 * MiB, 23);
  s.put("victim", a.data(), a.size());  // 6M on pmem at pool offset 0
  {
    auto fd = tierfs::open_file(shm + "/pm/pool", O_RDWR);
    unsigned char x = a[4242] ^ 0x5a;
    tierfs::pwrite_all(fd.get(), &x, 1, 4242, "pool");
  }
  auto f = fault_of([&] { s.get("victim"); });
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind(), TierFault::Kind::damaged);
  EXPECT_EQ(f->tier(), "pm");
  EXPECT_EQ(std::string(f->what()),
            "object 'victim': damaged: checksum mismatch in bytes 0..6291456 on tier 'pm' (pmem)");
  EXPECT_EQ(s.check("", false)[0].state, ObjectState::ok) << "ls does not read the bytes";
  const auto h = s.check("", true);
  EXPECT_EQ(h[0].state, ObjectState::damaged);
  EXPECT_EQ(h[0].tier, "pm");
  EXPECT_EQ(h[0].message, f->what());
  EXPECT_EQ(std::string(object_state_name(ObjectState::damaged)), "damaged");
  EXPECT_EQ(std::string(tier_fault_name(TierFault::Kind::pool_missing)), "pool missing");
}

TEST_F(TierStoreTest, FinerGranularityFlushPaths) {
  for (const char *g : {"cache_line", "byte"}) {
    ::setenv("PMEM2_FORCE_GRANULARITY", g, 1);
    tierfs::remove_tree(shm + "/pm");
    tierfs::remove_tree(disk + "/disk");
    TierStore s(options());
    EXPECT_EQ(s.pmem_granularity(),
              std::string(g) == "byte" ? PmemGranularity::byte : PmemGranularity::cache_line);
    auto a = bytes(5 * MiB + 3, 22);
    s.put("g", a.data(), a.size());
    EXPECT_EQ(s.get("g"), a);
  }
}

TEST_F(TierStoreTest, ThreadsShareOneStore) {
  TierStore s(options(16 * MiB, 256 * MiB));
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  std::atomic<bool> done{false};
  std::thread lister([&] {  // listing and usage while puts reserve and commit
    while (!done) {
      s.list();
      for (const auto &u : s.usage())
        if (u.used + u.in_flight > u.capacity) ++bad;
    }
  });
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        const std::string key = "t" + std::to_string(t) + "/" + std::to_string(i % 3);
        auto a = bytes(MiB * (1 + (t + i) % 4) + 17u * i, static_cast<unsigned>(100 * t + i));
        s.put(key, a.data(), a.size());
        if (s.get(key) != a) ++bad;
      }
    });
  for (auto &t : ts) t.join();
  done = true;
  lister.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(s.list().size(), 12u);
  EXPECT_TRUE(s.verify().empty());
}

TEST_F(TierStoreTest, MeasuredBandwidth) {
  auto o = options();
  o.tiers[0].bandwidth = 0;
  o.tiers[1].bandwidth = 0;
  {
    TierStore s(o);
    for (const auto &u : s.usage()) {
      EXPECT_TRUE(u.measured);
      EXPECT_GT(u.bandwidth, 1e6) << u.name;
    }
  }
  struct stat st;
  EXPECT_EQ(::stat((disk + "/disk/meta/bandwidth").c_str(), &st), 0) << "remembered";
}

TEST_F(TierStoreTest, BadOptions) {
  std::string msg;
  EXPECT_EQ(code_of([&] { TierStore s(TierStoreOptions{}); }, &msg), Errc::invalid_argument);
  EXPECT_EQ(msg, "tier store: no tiers given (at least one is needed)");
  auto o = options();
  o.tiers[1].name = "pm";
  EXPECT_EQ(code_of([&] { TierStore s(o); }, &msg), Errc::invalid_argument);
  EXPECT_EQ(msg, "tier 'pm' is given twice");
  o = options();
  o.tiers[1].capacity = 1000;
  EXPECT_EQ(code_of([&] { TierStore s(o); }, &msg), Errc::invalid_argument);
  EXPECT_EQ(msg, "tier 'disk': Capacity 1000 is below the minimum 1M");
}
