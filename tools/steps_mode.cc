#include "steps_mode.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "autotune/optimizer.hpp"
#include "autotune/adjust.hpp"
#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/export.hpp"
#include "autotune/result.hpp"
#include "autotune/steps.hpp"
#include "autotune/units.hpp"
#include "run_step.hpp"
#include "slurm_job.hpp"

namespace autotune {

namespace {

using nlohmann::json;

void say(const std::string &msg) { std::fprintf(stderr, "autotune-run: %s\n", msg.c_str()); }

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string rate(double sps) { return std::to_string(static_cast<long long>(std::llround(sps))) + " samples/s"; }

struct Captured {
  int status = -1;  // exit status; -1 when it could not run or was killed
  std::string out, err;
};

// Runs argv (PATH lookup) in `cwd` (when given) and collects what it prints.
Captured capture(const std::vector<std::string> &argv, const std::string &cwd = "") {
  Captured c;
  int outp[2], errp[2];
  if (pipe(outp) != 0) return c;
  if (pipe(errp) != 0) {
    close(outp[0]);
    close(outp[1]);
    return c;
  }
  const pid_t pid = fork();
  if (pid < 0) return c;
  if (pid == 0) {
    dup2(outp[1], 1);
    dup2(errp[1], 2);
    close(outp[0]);
    close(outp[1]);
    close(errp[0]);
    close(errp[1]);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    std::vector<char *> args;
    for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  close(outp[1]);
  close(errp[1]);
  // Read both pipes without blocking on one while the other fills.
  fcntl(outp[0], F_SETFL, O_NONBLOCK);
  fcntl(errp[0], F_SETFL, O_NONBLOCK);
  bool open_out = true, open_err = true;
  char buf[65536];
  while (open_out || open_err) {
    bool progress = false;
    for (int k = 0; k < 2; ++k) {
      bool &open = k == 0 ? open_out : open_err;
      if (!open) continue;
      const ssize_t n = read(k == 0 ? outp[0] : errp[0], buf, sizeof buf);
      if (n > 0) {
        (k == 0 ? c.out : c.err).append(buf, static_cast<size_t>(n));
        progress = true;
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        open = false;
      }
    }
    if (!progress) usleep(5000);
  }
  close(outp[0]);
  close(errp[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  c.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return c;
}

std::string first_line(const std::string &s) {
  std::string l = s.substr(0, s.find('\n'));
  return l.empty() ? "(no message)" : l;
}

// `autotune` installed beside autotune-run, else from PATH.
std::string autotune_command() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    std::string dir(self);
    dir.resize(dir.rfind('/'));
    const std::string p = dir + "/autotune";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "autotune";
}

const char *getenv_nonempty(const char *k) {
  const char *v = std::getenv(k);
  return v && *v ? v : nullptr;
}

// The memory Slurm's record of the job says it holds, per node (tres_alloc_str "mem=16000M" over
// its node count).
std::uint64_t slurm_mem_per_node(std::uint32_t job, int nodes) {
  const SlurmJob record(job);
  const std::string tres = record.info().tres_alloc_str ? record.info().tres_alloc_str : "";
  const size_t at = tres.find("mem=");
  if (at == std::string::npos) throw Error(Errc::not_found, "Slurm's record of job " + std::to_string(job) + " has no memory (" + tres + ")");
  const std::string v = tres.substr(at + 4, tres.find(',', at) == std::string::npos ? std::string::npos : tres.find(',', at) - at - 4);
  return parse_mem_mb("job memory (Slurm TRES)", v) / static_cast<std::uint64_t>(std::max(1, nodes));
}

Allocation read_allocation(const std::string &job) {
  Allocation a;
  const char *nn = getenv_nonempty("SLURM_JOB_NUM_NODES");
  if (!nn) nn = getenv_nonempty("SLURM_NNODES");
  if (!nn) throw_invalid("SLURM_JOB_NUM_NODES is not set: not inside a batch job");
  a.nodes = static_cast<int>(parse_int("SLURM_JOB_NUM_NODES", nn, 1, 100000));
  const char *cpn = getenv_nonempty("SLURM_JOB_CPUS_PER_NODE");
  if (!cpn) throw_invalid("SLURM_JOB_CPUS_PER_NODE is not set: not inside a batch job");
  const std::vector<int> cpus = parse_cpus_per_node("SLURM_JOB_CPUS_PER_NODE", cpn);
  a.cpus_per_node = *std::min_element(cpus.begin(), cpus.end());
  if (const char *m = getenv_nonempty("SLURM_MEM_PER_NODE"))
    a.mem_per_node_mb = static_cast<std::uint64_t>(parse_int("SLURM_MEM_PER_NODE", m, 1, 1LL << 40));
  else if (const char *m = getenv_nonempty("SLURM_MEM_PER_CPU"))
    a.mem_per_node_mb = static_cast<std::uint64_t>(parse_int("SLURM_MEM_PER_CPU", m, 1, 1LL << 40)) *
                        static_cast<std::uint64_t>(a.cpus_per_node);
  else
    a.mem_per_node_mb =
        slurm_mem_per_node(static_cast<std::uint32_t>(parse_int("SLURM_JOB_ID", job, 1, 4294967294LL)), a.nodes);
  if (const char *g = getenv_nonempty("SLURM_GPUS_ON_NODE"))
    a.gpus_per_node = static_cast<int>(parse_int("SLURM_GPUS_ON_NODE", g, 0, 1024));
  return a;
}

// The class and its trials from `autotune export CLASS --json`, read by the store's parser of
// the export (autotune/export.hpp).
ClassExport read_export(const std::string &text) {
  try {
    return parse_export(text);
  } catch (const Error &e) {
    throw Error(Errc::corrupt, std::string("the class's export is not what autotune-run expects: ") + e.what());
  }
}

// Apply Slurm's resize script (the export / unset lines scontrol writes) to our environment.
int apply_resize_script(const std::string &path) {
  std::ifstream in(path);
  if (!in) return -1;
  int n = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) == 0) {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string k = line.substr(7, eq - 7), v = line.substr(eq + 1);
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      setenv(k.c_str(), v.c_str(), 1);
      ++n;
    } else if (line.rfind("unset ", 0) == 0) {
      unsetenv(line.substr(6).c_str());
      ++n;
    }
  }
  return n;
}

// Host names of `a` not in `b`, as a Slurm host list.
std::string hosts_minus(const std::string &a, const std::string &b) {
  hostlist_t ha = slurm_hostlist_create(a.c_str()), hb = slurm_hostlist_create(b.c_str());
  hostlist_t out = slurm_hostlist_create(nullptr);
  std::string res;
  if (ha && hb && out) {
    while (char *h = slurm_hostlist_shift(ha)) {
      if (slurm_hostlist_find(hb, h) < 0) slurm_hostlist_push_host(out, h);
      std::free(h);
    }
    if (char *s = slurm_hostlist_ranged_string_malloc(out)) {
      res = s;
      std::free(s);
    }
  }
  if (ha) slurm_hostlist_destroy(ha);
  if (hb) slurm_hostlist_destroy(hb);
  if (out) slurm_hostlist_destroy(out);
  return res;
}

// Whether slurmctld records jobs in accounting: after a resize it refuses every update of the job
// until accounting has given the job a new database index, which without accounting never happens.
bool accounting_records_resizes() {
  slurm_conf_t *conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || !conf) return true;
  const bool none = conf->accounting_storage_type &&
                    std::strcmp(conf->accounting_storage_type, "accounting_storage/none") == 0;
  slurm_free_ctl_conf(conf);
  return !none;
}

// What a trial's roles used, for the adjuster.
void role_measures(const RunResult &r, RoleMeasure *worker, RoleMeasure *server) {
  if (!r.app) return;
  if (r.app->worker) *worker = RoleMeasure{r.app->worker->cpu_util_max, r.app->worker->peak_rss_mb_max};
  if (r.app->server) *server = RoleMeasure{r.app->server->cpu_util_max, r.app->server->peak_rss_mb_max};
}

// The step environment: the allocation's task layout is not the step's.
const std::vector<std::string> kStepUnset = {"SLURM_NTASKS_PER_NODE", "SLURM_NTASKS_PER_SOCKET", "SLURM_NTASKS_PER_CORE",
                                              "SLURM_MEM_PER_NODE",    "SLURM_MEM_PER_GPU",       "SLURM_CPUS_PER_TASK",
                                              "AUTOTUNE_PROFILE_BATCHES", "AUTOTUNE_PROFILE_ONLY"};

struct Planned {
  Configuration config;
  std::string origin;         // initial | model | manual | adjust
  std::string reason;
  std::string adjust_reason;  // adjust only
};

}  // namespace

double default_step_timeout(int probe_batches) { return 60.0 + 3.0 * probe_batches; }

int run_steps(const StepsOptions &o) {
  const double job_start = now_s();
  const Conf conf = [] {
    const std::string p = Conf::default_path();
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 ? Conf::load(p) : Conf::defaults();
  }();

  // ---- the allocation and the class
  const Allocation alloc = read_allocation(o.job);
  const std::string original_nodes = getenv_nonempty("SLURM_JOB_NODELIST") ? getenv_nonempty("SLURM_JOB_NODELIST") : "";
  const std::string at = autotune_command();
  const Captured ex = capture({at, "export", o.cls, "--json"});
  if (ex.status != 0)
    throw Error(Errc::not_found, "cannot read class " + o.cls + " (" + at + " export): " + first_line(ex.err));
  const ClassExport exported = read_export(ex.out);
  const ClassRecord &cls = exported.cls;
  const std::vector<TrialRecord> &history = exported.trials;

  // Configurations given with --try: checked before anything runs.
  AllocationSearch search(cls, history, alloc, propose);
  std::vector<Planned> queue;
  for (const std::string &t : o.try_configs) {
    const Configuration c = Configuration::parse(t, "--try");
    if (!search.is_candidate(c))
      throw_invalid("--try: " + c.format() + " is not a configuration of class " + o.cls + "'s space that fits " +
                    "this job's allocation (" + alloc.describe() + ")");
    queue.push_back({c, "manual", "given with --try", ""});
  }
  say("class " + o.cls + ", steps mode: tuning inside the allocation of job " + o.job + " (" + alloc.describe() +
      (original_nodes.empty() ? "" : ", " + original_nodes) + ")");
  const ClassProblem &p = search.problem();
  say(std::to_string(p.candidates.size()) + " configurations of the class's space fit; " +
      std::to_string(search.used_before()) + " earlier trials of the class count; budget " +
      std::to_string(search.budget()) + " trials; gamma " + format_double(cls.settings.gamma) + "; billing " +
      (p.billing.text.empty() ? std::string("CPUs (no TRESBillingWeights)") : "TRESBillingWeights=" + p.billing.text));
  const double first_timeout = o.step_timeout_s.value_or(default_step_timeout(o.probe_batches));
  say("each trial profiles " + std::to_string(o.probe_batches) + " batches as a job step (step timeout " +
      fixed(first_timeout, 0) + " s" + (o.step_timeout_s ? "" : ", then 5x the slowest successful trial, at least 30 s") +
      ")");

  std::optional<AllocationSearch::Best> winner;
  std::string stop_rule = "none", stop_reason;
  int trials = 0, adjusted = 0;
  double profiling_s = 0, slowest_ok = 0;
  const bool converged = cls.state != ClassState::tuning && cls.best_trial;
  if (converged) {
    // The class converged after this job was submitted: its best configuration, if it fits.
    for (const TrialRecord &t : history)
      if (t.id == *cls.best_trial) {
        const Configuration c = Configuration::parse(t.config, "best configuration");
        if (search.is_candidate(c))
          winner = AllocationSearch::Best{c, t.measurement ? t.measurement->samples_per_s : 0, 0, false};
      }
    if (winner) say("the class converged meanwhile (" + cls.state_reason + "): no profiling");
  }

  if (o.dry_run) {
    auto n = search.next();
    StepRequest req;
    req.app = o.app;
    req.config = queue.empty() ? n.config : std::optional<Configuration>(queue.front().config);
    if (req.config) {
      std::string line;
      for (const auto &w : srun_command(req)) line += w + " ";
      std::printf("%s\n", line.c_str());
    } else {
      std::printf("search stopped: %s\n", n.reason.c_str());
    }
    return 0;
  }

  // One profiling step: run it, leave it for ingest, record it in the search, print it.
  struct Ran {
    bool cancelled = false;
    int exit_code = 0;
    bool ok = false;
    std::optional<RunResult> parsed;
  };
  auto profile = [&](const Planned &plan, int k, const std::string &of) -> Ran {
    Ran ran;
    say("trial " + std::to_string(k) + of + " [" + plan.origin + ": " + plan.reason + "]: " + plan.config.format());
    StepRequest req;
    req.app = o.app;
    req.config = plan.config;
    req.name = "autotune-trial-" + std::to_string(k);
    req.unset = kStepUnset;
    req.env = {{"AUTOTUNE_PROFILE_BATCHES", std::to_string(o.probe_batches)}, {"AUTOTUNE_PROFILE_ONLY", "1"}};
    req.timeout_s = o.step_timeout_s
                        ? *o.step_timeout_s
                        : (slowest_ok > 0 ? std::min(first_timeout, std::max(30.0, 5 * slowest_ok)) : first_timeout);
    req.timeout_name = o.step_timeout_s ? "--step-timeout" : "the step timeout";
    req.label = o.job + "." + std::to_string(k);
    const StepOutcome out = run_step(req);
    profiling_s += out.wall_s;
    if (out.cancelled) {
      say("cancelled during trial " + std::to_string(k) + ": stopping");
      ran.cancelled = true;
      ran.exit_code = out.exit_code;
      return ran;
    }

    json doc = outcome_json(out, req);
    doc["job_id"] = std::atoll(o.job.c_str());
    doc["class"] = o.cls;
    doc["step"] = k;
    doc["origin"] = plan.origin == "adjust" || plan.origin == "confirm" ? "model" : plan.origin;
    if (!plan.adjust_reason.empty()) doc["adjust_reason"] = plan.adjust_reason;
    if (out.status == StepStatus::ok && !out.app_result) {
      // Steps mode compares the first K batches of each configuration: only a report can say how
      // fast they went (the step's own time includes the program's start-up).
      doc["status"] = "failed";
      doc["reason"] =
          "the app reported no throughput: steps mode measures the samples per second of its first K batches, "
          "reported through libssp or a helper (docs/reporting.md: slurm_autotune.Profiler, libautotune-report)";
    }
    try {
      ran.parsed = parse_result(doc.dump());
    } catch (const Error &e) {
      say("trial " + std::to_string(k) + ": the app's measurements are unusable: " + e.what());
      doc["status"] = "failed";
      doc["reason"] = std::string("unusable measurements: ") + e.what();
      doc["app"] = nullptr;
    }
    const std::optional<RunResult> &parsed = ran.parsed;
    ran.ok = parsed && parsed->status == "ok" && parsed->app && parsed->app->samples_per_s > 0;
    if (ran.ok) slowest_ok = std::max(slowest_ok, out.wall_s);
    const std::optional<double> score =
        search.record(plan.config, ran.ok ? std::optional<double>(parsed->app->samples_per_s) : std::nullopt,
                      out.status == StepStatus::timeout);
    try {
      leave_result(doc, o.job + "." + std::to_string(k));
    } catch (const Error &e) {
      say("cannot leave trial " + std::to_string(k) + " for ingest: " + std::string(e.what()));
    }

    const auto best = search.best();
    std::string line = "trial " + std::to_string(k) + of + ": ";
    if (ran.ok)
      line += rate(parsed->app->samples_per_s) + (score ? ", score " + format_double(std::round(*score * 1000) / 1000) : "") +
              " (step " + fixed(out.wall_s) + " s)";
    else
      line += std::string(to_string(out.status)) + " after " + fixed(out.wall_s) + " s: " +
              (doc["reason"].is_string() ? doc["reason"].get<std::string>() : out.reason);
    line += best ? "; best so far: " + best->config.format() + " " + rate(best->samples_per_s) +
                       ", score " + format_double(std::round(best->score * 1000) / 1000)
                 : "; no configuration has succeeded yet";
    say(line);
    return ran;
  };

  while (!winner) {
    AllocationSearch::Next n = search.next();
    if (!n.config) {
      stop_rule = n.stop_rule;
      stop_reason = n.reason;
      break;
    }
    Planned plan = queue.empty() ? Planned{*n.config, to_string(n.origin), n.reason, ""} : queue.front();
    if (!queue.empty()) queue.erase(queue.begin());
    const int k = ++trials;
    const std::size_t left = search.budget() - std::min(search.budget(), search.used_before());
    const Ran ran = profile(plan, k, "/" + std::to_string(left));
    if (ran.cancelled) return ran.exit_code;
    const bool ok = ran.ok;
    const std::optional<RunResult> &parsed = ran.parsed;
    const auto best = search.best();

    // A new best: are its per-role resources what its roles needed?
    if (ok && best && best->config == plan.config && adjusted < conf.adjust.trials && plan.origin != "adjust") {
      RoleMeasure w, s;
      role_measures(*parsed, &w, &s);
      if (auto adj = adjust(plan.config, w, s, search.candidates(), conf.adjust); adj && !search.tried(adj->config)) {
        bool queued = false;
        for (const auto &q : queue) queued = queued || q.config == adj->config;
        if (!queued) {
          ++adjusted;
          const std::string why = "adjusted from trial " + std::to_string(k) + ": " + adj->reason;
          say("per-role adjustment: " + why);
          queue.insert(queue.begin(), Planned{adj->config, "adjust", "from measured use", why});
        }
      }
    }
  }

  // ---- the finalists, profiled once more (a lucky profile must not decide alone)
  if (!winner && o.confirm > 0) {
    std::vector<AllocationSearch::Best> finalists;
    for (const auto &b : search.ranked())
      if (b.here && static_cast<int>(finalists.size()) < o.confirm) finalists.push_back(b);
    if (finalists.size() >= 2) {
      std::string names;
      for (const auto &f : finalists) names += (names.empty() ? "" : "; ") + f.config.format();
      say("profiling the " + std::to_string(finalists.size()) + " best configurations once more (--confirm " +
          std::to_string(o.confirm) + "): " + names);
      for (std::size_t i = 0; i < finalists.size(); ++i) {
        const Planned plan{finalists[i].config, "confirm",
                           "finalist " + std::to_string(i + 1) + " of " + std::to_string(finalists.size()) +
                               ", profiled once more",
                           ""};
        const Ran ran = profile(plan, ++trials, "");
        if (ran.cancelled) return ran.exit_code;
      }
    }
  }

  // ---- the winner
  if (!winner) {
    winner = search.best();
    say(stop_reason.rfind("stopped by", 0) == 0 ? "search " + stop_reason
                                                 : "search stopped by " + stop_rule + ": " + stop_reason);
    json summary = {{"format", "autotune-search/1"},
                    {"stop_rule", stop_rule},
                    {"reason", stop_reason},
                    {"winner", winner ? winner->config.format() : std::string()},
                    {"trials", trials},
                    {"profiling_s", profiling_s}};
    try {
      leave_result(summary, o.job + ".search");
    } catch (const Error &e) {
      say(std::string("cannot leave the search's end for ingest: ") + e.what());
    }
  }
  if (!winner) {
    say("no configuration ran successfully: the full training does not start (see the failed trials above)");
    return 1;
  }
  const double search_s = now_s() - job_start;
  say("winner: " + winner->config.format() + " (" + rate(winner->samples_per_s) +
      (winner->here ? "" : ", measured by an earlier job") + ")");

  // ---- shrink to the winner and say so in the AdminComment.  The note is written before the
  // shrink: Slurm refuses any update of a resized job until accounting has recorded the resize
  // (with AccountingStorageType=none, never), so the note written after it, with the nodes the
  // job gave back, is a refinement that may not be possible.
  auto annotate = [&](const std::string &released, bool quiet) {
    std::vector<std::string> cmd = {at, "annotate", o.job, "--winner", winner->config.format(), "--trials",
                                    std::to_string(trials), "--stopped-by", stop_rule};
    if (!released.empty()) cmd.insert(cmd.end(), {"--released", released});
    const Captured c = capture(cmd);
    if (c.status == 0) say(first_line(c.out));
    else if (!quiet) say("the AdminComment was not updated: " + first_line(c.err));
    return c.status == 0 ? std::string() : first_line(c.err);
  };
  const int want = winner->config.counts.nodes;
  annotate("", false);
  if (o.shrink && want < alloc.nodes) {
    char tmpl[] = "/tmp/autotune-resize.XXXXXX";
    std::string dir = mkdtemp(tmpl) ? tmpl : "";
    const std::vector<std::string> cmd = {"scontrol", "update", "JobId=" + o.job, "NumNodes=" + std::to_string(want)};
    say("shrinking job " + o.job + " from " + std::to_string(alloc.nodes) + " to " + std::to_string(want) +
        (want == 1 ? " node" : " nodes") + ": $ scontrol update JobId=" + o.job + " NumNodes=" + std::to_string(want));
    const Captured c = capture(cmd, dir);
    const std::string script = dir + "/slurm_job_" + o.job + "_resize.sh";
    std::string released;
    if (c.status != 0) {
      say("the shrink failed (" + first_line(c.err + c.out) + "); the job keeps its " + std::to_string(alloc.nodes) +
          " nodes");
    } else if (apply_resize_script(script) < 0) {
      say("scontrol wrote no " + script + "; the environment is not updated");
    } else {
      const std::string now = getenv_nonempty("SLURM_JOB_NODELIST") ? getenv_nonempty("SLURM_JOB_NODELIST") : "";
      released = hosts_minus(original_nodes, now);
      say("job " + o.job + " now holds " + now + " (SLURM_JOB_NODELIST, SLURM_JOB_NUM_NODES, SLURM_JOB_CPUS_PER_NODE " +
          "from Slurm's resize script); released " + released);
    }
    if (!dir.empty()) {
      std::remove(script.c_str());
      std::remove((dir + "/slurm_job_" + o.job + "_resize.csh").c_str());
      rmdir(dir.c_str());
    }
    if (!released.empty()) {
      if (!accounting_records_resizes()) {
        say("the AdminComment keeps the note written before the shrink (without accounting Slurm accepts no "
            "update of a resized job)");
      } else if (const std::string err = annotate(released, true); !err.empty()) {
        say("the AdminComment keeps the note written before the shrink (" + err + ")");
      }
    }
  }

  // ---- the full training on the winner
  say("full training on the winner: " + winner->config.format());
  StepRequest req;
  req.app = o.app;
  req.config = winner->config;
  req.name = "autotune-winner";
  req.unset = kStepUnset;
  req.timeout_s = o.timeout_s;
  req.label = o.job + ".winner";
  const StepOutcome out = run_step(req);
  say("full training: " + out.summary());
  const double total = now_s() - job_start;
  say("the search took " + fixed(search_s) + " s (" + fixed(profiling_s) + " s in " + std::to_string(trials) +
      " profiling steps) of autotune-run's " + fixed(total) + " s: " + fixed(total > 0 ? 100 * search_s / total : 0) +
      "%");
  return out.exit_code;
}

}  // namespace autotune
