// The setuid rules of `autotune` (tools/cli.cc): which paths are trusted, symbolic links
// included; what a setuid start keeps of the environment; dropping SlurmUser's identity.
// Trust means "owned by root or SlurmUser", so most cases need to run as root (or SlurmUser) and
// are skipped otherwise; the setuid cases fork a child that takes a real uid other than its
// effective one, as a setuid start does.
#include "cli.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace autotune::cli {
namespace {

bool can_own() { return geteuid() == 0 || geteuid() == slurm_user_uid(); }

class TrustedPath : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!can_own()) GTEST_SKIP() << "needs root or SlurmUser (files must be owned by them)";
    char tmpl[] = "/tmp/cli_test.XXXXXX";  // /tmp: root-owned and sticky, like a site's
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string mkdir_mode(const std::string &name, mode_t mode) {
    const std::string p = dir_ + "/" + name;
    EXPECT_EQ(::mkdir(p.c_str(), 0700), 0) << p;
    EXPECT_EQ(chmod(p.c_str(), mode), 0) << p;
    return p;
  }
  std::string file(const std::string &name, mode_t mode = 0644) {
    const std::string p = dir_ + "/" + name;
    std::ofstream(p) << "StateDir=/nonexistent\n";
    EXPECT_EQ(chmod(p.c_str(), mode), 0) << p;
    return p;
  }
  std::string link(const std::string &target, const std::string &name) {
    const std::string p = dir_ + "/" + name;
    EXPECT_EQ(symlink(target.c_str(), p.c_str()), 0) << p;
    return p;
  }
  std::string dir_;
};

TEST_F(TrustedPath, PlainFilesAndDirectories) {
  std::string why;
  EXPECT_TRUE(trusted_path(file("a.conf"), &why)) << why;
  mkdir_mode("etc", 0755);
  EXPECT_TRUE(trusted_path(file("etc/b.conf"), &why)) << why;
  EXPECT_TRUE(trusted_path(dir_ + "/etc/./../etc/b.conf", &why)) << why;
  EXPECT_TRUE(trusted_path(dir_ + "//etc//", &why)) << why;
}

TEST_F(TrustedPath, WritableByOthersIsNotTrusted) {
  std::string why;
  EXPECT_FALSE(trusted_path(file("g.conf", 0664), &why));
  EXPECT_NE(why.find("g.conf is writable by group or others"), std::string::npos) << why;
  mkdir_mode("open", 0777);
  EXPECT_FALSE(trusted_path(file("open/x.conf"), &why));
  EXPECT_NE(why.find("/open is writable by group or others"), std::string::npos) << why;
  // A sticky directory (like /tmp) may be writable by others: nobody replaces what root owns.
  mkdir_mode("sticky", 01777);
  EXPECT_TRUE(trusted_path(file("sticky/y.conf"), &why)) << why;
}

TEST_F(TrustedPath, MissingRelativeAndNotADirectory) {
  std::string why;
  EXPECT_FALSE(trusted_path(dir_ + "/none.conf", &why));
  EXPECT_NE(why.find("none.conf: No such file or directory"), std::string::npos) << why;
  EXPECT_FALSE(trusted_path("etc/slurm.conf", &why));
  EXPECT_NE(why.find("not an absolute path"), std::string::npos) << why;
  file("f");
  EXPECT_FALSE(trusted_path(dir_ + "/f/slurm.conf", &why));
  EXPECT_NE(why.find("/f is not a directory"), std::string::npos) << why;
}

TEST_F(TrustedPath, LinksToTrustedTargetsAreFollowed) {
  std::string why;
  mkdir_mode("etc", 0755);
  const std::string target = file("etc/slurm.conf");
  EXPECT_TRUE(trusted_path(link(target, "abs.conf"), &why)) << why;
  EXPECT_TRUE(trusted_path(link("etc/slurm.conf", "rel.conf"), &why)) << why;
  mkdir_mode("other", 0755);
  EXPECT_TRUE(trusted_path(link("../etc/slurm.conf", "other/up.conf"), &why)) << why;
  // A linked directory in the middle of the path.
  link(dir_ + "/etc", "etc-link");
  EXPECT_TRUE(trusted_path(dir_ + "/etc-link/slurm.conf", &why)) << why;
  // A chain of links.
  link(dir_ + "/abs.conf", "chain.conf");
  EXPECT_TRUE(trusted_path(dir_ + "/chain.conf", &why)) << why;
}

// The directories above a link count: a root-owned link in a directory others may write can be
// replaced by them at any time, whatever it points to now.
TEST_F(TrustedPath, TheDirectoriesAboveALinkAreChecked) {
  std::string why;
  mkdir_mode("etc", 0755);
  file("etc/slurm.conf");
  mkdir_mode("open", 0777);
  link(dir_ + "/etc", "open/etc");                 // a directory link inside the open directory
  link(dir_ + "/etc/slurm.conf", "open/s.conf");   // a file link inside it
  EXPECT_FALSE(trusted_path(dir_ + "/open/etc/slurm.conf", &why));
  EXPECT_NE(why.find("/open is writable by group or others"), std::string::npos) << why;
  EXPECT_FALSE(trusted_path(dir_ + "/open/s.conf", &why));
  EXPECT_NE(why.find("/open is writable by group or others"), std::string::npos) << why;
}

TEST_F(TrustedPath, TheTargetOfALinkIsChecked) {
  std::string why;
  mkdir_mode("open", 0777);
  const std::string target = file("open/slurm.conf");
  EXPECT_FALSE(trusted_path(link(target, "to-open.conf"), &why));
  EXPECT_NE(why.find("/open is writable by group or others"), std::string::npos) << why;
  EXPECT_FALSE(trusted_path(link(file("g.conf", 0666), "to-g.conf"), &why));
  EXPECT_NE(why.find("g.conf is writable by group or others"), std::string::npos) << why;
}

TEST_F(TrustedPath, LinksOwnedByOthersAndLoops) {
  std::string why;
  const std::string l = link(file("t.conf"), "nobody.conf");
  ASSERT_EQ(lchown(l.c_str(), 65534, 65534), 0);
  EXPECT_FALSE(trusted_path(l, &why));
  EXPECT_NE(why.find("nobody.conf is a link owned by uid 65534"), std::string::npos) << why;
  link(dir_ + "/loop-b", "loop-a");
  link(dir_ + "/loop-a", "loop-b");
  EXPECT_FALSE(trusted_path(dir_ + "/loop-a", &why));
  EXPECT_NE(why.find("too many levels of symbolic links"), std::string::npos) << why;
}

// Runs `body` in a child whose real uid is `uid` and effective uid root: a setuid-root start.
// Returns the child's exit status (0 = every check in it held).
int as_setuid_child(uid_t uid, int (*body)()) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (setresuid(uid, 0, 0) != 0) _exit(90);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

TEST(SetuidStart, TheEnvironmentChoosesNoFile) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  setenv("AUTOTUNE_CONF", "/tmp/mine.conf", 1);
  setenv("SLURM_CONF", "/tmp/my-slurm.conf", 1);
  setenv("LD_PRELOAD", "/tmp/x.so", 1);
  const int rc = as_setuid_child(65534, [] {
    const Caller c = init_caller();
    if (!c.setuid || c.uid != 65534 || c.privileged) return 1;
    if (std::getenv("AUTOTUNE_CONF") || std::getenv("LD_PRELOAD")) return 2;
    const char *sc = std::getenv("SLURM_CONF");
    if (!sc || site_slurm_conf() != sc) return 3;
    if (site_slurm_conf().rfind(AUTOTUNE_SYSCONFDIR "/", 0) != 0) return 4;
    const mode_t old = umask(0);
    if (old != 077) return 5;
    return 0;
  });
  unsetenv("AUTOTUNE_CONF");
  unsetenv("SLURM_CONF");
  unsetenv("LD_PRELOAD");
  EXPECT_EQ(rc, 0);
}

TEST(SetuidStart, DroppingPrivilegesIsForGood) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const int rc = as_setuid_child(65534, [] {
    Caller c = init_caller();
    if (!c.setuid) return 1;
    enter_command(c, Needs::store);  // keeps SlurmUser's identity
    if (geteuid() != 0 || !c.setuid) return 2;
    enter_command(c, Needs::nothing);
    if (c.setuid) return 3;
    uid_t r, e, s;
    if (getresuid(&r, &e, &s) != 0 || r != 65534 || e != 65534 || s != 65534) return 4;
    if (seteuid(0) == 0 || setuid(0) == 0) return 5;
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

TEST(SetuidStart, NotSetuidIsLeftAlone) {
  const uid_t euid = geteuid();
  Caller c;
  c.uid = getuid();
  drop_privileges(c);
  enter_command(c, Needs::nothing);
  EXPECT_EQ(geteuid(), euid);
  EXPECT_FALSE(c.setuid);
}

// autotune show's warm-start lines, as a user reads them.
TEST(WarmStartLines, WhatAutotuneShowSays) {
  ClassExtra cx;
  EXPECT_TRUE(warm_start_lines(cx).empty());
  cx.history = {HistoryUse{1, 0, true, "old", 0.25}, HistoryUse{2, 0, true, "older", 0.125}};
  cx.own_weight = 0.625;
  EXPECT_EQ(warm_start_lines(cx),
            (std::vector<std::string>{"warm start: informed by shared/old (weight 0.25), shared/older "
                                      "(weight 0.12); the class's own model: weight 0.62"}));
  cx.history_failure_trust = 0.5;
  cx.history_top_failed = true;
  cx.history[0].weight = cx.history[1].weight = 0;
  cx.own_weight = 1;
  EXPECT_EQ(warm_start_lines(cx),
            (std::vector<std::string>{
                "warm start: informed by shared/old (weight 0), shared/older (weight 0); the class's own "
                "model: weight 1",
                "warm start: the configuration those classes rank best among this class's trials failed "
                "here, so they have no weight",
                "warm start: where those classes' runs failed is proposed less (trust in their failures "
                "0.5)"}));
  ClassExtra aside;
  aside.history_set_aside = {HistoryUse{1, 0, true, "old", 0}, HistoryUse{2, 0, true, "reversed", 0}};
  aside.history_coherence = -0.8;
  EXPECT_EQ(warm_start_lines(aside),
            (std::vector<std::string>{"warm start: set aside shared/old, shared/reversed: they do not "
                                      "predict each other's measurements (coherence -0.8, below 0.1)"}));
}

// autotune show's "failures:" line, as a user reads it.
TEST(FailureEdgeLine, WhatAutotuneShowSays) {
  ClassExtra cx;
  EXPECT_EQ(failure_edge_line(cx), "");
  cx.failure_edge = EdgeUse{"total-mem", true, 12288, 3};
  EXPECT_EQ(failure_edge_line(cx),
            "failures: configurations with total-mem at most 12288 are proposed less: 3 failed trials lie "
            "there, below every successful one");
  cx.failure_edge = EdgeUse{"lr", false, 0.03, 5};
  EXPECT_EQ(failure_edge_line(cx),
            "failures: configurations with lr at least 0.03 are proposed less: 5 failed trials lie there, "
            "above every successful one");
}

// autotune show's "model:" and "proposals:" texts: between gamma 0.75 and 1 the run times' model
// has a linear term of its own and a likely failure weighs more, and show says so.
TEST(ClassModelLines, WhatAutotuneShowSaysOfTheModel) {
  ClassExtra cx;
  cx.kernel = GpKernel::ard;
  cx.input_warping = true;
  cx.linear_trend = Trend::automatic;
  cx.explore = Explore::automatic;
  cx.time_model = TimeModel::automatic;
  ClassRecord c;
  c.settings.gamma = 0.9;
  ClassModelText t = class_model_text(c, cx);
  EXPECT_EQ(t.model,
            "ard kernel, input warping, no linear term (auto at gamma 0.9), scores modelled (auto: run times by "
            "turns, or once their model orders the trials better), the run times' model with a linear term "
            "(auto at gamma 0.9)");
  EXPECT_EQ(t.proposals,
            "expected improvement, local search near the best on 0.4 of the proposals (auto at gamma 0.9), each "
            "weighted by its chance of running to the power 4 (auto at gamma 0.9)");
  // At gamma 1 and 0.5 one linear term for both models (none, or both); at gamma 1 only the run
  // times' model's proposals weigh the chance of running (to the power 8), at 0.5 none.
  c.settings.gamma = 1;
  t = class_model_text(c, cx);
  EXPECT_EQ(t.model,
            "ard kernel, input warping, no linear term (auto at gamma 1), scores modelled (auto: run times "
            "once their model orders the trials better)");
  EXPECT_EQ(t.proposals,
            "expected improvement, local search near the best on 0.4 of the proposals (auto at gamma 1), the run "
            "times' model's each weighted by its chance of running to the power 8 (auto at gamma 1)");
  cx.time_model = TimeModel::no;
  EXPECT_EQ(class_model_text(c, cx).proposals,
            "expected improvement, local search near the best on 0.4 of the proposals (auto at gamma 1)");
  cx.time_model = TimeModel::automatic;
  c.settings.gamma = 0.5;
  t = class_model_text(c, cx);
  EXPECT_EQ(t.model.find("the run times' model"), std::string::npos) << t.model;
  EXPECT_EQ(t.proposals, "expected improvement, local search near the best on 0.4 of the proposals (auto at gamma 0.5)");
  c.settings.gamma = 0.3;  // Thompson sampling from 0.25 to below 0.4
  EXPECT_EQ(class_model_text(c, cx).proposals, "Thompson sampling (auto at gamma 0.3)");
  // The last proposal by the run time's form.
  cx.form_modelled = true;
  EXPECT_EQ(class_model_text(c, cx).proposals,
            "Thompson sampling (auto at gamma 0.3); the last by the run time's form (it orders the trials better)");
  cx.form_modelled = false;
  c.settings.gamma = 0.5;
  // LinearTrend=no holds for both models; TimeModel=no has no run times' model to speak of.
  c.settings.gamma = 0.9;
  cx.linear_trend = Trend::no;
  EXPECT_EQ(class_model_text(c, cx).model.find("the run times' model"), std::string::npos);
  cx.linear_trend = Trend::automatic;
  cx.time_model = TimeModel::no;
  EXPECT_EQ(class_model_text(c, cx).model, "ard kernel, input warping, no linear term (auto at gamma 0.9)");
}

}  // namespace
}  // namespace autotune::cli
