// at_prep_*(): the ends of autotune jobs, recorded by prep/autotune inside slurmctld.
//
// Under slurmctld's job write lock the plugin only writes one small file into StateDir/spool
// (journal.hpp) and wakes a background thread; the thread makes the files durable and runs
// `autotune ingest --spool`, which records the trials and refits outside slurmctld.  While the
// store cannot take them (locked, full, damaged) the events wait in the spool, in order, and the
// thread tries again every retry period, and once at every start of slurmctld.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "autotune/autotune.h"
#include "autotune/journal.hpp"
#include "autotune/log.hpp"
#include "autotune/raw_conf.hpp"
#include "capi_internal.hpp"

extern char **environ;

namespace autotune {
namespace {

// An ingest that runs longer than this is killed (and the events it left are tried again).
constexpr int kIngestTimeoutS = 600;

struct PrepState {
  std::mutex mu;  // guards everything below
  std::condition_variable cv;
  bool stop = false, kick = false;
  std::thread thread;
  std::string spool, program, error;  // error: why events are refused ("" when configured)
  // The autotune.conf the plugins read (beside slurm.conf), given to the ingest as AUTOTUNE_CONF
  // so that it takes the same StateDir however slurmctld found its slurm.conf; "" when there is
  // none (both then use the defaults).
  std::string conf;
  int retry_s = 30;
  pid_t child = -1;  // the ingest running now
  // Ends that could not be written (StateDir full or missing): kept here, oldest first, and
  // written by the thread as soon as it can.  Bounded: beyond kMaxPending the oldest is dropped,
  // with a log line naming its job.
  std::deque<JobEnd> pending;
  std::chrono::steady_clock::time_point last_warning{};
};

constexpr std::size_t kMaxPending = 100000;

PrepState &state() {
  static PrepState *s = new PrepState;
  return *s;
}

// Makes StateDir/spool when missing (only slurmctld's user may write it).
void make_spool(const std::string &spool) {
  struct stat sb;
  if (::mkdir(spool.c_str(), 0700) != 0 && errno != EEXIST)
    throw Error(Errc::io, spool + ": " + std::strerror(errno) + " (is StateDir made? autotune admin init)");
  if (::lstat(spool.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != ::geteuid() || (sb.st_mode & 022))
    throw Error(Errc::permission, spool + ": not a directory of slurmctld's user that only it may write");
}

// Writes the ends kept in memory, oldest first; stops at the first that still cannot be written.
void flush_pending(PrepState &st) {
  for (;;) {
    JobEnd e;
    std::string spool;
    {
      std::lock_guard<std::mutex> lock(st.mu);
      if (st.pending.empty()) return;
      e = st.pending.front();
      spool = st.spool;
    }
    make_spool(spool);
    write_job_end(spool, e);
    std::lock_guard<std::mutex> lock(st.mu);
    st.pending.pop_front();
    if (st.pending.empty()) log(LogLevel::info, "prep/autotune: the job ends kept in memory are written to " + spool);
  }
}

// Runs `program ingest --spool` and waits for it (at most kIngestTimeoutS, less when stopping).
void run_ingest(PrepState &st) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t dfl;
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  sigaddset(&dfl, SIGTERM);
  sigaddset(&dfl, SIGINT);
  sigaddset(&dfl, SIGHUP);
  posix_spawnattr_setsigdefault(&attr, &dfl);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
  std::string prog, conf;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    prog = st.program;
    conf = st.conf;
  }
  // slurmctld's environment, with AUTOTUNE_CONF naming the plugins' autotune.conf.
  std::vector<std::string> env_text;
  for (char **e = environ; e && *e; ++e)
    if (conf.empty() || std::strncmp(*e, "AUTOTUNE_CONF=", 14) != 0) env_text.emplace_back(*e);
  if (!conf.empty()) env_text.push_back("AUTOTUNE_CONF=" + conf);
  std::vector<char *> envp;
  for (auto &v : env_text) envp.push_back(v.data());
  envp.push_back(nullptr);
  char arg0[] = "autotune", arg1[] = "ingest", arg2[] = "--spool";
  char *argv[] = {arg0, arg1, arg2, nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, prog.c_str(), &fa, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    log(LogLevel::error, "prep/autotune: cannot run " + prog + ": " + std::strerror(rc) +
                             "; the job ends wait in " + st.spool);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(st.mu);
    st.child = pid;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kIngestTimeoutS);
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      log(LogLevel::error, "prep/autotune: " + prog + " ingest --spool ran for more than " +
                               std::to_string(kIngestTimeoutS) + " s; killed (the job ends it left wait in " +
                               st.spool + ")");
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::unique_lock<std::mutex> lock(st.mu);
    if (st.stop) {
      // slurmctld stops: the ingest finishes on its own; whatever it leaves waits for the next start.
      st.child = -1;
      return;
    }
    st.cv.wait_for(lock, std::chrono::milliseconds(100));
  }
  std::lock_guard<std::mutex> lock(st.mu);
  st.child = -1;
}

void loop(PrepState *st) {
  std::unique_lock<std::mutex> lock(st->mu);
  bool first = true;
  while (!st->stop) {
    if (!first) st->cv.wait_for(lock, std::chrono::seconds(st->retry_s), [&] { return st->stop || st->kick; });
    first = false;
    if (st->stop) break;
    st->kick = false;
    const std::string spool = st->spool;
    lock.unlock();
    try {
      flush_pending(*st);
    } catch (const std::exception &e) {
      log(LogLevel::error, std::string("prep/autotune: job ends kept in memory until they can be written: ") + e.what());
    }
    try {
      if (sync_spool(spool) > 0) run_ingest(*st);
    } catch (const std::exception &e) {
      log(LogLevel::error, std::string("prep/autotune: ") + e.what());
    }
    lock.lock();
  }
}

}  // namespace
}  // namespace autotune

using namespace autotune;

extern "C" int at_prep_configure(const char *conf_path, const char *ingest_program, int retry_seconds, char *err,
                                 size_t errlen) {
  return capi::firewall(err, errlen, [&] {
    at_prep_shutdown();
    PrepState &st = state();
    std::string spool, why, conf;
    int retry_s = retry_seconds > 0 ? retry_seconds : 30;
    try {
      CoreConf core;
      core.ingest_retry_s = retry_s;
      struct stat sb;
      if (conf_path && ::stat(conf_path, &sb) == 0) {
        conf = conf_path;
        RawConf raw = RawConf::parse_file(conf_path);
        parse_core_section(raw, core);
      }
      spool = spool_dir(core.state_dir);
      retry_s = core.ingest_retry_s;
    } catch (const Error &e) {
      why = e.what();
    }
    std::string warn;
    if (why.empty()) try {
        make_spool(spool);
      } catch (const Error &e) {
        warn = e.what();  // the thread makes it later; ends wait in memory meanwhile
      }
    {
      std::lock_guard<std::mutex> lock(st.mu);
      st.spool = spool;
      st.program = ingest_program ? ingest_program : "";
      st.conf = conf;
      st.retry_s = retry_s;
      st.error = why;
      st.stop = false;
      st.kick = false;
      if (why.empty()) st.thread = std::thread(loop, &st);
    }
    if (!why.empty()) throw Error(Errc::io, why);
    if (!warn.empty()) throw Error(Errc::io, warn + "; job ends are kept in memory until it exists");
  });
}

extern "C" void at_prep_shutdown(void) {
  PrepState &st = state();
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    st.error = "prep/autotune is not configured";
    if (!st.thread.joinable()) return;
    st.stop = true;
    t = std::move(st.thread);
  }
  st.cv.notify_all();
  t.join();
}

extern "C" int at_prep_is_tuned(const char *admin_comment) {
  return admin_comment && std::strstr(admin_comment, "autotune: class=") ? 1 : 0;
}

extern "C" int at_prep_job_end(const at_job_end *e, char *err, size_t errlen) {
  return capi::firewall(err, errlen, [&] {
    if (!e) throw_invalid("no job");
    PrepState &st = state();
    std::string spool;
    {
      std::lock_guard<std::mutex> lock(st.mu);
      if (!st.error.empty()) throw Error(Errc::io, "job " + std::to_string(e->job_id) + "'s end not recorded: " + st.error);
      spool = st.spool;
    }
    JobEnd j;
    j.job_id = e->job_id;
    j.uid = e->uid;
    j.state = e->state ? e->state : "UNKNOWN";
    j.requeued = e->requeued != 0;
    j.start = static_cast<double>(e->start);
    j.end = static_cast<double>(e->end);
    j.exit_code = e->exit_code;
    j.nodes = e->nodes ? e->nodes : "";
    j.admin_comment = e->admin_comment ? e->admin_comment : "";
    j.submit = static_cast<double>(e->submit);
    bool queued;
    {
      std::lock_guard<std::mutex> lock(st.mu);
      queued = !st.pending.empty();
    }
    std::string why;
    if (!queued) try {
        write_job_end(spool, j);  // in order: never before the ends still kept in memory
      } catch (const Error &x) {
        queued = true;
        why = x.what();
      }
    if (queued) {
      std::lock_guard<std::mutex> lock(st.mu);
      if (st.pending.size() >= kMaxPending) {
        log(LogLevel::error, "prep/autotune: more than " + std::to_string(kMaxPending) + " job ends wait in memory; job " +
                                 std::to_string(st.pending.front().job_id) + "'s end is dropped");
        st.pending.pop_front();
      }
      st.pending.push_back(j);
      const auto now = std::chrono::steady_clock::now();
      if (!why.empty() && now - st.last_warning > std::chrono::seconds(60)) {
        st.last_warning = now;
        log(LogLevel::error, "prep/autotune: " + why + "; job ends are kept in memory (" +
                                 std::to_string(st.pending.size()) + " now) and written when it can");
      }
    }
    {
      std::lock_guard<std::mutex> lock(st.mu);
      st.kick = true;
    }
    st.cv.notify_all();
  });
}
