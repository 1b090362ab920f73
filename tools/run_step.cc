#include "run_step.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/rank_report.hpp"
#include "autotune/result.hpp"
#include "autotune/units.hpp"

namespace autotune {

namespace {

volatile sig_atomic_t g_child_pgid = 0;
volatile sig_atomic_t g_forwarded = 0;

void forward(int sig) {
  g_forwarded = sig;
  if (g_child_pgid > 0) kill(-g_child_pgid, sig);
}

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

const char *getenv_any(const char *k) {
  if (const char *v = std::getenv(k); v && *v) return v;
  const std::string s = std::string("SLURM_SPANK_") + k;
  const char *v = std::getenv(s.c_str());
  return v && *v ? v : nullptr;
}

std::string scratch_dir() {
  const char *t = std::getenv("TMPDIR");
  std::string base = t && *t ? t : "/tmp";
  std::string tmpl = base + "/autotune-run.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw_io("cannot create a scratch directory in " + base, errno);
  return buf.data();
}

// The ranks' reports of a helper ($AUTOTUNE_RESULT.rank.<R>, rank_report.hpp) in `dir`, merged
// into the app's result; nullopt when there is none.  A malformed report is left out, saying so.
std::optional<nlohmann::json> merged_rank_reports(const std::string &dir, const std::string &result_name,
                                                  int expected_workers) {
  std::vector<RankReport> ranks;
  DIR *d = opendir(dir.c_str());
  if (!d) return std::nullopt;
  const std::string prefix = result_name + ".rank.";
  std::vector<std::string> names;
  while (struct dirent *e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.rfind(prefix, 0) == 0 && n.find(".tmp") == std::string::npos) names.push_back(n);
  }
  closedir(d);
  for (const auto &n : names) {
    const std::string path = dir + "/" + n;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(path.c_str());
    try {
      ranks.push_back(parse_rank_report(text.str()));
    } catch (const Error &e) {
      std::fprintf(stderr, "autotune-run: %s: %s; left out\n", n.c_str(), e.what());
    }
  }
  if (ranks.empty()) return std::nullopt;
  return nlohmann::json::parse(merge_rank_reports(ranks, expected_workers));
}

// The scratch files a rank's helper may leave besides its report (FILE.rank.R.tmp.PID).
void remove_all_in(const std::string &dir) {
  DIR *d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (struct dirent *e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  for (const auto &n : names) std::remove((dir + "/" + n).c_str());
}

}  // namespace

bool inside_step() {
  // srun sets SLURM_STEP_ID for the tasks of a step; the batch script and salloc's shell have none.
  const char *s = std::getenv("SLURM_STEP_ID");
  return s && *s;
}

int step_wait_s() {
  const char *v = std::getenv("AUTOTUNE_STEP_WAIT");
  if (!v || !*v) return kStepWaitS;
  return static_cast<int>(parse_int("AUTOTUNE_STEP_WAIT", v, 1, 86400));
}

const char *to_string(StepStatus s) {
  switch (s) {
    case StepStatus::ok: return "ok";
    case StepStatus::failed: return "failed";
    case StepStatus::timeout: return "timeout";
  }
  return "?";
}

std::string StepOutcome::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s after %.1f s", to_string(status), wall_s);
  std::string s = buf;
  if (!reason.empty()) s += ": " + reason;
  if (app_result && app_result->contains("samples_per_s") && (*app_result)["samples_per_s"].is_number())
    s += " (" + std::to_string(static_cast<long long>((*app_result)["samples_per_s"].get<double>())) + " samples/s)";
  else if (status == StepStatus::ok)
    s += " (the app reported nothing: measured by its wall time)";
  return s;
}

namespace {

// A whole number 1..1<<20, or 0.
long parse_count(const std::string &s) {
  if (s.empty() || s.size() > 7 || s.find_first_not_of("0123456789") != std::string::npos) return 0;
  const long v = std::stol(s);
  return v >= 1 && v <= (1L << 20) ? v : 0;
}

// SLURM_JOB_CPUS_PER_NODE ("2(x3),1": 2 CPUs on each of 3 nodes, then 1): the total, or 0.
long total_cpus(const std::string &s) {
  long total = 0;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(pos, end - pos);
    long times = 1;
    if (const std::size_t open = item.find("(x"); open != std::string::npos) {
      if (item.back() != ')') return 0;
      times = parse_count(item.substr(open + 2, item.size() - open - 3));
      item = item.substr(0, open);
    }
    const long cpus = parse_count(item);
    if (cpus == 0 || times == 0) return 0;
    total += cpus * times;
    if (total > (1L << 20)) return 0;
    pos = end + 1;
  }
  return total;
}

}  // namespace

UntunedRanks untuned_ranks(const char *ntasks, const char *cpus_per_node, const char *ps) {
  UntunedRanks u;
  const std::string nt = ntasks ? ntasks : "", cpn = cpus_per_node ? cpus_per_node : "", p = ps ? ps : "";
  long ranks = 0;
  long cpus = total_cpus(cpn);
  if (!nt.empty() && (ranks = parse_count(nt)) > 0) {
    u.why = "the job's " + std::to_string(ranks) + " tasks";
  } else if (cpus > 0) {
    ranks = cpus;
    u.why = "one task per CPU of the allocation (" + std::to_string(cpus) + ")";
  } else {
    u.why = "no task count in SLURM_NTASKS or SLURM_JOB_CPUS_PER_NODE";
  }
  if (ranks < 2) {
    u.overcommit = true;
    u.why += ", at least 2: a parameter server and a worker share the allocation";
    ranks = 2;
  }
  u.ranks = static_cast<int>(ranks);
  u.servers = 1;
  if (!p.empty()) {
    const long want = parse_count(p);
    if (want == 0) {
      u.why += "; AUTOTUNE_PS='" + p + "' is not a whole number from 1, ignored";
    } else if (want >= ranks) {
      u.servers = u.ranks - 1;
      u.why += "; AUTOTUNE_PS=" + p + " leaves no worker: " + std::to_string(u.servers) + " servers";
    } else {
      u.servers = static_cast<int>(want);
    }
  }
  return u;
}

std::vector<std::string> srun_command(const StepRequest &req) {
  std::vector<std::string> cmd = {"srun", "--mpi=pmix", "--kill-on-bad-exit=1"};
  if (!req.config && req.untuned) {
    cmd.push_back("--ntasks=" + std::to_string(req.untuned->ranks));
    if (req.untuned->overcommit) cmd.push_back("--overcommit");
  }
  // Called from a step (srun autotune-run ...; Snakemake's `srun -n1 ... snakemake --jobstep`):
  // that step holds the allocation's CPUs (and memory), so a step of our own would wait for ever
  // ("step creation temporarily disabled ... Requested nodes are busy"); share them with it
  // (--overlap), and never wait longer than step_wait_s() for Slurm to create the step
  // (--immediate): srun then fails, and run_step() says why.
  if (inside_step()) {
    cmd.push_back("--overlap");
    cmd.push_back("--immediate=" + std::to_string(step_wait_s()));
  }
  if (req.config) {
    const SlurmRequest r = slurm_request(*req.config);
    cmd.push_back("--nodes=" + std::to_string(r.nodes));
    cmd.push_back("--ntasks=" + std::to_string(r.ntasks));
    cmd.push_back("--cpus-per-task=" + std::to_string(r.cpus_per_task));
    // From inside a step, no memory request: Slurm 22.05 counts the enclosing step's memory
    // against a --mem-per-cpu step even with --overlap ("Memory required by task is not
    // available"); the step then has the job's memory, which job_submit set to the configuration's.
    if (!inside_step()) cmd.push_back("--mem-per-cpu=" + std::to_string(r.mem_per_cpu_mb));
    cmd.push_back("--distribution=block");
    if (r.gpus_per_task > 0) cmd.push_back("--gpus-per-task=" + std::to_string(r.gpus_per_task));
  }
  if (!req.name.empty()) cmd.push_back("--job-name=" + req.name);
  cmd.insert(cmd.end(), req.app.begin(), req.app.end());
  return cmd;
}

StepOutcome run_step(const StepRequest &req) {
  StepOutcome out;
  const std::string dir = scratch_dir();
  const std::string result_path = dir + "/result.json";
  std::vector<std::string> cmd = srun_command(req);

  std::string line;
  for (const auto &w : cmd) line += w + " ";
  std::fprintf(stderr, "autotune-run: $ %s\n", line.c_str());

  struct sigaction sa {};
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int, old_term;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  // srun's stderr passes through this process, which watches it for Slurm's step-creation
  // messages (the step could not be created, or waits for resources).
  int errpipe[2] = {-1, -1};
  if (::pipe2(errpipe, O_CLOEXEC) != 0) errpipe[0] = errpipe[1] = -1;
  const double start = now_s();
  const pid_t pid = fork();
  if (pid < 0) {
    out.reason = std::string("cannot fork: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    if (errpipe[1] >= 0) ::dup2(errpipe[1], 2);
    setpgid(0, 0);
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    setenv("AUTOTUNE_RESULT", result_path.c_str(), 1);
#ifdef AUTOTUNE_PYTHONDIR
    {
      // The Python helper (slurm_autotune) where `make install' put it, for any prefix.
      const char *pp = std::getenv("PYTHONPATH");
      const std::string v = std::string(AUTOTUNE_PYTHONDIR) + (pp && *pp ? std::string(":") + pp : "");
      setenv("PYTHONPATH", v.c_str(), 1);
    }
#endif
    if (req.config) {
      setenv("AUTOTUNE_PS", std::to_string(req.config->counts.servers).c_str(), 1);
      setenv("AUTOTUNE_WORKERS", std::to_string(req.config->counts.workers).c_str(), 1);
      setenv("AUTOTUNE_CONFIG", req.config->format().c_str(), 1);
    } else if (req.untuned) {
      setenv("AUTOTUNE_PS", std::to_string(req.untuned->servers).c_str(), 1);
      setenv("AUTOTUNE_WORKERS", std::to_string(req.untuned->ranks - req.untuned->servers).c_str(), 1);
    }
    for (const auto &k : req.unset) unsetenv(k.c_str());
    if (inside_step())  // srun would take the enclosing step's memory request for its own
      for (const char *k : {"SLURM_MEM_PER_CPU", "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_GPU"}) unsetenv(k);
    for (const auto &[k, v] : req.env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char *> argv;
    for (auto &w : cmd) argv.push_back(const_cast<char *>(w.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "autotune-run: cannot run srun: %s\n", std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  g_child_pgid = pid;
  if (errpipe[1] >= 0) {
    ::close(errpipe[1]);
    ::fcntl(errpipe[0], F_SETFL, O_NONBLOCK);
  }
  std::string err_line;     // srun's stderr, the current line
  std::string step_error;   // "Unable to create step ...", if srun said so
  bool told_wait = false;
  auto pump = [&] {
    if (errpipe[0] < 0) return;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(errpipe[0], buf, sizeof buf);
      if (n <= 0) break;
      std::size_t off = 0;
      while (off < static_cast<std::size_t>(n)) {
        const ssize_t w = ::write(2, buf + off, static_cast<std::size_t>(n) - off);
        if (w <= 0) break;
        off += static_cast<std::size_t>(w);
      }
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] != '\n') {
          if (err_line.size() < 1024) err_line += buf[i];
          continue;
        }
        if (err_line.find("Unable to create step") != std::string::npos) step_error = err_line;
        if (!told_wait && err_line.find("step creation temporarily disabled") != std::string::npos) {
          told_wait = true;
          std::fprintf(stderr,
                       "autotune-run: Slurm cannot create the app's step yet; waiting at most %d s (AUTOTUNE_STEP_WAIT)\n",
                       step_wait_s());
        }
        err_line.clear();
      }
    }
  };

  int status = 0;
  bool timed_out = false;
  double kill_at = 0;
  for (;;) {
    pump();
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    const double t = now_s() - start;
    if (req.timeout_s && !timed_out && t > *req.timeout_s) {
      timed_out = true;
      std::fprintf(stderr, "autotune-run: step exceeded %s %.0f s: stopping it\n", req.timeout_name.c_str(), *req.timeout_s);
      kill(-pid, SIGTERM);
      kill_at = t + 10;
    }
    if (timed_out && kill_at > 0 && t > kill_at) {
      kill(-pid, SIGKILL);
      kill_at = 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  pump();
  if (errpipe[0] >= 0) ::close(errpipe[0]);
  g_child_pgid = 0;
  out.cancelled = g_forwarded != 0;
  g_forwarded = 0;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  out.wall_s = now_s() - start;

  // What libssp measured (rank 0 writes it), if anything.
  {
    std::ifstream in(result_path);
    if (in) {
      try {
        out.app_result = nlohmann::json::parse(in);
      } catch (const std::exception &e) {
        std::fprintf(stderr, "autotune-run: the app's result file is not valid JSON: %s\n", e.what());
      }
    }
  }
  if (!out.app_result)
    out.app_result = merged_rank_reports(dir, "result.json", req.config ? req.config->counts.workers : 0);
  remove_all_in(dir);
  rmdir(dir.c_str());

  if (timed_out) {
    out.status = StepStatus::timeout;
    out.exit_code = 124;
    out.reason = "exceeded the timeout of " + std::to_string(static_cast<long long>(*req.timeout_s)) + " s (" +
                 req.timeout_name + ")";
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    out.exit_code = 128 + out.signal;
    out.reason = std::string("killed by signal ") + strsignal(out.signal);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && !step_error.empty()) {
    out.exit_code = WEXITSTATUS(status);
    const std::size_t colon = step_error.find(": ", step_error.find("Unable to create step"));
    const std::string why = colon == std::string::npos ? step_error : step_error.substr(colon + 2);
    out.reason = "Slurm could not create the app's job step (" + why + ")" +
                 (inside_step() ? " within " + std::to_string(step_wait_s()) +
                                      " s (AUTOTUNE_STEP_WAIT): the enclosing step (srun ... autotune-run, e.g. "
                                      "Snakemake's srun -n1 ... snakemake --jobstep) holds resources the app's step "
                                      "cannot share; the app did not run"
                                : ": the app did not run");
    std::fprintf(stderr, "autotune-run: %s\n", out.reason.c_str());
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    out.exit_code = WEXITSTATUS(status);
    // srun reports a task killed by a signal as 128+signal (137: SIGKILL, e.g. out of memory).
    if (out.exit_code == 137) out.reason = "a task was killed (SIGKILL: out of memory, or cancelled)";
    else if (out.exit_code > 128 && out.exit_code < 160)
      out.reason = std::string("a task was killed by signal ") + strsignal(out.exit_code - 128);
    else out.reason = "the app exited with status " + std::to_string(out.exit_code);
  } else if (out.cancelled) {
    out.exit_code = 128 + SIGTERM;
    out.reason = "cancelled";
  } else {
    out.exit_code = 0;
    out.status = StepStatus::ok;  // without a report, measured by its wall time (result.hpp)
  }
  return out;
}

nlohmann::json outcome_json(const StepOutcome &out, const StepRequest &req) {
  nlohmann::json j = {{"format", "autotune-run/1"},
                      {"status", to_string(out.status)},
                      {"exit_code", out.exit_code},
                      {"signal", out.signal},
                      {"reason", out.reason},
                      {"wall_s", out.wall_s},
                      {"config", req.config ? req.config->format() : std::string()},
                      {"app", out.app_result ? *out.app_result : nlohmann::json()}};
  return j;
}

namespace {

// Opens `name` in `parent` (not following a link) when it is a directory of this user's, made
// mode 0755; -1 otherwise.
int open_own_dir(int parent, const std::string &name) {
  const int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_uid != ::getuid()) {
    ::close(fd);
    return -1;
  }
  // 0755: ingest (SlurmUser) reads it, no one else writes it.
  if ((st.st_mode & 07777) != 0755 && ::fchmod(fd, 0755) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// This user's directory in incoming/: incoming/<uid>, made mode 0755 when missing; when another
// user took that name, a new incoming/<uid>.XXXXXX of this user's (ingest looks in both).
// Returns it open and its path.
std::pair<int, std::string> user_dir(const std::string &incoming) {
  // O_PATH: users may search incoming/ (mode 1733) but not read it.
  const int parent = ::open(incoming.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) throw_io("cannot open " + incoming, errno);
  const std::string u = std::to_string(::getuid());
  if (::mkdirat(parent, u.c_str(), 0755) != 0 && errno != EEXIST) {
    const int e = errno;
    ::close(parent);
    throw_io("cannot create " + incoming + "/" + u, e);
  }
  int fd = open_own_dir(parent, u);
  std::string path = incoming + "/" + u;
  if (fd < 0) {
    std::fprintf(stderr, "autotune-run: %s is not a directory of this user's only; using a new one\n", path.c_str());
    std::string tmpl = incoming + "/" + u + ".XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      const int e = errno;
      ::close(parent);
      throw_io("cannot create a directory in " + incoming, e);
    }
    path = buf.data();
    fd = open_own_dir(parent, path.substr(incoming.size() + 1));
    if (fd < 0) {
      ::close(parent);
      throw Error(Errc::permission, path + ": not a directory of this user's");
    }
  }
  ::close(parent);
  return {fd, path};
}

// What the user has left in `fd`: stale files (older than kIncomingStaleS) are removed; beyond
// the limits of result.hpp no more is added.
void check_room(int fd, const std::string &path) {
  const int d2 = ::dup(fd);
  DIR *d = d2 < 0 ? nullptr : fdopendir(d2);
  if (!d) {
    if (d2 >= 0) ::close(d2);
    return;
  }
  const time_t now = time(nullptr);
  std::size_t count = 0;
  unsigned long long bytes = 0;
  while (struct dirent *e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st;
    if (::fstatat(fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (now - st.st_mtime > kIncomingStaleS && ::unlinkat(fd, n.c_str(), 0) == 0) continue;
    ++count;
    if (S_ISREG(st.st_mode)) bytes += static_cast<unsigned long long>(st.st_size);
  }
  closedir(d);
  if (count >= kMaxIncomingFiles || bytes >= kMaxIncomingBytes)
    throw Error(Errc::invalid_argument,
                path + " holds " + std::to_string(count) + " files (" + std::to_string(bytes >> 20) +
                    " MiB): the limit is " + std::to_string(kMaxIncomingFiles) + " files and " +
                    std::to_string(kMaxIncomingBytes >> 20) + " MiB; remove the files of jobs that have ended");
}

}  // namespace

namespace {

std::string leave_result_once(const nlohmann::json &doc, const std::string &name) {
  std::string incoming;
  if (const char *d = getenv_any("AUTOTUNE_INCOMING")) {
    incoming = d;
  } else {
    Conf conf = Conf::defaults();
    const std::string p = Conf::default_path();
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) conf = Conf::load(p);
    incoming = conf.core.state_dir + "/incoming";
  }
  // The result goes in a directory only this user may write, so no other user can plant a file
  // of this job's name or stop this one from being left (see result.hpp).
  const auto [dfd, dir] = user_dir(incoming);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{dfd};
  check_room(dfd, dir);
  const std::string final_name = name + ".json";
  const std::string tmp_name = "." + name + ".json." + std::to_string(getpid());
  const std::string path = dir + "/" + final_name, tmp = dir + "/" + tmp_name;
  ::unlinkat(dfd, tmp_name.c_str(), 0);
  const int fd = ::openat(dfd, tmp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw_io("cannot create " + tmp, errno);
  const std::string text = doc.dump() + "\n";
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlinkat(dfd, tmp_name.c_str(), 0);
      throw_io("cannot write " + tmp, e);
    }
    off += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  ::fsync(fd);
  ::close(fd);
  if (::renameat(dfd, tmp_name.c_str(), dfd, final_name.c_str()) != 0) {
    const int e = errno;
    ::unlinkat(dfd, tmp_name.c_str(), 0);
    throw_io("cannot rename " + tmp + " to " + path, e);
  }
  return path;
}

}  // namespace

std::string leave_result(const nlohmann::json &doc, const std::string &name) {
  // StateDir full or failing for a while: the result is kept (in memory) and tried again every
  // 2 s for AUTOTUNE_RESULT_RETRY seconds (default 120) before it is given up.  Ingest records
  // a completed job whose result never came as "result lost", not as failed.
  long retry_s = 120;
  if (const char *r = std::getenv("AUTOTUNE_RESULT_RETRY"))
    retry_s = static_cast<long>(parse_int("AUTOTUNE_RESULT_RETRY", r, 0, 3600));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(retry_s);
  bool told = false;
  for (;;) {
    try {
      std::string path = leave_result_once(doc, name);
      if (told) std::fprintf(stderr, "autotune-run: the result could be left after all\n");
      return path;
    } catch (const Error &e) {
      if (e.code() != Errc::io || std::chrono::steady_clock::now() >= deadline) throw;
      if (!told)
        std::fprintf(stderr, "autotune-run: cannot leave the result for ingest yet (%s); trying again for %ld s\n",
                     e.what(), retry_s);
      told = true;
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
  }
}

}  // namespace autotune
