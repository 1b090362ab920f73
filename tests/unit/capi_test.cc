// The C API: return codes, message buffers (truncated, always terminated), env lookup, log sink.
#include "autotune/autotune.h"
#include "autotune/log.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

TEST(CApi, ClassNameCheckOk) {
  char err[64] = "junk";
  EXPECT_EQ(at_class_name_check("abc", err, sizeof err), AT_OK);
  EXPECT_STREQ(err, "");
}

TEST(CApi, ClassNameCheckRejectsWithMessage) {
  char err[256];
  EXPECT_EQ(at_class_name_check("a b", err, sizeof err), AT_EINVAL);
  EXPECT_NE(std::string(err).find("'a b'"), std::string::npos) << err;
  EXPECT_EQ(at_class_name_check(nullptr, err, sizeof err), AT_EINVAL);
}

TEST(CApi, MessageIsTruncatedAndTerminated) {
  char err[8];
  std::memset(err, 'Z', sizeof err);
  EXPECT_EQ(at_class_name_check("a b", err, sizeof err), AT_EINVAL);
  EXPECT_EQ(std::strlen(err), sizeof err - 1);
  EXPECT_EQ(at_class_name_check("a b", nullptr, 0), AT_EINVAL);  // no buffer: still safe
}

TEST(CApi, EnvGet) {
  std::vector<std::string> store = {"A=1", "AUTOTUNE_CLASSX=no", "AUTOTUNE_CLASS=mnist", "B="};
  std::vector<char *> env;
  for (auto &s : store) env.push_back(s.data());
  EXPECT_STREQ(at_env_get(env.data(), env.size(), "AUTOTUNE_CLASS"), "mnist");
  EXPECT_STREQ(at_env_get(env.data(), env.size(), "B"), "");
  EXPECT_EQ(at_env_get(env.data(), env.size(), "C"), nullptr);
  EXPECT_EQ(at_env_get(nullptr, 0, "A"), nullptr);
  EXPECT_EQ(at_env_get(env.data(), 2, "AUTOTUNE_CLASS"), nullptr);  // count is respected
}

namespace {
std::vector<std::pair<int, std::string>> g_logged;
void sink(int level, const char *msg) { g_logged.emplace_back(level, msg); }
}  // namespace

// A message the core logs through autotune::log() reaches the C sink while it is set, with its
// level and text, and nothing reaches it once the sink is cleared.
TEST(CApi, LogSinkReceivesCoreLogOnlyWhileSet) {
  g_logged.clear();
  at_set_log_sink(sink);
  autotune::log(autotune::LogLevel::verbose, "while set");
  ASSERT_EQ(g_logged.size(), 1u);
  EXPECT_EQ(g_logged[0].first, AT_LOG_VERBOSE);
  EXPECT_EQ(g_logged[0].second, "while set");

  at_set_log_sink(nullptr);
  autotune::log(autotune::LogLevel::error, "after clearing");
  EXPECT_EQ(g_logged.size(), 1u) << "last message: " << g_logged.back().second;
  g_logged.clear();
}
