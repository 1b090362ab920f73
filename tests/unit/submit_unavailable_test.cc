// When the tuner cannot answer an autotune job (its store locked, full, damaged or missing, or
// autotune.conf broken), at_submit() accepts it untuned and says why: an error code the plugin
// logs, an AdminComment and a message for the user that name the reason and what the
// administrator should do, and AUTOTUNE_UNAVAILABLE=<reason> for autotune-run.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "autotune/autotune.h"
#include "submit_fixture.hpp"

namespace {

class SubmitUnavailable : public autotune::test::SubmitFixture {
 protected:
  static constexpr unsigned kUid = 4343;
  const std::vector<std::string> env_{"AUTOTUNE_CLASS=deg", "AUTOTUNE_SPACE=nodes=1-2,workers=1-2,ps=1,cpus-per-worker=1-2"};

  std::string db() const { return state_dir() + "/store.db"; }
  // As the plugin's init() does (autotune.conf is otherwise looked at once a second).
  void reconfigure() {
    char err[512];
    at_submit_configure((dir_ + "/autotune.conf").c_str(), err, sizeof err);
  }

  // The first job creates the store and the class; the next one's answer is what is checked.
  void SetUp() override {
    SubmitFixture::SetUp();
    submit_env(kUid, env_);
  }

  // Submits a job of another class (a write: its class is created) and expects it accepted untuned
  // with `reason`; returns the decision.
  at_submit_decision expect_unavailable(const std::string &reason, int want_rc, const std::string &cls = "other") {
    at_submit_decision d;
    std::string err;
    const int rc = try_submit(kUid, {"AUTOTUNE_CLASS=" + cls}, &d, &err);
    EXPECT_EQ(rc, want_rc) << err;
    EXPECT_TRUE(d.is_autotune);
    EXPECT_FALSE(d.rewrite);
    const std::string comment = d.admin_comment, msg = d.user_msg;
    EXPECT_EQ(comment.rfind("autotune: tuner unavailable (" + reason + ": ", 0), 0u) << comment;
    EXPECT_NE(comment.find("job of class " + cls + " runs as submitted, untuned"), std::string::npos) << comment;
    EXPECT_NE(comment.find("; administrator: "), std::string::npos) << comment;
    EXPECT_EQ(msg.rfind("autotune: tuner unavailable (" + reason + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find("\nautotune: administrator: "), std::string::npos) << msg;
    bool has_env = false;
    for (int i = 0; i < d.env_count; ++i) has_env = has_env || std::string(d.env[i]) == "AUTOTUNE_UNAVAILABLE=" + reason;
    EXPECT_TRUE(has_env) << "AUTOTUNE_UNAVAILABLE=" << reason;
    return d;
  }
};

TEST_F(SubmitUnavailable, ALockedStoreIsNamedWithWhatToDo) {
  sqlite3 *h = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  const at_submit_decision d = expect_unavailable("locked", AT_EBUSY);
  EXPECT_NE(std::string(d.admin_comment).find("fuser " + db()), std::string::npos) << d.admin_comment;
  sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(h);
  // Released: tuned again.
  const at_submit_decision ok = submit_env(kUid, {"AUTOTUNE_CLASS=other"});
  EXPECT_TRUE(ok.rewrite) << ok.admin_comment;
  EXPECT_EQ(std::string(ok.user_msg), "");
}

TEST_F(SubmitUnavailable, ADamagedStoreIsNamed) {
  {
    sqlite3 *h = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
  }
  {  // the header and the first pages overwritten, in place (same file)
    std::fstream f(db(), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f);
    const std::string junk(8192, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const at_submit_decision d = expect_unavailable("damaged", AT_ECORRUPT);
  EXPECT_NE(std::string(d.admin_comment).find("autotune admin check"), std::string::npos) << d.admin_comment;
}

TEST_F(SubmitUnavailable, AStoreDeletedUnderTheOpenConnectionIsMissingNotRecreated) {
  for (const char *suffix : {"", "-wal", "-shm"}) std::remove((db() + suffix).c_str());
  const at_submit_decision d = expect_unavailable("missing", AT_ENOENT);
  EXPECT_NE(std::string(d.admin_comment).find("autotune admin init"), std::string::npos) << d.admin_comment;
  struct stat sb {};
  EXPECT_NE(::stat(db().c_str(), &sb), 0) << "job_submit recreated the store";
}

TEST_F(SubmitUnavailable, ABrokenAutotuneConfAcceptsTheJobUntunedWithoutQuotingIt) {
  std::ofstream(dir_ + "/autotune.conf") << "StateDir=" << state_dir() << "\nSecretKey=hunter2\n";
  reconfigure();
  const at_submit_decision d = expect_unavailable("config", AT_EIO);
  EXPECT_EQ(std::string(d.user_msg).find("hunter2"), std::string::npos) << d.user_msg;
  EXPECT_EQ(std::string(d.admin_comment).find("hunter2"), std::string::npos) << d.admin_comment;
  // An invalid option is still refused when the file is fixed.
  std::ofstream(dir_ + "/autotune.conf") << "StateDir=" << state_dir() << "\n";
  reconfigure();
  at_submit_decision bad;
  std::string err;
  EXPECT_EQ(try_submit(kUid, {"AUTOTUNE_CLASS=x", "AUTOTUNE_GAMMA=2"}, &bad, &err), AT_EINVAL) << err;
}

}  // namespace
