// autotune-run: the in-job launcher of slurm-autotune.
//
//   autotune-run [OPTIONS] [--] APP [ARGS...]
//
// Mode jobs (the default): the job was submitted with --autotune=CLASS and job_submit/autotune
// gave it one configuration (AUTOTUNE_CONFIG in its environment).  autotune-run launches APP on
// it as one MPI step (srun --mpi=pmix with the configuration's nodes, ranks, CPUs and memory,
// and AUTOTUNE_PS), collects what libssp measured, and leaves the result in the store's
// incoming/ directory, where `autotune ingest` picks it up when the job ends.  An APP that fails,
// is killed, runs out of memory or exceeds --timeout is reported as a failed trial.
//
// Mode steps (--autotune-mode=steps, AUTOTUNE_MODE=steps): the job holds an upper-bound
// allocation and tunes inside it (steps_mode.hpp): it profiles the first K batches of several
// configurations as short job steps, stops by rule, shrinks to the winner and runs APP on it.
// A job of a class that already converged gets the winner from job_submit (AUTOTUNE_CONFIG) and
// runs as in mode jobs.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotune/conf.hpp"
#include "autotune/config.hpp"
#include "autotune/error.hpp"
#include "autotune/names.hpp"
#include "autotune/store.hpp"
#include "autotune/units.hpp"
#include "run_step.hpp"
#include "steps_mode.hpp"

using namespace autotune;
using nlohmann::json;

namespace {

// The bytes each medium of the job's tiered burst buffer holds (AUTOTUNE_BB_JOB set by
// burst_buffer.lua): the sum over the objects `autotune-bb ls` lists ("KEY SIZE TIER=N ... STATE"),
// by tier.  Empty without a buffer or when autotune-bb cannot list it.
std::map<std::string, double> buffer_bytes() {
  std::map<std::string, double> out;
  const char *bb = std::getenv("AUTOTUNE_BB_JOB");
  if (!bb || !*bb) return out;
  std::string exe = "autotune-bb";
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    std::string dir = self;
    dir = dir.substr(0, dir.rfind('/'));
    if (::access((dir + "/autotune-bb").c_str(), X_OK) == 0) exe = dir + "/autotune-bb";
  }
  FILE *p = ::popen((exe + " ls 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char line[8192];
  while (std::fgets(line, sizeof line, p)) {
    std::istringstream in(line);
    std::string word;
    in >> word >> word;  // key, size
    while (in >> word) {
      const std::size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      const std::string tier = word.substr(0, eq), v = word.substr(eq + 1);
      if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) continue;
      out[tier] += std::stod(v);
    }
  }
  ::pclose(p);
  return out;
}

const char kUsage[] =
    "usage: autotune-run [OPTIONS] [--] APP [ARGS...]\n\n"
    "Run APP, any program (an MPI or PyTorch training program, a script), inside a job submitted\n"
    "with --autotune=CLASS, on the configuration slurm-autotune chose for the job, and leave what\n"
    "it measured for the class's next decision: the samples per second it reports (libssp, or a\n"
    "helper of docs/reporting.md: slurm_autotune.Profiler, at_report(), autotune-report), else the\n"
    "wall time of its run (--autotune-metric).  APP exiting non-zero is a failed trial.\n\n"
    "From the batch script or from inside a step alike: `srun autotune-run APP' launches APP once,\n"
    "from the step's task 0, with a step of its own that shares the enclosing step's resources\n"
    "(srun --overlap); the other tasks exit at once.  So does a workflow manager's step (Snakemake's\n"
    "srun -n1 ... snakemake --jobstep).  From inside a step srun waits at most AUTOTUNE_STEP_WAIT\n"
    "seconds (default 60) for Slurm to create the app's step (srun --immediate); when it cannot,\n"
    "autotune-run says why and fails (a failed trial) instead of waiting until the time limit.\n\n"
    "With --autotune-mode=steps the job tunes itself inside its allocation: submit it with an\n"
    "upper bound (e.g. sbatch -N4 --exclusive --mem=0); autotune-run profiles the first K batches\n"
    "of the class's configurations that fit as job steps (srun --mpi=pmix -N -n -c --mem-per-cpu,\n"
    "AUTOTUNE_PROFILE_BATCHES=K, AUTOTUNE_PROFILE_ONLY=1), warm-started from the class's earlier\n"
    "trials, until the class's stopping rules end the search; tries per-role resources adjusted\n"
    "from what the best configuration's ranks used (autotune.conf Adjust* keys); records the\n"
    "winner in the job's AdminComment (autotune annotate), gives back the nodes the winner does\n"
    "not use (scontrol update JobId=.. NumNodes=.., then Slurm's resize script applied to the\n"
    "environment) and runs APP on it.\n"
    "Progress goes to standard error; every trial is left for ingest.\n\n"
    "Options:\n"
    "  --mode jobs|steps     default: $AUTOTUNE_MODE (set by --autotune-mode), else jobs\n"
    "  --timeout SECONDS     stop APP's (full) run after this long and record it as timed out\n"
    "                        (default: no limit besides the job's own)\n"
    "  --probe-batches K     steps mode: batches each trial profiles (default:\n"
    "                        $AUTOTUNE_PROBE_BATCHES, set by --autotune-probe-batches, else 20)\n"
    "  --step-timeout SEC    steps mode: a profiling step running longer is stopped and recorded\n"
    "                        as a failed (timed-out) trial.  Default: 60 + 3*K s until a trial\n"
    "                        succeeds, then 5x the slowest successful trial (at least 30 s)\n"
    "  --try CONFIG          steps mode: profile this configuration first (repeatable; it must\n"
    "                        be in the class's space and fit the allocation)\n"
    "  --confirm N           steps mode: when the search stops, profile its N best configurations\n"
    "                        once more and choose by the mean of their profiles (for nodes\n"
    "                        whose speed varies; default 0: choose on one profile each)\n"
    "  --no-shrink           steps mode: keep every node of the allocation\n"
    "  --dry-run             print the (first) srun command instead of running it\n"
    "  -h, --help            this text\n\n"
    "Environment (set by job_submit/autotune): AUTOTUNE_CLASS, AUTOTUNE_CONFIG, AUTOTUNE_TRIAL,\n"
    "AUTOTUNE_MODE, AUTOTUNE_PROBE_BATCHES, AUTOTUNE_INCOMING.  APP receives AUTOTUNE_PS (parameter\n"
    "servers), AUTOTUNE_WORKERS, AUTOTUNE_RESULT (where the app reports; its ranks' helpers write\n"
    "AUTOTUNE_RESULT.rank.R) and PYTHONPATH with the installed slurm_autotune module.\n"
    "Without AUTOTUNE_CONFIG (a job without --autotune, one its class gave no configuration, or\n"
    "one submitted while the tuner was unavailable: AUTOTUNE_UNAVAILABLE=locked|full|damaged|\n"
    "missing|config|error, in either mode) APP runs untuned on the job's own allocation and\n"
    "nothing is recorded: srun --ntasks=N with N the job's tasks (SLURM_NTASKS; without -n, one\n"
    "per allocated CPU), at least 2 (--overcommit on a single CPU), AUTOTUNE_PS parameter servers\n"
    "(default 1) and the rest workers (AUTOTUNE_WORKERS).\n"
    "The exit status is APP's (of its full run).\n";

const char *env(const char *k) {
  const char *v = std::getenv(k);
  if (v && *v) return v;
  // Inside the batch script, job_submit's variables arrive as SLURM_SPANK_<name>.
  static thread_local std::string spank;
  spank = std::string("SLURM_SPANK_") + k;
  v = std::getenv(spank.c_str());
  return v && *v ? v : nullptr;
}

[[noreturn]] void usage_error(const std::string &msg) {
  std::fprintf(stderr, "autotune-run: %s; see `autotune-run --help'\n", msg.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char **argv) {
  std::optional<double> timeout, step_timeout;
  std::optional<ClassMode> mode;
  std::optional<int> probe, confirm;
  std::vector<std::string> tries;
  bool dry_run = false, shrink = true;
  int i = 1;
  // "--name VALUE" or "--name=VALUE": the value, advancing i; nullopt when argv[i] is not --name.
  auto value_of = [&](const std::string &a, const char *name) -> std::optional<std::string> {
    const std::string n = name;
    if (a == n) {
      if (i + 1 >= argc) usage_error(n + " needs a value");
      return std::string(argv[++i]);
    }
    if (a.rfind(n + "=", 0) == 0) return a.substr(n.size() + 1);
    return std::nullopt;
  };
  try {
    for (; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--") {
        ++i;
        break;
      }
      if (a == "-h" || a == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      }
      if (a == "--dry-run") {
        dry_run = true;
        continue;
      }
      if (a == "--no-shrink") {
        shrink = false;
        continue;
      }
      if (auto v = value_of(a, "--timeout")) {
        timeout = parse_double("--timeout", *v, 1, 1e7);
        continue;
      }
      if (auto v = value_of(a, "--step-timeout")) {
        step_timeout = parse_double("--step-timeout", *v, 1, 1e7);
        continue;
      }
      if (auto v = value_of(a, "--confirm")) {
        confirm = static_cast<int>(parse_int("--confirm", *v, 0, 100));
        continue;
      }
      if (auto v = value_of(a, "--probe-batches")) {
        probe = static_cast<int>(parse_int("--probe-batches", *v, 1, 1000000));
        continue;
      }
      if (auto v = value_of(a, "--mode")) {
        mode = parse_class_mode("--mode", *v);
        continue;
      }
      if (auto v = value_of(a, "--try")) {
        Configuration::parse(*v, "--try");  // validated again against the class once it is known
        tries.push_back(*v);
        continue;
      }
      if (a.size() > 1 && a[0] == '-') usage_error("unknown option '" + a + "'");
      break;
    }
  } catch (const Error &e) {
    usage_error(e.what());
  }
  if (i >= argc) usage_error("missing APP");
  std::vector<std::string> app(argv + i, argv + argc);

  const char *job = std::getenv("SLURM_JOB_ID");
  if (!job) {
    std::fprintf(stderr, "autotune-run: not inside a Slurm job (no SLURM_JOB_ID); submit with sbatch --autotune=CLASS\n");
    return 2;
  }
  // Called as `srun autotune-run APP` (from inside a step): the app is launched once, by task 0 of
  // that step, with a step of its own that shares the enclosing step's resources (srun --overlap,
  // run_step.cc); the step's other tasks have nothing to do and exit at once with status 0.
  if (inside_step()) {
    try {
      step_wait_s();
    } catch (const Error &e) {
      usage_error(e.what());
    }
    const char *procid = std::getenv("SLURM_PROCID");
    if (procid && std::strcmp(procid, "0") != 0) return 0;
    const char *m = env("AUTOTUNE_MODE");
    const bool steps = mode ? *mode == ClassMode::steps : m && std::strcmp(m, "steps") == 0;
    if (shrink && steps)
      std::fprintf(stderr, "autotune-run: called from inside job step %s: the allocation is not shrunk to the winner\n",
                   std::getenv("SLURM_STEP_ID"));
    shrink = false;  // the enclosing step runs on every node of the allocation
  }
  const char *cfg_text = env("AUTOTUNE_CONFIG");
  const char *cls = env("AUTOTUNE_CLASS");
  std::optional<Configuration> cfg;
  try {
    if (cfg_text) cfg = Configuration::parse(cfg_text, "AUTOTUNE_CONFIG");
    if (cls) validate_class_name(cls, "AUTOTUNE_CLASS");
  } catch (const Error &e) {
    std::fprintf(stderr, "autotune-run: %s\n", e.what());
    return 2;
  }

  if (!mode) {
    if (const char *m = env("AUTOTUNE_MODE")) {
      try {
        mode = parse_class_mode("AUTOTUNE_MODE", m);
      } catch (const Error &e) {
        std::fprintf(stderr, "autotune-run: %s\n", e.what());
        return 2;
      }
    }
  }
  if (!probe) {
    if (const char *k = env("AUTOTUNE_PROBE_BATCHES")) {
      try {
        probe = static_cast<int>(parse_int("AUTOTUNE_PROBE_BATCHES", k, 1, 1000000));
      } catch (const Error &e) {
        std::fprintf(stderr, "autotune-run: %s\n", e.what());
        return 2;
      }
    }
  }
  // Set by job_submit/autotune when the tuner could not answer at submission (locked, full,
  // damaged, missing, config, error): the job runs untuned, in either mode.
  const char *unavailable = env("AUTOTUNE_UNAVAILABLE");
  if (unavailable && mode.value_or(ClassMode::jobs) == ClassMode::steps && !cfg)
    std::fprintf(stderr, "autotune-run: the tuner was unavailable at submission (%s): no search inside the "
                         "allocation; the app runs untuned\n", unavailable);
  // Steps mode, unless job_submit already gave the job its configuration (a converged class).
  if (mode.value_or(ClassMode::jobs) == ClassMode::steps && !cfg && !unavailable) {
    if (!cls) {
      std::fprintf(stderr, "autotune-run: --mode steps needs AUTOTUNE_CLASS: submit with --autotune=CLASS --autotune-mode=steps\n");
      return 2;
    }
    StepsOptions so;
    so.app = app;
    so.cls = cls;
    so.job = job;
    so.probe_batches = probe.value_or(20);
    so.step_timeout_s = step_timeout;
    so.timeout_s = timeout;
    so.try_configs = tries;
    if (confirm) so.confirm = *confirm;
    so.shrink = shrink;
    so.dry_run = dry_run;
    try {
      return run_steps(so);
    } catch (const Error &e) {
      std::fprintf(stderr, "autotune-run: %s\n", e.what());
      return e.code() == Errc::invalid_argument ? 2 : 1;
    }
  }
  if (!tries.empty() || step_timeout || (!shrink && !inside_step()) || confirm)
    std::fprintf(stderr,
                 "autotune-run: --try, --step-timeout, --confirm and --no-shrink apply to steps mode only; ignored\n");

  StepRequest req;
  req.app = app;
  req.config = cfg;
  req.timeout_s = timeout;
  req.label = std::string(job);
  if (!cfg) req.untuned = untuned_ranks(std::getenv("SLURM_NTASKS"), std::getenv("SLURM_JOB_CPUS_PER_NODE"), env("AUTOTUNE_PS"));
  if (dry_run) {
    for (const auto &w : srun_command(req)) std::printf("%s ", w.c_str());
    std::printf("\n");
    return 0;
  }
  if (!cfg) {
    const UntunedRanks &u = *req.untuned;
    std::string why = unavailable ? std::string("the tuner was unavailable at submission (") + unavailable + ")"
                                  : std::string("no AUTOTUNE_CONFIG (a job without --autotune, or one its class could "
                                                "not give a configuration)");
    std::fprintf(stderr,
                 "autotune-run: %s: running untuned on the job's allocation, nothing will be recorded: %d ranks "
                 "(%s), %d parameter server%s and %d worker%s\n",
                 why.c_str(), u.ranks, u.why.c_str(), u.servers, u.servers == 1 ? "" : "s", u.ranks - u.servers,
                 u.ranks - u.servers == 1 ? "" : "s");
  } else {
    if (const char *t = env("AUTOTUNE_TRIAL"))
      std::fprintf(stderr, "autotune-run: class %s trial %s: %s\n", cls ? cls : "?", t, cfg->format().c_str());
    else
      std::fprintf(stderr, "autotune-run: class %s: its best configuration: %s\n", cls ? cls : "?", cfg->format().c_str());
  }
  StepOutcome out = run_step(req);
  std::fprintf(stderr, "autotune-run: %s\n", out.summary().c_str());
  if (cfg) {
    json doc = outcome_json(out, req);
    doc["job_id"] = std::atoll(job);
    doc["class"] = cls ? cls : "";
    if (const char *t = env("AUTOTUNE_TRIAL")) doc["trial"] = std::atoll(t);
    // A job with a burst buffer (a workflow's stage passing its data on): what each medium held.
    if (const auto bytes = buffer_bytes(); !bytes.empty()) {
      doc["tier"] = json::object();
      for (const auto &[tier, b] : bytes) doc["tier"][tier] = b;
    }
    try {
      const std::string path = leave_result(doc, std::string(job));
      std::fprintf(stderr, "autotune-run: result left for ingest: %s\n", path.c_str());
    } catch (const Error &e) {
      std::fprintf(stderr, "autotune-run: cannot leave the result for ingest: %s\n", e.what());
    }
  }
  return out.exit_code;
}
