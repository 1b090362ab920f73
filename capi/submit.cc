// at_submit(): what job_submit/autotune does for a job, behind the C API (autotune.h).
#include <sys/stat.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autotune/autotune.h"
#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/names.hpp"
#include "autotune/objective.hpp"
#include "autotune/space.hpp"
#include "autotune/store.hpp"
#include "autotune/tuner.hpp"
#include "autotune/units.hpp"
#include "capi_internal.hpp"

namespace autotune {
namespace {

// The answer given for a converged (or stale) class, kept while the store does not change: a
// converged class's jobs all get the same answer, so a repeat costs one PRAGMA data_version
// instead of reading the class, its best trial and its trial count.
struct CachedAnswer {
  std::pair<std::int64_t, std::int64_t> token;  // Store::change_token() before it was computed
  at_submit_decision decision;
};
constexpr std::size_t kMaxCachedAnswers = 4096;

struct SubmitState {
  std::mutex mu;
  std::string conf_path;
  struct timespec conf_mtime {};
  std::unique_ptr<Conf> conf;
  std::string conf_error;
  bool conf_broken = false;  // the last load of autotune.conf failed (jobs run untuned)
  std::unique_ptr<Store> store;
  dev_t store_dev = 0;  // the store file `store` has open, to notice one deleted or replaced
  ino_t store_ino = 0;
  off_t store_size = 0;
  struct timespec store_mtime {};
  std::optional<std::pair<SpaceSpec, std::string>> default_space;  // the site's space, restricted
  std::unordered_map<std::string, CachedAnswer> answers;  // by owner and class name; for `store`
  std::chrono::steady_clock::time_point conf_checked{};
  std::vector<std::uint32_t> micros;      // the last calls' wall-clock durations
  std::vector<std::uint32_t> cpu_micros;  // ... and the CPU time the calling thread spent in them
  std::size_t next = 0, calls = 0, cached = 0;
};

SubmitState &state() {
  static SubmitState *s = new SubmitState;  // never destroyed: the plugin may be unloaded late
  return *s;
}

constexpr std::size_t kTimingWindow = 100000;

// Closes the store connection (reopened on the next call) and forgets the answers read from it.
void drop_store(SubmitState &st) {
  st.store.reset();
  st.answers.clear();
}

// (Re)load autotune.conf when it changed (looked at no more than once a second).  Caller holds
// the mutex.
const Conf &current_conf(SubmitState &st) {
  const auto now = std::chrono::steady_clock::now();
  if (st.conf && now - st.conf_checked < std::chrono::seconds(1)) return *st.conf;
  st.conf_checked = now;
  st.conf_broken = false;
  struct stat sb {};
  if (::stat(st.conf_path.c_str(), &sb) != 0) {
    if (!st.conf || st.conf_mtime.tv_sec != 0) {
      st.conf = std::make_unique<Conf>(Conf::defaults());
      st.conf_mtime = {};
      drop_store(st);
      st.default_space.reset();
    }
    return *st.conf;
  }
  if (!st.conf || sb.st_mtim.tv_sec != st.conf_mtime.tv_sec || sb.st_mtim.tv_nsec != st.conf_mtime.tv_nsec) {
    st.conf.reset();
    drop_store(st);
    st.default_space.reset();
    st.conf_mtime = sb.st_mtim;
    try {
      st.conf = std::make_unique<Conf>(Conf::load(st.conf_path));
    } catch (const Error &e) {
      // The site's file, not the user's input: the job is accepted untuned (reported per job).
      st.conf_broken = true;
      throw Error(Errc::io, e.what());
    }
  }
  return *st.conf;
}

Store &current_store(SubmitState &st, const Conf &conf) {
  const std::string path = Store::path_in(conf.core.state_dir);
  struct stat sb {};
  // A store deleted or replaced under the open connection: the connection would go on with the
  // old file (deleted: a file no one else sees).  One stat per call.
  // The file itself changes only at WAL checkpoints (ingest's) or when something else wrote it:
  // a new connection then reads it afresh, and sees damage the old one's cache would hide.
  if (st.store && (::stat(path.c_str(), &sb) != 0 || sb.st_dev != st.store_dev || sb.st_ino != st.store_ino ||
                   sb.st_size != st.store_size || sb.st_mtim.tv_sec != st.store_mtime.tv_sec ||
                   sb.st_mtim.tv_nsec != st.store_mtime.tv_nsec))
    drop_store(st);
  if (!st.store) {
    const std::string incoming = conf.core.state_dir + "/incoming";
    struct stat in {};
    if (::stat(incoming.c_str(), &in) == 0 && ::stat(path.c_str(), &sb) != 0 && errno == ENOENT)
      // StateDir was set up (by `autotune admin init` or a first job) and its store is gone: a
      // new empty one would silently restart every class's search.
      throw Error(Errc::not_found, path + ": missing (StateDir is set up, but its store is gone)");
    // slurmctld runs as SlurmUser: it may create StateDir and the store on first use.
    ::mkdir(conf.core.state_dir.c_str(), 0755);
    if (::mkdir(incoming.c_str(), 01733) == 0) ::chmod(incoming.c_str(), 01733);
    Store::Options o;
    o.create = true;
    o.busy_timeout_ms = conf.tuner.submit_busy_timeout_ms;
    o.no_checkpoints = true;  // WAL checkpoints fsync: ingest (outside slurmctld) does them
    st.store = std::make_unique<Store>(path, o);
    if (::stat(path.c_str(), &sb) == 0) {
      st.store_dev = sb.st_dev;
      st.store_ino = sb.st_ino;
      st.store_size = sb.st_size;
      st.store_mtime = sb.st_mtim;
    }
  }
  return *st.store;
}

// The job's --autotune* values (AUTOTUNE_* in its SPANK environment; the first of a name counts),
// found in one pass over the environment, however long Slurm let it be.
struct JobOptions {
  const char *cls = nullptr, *gamma = nullptr, *budget = nullptr, *mode = nullptr, *probe_batches = nullptr,
             *space = nullptr, *metric = nullptr, *workflow = nullptr;
};

JobOptions options_of(const at_submit_request *r) {
  JobOptions o;
  struct Key {
    const char *name;
    std::size_t len;
    const char *JobOptions::*dst;
  };
  static const Key keys[] = {{"CLASS", 5, &JobOptions::cls},       {"GAMMA", 5, &JobOptions::gamma},
                             {"BUDGET", 6, &JobOptions::budget},   {"MODE", 4, &JobOptions::mode},
                             {"PROBE_BATCHES", 13, &JobOptions::probe_batches}, {"SPACE", 5, &JobOptions::space},
                             {"METRIC", 6, &JobOptions::metric},   {"WORKFLOW", 8, &JobOptions::workflow}};
  if (!r->spank_env) return o;
  for (std::size_t i = 0; i < r->spank_env_count; ++i) {
    const char *e = r->spank_env[i];
    if (!e || std::strncmp(e, "AUTOTUNE_", 9) != 0) continue;
    for (const Key &k : keys)
      if (std::strncmp(e + 9, k.name, k.len) == 0 && e[9 + k.len] == '=') {
        if (!(o.*k.dst)) o.*k.dst = e + 9 + k.len + 1;
        break;
      }
  }
  return o;
}

// The longest value of an --autotune-* option other than the class and the space: anything
// longer is no number or mode, and refusing it before parsing bounds the work (strtod's on a long
// mantissa grows faster than its length).
constexpr std::size_t kMaxOptionText = 64;
// How many of a workflow function's first trials job_submit looks through for one to repeat when
// its initial design is used up (decide_workflow_job).
constexpr std::size_t kInitialRepeatScan = 64;

// `v`, an option's value (or nullptr), refused when longer than `max` characters without being
// read further (Slurm bounds neither its length nor ours).
const char *bounded(const char *v, const char *field, std::size_t max) {
  if (v && ::strnlen(v, max + 1) > max)
    throw_invalid(std::string(field) + ": the value is longer than " + std::to_string(max) +
                  " characters; at most " + std::to_string(max) + " are allowed");
  return v;
}

std::uint64_t class_seed(std::uint64_t base, std::uint32_t owner, const std::string &name) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  const std::string key = std::to_string(owner) + ":" + name;
  for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ull;
  return base ^ h;
}

void copy(char *dst, std::size_t len, const std::string &s) {
  std::strncpy(dst, s.c_str(), len - 1);
  dst[len - 1] = '\0';
}

void add_env(at_submit_decision *out, const std::string &kv) {
  if (out->env_count < AT_SUBMIT_MAX_ENV) copy(out->env[out->env_count++], sizeof out->env[0], kv);
}

void apply_config(at_submit_decision *out, const Configuration &c) {
  const SlurmRequest r = slurm_request(c);
  out->rewrite = 1;
  out->nodes = static_cast<unsigned>(r.nodes);
  out->ntasks = static_cast<unsigned>(r.ntasks);
  out->cpus_per_task = static_cast<unsigned>(r.cpus_per_task);
  out->mem_per_cpu_mb = r.mem_per_cpu_mb;
  out->gpus_per_task = static_cast<unsigned>(r.gpus_per_task);
  add_env(out, "AUTOTUNE_CONFIG=" + c.format());
  add_env(out, "AUTOTUNE_PS=" + std::to_string(c.counts.servers));
  add_env(out, "AUTOTUNE_WORKERS=" + std::to_string(c.counts.workers));
}

Inventory inventory_of(const at_submit_request *req) {
  Inventory inv;
  if (!req->inventory) throw Error(Errc::internal, "no inventory callback");
  at_node_type types[64];
  const std::size_t n = req->inventory(req->inventory_ctx, types, 64);
  for (std::size_t i = 0; i < n && i < 64; ++i) {
    NodeType t;
    t.name = types[i].name ? types[i].name : ("type" + std::to_string(i));
    t.count = types[i].count;
    t.cpus = types[i].cpus;
    t.mem_mb = types[i].mem_mb;
    t.gpus = types[i].gpus;
    if (types[i].features && *types[i].features) {
      std::string f = types[i].features;
      size_t pos = 0;
      while (pos <= f.size()) {
        size_t e = f.find(',', pos);
        if (e == std::string::npos) e = f.size();
        if (e > pos) t.features.push_back(f.substr(pos, e - pos));
        pos = e + 1;
      }
    }
    inv.types.push_back(std::move(t));
  }
  if (inv.types.empty())
    throw_invalid(std::string("--autotune: partition ") + (req->partition ? req->partition : "?") + " has no nodes");
  return inv;
}

// The job's QOS and association limits, from the plugin's callback (none without one).
AccountingLimits accounting_of(const at_submit_request *req) {
  AccountingLimits q;
  if (!req->accounting) return q;
  at_accounting_limits a{};
  req->accounting(req->accounting_ctx, &a);
  q.max_nodes = a.max_nodes;
  q.max_cpus = a.max_cpus;
  q.max_mem_mb = a.max_mem_mb;
  q.max_gpus = a.max_gpus;
  q.max_cpus_per_node = a.max_cpus_per_node;
  q.max_mem_per_node_mb = a.max_mem_per_node_mb;
  q.max_gpus_per_node = a.max_gpus_per_node;
  q.min_nodes = a.min_nodes;
  q.min_cpus = a.min_cpus;
  q.min_mem_mb = a.min_mem_mb;
  if (q.any()) q.text = a.text && *a.text ? a.text : "QOS or association";
  return q;
}

PartitionLimits limits_of(const at_submit_request *req, const AccountingLimits &accounting) {
  const at_partition_limits &l = req->limits;
  auto count = [](unsigned v) { return static_cast<int>(std::min<unsigned>(v, 1u << 30)); };
  PartitionLimits p;
  p.min_nodes = count(l.min_nodes);
  p.max_nodes = count(l.max_nodes);
  p.max_cpus_per_node = count(l.max_cpus_per_node);
  p.max_mem_per_node_mb = l.max_mem_per_node_mb;
  p.max_mem_per_cpu_mb = l.max_mem_per_cpu_mb;
  p.accounting = accounting;
  return p;
}

// The request a decision gives the job.
SlurmRequest request_of(const at_submit_decision &d) {
  SlurmRequest r;
  r.nodes = static_cast<int>(d.nodes);
  r.ntasks = static_cast<int>(d.ntasks);
  r.cpus_per_task = static_cast<int>(d.cpus_per_task);
  r.mem_per_cpu_mb = d.mem_per_cpu_mb;
  r.gpus_per_task = static_cast<int>(d.gpus_per_task);
  return r;
}

// A class keeps the limits of the job that created it; a later job (in another QOS, or another
// user of a shared class) may be allowed less, and Slurm would keep it pending for ever with the
// class's best configuration.  Such a job runs the best configuration the class measured within
// its limits (the lowest mean score per configuration, as the tuner ranks them), or as submitted
// when it measured none, saying why.  Its AdminComment reads "autotune: class=C: best
// config=...": ingest takes only "class=C best config=" for a re-measurement of the best, so
// neither run is recorded as one.  `config` is the class's best, `why` job.violation() of it.
void keep_within(Store &store, const ClassRecord &c, const AccountingLimits &job, const std::string &config,
                 const std::string &why, const std::string &prefix, at_submit_decision *out) {
  int kept = 0;
  for (int i = 0; i < out->env_count; ++i) {
    const std::string kv = out->env[i];
    if (kv.rfind("AUTOTUNE_CONFIG=", 0) == 0 || kv.rfind("AUTOTUNE_PS=", 0) == 0 ||
        kv.rfind("AUTOTUNE_WORKERS=", 0) == 0 || kv.rfind("AUTOTUNE_TRIAL=", 0) == 0)
      continue;
    if (kept != i) std::memcpy(out->env[kept], out->env[i], sizeof out->env[0]);
    ++kept;
  }
  out->env_count = kept;
  out->rewrite = 0;
  std::string comment = prefix + ": best config=" + config + " " + why + " by this job's QOS and association limits (" +
                        job.text + ")";
  // Mean score per measured configuration.
  std::map<std::string, std::pair<double, int>> sums;
  for (const TrialRecord &t : store.trials(c.id))
    if (t.status == TrialStatus::done && t.measurement && t.measurement->score && *t.measurement->score > 0) {
      auto &m = sums[t.config];
      m.first += *t.measurement->score;
      ++m.second;
    }
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto &[cfg, m] : sums) ranked.emplace_back(m.first / m.second, cfg);
  std::sort(ranked.begin(), ranked.end());
  const double best = sums.count(config) ? sums[config].first / sums[config].second : 0;
  for (const auto &[score, cfg] : ranked) {
    const Configuration within = Configuration::parse(cfg);
    if (!job.violation(slurm_request(within)).empty()) continue;
    apply_config(out, within);
    comment += "; runs config=" + cfg + ", the best measured within them (score " + format_double(std::round(score * 1000) / 1000);
    if (best > 0) comment += " against " + format_double(std::round(best * 1000) / 1000);
    copy(out->admin_comment, sizeof out->admin_comment, comment + ")");
    return;
  }
  copy(out->admin_comment, sizeof out->admin_comment,
       comment + "; no measured configuration is within them; job runs as submitted");
}

// The job's class settings from its options, the site's defaults and limits.
ClassSettings settings_from(const JobOptions &opt, const Conf &conf, SpaceSpec *space, SubmitState &st) {
  ClassSettings s;
  const EngineConf &e = conf.engine;
  s.gamma = e.default_gamma;
  s.budget = static_cast<int>(e.default_budget);
  s.mode = parse_class_mode("DefaultMode", conf.tuner.default_mode);
  s.probe_batches = conf.tuner.default_probe_batches;
  if (const char *v = bounded(opt.gamma, "--autotune-gamma", kMaxOptionText))
    s.gamma = parse_gamma("--autotune-gamma", v);
  if (const char *v = bounded(opt.budget, "--autotune-budget", kMaxOptionText))
    s.budget = static_cast<int>(parse_int("--autotune-budget", v, 1, static_cast<long long>(e.max_budget)));
  if (const char *v = bounded(opt.mode, "--autotune-mode", kMaxOptionText))
    s.mode = parse_class_mode("--autotune-mode", v);
  if (const char *v = bounded(opt.probe_batches, "--autotune-probe-batches", kMaxOptionText))
    s.probe_batches = static_cast<int>(parse_int("--autotune-probe-batches", v, 1, conf.tuner.max_probe_batches));
  if (const char *v = bounded(opt.metric, "--autotune-metric", kMaxOptionText))
    s.metric = parse_class_metric("--autotune-metric", v);
  if (s.metric == ClassMetric::time && s.mode == ClassMode::steps)
    throw_invalid("--autotune-metric: 'time' measures a job's whole run, but in steps mode a trial is the first "
                  "batches of a job step, measured by the throughput the program reports; use "
                  "--autotune-metric=throughput (or leave it out) with --autotune-mode=steps, or mode jobs for time");
  if (const char *v = bounded(opt.space, "--autotune-space", kMaxSpaceText)) {
    *space = restrict_space(SpaceSpec::parse(v, "--autotune-space"), e.default_space, e.space_limits, "--autotune-space");
    check_space_size(*space, 1, "--autotune-space");  // before format() writes every value out
    s.space = space->format();
  } else {  // the site's default space: the same for every job, computed once per autotune.conf
    if (!st.default_space) {
      SpaceSpec d = restrict_space(SpaceSpec{}, e.default_space, e.space_limits, "--autotune-space");
      st.default_space.emplace(d, d.format());
    }
    *space = st.default_space->first;
    s.space = st.default_space->second;
  }
  return s;
}

std::string comment_prefix(const ClassRecord &c) {
  return "autotune: class=" + c.name + (c.shared ? " (shared)" : "");
}

// The measure of the class, last in the AdminComment of a job of mode jobs ("... metric=time").
// (A steps-mode job's is always throughput, and autotune annotate appends the winner to it.)
std::string metric_note(const ClassRecord &c) { return std::string(" metric=") + to_string(c.settings.metric); }

// A job of a workflow (--autotune-workflow=W --autotune=F): function F of the caller's workflow W
// (autotune workflow define), tuned as the class "W.F" but given the configuration of the
// proposal of the run it joins (workflow_store.hpp, "Runs"), which ingest computed when the
// previous run ended.  Without a proposal for F (the first runs, while the functions' models
// have too few points), F gets the next configuration of its class's initial design.  Bounded
// like a class's job: a few indexed reads and writes, no model.
void decide_workflow_job(const at_submit_request *req, const JobOptions &opt, const std::string &fn,
                         SubmitState &st, at_submit_decision *out) {
  const std::pair<const char *, const char *> given[] = {{opt.gamma, "--autotune-gamma"},
                                                         {opt.budget, "--autotune-budget"},
                                                         {opt.mode, "--autotune-mode"},
                                                         {opt.probe_batches, "--autotune-probe-batches"},
                                                         {opt.space, "--autotune-space"},
                                                         {opt.metric, "--autotune-metric"}};
  for (const auto &[value, field] : given)
    if (value)
      throw_invalid(std::string(field) + ": a job of a workflow is tuned with its workflow's settings (the file's "
                    "gamma and budget, the function's space); leave it out");
  const std::string wname = bounded(opt.workflow, "--autotune-workflow", kClassNameMax);
  validate_class_name(wname, "--autotune-workflow");
  if (req->is_het)
    throw_invalid("--autotune-workflow: function " + fn + ": a heterogeneous job cannot be tuned; submit a job of "
                  "one component");
  if (req->is_array)
    throw_invalid("--autotune-workflow: function " + fn + ": a job array would run one function many times in "
                  "one run; submit one job per function and run");
  const Conf &conf = current_conf(st);
  Store &store = current_store(st, conf);
  const std::optional<WorkflowRecord> wf = store.find_workflow(req->uid, wname);
  if (!wf)
    throw_invalid("--autotune-workflow: you have no workflow named " + wname +
                  "; define it first with `autotune workflow define FILE`");
  const WorkflowFunctionDef *fd = wf->function(fn);
  if (!fd) {
    std::string names;
    for (const auto &f : wf->functions) names += (names.empty() ? "" : ", ") + f.name;
    throw_invalid("--autotune: workflow " + wname + " has no function " + fn + " (its functions: " + names + ")");
  }
  const std::string cname = wname + "." + fn;
  validate_class_name(cname, "--autotune (workflow name, a dot and the function)");
  JobOptions fo;
  fo.space = fd->space.empty() ? nullptr : fd->space.c_str();
  fo.metric = "time";
  fo.mode = "jobs";
  SpaceSpec space;
  ClassSettings wanted = settings_from(fo, conf, &space, st);
  wanted.gamma = wf->gamma;
  wanted.budget = std::max(1, std::min(wf->budget, static_cast<int>(conf.engine.max_budget)));
  std::optional<AccountingLimits> job_acct;
  auto job_limits = [&]() -> const AccountingLimits & {
    if (!job_acct) job_acct = accounting_of(req);
    return *job_acct;
  };
  std::optional<ClassRecord> c = store.find_class(req->uid, cname);
  if (!c) {
    const Inventory inv = inventory_of(req);
    ClassSettings s = wanted;
    s.extra = make_class_extra(space, inv, req->billing_weights ? req->billing_weights : "", conf,
                               static_cast<std::size_t>(s.budget), class_seed(conf.engine.seed, req->uid, cname),
                               limits_of(req, job_limits()));
    ClassRecord tmp;
    tmp.owner = req->uid;
    tmp.name = cname;
    tmp.settings = s;
    const Decision initial = decide_new_class(tmp, propose_design);
    c = store.ensure_class(req->uid, cname, s);
    if (c->version == 0) store.apply_decision(c->id, c->version, initial);
    c = store.find_class_by_id(c->id);
  }
  const WorkflowRunRecord run = store.join_workflow_run(wf->id, fn);
  add_env(out, "AUTOTUNE_CLASS=" + cname);
  add_env(out, "AUTOTUNE_MODE=jobs");
  add_env(out, "AUTOTUNE_INCOMING=" + conf.core.state_dir + "/incoming");
  add_env(out, "AUTOTUNE_WORKFLOW=" + wname);
  add_env(out, "AUTOTUNE_RUN=" + std::to_string(run.seq));
  std::string comment = comment_prefix(*c);
  const std::string tail = " workflow=" + wname + " run=" + std::to_string(run.seq);
  const AccountingLimits &acct = job_limits();
  auto within = [&](const std::string &config) {
    return !acct.any() || acct.violation(slurm_request(Configuration::parse(config))).empty();
  };
  std::optional<TrialRecord> t;
  WorkflowFunctionRun row;
  row.run_id = run.id;
  row.function = fn;
  row.class_id = c->id;
  for (const WorkflowAssignment &a : parse_workflow_proposal(run.proposal)) {
    if (a.function != fn || !within(a.config)) continue;
    const TrialOrigin origin = a.origin == "best" ? TrialOrigin::best : a.origin == "initial" ? TrialOrigin::initial
                                                                                              : TrialOrigin::model;
    t = store.add_trial(c->id, Configuration::parse(a.config, "proposal").format(), origin, a.why, TrialStatus::pending);
    row.predicted_time = a.time;
    row.predicted_cost = a.cost;
    row.reason = a.why;
    break;
  }
  if (!t) {
    t = store.take_recommendation(c->id, std::nullopt, within);
    if (t) row.reason = "the function's initial design (" + (t->reason.empty() ? std::string("no model yet") : t->reason) + ")";
  }
  if (!t) {
    // A small space's initial design is used up while other functions still run theirs: the
    // function runs its first configuration again (a second measurement of it).  Among its first
    // trials only: job_submit reads a bounded number of rows whatever the class's history.
    for (const TrialRecord &old : store.first_trials(c->id, kInitialRepeatScan))
      if (within(old.config)) {
        t = store.add_trial(c->id, old.config, TrialOrigin::initial,
                            "initial design used up: repeats trial " + std::to_string(old.seq), TrialStatus::pending);
        row.reason = "the function's initial design is used up: its trial " + std::to_string(old.seq) +
                     "'s configuration again, while the other functions finish theirs";
        break;
      }
  }
  if (!t) {
    copy(out->admin_comment, sizeof out->admin_comment,
         comment + " no configuration to give (the run's proposal has none for " + fn +
             " within this job's limits, and its class's queue is empty); job runs as submitted" + tail);
    return;
  }
  row.trial_seq = t->seq;
  row.config = t->config;
  store.add_workflow_function(row);
  apply_config(out, Configuration::parse(t->config));
  add_env(out, "AUTOTUNE_TRIAL=" + std::to_string(t->seq));
  comment += " trial=" + std::to_string(t->seq) + " (" + to_string(t->origin) + ") config=" + t->config;
  copy(out->admin_comment, sizeof out->admin_comment, comment + metric_note(*c) + tail);
}

void decide_job(const at_submit_request *req, at_submit_decision *out) {
  SubmitState &st = state();
  const JobOptions opt = options_of(req);
  const char *cls = opt.cls;
  if (!cls) {
    const std::pair<const char *, const char *> given[] = {{opt.gamma, "--autotune-gamma"},
                                                           {opt.budget, "--autotune-budget"},
                                                           {opt.mode, "--autotune-mode"},
                                                           {opt.probe_batches, "--autotune-probe-batches"},
                                                           {opt.space, "--autotune-space"},
                                                           {opt.metric, "--autotune-metric"},
                                                           {opt.workflow, "--autotune-workflow"}};
    for (const auto &[value, name] : given)
      if (value) throw_invalid(std::string(name) + " needs --autotune=" + (opt.workflow ? "FUNCTION" : "CLASS"));
    return;  // not an autotune job
  }
  out->is_autotune = 1;
  // Its length is looked at no further than kMaxClassText (a longer name is refused unread).
  constexpr std::size_t kMaxClassText = 4096;
  if (::strnlen(cls, kMaxClassText + 1) > kMaxClassText)
    throw_invalid("--autotune: the class name is longer than " + std::to_string(kMaxClassText) +
                  " characters; allowed: 1-" + std::to_string(kClassNameMax) + " characters from A-Z a-z 0-9 . _ -");
  const std::string name = cls;
  validate_class_name(name, "--autotune");
  if (opt.workflow) {
    decide_workflow_job(req, opt, name, st, out);
    return;
  }
  if (req->is_het)
    throw_invalid("--autotune: class " + name + ": a heterogeneous job cannot be tuned (each component would "
                  "be given a configuration of its own); submit a job of one component");
  const Conf &conf = current_conf(st);
  SpaceSpec space;
  const ClassSettings wanted = settings_from(opt, conf, &space, st);  // validates every option
  Store &store = current_store(st, conf);
  const auto token = store.change_token();
  const std::string key = std::to_string(req->uid) + '/' + name;
  // The job's own accounting limits, looked up once, only when they can matter.
  std::optional<AccountingLimits> job_acct;
  auto job_limits = [&]() -> const AccountingLimits & {
    if (!job_acct) job_acct = accounting_of(req);
    return *job_acct;
  };
  // Is the class's answer within this job's own limits (a job that needs no rewrite is)?
  auto over_limits = [&](const at_submit_decision &d) {
    return d.rewrite && job_limits().any() ? job_limits().violation(request_of(d)) : std::string();
  };
  if (auto hit = st.answers.find(key); hit != st.answers.end()) {
    if (hit->second.token == token) {
      if (over_limits(hit->second.decision).empty()) {
        *out = hit->second.decision;
        ++st.cached;
        return;
      }
      // Beyond this job's limits: the store has what it may run instead (below).
    } else {
      st.answers.erase(hit);
    }
  }
  // Keeps *out as the answer for this class until the store changes (converged classes only).
  auto remember = [&] {
    if (st.answers.size() >= kMaxCachedAnswers) st.answers.clear();
    st.answers[key] = CachedAnswer{token, *out};
  };

  std::optional<ClassRecord> c = store.find_class(req->uid, name);
  bool writable = true;
  if (!c) {
    if (auto shared = store.find_shared_class(name)) {
      c = shared;
      writable = shared->allow_users;
    }
  }
  // The tasks of a job array share one request, so they would all run the same trial and only
  // the first one's measurement would count: while a class tunes across jobs, an array is refused
  // (once it converged, every task runs the best configuration and re-measures it).
  if (req->is_array && writable &&
      (c ? c->state == ClassState::tuning && c->settings.mode == ClassMode::jobs : wanted.mode == ClassMode::jobs))
    throw_invalid("--autotune: class " + name + (c ? " is still tuning" : " is new") +
                  ": every task of a job array would run the same trial, so arrays are refused until the "
                  "class has converged; submit the tasks as separate jobs, or use --autotune-mode=steps");
  if (!c) {
    // A new class: its problem is fixed now (space, node types, billing weights, engine options).
    const Inventory inv = inventory_of(req);
    ClassSettings s = wanted;
    s.extra = make_class_extra(space, inv, req->billing_weights ? req->billing_weights : "", conf,
                               static_cast<std::size_t>(s.budget), class_seed(conf.engine.seed, req->uid, name),
                               limits_of(req, job_limits()));
    ClassRecord tmp;
    tmp.owner = req->uid;
    tmp.name = name;
    tmp.settings = s;
    // The initial design (no model yet, none fitted here), computed before the class is stored:
    // a space without feasible configurations is invalid input and stores nothing.  The space is
    // walked once, and the design drawn from a sample of at most kNewClassPool of its feasible
    // configurations, so the cost is bounded whatever the space.
    const Decision initial = decide_new_class(tmp, propose_design);
    c = store.ensure_class(req->uid, name, s);
    const ClassSettings &got = c->settings;
    const bool same = c->version == 0 && got.space == s.space && got.extra == s.extra && got.gamma == s.gamma &&
                      got.budget == s.budget && got.mode == s.mode && got.probe_batches == s.probe_batches;
    // Another job may have created the class meanwhile, with settings of its own: decide afresh.
    if (!same || !store.apply_decision(c->id, c->version, initial)) refit(store, c->id, conf, propose_design);
    c = store.find_class_by_id(c->id);
  }
  add_env(out, "AUTOTUNE_CLASS=" + name);
  // A shared class closed to users' measurements is never tuned by a user's job, in either mode:
  // its steps-mode jobs run as submitted (autotune-run records nothing for them).
  add_env(out, std::string("AUTOTUNE_MODE=") + to_string(writable ? c->settings.mode : ClassMode::jobs));
  add_env(out, "AUTOTUNE_PROBE_BATCHES=" + std::to_string(c->settings.probe_batches));
  add_env(out, "AUTOTUNE_INCOMING=" + conf.core.state_dir + "/incoming");
  std::string comment = comment_prefix(*c);

  if (c->state == ClassState::converged || c->state == ClassState::stale) {
    const int used = store.count_trials(c->id, {TrialStatus::done, TrialStatus::failed, TrialStatus::timeout});
    if (!c->best_trial) {
      // The search ended without a successful trial (every one failed): nothing to run on.
      comment += ": no trial succeeded (" + std::to_string(used) + " ended";
      if (!c->state_reason.empty()) comment += "; " + c->state_reason;
      comment += "); job runs as submitted; 'autotune forget " + name + "' starts a new search";
      copy(out->admin_comment, sizeof out->admin_comment, comment);
      remember();
      return;
    }
    auto best = store.trial(*c->best_trial);
    if (!best) throw Error(Errc::corrupt, "class " + name + ": its best trial is missing");
    const Configuration cfg = Configuration::parse(best->config);
    apply_config(out, cfg);
    // Read-only: the re-measurement of the best is recorded by ingest when the job has run, so a
    // converged class costs slurmctld no write at all.
    const std::string prefix = comment;
    comment += " best config=" + best->config + " from " + std::to_string(used) + " trials";
    if (c->state == ClassState::stale) comment += " (stale: " + c->state_reason + ")";
    copy(out->admin_comment, sizeof out->admin_comment, comment + metric_note(*c));
    remember();
    if (const std::string why = over_limits(*out); !why.empty()) keep_within(store, *c, job_limits(), best->config, why, prefix, out);
    return;
  }
  if (c->settings.mode == ClassMode::steps && writable) {
    // The job tunes itself inside its allocation (autotune-run): its request stays as submitted.
    // Steps mode is always measured by throughput (time is refused above): no metric note, so that
    // autotune-run's annotation follows "tunes inside its allocation" directly.
    copy(out->admin_comment, sizeof out->admin_comment, comment + " mode=steps: tunes inside its allocation");
    return;
  }
  if (!writable) {
    copy(out->admin_comment, sizeof out->admin_comment,
         comment + ": still tuning and closed to users' measurements; job runs as submitted");
    return;
  }
  // The first queued configuration within the job's own limits (all of them, for a job with the
  // limits the class was created under).
  const AccountingLimits &acct = job_limits();
  std::function<bool(const std::string &)> within;
  if (acct.any())
    within = [&](const std::string &config) {
      return acct.violation(slurm_request(Configuration::parse(config))).empty();
    };
  std::optional<TrialRecord> t = store.take_recommendation(c->id, std::nullopt, within);
  if (!t && within && !store.queue(c->id).empty()) {
    copy(out->admin_comment, sizeof out->admin_comment,
         comment + " no queued configuration is within this job's QOS and association limits (" + acct.text +
             "); job runs as submitted");
    return;
  }
  if (!t) {
    const int running = store.count_trials(c->id, {TrialStatus::pending, TrialStatus::running});
    copy(out->admin_comment, sizeof out->admin_comment,
         comment + " no free configuration (" + std::to_string(running) + " trials running); job runs as submitted");
    return;
  }
  apply_config(out, Configuration::parse(t->config));
  add_env(out, "AUTOTUNE_TRIAL=" + std::to_string(t->seq));
  comment += " trial=" + std::to_string(t->seq) + " (" + to_string(t->origin) + ") config=" + t->config;
  copy(out->admin_comment, sizeof out->admin_comment, comment + metric_note(*c));
}

// Why the tuner could not answer an autotune job (at_submit's error other than AT_EINVAL): one
// word for programs, what happened, and what an administrator should do.
struct Unavailability {
  std::string reason, what, remedy;
};

Unavailability unavailability(int rc, const std::string &err, const SubmitState &st) {
  if (st.conf_broken)
    return {"config", "autotune.conf is broken",
            "fix " + st.conf_path + " (slurmctld's log and `autotune admin check` name the line)"};
  const std::string dir = st.conf ? st.conf->core.state_dir : "StateDir";
  const std::string db = st.conf ? Store::path_in(dir) : "the profile store";
  switch (rc) {
    case AT_EBUSY:
      return {"locked", "the profile store is locked by another process",
              "find the process that holds " + db + " (fuser " + db + ") and end it; jobs are tuned again once it is released"};
    case AT_ENOSPC:
      return {"full", "the file system of the profile store is full", "free space in " + dir};
    case AT_ECORRUPT:
      return {"damaged", "the profile store is damaged",
              "`autotune admin check` reports the damage; restore " + db +
                  " from a backup, or move it aside (with its -wal and -shm files) and run `autotune admin init` for an "
                  "empty store"};
    case AT_ENOENT:
      return {"missing", "the profile store is missing",
              "restore " + db + " from a backup, or run `autotune admin init` for an empty store"};
    default:
      return {"error", "the profile store cannot be used (" + err + ")", "slurmctld's log has the reason"};
  }
}

// What an autotune job the tuner could not answer is told (*out is all zero but is_autotune).
void tell_unavailable(const at_submit_request *req, int rc, const std::string &err, const SubmitState &st,
                      at_submit_decision *out) {
  const Unavailability u = unavailability(rc, err, st);
  const char *cls = options_of(req).cls;
  const std::string name = cls ? cls : "?";
  copy(out->admin_comment, sizeof out->admin_comment,
       "autotune: tuner unavailable (" + u.reason + ": " + u.what + "); job of class " + name +
           " runs as submitted, untuned, nothing recorded; administrator: " + u.remedy);
  copy(out->user_msg, sizeof out->user_msg,
       "autotune: tuner unavailable (" + u.reason + ": " + u.what + "): this job of class " + name +
           " runs as submitted, untuned, and records nothing; autotune-run runs the program on the job's own "
           "allocation (see autotune-run --help)\n"
           "autotune: administrator: " + u.remedy);
  add_env(out, "AUTOTUNE_UNAVAILABLE=" + u.reason);
}

}  // namespace
}  // namespace autotune

using namespace autotune;

extern "C" int at_submit_configure(const char *conf_path, char *err, size_t errlen) {
  return capi::firewall(err, errlen, [&] {
    SubmitState &st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    st.conf_path = conf_path ? conf_path : "";
    st.conf.reset();
    drop_store(st);
    st.conf_mtime = {};
    current_conf(st);
  });
}

namespace {
double thread_cpu_us() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}
}  // namespace

extern "C" int at_submit(const at_submit_request *req, at_submit_decision *out, char *err, size_t errlen) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = thread_cpu_us();
  SubmitState &st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  std::memset(out, 0, sizeof *out);
  int rc = capi::firewall(err, errlen, [&] { decide_job(req, out); });
  if (rc != AT_OK && rc != AT_EINVAL) {
    drop_store(st);  // reopen next time: the error may have been the connection's
    const bool autotune_job = out->is_autotune;
    std::memset(out, 0, sizeof *out);
    out->is_autotune = autotune_job;
    if (autotune_job) {
      const std::string why = err ? err : "";
      capi::firewall(nullptr, 0, [&] { tell_unavailable(req, rc, why, st, out); });
    }
  }
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  const auto cpu_us = static_cast<std::uint32_t>(thread_cpu_us() - cpu_start);
  if (out->is_autotune || rc != AT_OK) {
    if (st.micros.size() < kTimingWindow) {
      st.micros.push_back(static_cast<std::uint32_t>(us));
      st.cpu_micros.push_back(cpu_us);
    } else {
      st.micros[st.next % kTimingWindow] = static_cast<std::uint32_t>(us);
      st.cpu_micros[st.next++ % kTimingWindow] = cpu_us;
    }
    ++st.calls;
  }
  return rc;
}

extern "C" void at_submit_stats(char *buf, size_t len) {
  if (!buf || len == 0) return;
  SubmitState &st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  std::string s;
  if (st.micros.empty()) {
    s = "0 calls";
  } else {
    auto quantiles = [](std::vector<std::uint32_t> v) {
      std::sort(v.begin(), v.end());
      auto q = [&](double f) { return v[std::min(v.size() - 1, static_cast<std::size_t>(f * static_cast<double>(v.size())))]; };
      return "median " + std::to_string(q(0.5)) + " us, p99 " + std::to_string(q(0.99)) + " us, max " +
             std::to_string(v.back()) + " us";
    };
    s = std::to_string(st.calls) + " calls, wall " + quantiles(st.micros) + "; thread CPU " + quantiles(st.cpu_micros) +
        "; " + std::to_string(st.cached) + " answers for converged classes from memory";
  }
  std::strncpy(buf, s.c_str(), len - 1);
  buf[len - 1] = '\0';
}
