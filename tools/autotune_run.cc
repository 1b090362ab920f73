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

using namespace autotune;
using nlohmann::json;

namespace {

const char kUsage[] =
    "usage: autotune-run [OPTIONS] [--] APP [ARGS...]\n\n"
    "Run APP, an MPI training program (linked with libssp), inside a job submitted with\n"
    "--autotune=CLASS, on the configuration slurm-autotune chose for the job, and leave what it\n"
    "measured for the class's next decision.\n\n"
    "Options:\n"
    "  --timeout SECONDS   stop APP after this long and record the trial as timed out\n"
    "                      (default: no limit besides the job's own)\n"
    "  --dry-run           print the srun command instead of running it\n"
    "  -h, --help          this text\n\n"
    "Environment (set by job_submit/autotune): AUTOTUNE_CLASS, AUTOTUNE_CONFIG, AUTOTUNE_TRIAL,\n"
    "AUTOTUNE_INCOMING.  APP receives AUTOTUNE_PS (parameter servers), AUTOTUNE_WORKERS and\n"
    "AUTOTUNE_RESULT (where libssp writes its measurements).  Without AUTOTUNE_CONFIG (a job\n"
    "without --autotune) APP runs on the job's allocation as it is and nothing is recorded.\n"
    "The exit status is APP's.\n";

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
  std::optional<double> timeout;
  bool dry_run = false;
  int i = 1;
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
    if (a == "--timeout" || a.rfind("--timeout=", 0) == 0) {
      std::string v;
      if (a == "--timeout") {
        if (i + 1 >= argc) usage_error("--timeout needs a value");
        v = argv[++i];
      } else {
        v = a.substr(10);
      }
      try {
        timeout = parse_double("--timeout", v, 1, 1e7);
      } catch (const Error &e) {
        usage_error(e.what());
      }
      continue;
    }
    if (a.size() > 1 && a[0] == '-') usage_error("unknown option '" + a + "'");
    break;
  }
  if (i >= argc) usage_error("missing APP");
  std::vector<std::string> app(argv + i, argv + argc);

  const char *job = std::getenv("SLURM_JOB_ID");
  if (!job) {
    std::fprintf(stderr, "autotune-run: not inside a Slurm job (no SLURM_JOB_ID); submit with sbatch --autotune=CLASS\n");
    return 2;
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

  StepRequest req;
  req.app = app;
  req.config = cfg;
  req.timeout_s = timeout;
  req.label = std::string(job);
  if (dry_run) {
    for (const auto &w : srun_command(req)) std::printf("%s ", w.c_str());
    std::printf("\n");
    return 0;
  }
  if (!cfg) {
    std::fprintf(stderr, "autotune-run: no AUTOTUNE_CONFIG (job without --autotune, or the store was unavailable at "
                         "submission): running on the allocation as it is, nothing will be recorded\n");
  } else {
    std::fprintf(stderr, "autotune-run: class %s trial %s: %s\n", cls ? cls : "?", env("AUTOTUNE_TRIAL") ? env("AUTOTUNE_TRIAL") : "?",
                 cfg->format().c_str());
  }
  StepOutcome out = run_step(req);
  std::fprintf(stderr, "autotune-run: %s\n", out.summary().c_str());
  if (cfg) {
    json doc = outcome_json(out, req);
    doc["job_id"] = std::atoll(job);
    doc["class"] = cls ? cls : "";
    if (const char *t = env("AUTOTUNE_TRIAL")) doc["trial"] = std::atoll(t);
    try {
      const std::string path = leave_result(doc, std::string(job));
      std::fprintf(stderr, "autotune-run: result left for ingest: %s\n", path.c_str());
    } catch (const Error &e) {
      std::fprintf(stderr, "autotune-run: cannot leave the result for ingest: %s\n", e.what());
    }
  }
  return out.exit_code;
}
