// at_prep_*(): a job's end goes into StateDir/spool, and the thread runs the ingest program with
// the autotune.conf the plugin read, whatever AUTOTUNE_CONF slurmctld's environment holds.  The
// ingest program here is a shell script that writes down its arguments and AUTOTUNE_CONF.
#include "autotune/autotune.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct PrepDir : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    char tmpl[] = "/tmp/prep_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
    fs::create_directory(dir / "etc");
    fs::create_directory(dir / "state");
    ::chmod((dir / "state").c_str(), 0700);
    std::ofstream(dir / "etc" / "autotune.conf") << "StateDir=" << (dir / "state").string() << "\nIngestRetry=1\n";
    // The ingest: records what it was given, then takes the spool's ends as `autotune ingest
    // --spool` would.
    const fs::path seen = dir / "seen";
    std::ofstream(dir / "ingest") << "#!/bin/sh\n"
                                  << "echo \"$1 $2 AUTOTUNE_CONF=$AUTOTUNE_CONF\" > " << seen.string() << ".tmp\n"
                                  << "ls " << (dir / "state" / "spool").string() << " | grep -c '\\.end$' >> "
                                  << seen.string() << ".tmp\n"
                                  << "rm -f " << (dir / "state" / "spool").string() << "/*.end\n"
                                  << "mv " << seen.string() << ".tmp " << seen.string() << "\n";
    ::chmod((dir / "ingest").c_str(), 0755);
  }
  void TearDown() override {
    at_prep_shutdown();
    ::unsetenv("AUTOTUNE_CONF");
    fs::remove_all(dir);
  }
  // Waits (at most 20 s) for the ingest's record.
  std::string wait_seen() {
    for (int i = 0; i < 200; ++i) {
      if (fs::exists(dir / "seen")) return slurp(dir / "seen");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "";
  }
};

at_job_end job_end(unsigned id) {
  at_job_end e{};
  e.job_id = id;
  e.uid = ::getuid();
  e.state = "COMPLETED";
  e.start = 1700000010;
  e.end = 1700000070;
  e.nodes = "n1";
  e.admin_comment = "autotune: class=x trial=1 (initial) config=nodes=1";
  e.submit = 1700000000;
  return e;
}

}  // namespace

TEST_F(PrepDir, IngestRunsWithThePluginsConfiguration) {
  // slurmctld's environment names another file: the ingest must still read the plugin's.
  ::setenv("AUTOTUNE_CONF", "/nonexistent/autotune.conf", 1);
  const std::string conf = (dir / "etc" / "autotune.conf").string();
  char err[512];
  ASSERT_EQ(at_prep_configure(conf.c_str(), (dir / "ingest").c_str(), 30, err, sizeof err), AT_OK) << err;
  EXPECT_TRUE(fs::is_directory(dir / "state" / "spool"));
  const at_job_end e = job_end(42);
  ASSERT_EQ(at_prep_job_end(&e, err, sizeof err), AT_OK) << err;
  EXPECT_EQ(wait_seen(), "ingest --spool AUTOTUNE_CONF=" + conf + "\n1\n");
}
