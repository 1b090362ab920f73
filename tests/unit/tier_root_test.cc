// Burst buffers of jobs on real tiers (a pmem tier in /dev/shm mapped with libpmem2, a disk tier
// in a temporary directory): ownership by the job's user, tier shares, over-commit, teardown.
//
// These checks chown to the job's user and so need root.  As root (as CI runs `make check`) they
// run; as any other user main() exits 77 with a message, which automake reports as SKIP, not PASS.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/job_buffer.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier_test_util.hpp"

using namespace autotune;

namespace {

using tier_test::MiB;
using tier_test::bytes;
using tier_test::code_of;
using tier_test::make_temp_dir;

class JobBuffersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shm = make_temp_dir("/dev/shm");
    disk = make_temp_dir("/tmp");
  }
  void TearDown() override {
    tierfs::remove_tree(shm);
    tierfs::remove_tree(disk);
  }
  std::string shm, disk;
};

}  // namespace

TEST_F(JobBuffersTest, OwnershipSharesAndTeardown) {
  Conf c = Conf::load_text("StateDir=" + disk + "/state\nTier=pm Kind=pmem Path=" + shm +
                           "/bb Capacity=64M Bandwidth=3G/s\nTier=disk Kind=disk Path=" + disk +
                           "/bb Capacity=192M Bandwidth=1G/s\n");
  JobBuffers jb({c.path, c.core, c.tier});
  JobBufferRequest r;
  r.job = 77;
  r.uid = 65534;  // nobody
  r.gid = 65534;
  r.capacity = 32 * MiB;  // split by tier capacity: 8M pmem, 24M disk
  JobBuffer b = jb.create(r);
  EXPECT_EQ(b.share_of("pm"), 8 * MiB);
  EXPECT_EQ(b.share_of("disk"), 24 * MiB);
  struct stat st;
  ASSERT_EQ(::stat((shm + "/bb/job.77").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat((disk + "/state/bb/job.77").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "the registry is root's";
  // Explicit pmem share; the rest on disk.
  r.job = 78;
  r.uid = 0;
  r.gid = 0;
  r.capacity = 64 * MiB;
  r.pmem = 48 * MiB;
  b = jb.create(r);
  EXPECT_EQ(b.share_of("pm"), 48 * MiB);
  EXPECT_EQ(b.share_of("disk"), 16 * MiB);
  auto opts = jb.store_options(b);
  ASSERT_EQ(opts.tiers.size(), 2u);
  EXPECT_EQ(opts.tiers[0].path, shm + "/bb/job.78");
  EXPECT_EQ(opts.tiers[0].capacity, 48 * MiB);
  {
    TierStore s(opts);
    auto a = bytes(20 * MiB, 23);
    s.put("in.dat", a.data(), a.size());
    EXPECT_EQ(s.get("in.dat"), a);
  }
  // Over-commit of the pmem tier: 8 + 48 of 64M granted.
  r.job = 79;
  r.pmem = 16 * MiB;
  r.capacity = 16 * MiB;
  std::string msg;
  EXPECT_EQ(code_of([&] { jb.create(r); }, &msg), Errc::no_space);
  EXPECT_EQ(msg, "tier 'pm': 16M requested, 8M of 64M left");
  r.pmem.reset();
  r.tiers = {{"ssd", MiB}};
  EXPECT_EQ(code_of([&] { jb.create(r); }, &msg), Errc::invalid_argument);
  EXPECT_EQ(msg, "--tier: 'ssd' is not a tier of <text>; configured: pm, disk");
  r.tiers.clear();
  r.pmem = 32 * MiB;
  EXPECT_EQ(code_of([&] { jb.create(r); }, &msg), Errc::invalid_argument);
  EXPECT_EQ(msg, "--capacity: the tier shares (32M) are larger than the buffer's capacity 16M");
  EXPECT_EQ(jb.list().size(), 2u);
  auto com = jb.commitments();
  EXPECT_EQ(com[0].committed, 56 * MiB);
  // Teardown removes everything without following a planted symbolic link.
  const std::string outside = disk + "/outside";
  tierfs::make_dirs(outside, 0700);
  { tierfs::open_file(outside + "/precious", O_WRONLY | O_CREAT, 0600); }
  ASSERT_EQ(::symlink(outside.c_str(), (shm + "/bb/job.78/link").c_str()), 0);
  EXPECT_TRUE(jb.destroy(78));
  EXPECT_NE(::stat((shm + "/bb/job.78").c_str(), &st), 0);
  EXPECT_NE(::stat((disk + "/bb/job.78").c_str(), &st), 0);
  EXPECT_EQ(::stat((outside + "/precious").c_str(), &st), 0) << "the link's target survives";
  EXPECT_FALSE(jb.find(78).has_value());
  EXPECT_FALSE(jb.destroy(78)) << "idempotent";
  EXPECT_TRUE(jb.destroy(77));
}

int main(int argc, char **argv) {
  if (::geteuid() != 0) {
    std::printf("SKIP: the burst buffer tests need root (they chown to the job's user); "
                "run `make check` as root to run them\n");
    return 77;  // automake's exit status for a skipped test
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

TEST_F(JobBuffersTest, ATierDirectoryAUserMadeIsRefused) {
  // A pmem tier in /dev/shm is gone after a reboot: a user who makes its directory first could
  // plant the next job's directory or pool there.  No buffer is created in it.
  const std::string root = shm + "/bb";
  ASSERT_EQ(::mkdir(root.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(root.c_str(), 0777), 0);
  ASSERT_EQ(::chown(root.c_str(), 65534, 65534), 0);
  Conf c = Conf::load_text("StateDir=" + disk + "/state\nTier=pm Kind=pmem Path=" + root +
                           " Capacity=64M Bandwidth=3G/s\n");
  JobBuffers jb({c.path, c.core, c.tier});
  JobBufferRequest r;
  r.job = 78;
  r.uid = 65534;
  r.gid = 65534;
  r.capacity = 8 * MiB;
  std::string msg;
  EXPECT_EQ(code_of([&] { jb.create(r); }, &msg), Errc::permission);
  EXPECT_NE(msg.find("tier 'pm': its directory " + root + " is owned by uid 65534, not uid 0"),
            std::string::npos)
      << msg;
  EXPECT_FALSE(jb.find(78)) << "no buffer was recorded";
  // Given to root but left writable by others: still refused.
  ASSERT_EQ(::chown(root.c_str(), 0, 0), 0);
  EXPECT_EQ(code_of([&] { jb.create(r); }, &msg), Errc::permission);
  EXPECT_NE(msg.find("is writable by group or others"), std::string::npos) << msg;
}

TEST_F(JobBuffersTest, ALeftoverJobDirectoryIsMadeAnew) {
  Conf c = Conf::load_text("StateDir=" + disk + "/state\nTier=pm Kind=pmem Path=" + shm +
                           "/bb Capacity=64M Bandwidth=3G/s\n");
  JobBuffers jb({c.path, c.core, c.tier});
  ASSERT_EQ(::mkdir((shm + "/bb").c_str(), 0755), 0);
  // What a crash (or anyone who could write there) left: a job directory with a file in it.
  ASSERT_EQ(::mkdir((shm + "/bb/job.79").c_str(), 0777), 0);
  { tierfs::Fd f = tierfs::open_file(shm + "/bb/job.79/pool", O_WRONLY | O_CREAT, 0666); }
  JobBufferRequest r;
  r.job = 79;
  r.uid = 65534;
  r.gid = 65534;
  r.capacity = 8 * MiB;
  jb.create(r);
  struct stat st;
  ASSERT_EQ(::stat((shm + "/bb/job.79").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_TRUE(tierfs::list_dir(shm + "/bb/job.79").empty()) << "nothing older than the buffer is in it";
  jb.destroy(79);
}
