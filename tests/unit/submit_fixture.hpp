// A test fixture for at_submit(): a temporary StateDir with an autotune.conf naming it, loaded
// by at_submit_configure(), and a submission of a job with the given --autotune* environment
// from a partition of four 2-CPU, 4000 MB nodes (as slurmctld would hand it to the plugin).
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "autotune/autotune.h"

namespace autotune::test {

inline size_t four_nodes(void *, at_node_type *types, size_t max) {
  if (max < 1) return 0;
  types[0] = at_node_type{"cpus2-mem4000", 4, 2, 4000, 0, nullptr};
  return 1;
}

class SubmitFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/autotune-submit-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/autotune.conf") << "StateDir=" << dir_ << "/state\n";
    char err[512];
    ASSERT_EQ(at_submit_configure((dir_ + "/autotune.conf").c_str(), err, sizeof err), AT_OK) << err;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  // Submits a job of user `uid` with `env` (AUTOTUNE_CLASS=..., ...) from a partition with
  // `limits`; returns at_submit's code, with its message in *err.
  int try_submit(unsigned uid, std::vector<std::string> env, at_submit_decision *d, std::string *err,
                 const char *billing_weights = nullptr, at_partition_limits limits = {}, bool array = false,
                 bool het = false) {
    std::vector<char *> ptrs;
    for (auto &e : env) ptrs.push_back(e.data());
    at_submit_request req{};
    req.uid = uid;
    req.spank_env = ptrs.data();
    req.spank_env_count = ptrs.size();
    req.partition = "debug";
    req.billing_weights = billing_weights;
    req.inventory = four_nodes;
    req.limits = limits;
    req.is_array = array ? 1 : 0;
    req.is_het = het ? 1 : 0;
    if (acct_given_) {
      req.accounting = [](void *ctx, at_accounting_limits *out) {
        auto *self = static_cast<SubmitFixture *>(ctx);
        ++self->acct_calls_;
        *out = self->acct_;
      };
      req.accounting_ctx = this;
    }
    char buf[1024] = "";
    const int rc = at_submit(&req, d, buf, sizeof buf);
    *err = buf;
    return rc;
  }
  // The same, expecting AT_OK.
  at_submit_decision submit_env(unsigned uid, std::vector<std::string> env, const char *billing_weights = nullptr,
                                at_partition_limits limits = {}) {
    at_submit_decision d;
    std::string err;
    EXPECT_EQ(try_submit(uid, std::move(env), &d, &err, billing_weights, limits), AT_OK) << err;
    return d;
  }

  std::string state_dir() const { return dir_ + "/state"; }
  // What the accounting callback reports from now on (as the plugin does for a job whose QOS or
  // association limits apply), and how often at_submit asked.
  void set_accounting(const at_accounting_limits &a) {
    acct_ = a;
    acct_given_ = true;
  }
  int acct_calls_ = 0;
  at_accounting_limits acct_{};
  bool acct_given_ = false;

  std::string dir_;
};

}  // namespace autotune::test
