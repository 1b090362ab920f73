// libssp snapshots on the tier store (ssp::TierSnapshotStore) and their manifest checks, on real
// files: a pmem tier in /dev/shm mapped with libpmem2 and a disk tier on the local disk
// (bandwidths configured, 3G/s and 1G/s, so that a large part is split 3:1 across them).  The
// snapshots are built the way Context writes them (framed parts, then a manifest listing each
// part's size and CRC-32, then `latest`); tests/mpi/ssp_tier.test runs the real thing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "codec.hpp"
#include "manifest.hpp"
#include "ssp/error.hpp"
#include "ssp/snapshot.hpp"
#include "ssp/tier_store.hpp"

namespace {

constexpr std::uint64_t MiB = 1ull << 20;

std::string make_temp_dir(const char *base) {
  std::string t = std::string(base) + "/ssp-tier-test-XXXXXX";
  if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp " + t);
  return t;
}

std::string random_bytes(std::size_t n, unsigned seed) {
  std::string v(n, '\0');
  std::mt19937 rng(seed);
  for (auto &b : v) b = static_cast<char>(rng());
  return v;
}

ssp::Errc code_of(const std::function<void()> &fn, std::string *msg = nullptr) {
  try {
    fn();
  } catch (const ssp::Error &e) {
    if (msg) *msg = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no ssp::Error was thrown";
  return ssp::Errc::internal;
}

std::string id_of(std::int64_t clock) {
  char b[32];
  std::snprintf(b, sizeof b, "c%012lld", static_cast<long long>(clock));
  return b;
}

// Writes a snapshot at `clock` as Context does: `shards` shards of table "w" of `shard_bytes`
// each, the scheduler, then the manifest and `latest`.  Returns the shards' payloads.
std::vector<std::string> write_snapshot(ssp::SnapshotStore &s, std::int64_t clock, int shards,
                                        std::size_t shard_bytes, unsigned seed = 1) {
  const std::string id = id_of(clock);
  std::vector<ssp::PartSum> sums;
  std::vector<std::string> payloads;
  auto put = [&](const std::string &name, ssp::PartKind kind, const std::string &payload) {
    const std::string framed = ssp::frame_part(kind, payload);
    s.put(name, framed);
    sums.push_back(ssp::part_sum(name, framed));
  };
  for (int l = 0; l < shards; ++l) {
    payloads.push_back(random_bytes(shard_bytes, seed * 100 + static_cast<unsigned>(l)));
    put(id + ".table-w.shard-" + std::to_string(l), ssp::PartKind::shard, payloads.back());
  }
  put(id + ".scheduler", ssp::PartKind::scheduler, "scheduler state of " + id);
  nlohmann::json j;
  j["format"] = ssp::kManifestFormat;
  j["id"] = id;
  j["clock"] = clock;
  j["workers"] = 3;
  j["servers"] = 1;
  j["tables"] = nlohmann::json::array();
  j["job"] = nullptr;
  j["parts"] = ssp::sums_to_json(sums);
  s.put(id + ".manifest", j.dump(1));
  s.put("latest", id + "\n");
  return payloads;
}

class SspTierStore : public ::testing::Test {
 protected:
  void SetUp() override {
    shm = make_temp_dir("/dev/shm");
    disk = make_temp_dir("/var/tmp");
  }
  void TearDown() override {
    ASSERT_EQ(std::system(("rm -rf '" + shm + "' '" + disk + "'").c_str()), 0);
  }
  autotune::TierStoreOptions options(std::uint64_t pmem_cap = 16 * MiB) {
    autotune::TierStoreOptions o;
    o.tiers = {{"pmem", autotune::TierKind::pmem, shm + "/pmem", pmem_cap, 3ull << 30},
               {"disk", autotune::TierKind::disk, disk + "/disk", 64 * MiB, 1ull << 30}};
    o.min_part = 64 * 1024;
    // Split every object across both tiers (auto would keep what fits on pmem whole), so that
    // the tests below reach the disk pieces.
    o.placement = autotune::PlacementPolicy::bandwidth_proportional;
    return o;
  }
  // Flips one byte in every file of the disk tier's data directory.
  void damage_disk_pieces() {
    const std::string data = disk + "/disk/data";
    const std::string cmd = "cd '" + data +
                            "' && for f in *; do printf '\\377' | dd of=\"$f\" bs=1 seek=5 "
                            "conv=notrunc status=none; done";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string shm, disk;
};

}  // namespace

TEST_F(SspTierStore, RoundTripThroughTheTiers) {
  ssp::TierSnapshotStore s{autotune::TierStore(options())};
  const auto shards = write_snapshot(s, 42, 3, 4 * MiB);
  // Each 4M shard is split 3:1 across pmem and disk by the bandwidth-proportional policy.
  const autotune::ObjectInfo info = s.stat("c000000000042.table-w.shard-1");
  EXPECT_EQ(info.key, "ssp/c000000000042.table-w.shard-1");
  EXPECT_GT(info.bytes_on("pmem"), 2 * MiB);
  EXPECT_GT(info.bytes_on("disk"), 512 * 1024u);
  EXPECT_EQ(info.bytes_on("pmem") + info.bytes_on("disk"), info.size);
  // Read back through the manifest: the same bytes.
  ssp::SnapshotReader r(s);
  EXPECT_EQ(r.id(), "c000000000042");
  EXPECT_TRUE(r.listed());
  EXPECT_EQ(r.parts().size(), 4u);
  for (int l = 0; l < 3; ++l)
    EXPECT_EQ(r.part("c000000000042.table-w.shard-" + std::to_string(l), ssp::PartKind::shard),
              shards[static_cast<std::size_t>(l)]);
  const ssp::SnapshotCheck c = ssp::verify_snapshot(s);
  EXPECT_EQ(c.id, "c000000000042");
  EXPECT_EQ(c.clock, 42);
  EXPECT_EQ(c.parts, 4u);
  EXPECT_TRUE(c.listed);
  EXPECT_GT(c.bytes, 12 * MiB);
  // list() names the objects without the prefix; another prefix is another namespace.
  EXPECT_EQ(s.list(), (std::vector<std::string>{"c000000000042.manifest", "c000000000042.scheduler",
                                                "c000000000042.table-w.shard-0",
                                                "c000000000042.table-w.shard-1",
                                                "c000000000042.table-w.shard-2", "latest"}));
  ssp::TierSnapshotStore other(s.tier_store(), {"runs/b", 2});
  EXPECT_TRUE(other.list().empty());
  EXPECT_EQ(code_of([&] { other.get("latest"); }), ssp::Errc::not_found);
  EXPECT_EQ(ssp::list_snapshots(s), (std::vector<std::string>{"c000000000042"}));
  // An empty object round-trips too.
  s.put("empty", "");
  EXPECT_EQ(s.get("empty"), "");
  s.remove("empty");
  s.remove("empty");  // absent: no error
}

TEST_F(SspTierStore, ASnapshotCopiedToADirectoryStaysVerifiable) {
  ssp::TierSnapshotStore s{autotune::TierStore(options())};
  write_snapshot(s, 7, 2, 1 * MiB);
  ssp::DirectorySnapshotStore d(disk + "/staged");
  for (const auto &n : s.list()) d.put(n, s.get(n));  // what a stage-out does
  EXPECT_EQ(ssp::verify_snapshot(d).parts, 3u);
  // And back into a fresh tier store (a stage-in into the next job's buffer).
  ssp::TierSnapshotStore back{autotune::TierStore(options()), {"again", 2}};
  for (const auto &n : d.list()) back.put(n, d.get(n));
  EXPECT_EQ(ssp::verify_snapshot(back).id, "c000000000007");
}

TEST_F(SspTierStore, ACorruptedPartIsDetectedAndNamed) {
  ssp::TierSnapshotStore s{autotune::TierStore(options())};
  write_snapshot(s, 5, 2, 4 * MiB);
  damage_disk_pieces();  // every shard has a piece on disk
  std::string msg;
  EXPECT_EQ(code_of([&] { ssp::verify_snapshot(s); }, &msg), ssp::Errc::corrupt);
  EXPECT_NE(msg.find("snapshot part 'c000000000005.table-w.shard-0'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("checksum mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("on tier 'disk'"), std::string::npos) << msg;
  // The reader refuses the part, never hands out its bytes.
  ssp::SnapshotReader r(s);
  EXPECT_EQ(code_of([&] { r.part("c000000000005.table-w.shard-1", ssp::PartKind::shard); }, &msg),
            ssp::Errc::corrupt);
}

TEST_F(SspTierStore, AManifestNumberOutOfRangeIsNamed) {
  // A fraction, or a number beyond the field's type, is refused by name (it was converted
  // unchecked before: a float beyond an integer's range is undefined behaviour).
  ssp::TierSnapshotStore s{autotune::TierStore(options())};
  write_snapshot(s, 13, 2, 256 * 1024);
  const std::string name = "c000000000013.manifest";
  const auto good = nlohmann::json::parse(s.get(name));
  struct Case {
    const char *field;
    nlohmann::json value;
  } cases[] = {{"clock", 3.3e25}, {"clock", 2.5}, {"workers", 10000000000LL}, {"servers", -1e300}};
  for (const auto &c : cases) {
    auto m = good;
    m[c.field] = c.value;
    s.put(name, m.dump());
    std::string msg;
    EXPECT_EQ(code_of([&] { ssp::verify_snapshot(s); }, &msg), ssp::Errc::corrupt) << c.field;
    EXPECT_NE(msg.find(std::string(c.field) + ": '"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is not a whole number"), std::string::npos) << msg;
  }
  s.put(name, good.dump());
  EXPECT_EQ(ssp::verify_snapshot(s).clock, 13);
}

TEST_F(SspTierStore, APartFromAnotherSnapshotDoesNotMatchTheManifest) {
  // Each object is whole and verified by the tier store; only the manifest can tell that a
  // shard was replaced by another (validly framed) one, e.g. by a run that crashed half-way
  // through a checkpoint at the same clock.
  ssp::TierSnapshotStore s{autotune::TierStore(options())};
  write_snapshot(s, 9, 2, 1 * MiB);
  s.put("c000000000009.table-w.shard-1",
        ssp::frame_part(ssp::PartKind::shard, random_bytes(1 * MiB, 999)));
  std::string msg;
  EXPECT_EQ(code_of([&] { ssp::verify_snapshot(s); }, &msg), ssp::Errc::corrupt);
  EXPECT_NE(msg.find("snapshot part 'c000000000009.table-w.shard-1' does not match its manifest"),
            std::string::npos)
      << msg;
  // A torn one (other size).
  s.put("c000000000009.table-w.shard-1",
        ssp::frame_part(ssp::PartKind::shard, random_bytes(1000, 1)));
  EXPECT_EQ(code_of([&] { ssp::verify_snapshot(s); }, &msg), ssp::Errc::corrupt);
  EXPECT_NE(msg.find("is 1020 bytes; its manifest says 1048596"), std::string::npos) << msg;
}

TEST_F(SspTierStore, AMissingPartIsNamedBeforeAnythingIsLoaded) {
  ssp::TierSnapshotStore s{autotune::TierStore(options())};
  write_snapshot(s, 11, 3, 256 * 1024);
  s.remove("c000000000011.table-w.shard-2");
  ssp::SnapshotReader r(s);
  std::string msg;
  EXPECT_EQ(code_of([&] { r.check_present(); }, &msg), ssp::Errc::not_found);
  EXPECT_EQ(msg,
            "snapshot part 'c000000000011.table-w.shard-2' is missing (listed in "
            "'c000000000011.manifest'); the snapshot cannot be restored");
  EXPECT_EQ(code_of([&] { r.part("c000000000011.table-w.shard-2", ssp::PartKind::shard); }, &msg),
            ssp::Errc::not_found);
  EXPECT_NE(msg.find("snapshot part 'c000000000011.table-w.shard-2' is missing"), std::string::npos)
      << msg;
  EXPECT_EQ(code_of([&] { ssp::verify_snapshot(s); }), ssp::Errc::not_found);
  // A part the manifest does not list is not trusted either.
  EXPECT_EQ(code_of([&] { r.part("c000000000011.table-w.shard-7", ssp::PartKind::shard); }, &msg),
            ssp::Errc::corrupt);
  EXPECT_NE(msg.find("is not listed in 'c000000000011.manifest'"), std::string::npos) << msg;
  // No manifest: an incomplete snapshot.
  s.remove("c000000000011.manifest");
  EXPECT_EQ(code_of([&] { ssp::SnapshotReader again(s); }, &msg), ssp::Errc::not_found);
  EXPECT_NE(msg.find("snapshot c000000000011: its manifest 'c000000000011.manifest' is missing"),
            std::string::npos)
      << msg;
  // No checkpoint at all.
  s.remove("latest");
  EXPECT_EQ(code_of([&] { ssp::verify_snapshot(s); }), ssp::Errc::not_found);
}

TEST_F(SspTierStore, LatestIsOverwrittenAtomicallyAndOldSnapshotsArePruned) {
  autotune::TierStore ts(options());
  ssp::TierSnapshotStore s(ts, {"ckpt", 2});
  write_snapshot(s, 10, 2, 512 * 1024, 1);
  write_snapshot(s, 20, 2, 512 * 1024, 2);
  EXPECT_EQ(s.get("latest"), "c000000000020\n");
  EXPECT_EQ(ssp::list_snapshots(s), (std::vector<std::string>{"c000000000010", "c000000000020"}));
  write_snapshot(s, 30, 2, 512 * 1024, 3);  // keep 2: c10 goes
  EXPECT_EQ(s.get("latest"), "c000000000030\n");
  EXPECT_EQ(ssp::list_snapshots(s), (std::vector<std::string>{"c000000000020", "c000000000030"}));
  for (const auto &n : s.list()) EXPECT_NE(n.rfind("c000000000010.", 0), 0u) << n;
  // An incomplete snapshot (parts, no manifest) is removed once `latest` moves past it; the
  // previous complete one is still there to fall back to.
  s.put("c000000000040.table-w.shard-0", ssp::frame_part(ssp::PartKind::shard, "x"));
  EXPECT_EQ(ssp::verify_snapshot(s).id, "c000000000030");
  write_snapshot(s, 50, 2, 512 * 1024, 5);
  for (const auto &n : s.list()) EXPECT_NE(n.rfind("c000000000040.", 0), 0u) << n;
  EXPECT_EQ(ssp::list_snapshots(s), (std::vector<std::string>{"c000000000030", "c000000000050"}));
  EXPECT_EQ(ssp::verify_snapshot(s, "c000000000030").clock, 30);
  // keep = 1: only the newest; keep = 0: all.
  ssp::TierSnapshotStore one(ts, {"ckpt", 1});
  EXPECT_EQ(one.prune(1), 4u);  // c30: 2 shards, scheduler, manifest
  EXPECT_EQ(ssp::list_snapshots(one), (std::vector<std::string>{"c000000000050"}));
  ssp::TierSnapshotStore all(ts, {"all", 0});
  for (int c = 1; c <= 3; ++c) write_snapshot(all, c, 1, 1024, 9);
  EXPECT_EQ(ssp::list_snapshots(all).size(), 3u);

  // Readers of `latest` see one whole value or the other while it is rewritten.
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, reads{0};
  std::thread reader([&] {
    while (!stop) {
      const std::string v = s.get("latest");
      if (v != "c000000000050\n" && v != "c000000000060\n") ++bad;
      ++reads;
    }
  });
  for (int i = 0; i < 200; ++i) s.put("latest", i % 2 ? "c000000000050\n" : "c000000000060\n");
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
}

TEST_F(SspTierStore, ABadManifestIsCorruptNotTrusted) {
  ssp::DirectorySnapshotStore d(disk + "/d");
  write_snapshot(d, 3, 1, 1024);
  const std::string good = d.get("c000000000003.manifest");
  auto with = [&](const std::string &text) {
    d.put("c000000000003.manifest", text);
    std::string msg;
    EXPECT_EQ(code_of([&] { ssp::verify_snapshot(d); }, &msg), ssp::Errc::corrupt) << text;
    EXPECT_EQ(msg.rfind("snapshot manifest 'c000000000003.manifest': ", 0), 0u) << msg;
    return msg;
  };
  with("{not json");
  EXPECT_NE(with(R"({"format":"ssp-snapshot/9","id":"c000000000003"})").find("unknown format"),
            std::string::npos);
  with(R"({"format":2,"id":"c000000000003"})");
  EXPECT_NE(with(R"({"format":"ssp-snapshot/2","id":"c000000000004","parts":[]})")
                .find("describes snapshot 'c000000000004'"),
            std::string::npos);
  auto j = nlohmann::json::parse(good);
  j["parts"][0]["crc32"] = "+1234567";
  EXPECT_NE(with(j.dump()).find("is not 8 hex digits"), std::string::npos);
  j = nlohmann::json::parse(good);
  j["parts"][0]["name"] = "c000000000001.scheduler";
  EXPECT_NE(with(j.dump()).find("of another snapshot"), std::string::npos);
  d.put("latest", "garbage\n");
  EXPECT_EQ(code_of([&] { ssp::verify_snapshot(d); }), ssp::Errc::corrupt);
}

TEST_F(SspTierStore, BadOptionsAndNamesAreNamedErrors) {
  autotune::TierStore ts(options());
  std::string msg;
  EXPECT_EQ(code_of(
                [&] {
                  ssp::TierSnapshotStore s(ts, {"../x", 2});
                },
                &msg),
            ssp::Errc::invalid_argument);
  EXPECT_NE(msg.find("tier snapshot prefix"), std::string::npos) << msg;
  EXPECT_EQ(code_of(
                [&] {
                  ssp::TierSnapshotStore s(ts, {"ok", -1});
                },
                &msg),
            ssp::Errc::invalid_argument);
  EXPECT_EQ(msg, "tier snapshot keep: '-1' is not allowed; allowed: 0 (keep all) or more");
  ssp::TierSnapshotStore s(ts);
  EXPECT_EQ(code_of([&] { s.put("a/b", "x"); }), ssp::Errc::invalid_argument);
  EXPECT_EQ(code_of([&] { s.get(".hidden"); }), ssp::Errc::invalid_argument);
  // Larger than both tiers: no space, and nothing is left behind.
  EXPECT_EQ(code_of([&] { s.put("huge", std::string(100 * MiB, 'x')); }, &msg),
            ssp::Errc::no_space);
  EXPECT_TRUE(s.list().empty());
}

TEST_F(SspTierStore, OpenJobBufferOutsideAJobIsAClearError) {
  ::unsetenv("AUTOTUNE_BB_JOB");
  ::unsetenv("SLURM_JOB_ID");
  std::string msg;
  EXPECT_EQ(code_of([&] { ssp::TierSnapshotStore::open_job_buffer(); }, &msg),
            ssp::Errc::invalid_argument);
  EXPECT_NE(msg.find("no job id"), std::string::npos) << msg;
}
