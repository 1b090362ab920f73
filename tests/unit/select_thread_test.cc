// at_select_*(): the background thread that keeps the store's slow nodes in memory, under
// concurrent readers.  Several threads call at_node_is_slow() while the thread refreshes its
// snapshot (on start and on every period) and while the store's node speeds change; the thread is
// restarted and shut down under them, as select/autotune's init() and fini() do.  Built and run by
// `make check`, and under ThreadSanitizer by `scripts/test --tsan`.
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "autotune/autotune.h"
#include "autotune/store.hpp"

namespace {

std::atomic<int> g_log_lines{0};
void count_sink(int, const char *) { g_log_lines.fetch_add(1); }

// Polls `cond` until it holds or `seconds` have passed.
bool eventually(const std::function<bool()> &cond, int seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

class SelectThread : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/autotune-select-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    conf_ = dir_ + "/autotune.conf";
    std::ofstream(conf_) << "StateDir=" << dir_ << "\nSlowNodeThreshold=0.8\n";
    autotune::Store store(autotune::Store::path_in(dir_), {true, false, 5000});
    store.update_node_speed("n1", 0.5, 1.0);  // slow from the start, and for good
    store.update_node_speed("n2", 1.0, 1.0);
  }
  void TearDown() override {
    at_select_shutdown();
    at_set_log_sink(nullptr);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void set_speed(const std::string &node, double score) {
    autotune::Store store(autotune::Store::path_in(dir_), {false, false, 5000});
    store.update_node_speed(node, score, 1.0);
  }
  std::string dir_, conf_;
};

TEST_F(SelectThread, ReadersSeeConsistentSnapshotsWhileTheThreadRefreshesAndRestarts) {
  at_set_log_sink(count_sink);
  char err[256] = "";
  ASSERT_EQ(at_select_configure(conf_.c_str(), 1, err, sizeof err), AT_OK) << err;
  ASSERT_TRUE(eventually([] { return at_node_is_slow("n1") == 1; }, 20)) << "n1 never reported slow";

  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&] {
      while (!stop.load()) {
        if (at_node_is_slow("n1") != 1) wrong.fetch_add(1);   // never changes
        if (at_node_is_slow("n9") != 0) wrong.fetch_add(1);   // not in the store
        if (at_node_is_slow(nullptr) != 0) wrong.fetch_add(1);
        (void)at_node_is_slow("n2");                           // flips while we read
        reads.fetch_add(1);
      }
    });

  // n2 turns slow and fast again; each change reaches the readers through a refresh.  In between
  // the thread is restarted (configure stops the old one and refreshes at once).
  for (int round = 0; round < 2; ++round) {
    set_speed("n2", 0.3);
    EXPECT_TRUE(eventually([] { return at_node_is_slow("n2") == 1; }, 20)) << "round " << round;
    ASSERT_EQ(at_select_configure(conf_.c_str(), 1, err, sizeof err), AT_OK) << err;
    set_speed("n2", 1.0);
    EXPECT_TRUE(eventually([] { return at_node_is_slow("n2") == 0; }, 20)) << "round " << round;
  }
  at_select_shutdown();
  at_select_shutdown();  // a second shutdown is harmless
  EXPECT_EQ(at_node_is_slow("n1"), 1);  // the last snapshot stays readable after shutdown
  stop.store(true);
  for (auto &r : readers) r.join();

  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_GT(g_log_lines.load(), 0) << "the thread logs when the slow nodes change";
}

TEST_F(SelectThread, ShutdownRightAfterConfigureAndWithoutAStore) {
  char err[256] = "";
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(at_select_configure(conf_.c_str(), 1, err, sizeof err), AT_OK) << err;
    at_select_shutdown();
  }
  // A conf whose state directory holds no store: the thread keeps running, nothing is slow there.
  const std::string empty = dir_ + "/empty";
  ASSERT_EQ(::mkdir(empty.c_str(), 0700), 0);
  const std::string conf2 = dir_ + "/empty.conf";
  std::ofstream(conf2) << "StateDir=" << empty << "\n";
  ASSERT_EQ(at_select_configure(conf2.c_str(), 1, err, sizeof err), AT_OK) << err;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(at_node_is_slow("n9"), 0);
  at_select_shutdown();
}

}  // namespace
