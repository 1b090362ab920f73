// at_select_*(): the per-node speed scores for select/autotune, kept in memory by a background
// thread so that node selection (under slurmctld's locks) only reads a snapshot.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "autotune/autotune.h"
#include "autotune/conf.hpp"
#include "autotune/log.hpp"
#include "autotune/store.hpp"
#include "capi_internal.hpp"

namespace autotune {
namespace {

struct SelectState {
  std::mutex mu;  // guards the thread's lifetime and the condition
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;
  std::string conf_path;
  int refresh_s = 30;
  std::mutex snap_mu;  // guards `slow` (held only to copy a pointer)
  std::shared_ptr<const std::set<std::string>> slow = std::make_shared<std::set<std::string>>();
};

SelectState &state() {
  static SelectState *s = new SelectState;
  return *s;
}

void refresh(SelectState &st) {
  try {
    Conf conf = Conf::defaults();
    struct stat sb;
    if (::stat(st.conf_path.c_str(), &sb) == 0) conf = Conf::load(st.conf_path);
    const std::string path = Store::path_in(conf.core.state_dir);
    if (::stat(path.c_str(), &sb) != 0) return;  // no store yet
    Store store(path, {false, true, 200});
    auto next = std::make_shared<std::set<std::string>>();
    for (const auto &n : store.node_speeds())
      if (n.score < conf.tuner.slow_node_threshold) next->insert(n.node);
    std::lock_guard<std::mutex> lock(st.snap_mu);
    if (*next != *st.slow) {
      std::string list;
      for (const auto &n : *next) list += (list.empty() ? "" : ",") + n;
      log(LogLevel::verbose, "select/autotune: slow nodes now: " + (list.empty() ? std::string("none") : list));
    }
    st.slow = next;
  } catch (const std::exception &e) {
    log(LogLevel::debug, std::string("select/autotune: node speeds not refreshed: ") + e.what());
  }
}

void loop(SelectState *st) {
  std::unique_lock<std::mutex> lock(st->mu);
  while (!st->stop) {
    lock.unlock();
    refresh(*st);
    lock.lock();
    st->cv.wait_for(lock, std::chrono::seconds(st->refresh_s), [&] { return st->stop; });
  }
}

}  // namespace
}  // namespace autotune

using namespace autotune;

extern "C" int at_select_configure(const char *conf_path, int refresh_seconds, char *err, size_t errlen) {
  return capi::firewall(err, errlen, [&] {
    SelectState &st = state();
    at_select_shutdown();
    std::lock_guard<std::mutex> lock(st.mu);
    st.conf_path = conf_path ? conf_path : "";
    st.refresh_s = refresh_seconds > 0 ? refresh_seconds : 30;
    st.stop = false;
    st.thread = std::thread(loop, &st);
  });
}

extern "C" void at_select_shutdown(void) {
  SelectState &st = state();
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (!st.thread.joinable()) return;
    st.stop = true;
    t = std::move(st.thread);
  }
  st.cv.notify_all();
  t.join();
}

extern "C" int at_node_is_slow(const char *node) {
  if (!node) return 0;
  SelectState &st = state();
  std::shared_ptr<const std::set<std::string>> snap;
  {
    std::lock_guard<std::mutex> lock(st.snap_mu);
    snap = st.slow;
  }
  return snap->count(node) ? 1 : 0;
}
