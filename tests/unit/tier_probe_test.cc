// The bandwidth probe of measured tiers on a disk whose flushes are slow and uneven, as a cloud
// VM's virtual disk can be: this program's own fsync() takes 150 ms more for a directory or a
// file under 1M (the probe's one-page pieces) and nothing more for large files (its timed
// write).  A page's cost (two flushes) then outlasts the big write's (one flush); the disk must
// still not be measured faster than memory, and a job's 1M pmem share must still be filled first.
// Its own program, so that no other test's fsync() is slowed.
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier_test_util.hpp"

using namespace autotune;
using tier_test::MiB;

extern "C" int fsync(int fd) {
  struct stat st;
  if (::fstat(fd, &st) == 0 && (S_ISDIR(st.st_mode) || st.st_size < static_cast<off_t>(MiB)))
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  return static_cast<int>(::syscall(SYS_fsync, fd));
}

namespace {

// Temporary directories for a pmem and a disk tier, removed however the test ends.
struct TempTiers {
  const std::string shm = tier_test::make_temp_dir("/dev/shm");
  const std::string disk = tier_test::make_temp_dir("/tmp");
  ~TempTiers() {
    tierfs::remove_tree(shm);
    tierfs::remove_tree(disk);
  }
};

TEST(TierProbe, UnevenFlushesDoNotMakeTheDiskFasterThanMemory) {
  TempTiers dirs;
  TierStoreOptions o;
  // A job's buffer: pmem 1M (probed with 256K), disk 63M (probed with 15.75M); both measured.
  o.tiers = {{"pm", TierKind::pmem, dirs.shm + "/pm", 1 * MiB, 0},
             {"disk", TierKind::disk, dirs.disk + "/disk", 63 * MiB, 0}};
  o.placement = PlacementPolicy::fill_fastest;
  o.demotion = false;
  TierStore s(o);
  double pm = 0, dk = 0;
  for (const auto &u : s.usage()) {
    EXPECT_TRUE(u.measured) << u.name;
    (u.name == "pm" ? pm : dk) = u.bandwidth;
  }
  EXPECT_LT(dk, 100e9) << "no disk writes 100 GB/s";
  EXPECT_GT(pm, dk);
  ASSERT_EQ(s.tiers_fastest_first().front().name, "pm");
  const auto data = tier_test::bytes(3000000, 1);
  s.put("data.bin", data.data(), data.size());
  EXPECT_EQ(s.stat("data.bin").bytes_on("pm"), 1 * MiB);
  EXPECT_EQ(s.stat("data.bin").bytes_on("disk"), 3000000 - 1 * MiB);
}

}  // namespace
