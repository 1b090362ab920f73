#include "run_step.hpp"

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
#include <fstream>
#include <sstream>
#include <thread>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"

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

}  // namespace

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
  return s;
}

std::vector<std::string> srun_command(const StepRequest &req) {
  std::vector<std::string> cmd = {"srun", "--mpi=pmix", "--kill-on-bad-exit=1"};
  if (req.config) {
    const SlurmRequest r = slurm_request(*req.config);
    cmd.push_back("--nodes=" + std::to_string(r.nodes));
    cmd.push_back("--ntasks=" + std::to_string(r.ntasks));
    cmd.push_back("--cpus-per-task=" + std::to_string(r.cpus_per_task));
    cmd.push_back("--mem-per-cpu=" + std::to_string(r.mem_per_cpu_mb));
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

  const double start = now_s();
  const pid_t pid = fork();
  if (pid < 0) {
    out.reason = std::string("cannot fork: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    setpgid(0, 0);
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    setenv("AUTOTUNE_RESULT", result_path.c_str(), 1);
    if (req.config) {
      setenv("AUTOTUNE_PS", std::to_string(req.config->counts.servers).c_str(), 1);
      setenv("AUTOTUNE_WORKERS", std::to_string(req.config->counts.workers).c_str(), 1);
      setenv("AUTOTUNE_CONFIG", req.config->format().c_str(), 1);
    }
    for (const auto &k : req.unset) unsetenv(k.c_str());
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

  int status = 0;
  bool timed_out = false;
  double kill_at = 0;
  for (;;) {
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
  std::remove(result_path.c_str());
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
    out.status = StepStatus::ok;
    if (!out.app_result) {
      out.status = StepStatus::failed;
      out.reason = "the app ended without writing its measurements to AUTOTUNE_RESULT (is it linked with libssp?)";
    }
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

std::string leave_result(const nlohmann::json &doc, const std::string &name) {
  std::string dir;
  if (const char *d = getenv_any("AUTOTUNE_INCOMING")) {
    dir = d;
  } else {
    Conf conf = Conf::defaults();
    const std::string p = Conf::default_path();
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) conf = Conf::load(p);
    dir = conf.core.state_dir + "/incoming";
  }
  const std::string path = dir + "/" + name + ".json";
  const std::string tmp = dir + "/." + name + ".json." + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw_io("cannot create " + tmp, errno);
  const std::string text = doc.dump() + "\n";
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw_io("cannot write " + tmp, e);
    }
    off += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw_io("cannot rename " + tmp + " to " + path, e);
  }
  return path;
}

}  // namespace autotune
