// autotune ingest: record how autotune jobs ended, then refit their classes.
//
// Runs as SlurmUser, started by slurmctld's prep/autotune plugin (`autotune ingest --spool`) after
// it put a job's end into StateDir/spool (store/journal.hpp), or by hand (`--job ID`).  Whose
// class and which trial it is comes from Slurm's own record of the job (its user id and the
// AdminComment job_submit/autotune wrote, which users cannot set), never from the result file the
// job left: a user can only ever skew their own classes.
//
// The spool is taken in order, each end once: an end is removed only after the store took it.
// When the store cannot take one (locked, full, damaged, an I/O error) the rest wait, in order,
// for the plugin's next try; a job's result file stays in incoming/ until its end is recorded.
#include <dirent.h>
#include <sys/file.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "args.hpp"
#include "autotune/history.hpp"
#include "autotune/optimizer.hpp"
#include "autotune/error.hpp"
#include "autotune/journal.hpp"
#include "autotune/log.hpp"
#include "autotune/result.hpp"
#include "autotune/retention.hpp"
#include "autotune/tuner.hpp"
#include "autotune/units.hpp"
#include "workflow_plan.hpp"
#include "commands.hpp"
#include "slurm_job.hpp"

namespace autotune::cli {

namespace {

// What Slurm says about the job: the fields of a spool's job end (journal.hpp), and whether the
// job is over.
struct JobFacts : JobEnd {
  bool ended = false;  // slurmctld's record says the job is over
};

JobFacts facts_of(const JobEnd &e) {
  JobFacts f;
  static_cast<JobEnd &>(f) = e;
  f.ended = true;
  return f;
}

// A job submitted at `submitted` (Unix seconds; 0: not known) before the class existed was a
// forgotten class's of the same name: its trial number is that class's, not this one's.  The
// class is created at submission (job_submit, before slurmctld stamps the job), so one of its own
// jobs is never older, to the second -- but slurmctld stamps it with time(), which reads the
// kernel's coarse clock, up to a tick behind the clock the store stamps the class with: a class
// created at 12:00:00.002 may have its first job submitted at 11:59:59.  kStampSkewS allows for
// that tick (1-10 ms).
constexpr double kStampSkewS = 0.05;
bool of_a_forgotten_class(const ClassRecord &c, double submitted) {
  return submitted > 0 && submitted < std::floor(c.created - kStampSkewS);
}

// The store could not take a record now: the job's end waits in the spool for the next try.
bool store_outage(const Error &e) {
  return e.code() == Errc::busy || e.code() == Errc::io || e.code() == Errc::no_space || e.code() == Errc::corrupt;
}

// What the admin should do about an outage, for the log.
std::string outage_advice(const Error &e) {
  switch (e.code()) {
    case Errc::busy: return "the store is locked by another process (sqlite3, a backup?); its ends are recorded once it is free";
    case Errc::no_space: return "StateDir is full; free space there and the ends are recorded";
    case Errc::corrupt: return "the store is damaged: run `autotune admin check`, restore it from a backup or move it away (`autotune admin init` makes a new one)";
    default: return "the store cannot be written; check StateDir";
  }
}

const char *state_name(std::uint32_t state) {
  switch (state & JOB_STATE_BASE) {
    case JOB_PENDING: return "PENDING";
    case JOB_RUNNING: return "RUNNING";
    case JOB_SUSPENDED: return "SUSPENDED";
    case JOB_COMPLETE: return "COMPLETED";
    case JOB_CANCELLED: return "CANCELLED";
    case JOB_FAILED: return "FAILED";
    case JOB_TIMEOUT: return "TIMEOUT";
    case JOB_NODE_FAIL: return "NODE_FAIL";
    case JOB_PREEMPTED: return "PREEMPTED";
    case JOB_BOOT_FAIL: return "BOOT_FAIL";
    case JOB_DEADLINE: return "DEADLINE";
    case JOB_OOM: return "OUT_OF_MEMORY";
    default: return "UNKNOWN";
  }
}

JobFacts load_job(std::uint32_t id) {
  const SlurmJob job(id);
  const slurm_job_info_t &j = job.info();
  JobFacts f;
  f.job_id = j.job_id;
  f.uid = j.user_id;
  f.admin_comment = j.admin_comment ? j.admin_comment : "";
  f.state = state_name(j.job_state);
  f.nodes = j.nodes ? j.nodes : "";
  f.start = static_cast<double>(j.start_time);
  f.end = static_cast<double>(j.end_time);
  f.submit = static_cast<double>(j.submit_time);
  f.exit_code = j.exit_code;
  f.requeued = (j.job_state & JOB_STATE_BASE) == JOB_PENDING || (j.job_state & (JOB_REQUEUE | JOB_REQUEUE_HOLD));
  f.ended = (j.job_state & JOB_STATE_BASE) > JOB_SUSPENDED;
  return f;
}

// "autotune: class=NAME[ (shared)] trial=N ...", "... best config=C from N trials" or
// "... mode=steps: ..." as job_submit/autotune wrote it.
struct Record {
  std::string cls;
  bool shared = false;
  std::optional<int> trial;
  std::string best;  // the converged class's best configuration this job ran
  bool steps = false;
  std::string workflow;  // a job of a workflow: its name and run (" workflow=W run=R")
  int run = 0;
};

std::optional<Record> parse_record(const std::string &comment) {
  static const std::regex re(
      R"(autotune: class=([A-Za-z0-9._-]+)( \(shared\))?( trial=([0-9]+))?( best config=([A-Za-z0-9=,.-]+))?( mode=steps)?)");
  std::smatch m;
  if (!std::regex_search(comment, m, re)) return std::nullopt;
  Record r;
  r.cls = m[1];
  r.shared = m[2].matched;
  if (m[4].matched) r.trial = std::stoi(m[4]);
  if (m[6].matched) r.best = m[6];
  r.steps = m[7].matched;
  static const std::regex wre(R"( workflow=([A-Za-z0-9._-]+) run=([0-9]{1,9})$)");
  std::smatch w;
  if (std::regex_search(comment, w, wre)) {
    r.workflow = w[1];
    r.run = std::stoi(w[2]);
  }
  return r;
}

FILE *g_log = nullptr;
// Every line is escaped (log_escape): configurations, node names and error messages may quote
// what a user's file holds.
void log_line(const std::string &raw) {
  const std::string msg = log_escape(raw);
  char ts[32];
  const time_t now = time(nullptr);
  struct tm tm;
  localtime_r(&now, &tm);
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  if (g_log) {
    std::fprintf(g_log, "[%s] %s\n", ts, msg.c_str());
    std::fflush(g_log);
  }
  std::fprintf(stderr, "autotune ingest: %s\n", msg.c_str());
}

// One result file of the job: `name` in the open directory `dirfd` (the job owner's own), `path`
// for messages.
struct IncomingFile {
  int dirfd = -1;
  std::string name, path;
};

// The directories of incoming/ that hold the job owner's results, open (closed on destruction).
struct IncomingDirs {
  int top = -1;
  std::vector<int> fds;
  IncomingDirs() = default;
  IncomingDirs(const IncomingDirs &) = delete;
  IncomingDirs &operator=(const IncomingDirs &) = delete;
  ~IncomingDirs() {
    for (int fd : fds) ::close(fd);
    if (top >= 0) ::close(top);
  }
};

bool is_job_file(const std::string &n, std::uint32_t job) {
  const std::string a = std::to_string(job) + ".json", b = std::to_string(job) + ".", t = "." + b;
  const bool json = n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0;
  return n == a || (n.rfind(b, 0) == 0 && json) || n.rfind(t, 0) == 0;
}

std::vector<std::string> dir_names(int fd) {
  std::vector<std::string> out;
  const int d2 = ::dup(fd);
  if (d2 < 0) return out;
  DIR *d = fdopendir(d2);
  if (!d) {
    ::close(d2);
    return out;
  }
  while (struct dirent *e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  return out;
}

// The job's result files: <job>.json (mode jobs) and <job>.<n>.json (steps mode), taken only from
// incoming/<uid>/ and incoming/<uid>.*/ directories that belong to the job's owner and that no one
// else may write (opened without following links).  Anything else is never taken for the job's:
// a file of the job's name left in incoming/ itself (planted by another user, or by an older
// autotune-run) is removed, a directory of the owner's name that another user made is ignored.
// Files of the owner older than kIncomingStaleS are removed, and a directory beyond the limits of
// result.hpp is reported.
std::vector<IncomingFile> result_files(const std::string &incoming, std::uint32_t uid, std::uint32_t job,
                                       IncomingDirs &dirs, const std::string &who) {
  std::vector<IncomingFile> out;
  dirs.top = ::open(incoming.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirs.top < 0) return out;
  const std::string u = std::to_string(uid);
  const time_t now = time(nullptr);
  for (const std::string &n : dir_names(dirs.top)) {
    struct stat st;
    if (::fstatat(dirs.top, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      if (is_job_file(n, job)) {
        log_line(who + ": removed " + incoming + "/" + n + " (owned by uid " + std::to_string(st.st_uid) +
                 "): results are taken from " + incoming + "/" + u + "/ only");
        ::unlinkat(dirs.top, n.c_str(), 0);
      }
      continue;
    }
    if (n != u && n.rfind(u + ".", 0) != 0) continue;
    const int fd = ::openat(dirs.top, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    if (::fstat(fd, &st) != 0 || st.st_uid != uid || (st.st_mode & 022)) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      log_line(who + ": ignored " + incoming + "/" + n + ": owned by uid " + std::to_string(st.st_uid) + ", mode " +
               mode + " (not a directory only the job's user may write)");
      ::close(fd);
      continue;
    }
    dirs.fds.push_back(fd);
    std::size_t count = 0;
    unsigned long long bytes = 0;
    for (const std::string &f : dir_names(fd)) {
      struct stat fs;
      if (::fstatat(fd, f.c_str(), &fs, AT_SYMLINK_NOFOLLOW) != 0) continue;
      const std::string path = incoming + "/" + n + "/" + f;
      if (is_job_file(f, job) && f[0] != '.') {
        out.push_back({fd, f, path});
      } else if (now - fs.st_mtime > kIncomingStaleS) {
        if (::unlinkat(fd, f.c_str(), 0) == 0) {
          log_line(who + ": removed a stale file of uid " + u + ": " + path);
          continue;
        }
      }
      ++count;
      bytes += S_ISREG(fs.st_mode) ? static_cast<unsigned long long>(fs.st_size) : 0;
    }
    if (count > kMaxIncomingFiles || bytes > kMaxIncomingBytes)
      log_line(who + ": " + incoming + "/" + n + " holds " + std::to_string(count) + " files (" +
               std::to_string(bytes) + " bytes), beyond the limit of " + std::to_string(kMaxIncomingFiles) +
               " files and " + std::to_string(kMaxIncomingBytes) + " bytes");
  }
  // <job>.json first, then the steps in their order (numerically: 2 before 10), then the rest.
  const std::string a = std::to_string(job) + ".json", b = std::to_string(job) + ".";
  auto key = [&](const IncomingFile &x) {
    const std::string n = x.name.substr(b.size());
    const std::string mid = n.size() > 5 ? n.substr(0, n.size() - 5) : "";
    const bool digits = !mid.empty() && mid.size() < 10 && mid.find_first_not_of("0123456789") == std::string::npos;
    return std::make_tuple(x.name == a ? 0 : digits ? 1 : 2, digits ? std::stoll(mid) : 0LL, n);
  };
  std::sort(out.begin(), out.end(), [&](const IncomingFile &x, const IncomingFile &y) { return key(x) < key(y); });
  return out;
}

void remove_file(const IncomingFile &f) { ::unlinkat(f.dirfd, f.name.c_str(), 0); }

// Empty incoming/<uid>.*/ directories (made when incoming/<uid> was taken) go once used.
void remove_empty_dirs(const IncomingDirs &dirs, std::uint32_t uid) {
  if (dirs.top < 0) return;
  const std::string p = std::to_string(uid) + ".";
  for (const std::string &n : dir_names(dirs.top))
    if (n.rfind(p, 0) == 0) ::unlinkat(dirs.top, n.c_str(), AT_REMOVEDIR);
}

// A done trial's measurement under the class's metric: throughput (the samples per second the
// app reported) or time (the wall time of the app's whole run, as autotune-run timed it; the
// objective's T is then per job and samples_per_s stays 0, so that a class is never scored on a
// mix of both).  The ranks' CPU and memory use is kept either way when the app reported it.
Measurement measurement_of(const RunResult &r, const std::string &nodes, ClassMetric metric) {
  Measurement m;
  m.nodes = nodes;
  if (metric == ClassMetric::time) m.time_s = r.wall_s;
  if (!r.app) return m;
  const AppResult &a = *r.app;
  if (metric != ClassMetric::time) m.samples_per_s = a.samples_per_s;
  if (a.worker) {
    m.worker_cpu = a.worker->cpu_util_mean;
    m.worker_mem_mb = a.worker->peak_rss_mb_max;
  }
  if (a.server && a.server->ranks > 0) {
    m.server_cpu = a.server->cpu_util_mean;
    m.server_mem_mb = a.server->peak_rss_mb_max;
  }
  return m;
}

// What a successful run (status ok) measured: throughput when the app reported samples, else
// time.  The class's metric, fixed by its first measured trial when the class left it open.
ClassMetric metric_for(Store &store, const ClassRecord &c, const RunResult &r) {
  const bool reported = r.app && r.app->samples_per_s > 0;
  if (c.settings.metric != ClassMetric::automatic) return c.settings.metric;
  return store.fix_metric(c.id, reported ? ClassMetric::throughput : ClassMetric::time);
}

// A Slurm node name: letters, digits, '-', '_' and '.', at most 64 characters.
bool node_name_ok(const std::string &n) {
  if (n.empty() || n.size() > 64) return false;
  for (char ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') return false;
  return true;
}

// Per-node speed: each worker's throughput relative to the trial's median worker.  Only the nodes
// of the job's own allocation (Slurm's NodeList of the job, `job_nodes`) count: a rank that names
// any other node, or no valid node name, is left out with a log line, so a user's result can move
// the speeds of the nodes their job ran on only, and each of those by at most one update.
void record_node_speed(Store &store, const RunResult &r, double alpha, const std::string &job_nodes,
                       const std::string &who) {
  if (!r.app) return;
  const std::vector<std::string> list = expand_hostlist(job_nodes);
  const std::set<std::string> allowed(list.begin(), list.end());
  std::map<std::string, std::vector<double>> by_node;
  std::vector<double> all;
  std::set<std::string> refused;
  for (const auto &p : r.app->per_rank)
    if (p.role == "worker" && p.samples_per_s && *p.samples_per_s > 0 && !p.node.empty()) {
      if (!node_name_ok(p.node) || !allowed.count(p.node)) {
        if (refused.size() < 8) refused.insert(p.node.substr(0, 64));
        continue;
      }
      by_node[p.node].push_back(*p.samples_per_s);
      all.push_back(*p.samples_per_s);
    }
  if (!refused.empty()) {
    std::string names;
    for (const auto &n : refused) names += (names.empty() ? "" : ", ") + n;
    log_line(who + ": node speeds of nodes outside the job's allocation (" + job_nodes + ") ignored: " + names);
  }
  if (all.size() < 2 || by_node.size() < 2) return;  // nothing to compare against
  std::sort(all.begin(), all.end());
  const double median = all[all.size() / 2];
  if (!(median > 0)) return;
  for (auto &[node, v] : by_node) {
    double sum = 0;
    for (double x : v) sum += x;
    const double speed = std::clamp(sum / static_cast<double>(v.size()) / median, 0.0, 2.0);
    if (std::isfinite(speed)) store.update_node_speed(node, speed, alpha);
  }
}

// Pending trials whose job slurmctld no longer runs.  Slurm calls no epilog for a job that ends
// before it starts (cancelled while pending, deadline passed), so its trial would stay pending for
// ever, holding a configuration and a slot of the budget: it is dropped, and its configuration goes
// back to the search.  A job that ran and ended has its end in the spool; only when the spool is
// empty (every end recorded) is such a job's trial still pending, because its end never reached
// the spool (prep/autotune not loaded then): it is recorded from slurmctld's record now.  Runs only
// when the spool is empty.  Returns whether anything changed.
constexpr double kAbandonGraceS = 60;

int ingest_end(const Conf &conf, const JobFacts &f, bool reconcile);

bool reconcile_pending(const Conf &conf, Store &store, const ClassRecord &c, const std::string &who) {
  const std::vector<TrialRecord> trials = store.trials(c.id);
  bool any = false;
  for (const auto &t : trials) any = any || (t.status == TrialStatus::pending && !t.job_id);
  if (!any) return false;
  job_info_msg_t *msg = nullptr;
  const int rc = c.shared ? slurm_load_jobs(0, &msg, SHOW_ALL) : slurm_load_job_user(&msg, c.owner, SHOW_ALL);
  if (rc != SLURM_SUCCESS || !msg) {
    log_line(who + ": cannot list the class's jobs (" + slurm_strerror(slurm_get_errno()) +
             "); pending trials are left as they are");
    return false;
  }
  std::vector<TrialJob> jobs;
  std::vector<std::uint32_t> ran;  // ended after they started, with their trial still pending
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    const slurm_job_info_t &j = msg->job_array[i];
    const auto rec = parse_record(j.admin_comment ? j.admin_comment : "");
    if (!rec || rec->cls != c.name || rec->shared != c.shared) continue;
    if (of_a_forgotten_class(c, static_cast<double>(j.submit_time))) continue;
    const bool ended = (j.job_state & JOB_STATE_BASE) > JOB_SUSPENDED;
    // Slurm gives a job cancelled while pending a start time too, but never nodes.
    const bool started = j.start_time > 0 && j.nodes && *j.nodes;
    if (ended && started && rec->trial)
      for (const auto &t : trials)
        if (t.seq == *rec->trial && t.status == TrialStatus::pending) ran.push_back(j.job_id);
    jobs.push_back({rec->trial.value_or(0), j.job_id, ended && !started});
  }
  slurm_free_job_info_msg(msg);
  bool changed = false;
  for (const std::int64_t id : abandoned_trials(trials, jobs, static_cast<double>(time(nullptr)), kAbandonGraceS)) {
    for (const auto &t : trials)
      if (t.id == id) {
        bool named = false;
        for (const auto &j : jobs) named = named || j.seq == t.seq;
        log_line(who + ": trial " + std::to_string(t.seq) + " " + t.config + " dropped: " +
                 (named ? "its job ended before it started"
                        : "no job of slurmctld's runs it (the submission did not go through, or the job "
                          "ended before it started and was purged)") +
                 "; the configuration goes back to the search");
        store.drop_trial(id, named ? "its job ended before it started" : "no job of slurmctld runs it",
                         static_cast<double>(time(nullptr)));
      }
    changed = true;
  }
  for (const std::uint32_t id : ran) {
    log_line(who + ": job " + std::to_string(id) +
             " ended but its end never reached the spool; recorded from slurmctld's record");
    ingest_end(conf, load_job(id), false);
    changed = true;
  }
  return changed;
}

// The class's state after a change, for the log.
void log_refit(const std::string &who, const Decision &d) {
  std::string next;
  for (const auto &r : d.queue) next += (next.empty() ? "" : "; ") + r.config;
  log_line(who + ": class " + to_string(d.state) + (d.state_reason.empty() ? "" : " (" + d.state_reason + ")") +
           (next.empty() ? "" : "; next: " + next));
}

// A result file read, or why it could not be.
struct ReadResult {
  std::optional<RunResult> result;
  std::string error;  // rejected: why
};

ReadResult read_file(const IncomingFile &file, std::uint32_t uid) {
  ReadResult out;
  try {
    out.result = read_result_at(file.dirfd, file.name, file.path, uid);
  } catch (const Error &e) {
    out.error = e.what();
  }
  return out;
}

// Records one ended job: its trial (mode jobs), its steps' trials (mode steps), or the re-measure
// of a converged class's best; then refits the class.  Store errors propagate (the caller keeps
// the end for later); a bad result file is rejected with a log line.  `reconcile`: also look for
// pending trials of the class whose jobs ended (only when every end of the spool is recorded).
int ingest_end(const Conf &conf, const JobFacts &f, bool reconcile) {
  const std::uint32_t job_id = f.job_id;
  auto rec = parse_record(f.admin_comment);
  if (!rec) {
    log_line("job " + std::to_string(job_id) + ": no autotune record in its AdminComment (not tuned); nothing to do");
    return 0;
  }
  Store store(Store::path_in(conf.core.state_dir), {false, false, 10000});
  std::optional<ClassRecord> c = rec->shared ? store.find_shared_class(rec->cls) : store.find_class(f.uid, rec->cls);
  if (!c) {
    log_line("job " + std::to_string(job_id) + ": class " + rec->cls + " of uid " + std::to_string(f.uid) +
             " is gone (forgotten?); nothing recorded");
    return 0;
  }
  const std::string who = "job " + std::to_string(job_id) + " (class " + c->name + ", uid " + std::to_string(f.uid) + ")";
  // A job end of the spool's version 1 has no submit time: its start, later, stands for it.
  if (of_a_forgotten_class(*c, f.submit > 0 ? f.submit : f.start)) {
    log_line(who + ": submitted before the class was created (a forgotten class of the same name); nothing "
                   "recorded");
    return 0;
  }
  const std::string incoming = conf.core.state_dir + "/incoming";
  const double started = f.start > 0 ? f.start : static_cast<double>(time(nullptr));
  const double ended = f.end > 0 ? f.end : static_cast<double>(time(nullptr));

  // The trial job_submit recorded for this job.
  std::optional<TrialRecord> trial;
  if (rec->trial)
    for (const auto &t : store.trials(c->id))
      if (t.seq == *rec->trial) trial = t;
  const bool may_record = !c->shared || c->allow_users;

  if (!trial && !rec->best.empty() && may_record && f.start > 0 && !f.nodes.empty()) {
    // A job of a converged class re-measures its best: its trial is recorded now, outside
    // slurmctld (job_submit only read the store).
    trial = store.trial_by_job(job_id, std::nullopt);
    if (!trial)
      trial = store.add_trial(c->id, rec->best, TrialOrigin::best, "re-measures the winner", TrialStatus::running,
                              job_id);
  }
  if (trial && f.start > 0 && (trial->status == TrialStatus::pending || trial->status == TrialStatus::running))
    store.mark_running(trial->id, job_id, started);

  IncomingDirs dirs;
  std::vector<IncomingFile> files = result_files(incoming, f.uid, job_id, dirs, who);
  const ClassProblem problem = load_problem(*c);
  bool changed = false;

  std::optional<SearchSummary> search;
  std::map<std::string, double> tier_bytes;  // what the job's burst buffer held (a workflow's stage)
  if (rec->steps && !may_record) {
    // A shared class closed to users' measurements: what the job's steps measured is not taken
    // (the same rule as job_submit's for a job of mode jobs).
    if (!files.empty())
      log_line(who + ": the shared class is closed to users' measurements; " + std::to_string(files.size()) +
               " result file(s) of the job's steps not recorded");
    for (const auto &p : files) remove_file(p);
    files.clear();
  } else if (rec->steps) {
    // In-allocation tuning: one result per job step, each its own trial (see autotune-run), and
    // the end of the job's search.  Each file goes once the store took it.
    const std::string search_file = std::to_string(job_id) + ".search.json";
    for (const IncomingFile &file : files) {
      const std::string &path = file.path;
      if (file.name == search_file) {
        try {
          search = read_search_at(file.dirfd, file.name, path, f.uid);
        } catch (const Error &e) {
          log_line(who + ": rejected " + path + ": " + e.what());
        }
        remove_file(file);
        continue;
      }
      const ReadResult rr = read_file(file, f.uid);
      std::optional<Configuration> cfg;
      std::string bad = rr.error;
      if (bad.empty()) {
        try {
          const RunResult &r = *rr.result;
          if (!r.step) throw_invalid("result of a steps-mode job without its step number");
          cfg = Configuration::parse(r.config, "result config");
          if (!problem.index_of(cfg->format()))
            throw_invalid("configuration " + cfg->format() + " is outside the class's space");
        } catch (const Error &e) {
          bad = e.what();
        }
      }
      if (!bad.empty()) {
        log_line(who + ": rejected " + path + ": " + bad);
        remove_file(file);
        continue;
      }
      const RunResult &r = *rr.result;
      if (store.trial_by_job(job_id, *r.step)) {
        log_line(who + ": step " + std::to_string(*r.step) + " already recorded");
      } else {
        const TrialOrigin origin = !r.adjust_reason.empty() ? TrialOrigin::adjust
                                   : r.origin == "initial"       ? TrialOrigin::initial
                                   : r.origin == "manual"        ? TrialOrigin::manual
                                                                 : TrialOrigin::model;
        const std::string why = !r.adjust_reason.empty() ? r.adjust_reason
                                : r.origin == "manual"    ? "given to autotune-run (--try), profiled in the allocation"
                                                          : "profiled in the allocation";
        TrialRecord t = store.add_trial(c->id, cfg->format(), origin, why, TrialStatus::running, job_id, *r.step);
        const TrialStatus status = r.status == "ok" && r.app && r.app->samples_per_s > 0 ? TrialStatus::done
                                   : r.status == "timeout"                               ? TrialStatus::timeout
                                                                                         : TrialStatus::failed;
        std::optional<Measurement> m;
        if (status == TrialStatus::done) {
          m = measurement_of(r, f.nodes, metric_for(store, *c, r));
          TrialRecord tmp = t;
          tmp.measurement = m;
          if (auto tc = time_cost(problem, tmp)) {
            m->time_s = tc->time;
            m->cost = tc->cost;
          }
          m->raw = "";
          record_node_speed(store, r, conf.tuner.node_speed_alpha, f.nodes, who);
        }
        store.finish_trial(t.id, status, m, ended, r.reason);
        log_line(who + ": step " + std::to_string(*r.step) + " " + cfg->format() + ": " + to_string(status) +
                 (r.reason.empty() ? "" : " (" + r.reason + ")"));
        changed = true;
      }
      remove_file(file);
    }
  } else if (trial) {
    TrialStatus status = TrialStatus::failed;
    std::string why;
    std::optional<Measurement> m;
    std::optional<RunResult> result;
    const std::string mine_name = std::to_string(job_id) + ".json";
    const IncomingFile *mine = nullptr;
    for (const auto &file : files)
      if (!mine && file.name == mine_name) mine = &file;
    const bool interrupted = f.state == "CANCELLED" || f.state == "PREEMPTED" || f.state == "NODE_FAIL" ||
                             f.state == "BOOT_FAIL";
    if (f.requeued) {
      // The job runs again later: this run measured nothing that counts, and its trial waits.
      if (store.requeue_trial(trial->id)) {
        log_line(who + ": requeued; trial " + std::to_string(trial->seq) + " waits for the job's next run");
        changed = true;
      }
    } else if (f.state == "CANCELLED" && (f.start <= 0 || f.nodes.empty())) {
      if (trial->status == TrialStatus::pending) {
        store.drop_trial(trial->id, "its job was cancelled before it started", ended);
        log_line(who + ": cancelled before it started; trial " + std::to_string(trial->seq) + " dropped");
        changed = true;
      }
    } else {
      bool lost = false;
      if (!mine) {
        status = f.state == "TIMEOUT" ? TrialStatus::timeout : TrialStatus::failed;
        why = "the job left no result (state " + f.state + ")";
        // A job that completed without a result file: autotune-run could not write it (StateDir
        // full?) or it was removed.  Its configuration is not at fault.
        lost = f.state == "COMPLETED" && f.exit_code == 0;
      } else {
        const ReadResult rr = read_file(*mine, f.uid);
        if (!rr.error.empty()) {
          log_line(who + ": rejected its result file: " + rr.error);
          status = f.state == "TIMEOUT" ? TrialStatus::timeout : TrialStatus::failed;
          why = "its result was rejected";
        } else {
          const RunResult &r = *rr.result;
          tier_bytes = r.tier;
          const bool reported = r.app && r.app->samples_per_s > 0;
          const ClassMetric metric = r.status == "ok" ? metric_for(store, *c, r) : c->settings.metric;
          if (r.status == "ok" && metric == ClassMetric::throughput && !reported) {
            why = "the class is measured by throughput and the app reported no samples (AUTOTUNE_RESULT; see "
                  "docs/reporting.md), so this run cannot be compared with its other trials";
          } else if (r.status == "ok" && metric == ClassMetric::time && !(r.wall_s > 0)) {
            why = "the class is measured by time and the result has no wall time (wall_s)";
          } else if (r.status == "ok") {
            result = rr.result;
            status = TrialStatus::done;
            m = measurement_of(r, f.nodes, metric);
            TrialRecord tmp = *trial;
            tmp.measurement = m;
            if (auto tc = time_cost(problem, tmp)) {
              m->time_s = tc->time;
              m->cost = tc->cost;
            }
          } else {
            status = r.status == "timeout" ? TrialStatus::timeout : TrialStatus::failed;
            why = r.reason.empty() ? r.status : r.reason;
          }
        }
      }
      if (f.state == "TIMEOUT") status = TrialStatus::timeout;
      if (status != TrialStatus::done && (interrupted || lost)) {
        // Stopped from outside (cancelled, preempted, a node failed) or its result lost: not the
        // configuration's fault, so it is not counted and the configuration is not taken for
        // infeasible.
        const std::string note = lost                     ? "result lost: the job completed but left no result file"
                                 : f.state == "CANCELLED" ? "cancelled while running"
                                                          : "interrupted (" + f.state + ")";
        const std::string said = lost || f.state == "CANCELLED" ? note : f.state;
        if (store.finish_trial(trial->id, TrialStatus::cancelled, std::nullopt, ended, note))
          log_line(who + ": " + said + "; trial " + std::to_string(trial->seq) + " not counted");
        else
          log_line(who + ": trial " + std::to_string(trial->seq) + " was already recorded");
      } else if (store.finish_trial(trial->id, status, m, ended, why)) {
        if (result) record_node_speed(store, *result, conf.tuner.node_speed_alpha, f.nodes, who);
        log_line(who + ": trial " + std::to_string(trial->seq) + " " + trial->config + ": " + to_string(status) +
                 (why.empty() ? "" : " (" + why + ")") +
                 (!m                     ? ""
                  : m->samples_per_s > 0 ? " " + format_double(std::round(m->samples_per_s)) + " samples/s"
                                         : " " + format_double(std::round(m->time_s * 100) / 100) + " s (time)"));
      } else {
        log_line(who + ": trial " + std::to_string(trial->seq) + " was already recorded");
      }
      changed = true;
    }
    for (const auto &p : files) remove_file(p);
  } else {
    log_line(who + ": no trial was recorded at submission; nothing to do");
    for (const auto &p : files) remove_file(p);
  }
  remove_empty_dirs(dirs, f.uid);
  if (!rec->workflow.empty()) {
    // A function of a workflow: its class is not refitted on its own; the workflow's next run is
    // planned when this run's last function ended (workflow_plan.cc).
    if (trial)
      if (auto now = store.trial(trial->id))
        for (const std::string &line :
             workflow_job_ended(store, conf, f.uid, rec->workflow, rec->run, *now, job_id, tier_bytes))
          log_line(who + ": " + line);
    return 0;
  }
  if (reconcile && may_record && reconcile_pending(conf, store, *c, who)) changed = true;
  if (changed) {
    Decision d = refit(store, c->id, conf, propose, 20, prepare_warm_start);
    if (search && !search->winner.empty() && d.state == ClassState::tuning) {
      // The job's search stopped inside its allocation: the class converges on its winner.
      try {
        const std::string winner = Configuration::parse(search->winner, "search winner").format();
        const std::string reason = "stopped by " + search->stop_rule + " in the allocation of job " +
                                   std::to_string(job_id) + (search->reason.empty() ? "" : ": " + search->reason);
        d = converge(store, c->id, conf, propose, winner, job_id, search->stop_rule, reason);
      } catch (const Error &e) {
        log_line(who + ": the search's winner is not taken: " + e.what());
      }
    }
    log_refit(who, d);
  }
  try {  // the job is recorded: a failed prune is only logged (the next ingest tries again)
    if (auto p = prune_if_due(store, conf, static_cast<double>(time(nullptr)), prune_stamp_path(conf)); p && p->trials)
      log_line("retention: pruned " + std::to_string(p->trials) + " finished trials of " + std::to_string(p->classes) +
               " classes (TrialRetentionDays=" + std::to_string(conf.tuner.trial_retention_days) + ")");
  } catch (const Error &e) {
    log_line("retention: " + std::string(e.what()));
  }
  return 0;
}

// Reads one end of the spool; throws Error(invalid_argument) for a file that is not one.
JobEnd read_spool_file(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw Error(errno == ENOENT ? Errc::not_found : Errc::io, path + ": " + std::strerror(errno));
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > 8 * kJournalFieldMax) break;
  }
  ::close(fd);
  return parse_job_end(text, path);
}

// `autotune ingest --spool`: the ends of StateDir/spool, oldest first, each removed once the store
// took it.  One ingest at a time (a lock file); an outage of the store stops the run, the ends
// left wait for the next.  When the spool is empty at the end, the classes it touched are
// reconciled (pending trials whose jobs ended).
int drain_spool(const Conf &conf) {
  const std::string spool = spool_dir(conf.core.state_dir);
  const int lock = ::open((spool + "/.lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock < 0) {
    if (errno == ENOENT) return 0;  // no spool yet: nothing ever ended
    log_line(spool + "/.lock: " + std::strerror(errno));
    return 1;
  }
  if (::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock);
    return 0;  // another ingest drains it, and looks again before it stops
  }
  int rc = 0;
  std::size_t done = 0;
  std::map<std::string, JobFacts> touched;  // class record -> the latest end of it
  for (bool again = true; again;) {
    again = false;
    const std::vector<std::string> names = list_job_ends(spool);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string path = spool + "/" + names[i];
      JobFacts f;
      try {
        f = facts_of(read_spool_file(path));
      } catch (const Error &e) {
        if (e.code() == Errc::not_found) continue;  // taken by an earlier ingest
        // Not a job end: kept aside for the admin, never taken again.
        const std::string bad = spool + "/bad";
        ::mkdir(bad.c_str(), 0700);
        ::rename(path.c_str(), (bad + "/" + names[i]).c_str());
        log_line(std::string("spool: ") + e.what() + "; moved to " + bad + "/");
        continue;
      }
      try {
        ingest_end(conf, f, false);
      } catch (const Error &e) {
        if (store_outage(e)) {
          log_line("job " + std::to_string(f.job_id) + ": its end waits in the spool with " +
                   std::to_string(names.size() - i - 1) + " more: " + e.what() + "; " + outage_advice(e));
          ::close(lock);
          return 1;
        }
        log_line("job " + std::to_string(f.job_id) + ": " + e.what() + "; its end is not recorded");
      }
      ::unlink(path.c_str());
      ++done;
      if (auto rec = parse_record(f.admin_comment)) touched[std::to_string(f.uid) + "/" + rec->cls] = f;
      again = true;  // ends that arrived meanwhile are taken before the lock is let go
    }
  }
  // Every end is recorded: pending trials of the touched classes whose jobs are over.
  for (auto &[key, f] : touched) {
    try {
      Store store(Store::path_in(conf.core.state_dir), {false, false, 10000});
      const auto rec = parse_record(f.admin_comment);
      std::optional<ClassRecord> c = rec->shared ? store.find_shared_class(rec->cls) : store.find_class(f.uid, rec->cls);
      if (!c || (c->shared && !c->allow_users)) continue;
      const std::string who = "job " + std::to_string(f.job_id) + " (class " + c->name + ", uid " + std::to_string(f.uid) + ")";
      if (reconcile_pending(conf, store, *c, who)) log_refit(who, refit(store, c->id, conf, propose, 20, prepare_warm_start));
    } catch (const Error &e) {
      log_line("class " + key + ": pending trials not looked at: " + e.what());
      rc = 1;
    }
  }
  ::close(lock);
  if (done > 1 && rc == 0) log_line("spool: " + std::to_string(done) + " job ends recorded in one run; the spool is empty");
  return rc;
}

}  // namespace

int cmd_ingest(const Caller &caller, int argc, char **argv) {
  Args a(argc - 1, argv + 1, {"job"}, {"help", "spool"}, "autotune ingest");
  if (a.flag("help")) {
    std::printf(
        "usage: autotune ingest --spool | --job ID   (root and SlurmUser only)\n\n"
        "Record how autotune jobs ended and refit their classes.\n"
        "  --spool   take the job ends slurmctld's prep/autotune plugin left in StateDir/spool, oldest\n"
        "            first, each once; the plugin runs this itself after every end.  When the store\n"
        "            cannot take an end (locked, full, damaged) it and the later ones wait there for\n"
        "            the plugin's next try.\n"
        "  --job ID  record job ID's end from slurmctld's record of it (by hand, for a job that\n"
        "            ended while prep/autotune was not loaded); a job still running is left alone.\n"
        "The job's owner, class and trial come from Slurm's record of the job; the result file the\n"
        "job left in StateDir/incoming/UID (a directory only the job's user may write) is checked\n"
        "(owner, size, format) and rejected with a log line when bad; node speeds count for the\n"
        "job's own nodes only.\n"
        "Log: StateDir/ingest.log.\n");
    return 0;
  }
  a.expect_positional(0, "");
  require_privileged(caller, "autotune ingest");
  const bool spool = a.flag("spool");
  std::uint32_t job = 0;
  if (auto v = a.value("job")) job = static_cast<std::uint32_t>(parse_int("--job", *v, 1, 4294967294LL));
  if (spool == (job != 0)) throw_invalid("give either --spool or --job ID");
  const Conf conf = load_conf(caller);
  g_log = std::fopen((conf.core.state_dir + "/ingest.log").c_str(), "a");
  int rc = 0;
  if (spool) {
    try {
      rc = drain_spool(conf);
    } catch (const Error &e) {
      log_line(std::string("spool: ") + e.what());
      rc = 1;
    }
  } else {
    try {
      const JobFacts f = load_job(job);
      if (!f.ended) {
        log_line("job " + std::to_string(job) + ": still " + f.state + "; its end is recorded when it ends");
      } else {
        rc = ingest_end(conf, f, list_job_ends(spool_dir(conf.core.state_dir)).empty());
      }
    } catch (const Error &e) {
      log_line("job " + std::to_string(job) + ": " + e.what() + (store_outage(e) ? "; " + outage_advice(e) : ""));
      rc = 1;
    }
  }
  if (g_log) std::fclose(g_log);
  return rc;
}

}  // namespace autotune::cli
