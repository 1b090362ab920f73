// Crash consistency of the tier store: a writer process is killed with SIGKILL, hundreds of
// times, at random moments and at each named step of a put and of a demotion; after every kill
// the store is opened again and every object must be either absent or whole: it reads back with
// its checksum verified and its bytes are exactly one version the writer wrote.  Nothing may be
// left behind (reservations, unreferenced files, space still counted as in flight).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"

using namespace autotune;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;
constexpr int kKeys = 6;
constexpr std::uint64_t kMagic = 0x6372617368746573ull;

std::string key_of(int k) { return "obj/" + std::to_string(k); }

// A version's bytes: a header (magic, key, version, size) and a stream derived from them.
std::vector<unsigned char> content(int k, std::uint64_t version, std::size_t n) {
  std::vector<unsigned char> v(n);
  std::uint64_t x = (static_cast<std::uint64_t>(k) << 48) ^ version ^ 0x9e3779b97f4a7c15ull;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v[i] = static_cast<unsigned char>(x);
  }
  const std::uint64_t h[4] = {kMagic, static_cast<std::uint64_t>(k), version, n};
  if (n > 0) std::memcpy(v.data(), h, std::min(n, sizeof h));  // v.data() may be null when n = 0
  return v;
}

// "" when `got` is a whole version of key k; else what is wrong.
std::string check_whole(int k, const std::vector<unsigned char> &got) {
  if (got.empty()) return "";
  if (got.size() < 32)
    return got.size() == 0 ? "" : "a short object of " + std::to_string(got.size()) + " bytes";
  std::uint64_t h[4];
  std::memcpy(h, got.data(), sizeof h);
  if (h[0] != kMagic || h[1] != static_cast<std::uint64_t>(k) || h[3] != got.size())
    return "a header that is not this key's";
  if (content(k, h[2], got.size()) != got) return "bytes of no version written";
  return "";
}

std::size_t pick_size(std::mt19937_64 &rng) {
  switch (rng() % 4) {
    case 0:
      return 0;
    case 1:
      return 32 + rng() % (64 * 1024);
    default:
      return 256 * 1024 + rng() % (3 * MiB);
  }
}

const char *g_kill_at = nullptr;
void kill_at_step(const char *step) {
  if (g_kill_at && std::strcmp(step, g_kill_at) == 0) ::kill(::getpid(), SIGKILL);
}

class TierCrash : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string a = "/dev/shm/autotune-crash-XXXXXX", b = "/tmp/autotune-crash-XXXXXX";
    ASSERT_TRUE(::mkdtemp(a.data()));
    ASSERT_TRUE(::mkdtemp(b.data()));
    shm = a;
    disk = b;
  }
  void TearDown() override {
    tierfs::remove_tree(shm);
    tierfs::remove_tree(disk);
  }
  TierStoreOptions options(PlacementPolicy p) const {
    TierStoreOptions o;
    o.tiers = {{"pm", TierKind::pmem, shm + "/pm", 4 * MiB, 3ull << 30},
               {"disk", TierKind::disk, disk + "/disk", 64 * MiB, 1ull << 30}};
    o.placement = p;
    o.demotion = true;
    o.min_part = 64 * 1024;
    return o;
  }

  // The writer: puts, overwrites, removes, reads and demotes until it is killed.
  [[noreturn]] void writer(std::uint64_t seed, PlacementPolicy p, const char *kill_at) {
    ::alarm(10);  // never outlive a lost parent
    g_kill_at = kill_at;
    std::mt19937_64 rng(seed);
    if (seed % 3 == 1) ::setenv("PMEM2_FORCE_GRANULARITY", "cache_line", 1);
    try {
      TierStoreOptions o = options(p);
      o.step_hook = kill_at_step;
      TierStore s(o);
      for (std::uint64_t version = seed << 20;; ++version) {
        const int k = static_cast<int>(rng() % kKeys);
        const unsigned op = static_cast<unsigned>(rng() % 10);
        if (op == 0) {
          s.remove(key_of(k));
        } else if (op == 1) {
          try {
            s.get(key_of(k));
          } catch (const Error &e) {
            if (e.code() != Errc::not_found) ::_exit(3);
          }
        } else if (op == 2) {
          s.demote(2 * MiB);
        } else {
          const auto v = content(k, version, pick_size(rng));
          s.put(key_of(k), v.data(), v.size());
        }
      }
    } catch (const std::exception &e) {
      std::fprintf(stderr, "writer: %s\n", e.what());
      ::_exit(2);
    }
  }

  // Fork a writer, kill it after `delay` (or let it kill itself at a step), then check.
  void crash_once(std::uint64_t seed, PlacementPolicy p, std::chrono::microseconds delay,
                  const char *kill_at) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) writer(seed, p, kill_at);
    if (!kill_at) {
      std::this_thread::sleep_for(delay);
      ::kill(pid, SIGKILL);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the writer ended by itself (status " << status << ") at seed " << seed;
    check_store(p, seed);
  }

  void check_store(PlacementPolicy p, std::uint64_t seed) {
    TierStore s(options(p));  // opening cleans up after the dead writer
    for (int k = 0; k < kKeys; ++k) {
      try {
        const auto got = s.get(key_of(k));
        const std::string why = check_whole(k, got);
        ASSERT_EQ(why, "") << key_of(k) << " after the kill of writer " << seed;
      } catch (const Error &e) {
        ASSERT_EQ(e.code(), Errc::not_found) << e.what() << " (writer " << seed << ")";
      }
    }
    ASSERT_TRUE(s.verify().empty());
    std::size_t disk_pieces = 0;
    for (const auto &o : s.list())
      for (const auto &piece : o.pieces) disk_pieces += piece.tier == "disk";
    EXPECT_EQ(tierfs::list_dir(disk + "/disk/data").size(), disk_pieces)
        << "unreferenced files left after writer " << seed;
    EXPECT_TRUE(tierfs::list_dir(disk + "/disk/meta/pending").empty())
        << "reservations left after writer " << seed;
    for (const auto &u : s.usage()) {
      EXPECT_EQ(u.in_flight, 0u) << u.name;
      EXPECT_LE(u.used, u.capacity) << u.name;
    }
  }

  std::string shm, disk;
};

}  // namespace

TEST_F(TierCrash, KilledAtEveryStepOfPutAndDemotion) {
  const char *steps[] = {"reserved",       "written",   "persisted",
                         "record-written", "committed", "demote-written"};
  std::uint64_t seed = 1000;
  for (const char *step : steps)
    for (PlacementPolicy p : {PlacementPolicy::bandwidth_proportional, PlacementPolicy::fill_fastest}) {
      for (int i = 0; i < 4; ++i) crash_once(seed++, p, {}, step);
      if (HasFatalFailure()) return;
    }
}

TEST_F(TierCrash, KilledAtRandomMomentsHundredsOfTimes) {
  std::mt19937_64 rng(20240601);
  const int rounds = 300;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds; ++i) {
    const PlacementPolicy p = i % 2 ? PlacementPolicy::fill_fastest : PlacementPolicy::bandwidth_proportional;
    crash_once(static_cast<std::uint64_t>(i) + 1, p, std::chrono::microseconds(rng() % 30000),
               nullptr);
    if (HasFatalFailure()) return;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%d writers killed at random moments in %.1f s; every object absent or whole\n",
              rounds, secs);
}
