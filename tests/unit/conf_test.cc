#include "autotune/conf.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "autotune/error.hpp"
#include "conf_error.hpp"

using namespace autotune;

using test::conf_error;

TEST(Conf, DefaultsAndStateDir) {
  EXPECT_EQ(Conf::defaults().core.state_dir, "/var/lib/slurm-autotune");
  Conf c = Conf::load_text("# comment\n\n  statedir=/srv/at   # trailing\n");
  EXPECT_EQ(c.core.state_dir, "/srv/at");
  EXPECT_EQ(c.core.ingest_retry_s, 30);
  EXPECT_EQ(Conf::load_text("IngestRetry=5\n").core.ingest_retry_s, 5);
  const std::string e = conf_error("IngestRetry=0\n");
  EXPECT_NE(e.find("autotune.conf:1: IngestRetry"), std::string::npos) << e;
  EXPECT_NE(e.find("1"), std::string::npos) << e;
  EXPECT_NE(conf_error("IngestRetry=soon\n").find("IngestRetry"), std::string::npos);
}

TEST(Conf, FailsClosed) {
  EXPECT_EQ(conf_error("Bogus=1\n"),
            "autotune.conf:1: unknown key 'Bogus' (the keys are documented in etc/autotune.conf)");
  EXPECT_EQ(conf_error("StateDir=/a\nStateDir=/b\n"),
            "autotune.conf:2: StateDir is given twice (first at autotune.conf:1)");
  EXPECT_EQ(conf_error("StateDir=relative\n"),
            "autotune.conf:1: StateDir: 'relative' is not an absolute path");
  EXPECT_EQ(conf_error("StateDir /a\n"), "autotune.conf:1: 'StateDir' is not Key=Value");
  EXPECT_EQ(conf_error("StateDir=/a Extra=1\n"),
            "autotune.conf:1: StateDir takes one value; unexpected 'Extra=' after it");
  EXPECT_EQ(conf_error("StateDir=\"/a\n"), "autotune.conf:1: StateDir: unterminated quote");
}

TEST(Conf, RepeatedRecordsAndQuotes) {
  RawConf raw = RawConf::parse_text("Tier=a Kind=pmem Path=\"/x y\"\nTier=b Kind=disk\n");
  auto lines = raw.take_all("tier");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].get("path").value(), "/x y");
  EXPECT_EQ(lines[1].get("Kind").value(), "disk");
  EXPECT_FALSE(lines[1].get("Path").has_value());
  EXPECT_NO_THROW(raw.reject_unknown());
}

TEST(Conf, Files) {
  try {
    Conf::load("/nonexistent/autotune.conf");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::not_found);
  }
  char path[] = "/tmp/autotune-conf-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "StateDir=/var/x\n";
  EXPECT_EQ(Conf::load(path).core.state_dir, "/var/x");
  std::remove(path);
}
