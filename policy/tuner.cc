#include "autotune/tuner.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "autotune/candidates.hpp"
#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/objective.hpp"
#include "autotune/design.hpp"
#include "autotune/rng.hpp"
#include "autotune/units.hpp"

namespace autotune {

// ---- billing ---------------------------------------------------------------------------------

BillingWeights BillingWeights::parse(const std::string &text) {
  BillingWeights w;
  w.text = text;
  if (text.empty()) return w;  // Slurm's default: billing = CPUs
  w.cpu = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw_invalid("TRESBillingWeights: '" + item + "' is not TRES=WEIGHT");
    std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char ch) { return std::tolower(ch); });
    double per = 1;  // the unit of a memory weight, in MB
    if (!val.empty() && std::isalpha(static_cast<unsigned char>(val.back()))) {
      const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(val.back())));
      val.pop_back();
      if (u == 'K') per = 1.0 / 1024;
      else if (u == 'M') per = 1;
      else if (u == 'G') per = 1024;
      else if (u == 'T') per = 1024.0 * 1024;
      else throw_invalid("TRESBillingWeights: '" + item + "' has an unknown unit");
    }
    const double v = parse_double("TRESBillingWeights " + key, val, 0, 1e12);
    if (key == "cpu") w.cpu = v;
    else if (key == "mem") w.mem_per_mb = v / per;
    else if (key == "node") w.node = v;
    else if (key == "gres/gpu" || key.rfind("gres/gpu:", 0) == 0) w.gpu = v;
    // other TRES (licenses, energy, ...) are not part of a configuration
  }
  return w;
}

double billing_rate(const Configuration &c, const BillingWeights &w) {
  const SlurmRequest r = slurm_request(c);
  const double cpus = static_cast<double>(r.ntasks) * r.cpus_per_task;
  const double mem = cpus * static_cast<double>(r.mem_per_cpu_mb);
  double rate = w.cpu * cpus + w.mem_per_mb * mem + w.node * r.nodes +
                w.gpu * static_cast<double>(r.ntasks) * r.gpus_per_task;
  if (!(rate > 0)) rate = cpus;  // weights that bill nothing of this request: fall back to CPUs
  return rate;
}

// ---- the class's problem ---------------------------------------------------------------------

std::optional<std::size_t> ClassProblem::index_of(const std::string &config) const {
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].config.format() == config) return i;
  return std::nullopt;
}

std::string make_class_extra(const SpaceSpec &space, const Inventory &inventory, const std::string &billing_weights,
                             const Conf &conf, std::size_t budget, std::uint64_t seed,
                             const PartitionLimits &limits) {
  const EngineConf &e = conf.engine;
  const StoppingOptions st = e.stopping(budget);
  ClassExtra x;
  x.space = space.format();
  x.inventory = inventory;
  x.billing_weights = billing_weights;
  x.seed = seed;
  x.initial_trials = e.initial_trials;
  x.xi = e.exploration_margin;
  x.batch = e.batch;
  x.input_warping = e.input_warping;
  x.linear_trend = e.linear_trend;
  x.kernel = e.kernel;
  x.time_model = e.time_model;
  x.stop.budget = st.budget;
  x.stop.min_improvement = st.min_improvement;
  x.stop.round_trials = st.round_trials;
  x.stop.ei_fraction = st.ei_fraction;
  x.stop.min_trials = st.min_trials;
  x.queue_depth = conf.tuner.queue_depth;
  x.change_margin = conf.tuner.change_margin;
  x.drift_threshold = conf.tuner.drift_threshold;
  x.drift_confirm = conf.tuner.drift_confirm;
  x.retune_budget = conf.tuner.retune_budget;
  x.epoch_start = 0;
  x.epoch_budget = budget;
  x.set_partition_limits(limits);
  return format_class_extra(x);
}

namespace {

// The stream of the class's seed that samples job_submit's design pool (design.cc uses 1-3).
constexpr std::uint64_t kStreamPool = 4;

bool fits_slurm_request(const Configuration &c, const NodeType &t) {
  const SlurmRequest r = slurm_request(c);
  return r.cpus_per_node() <= t.cpus && r.mem_per_node_mb() <= t.mem_mb &&
         r.gpus_per_task * r.max_tasks_per_node() <= t.gpus && r.nodes <= t.count;
}

struct Scored {
  const TrialRecord *trial;
  double score;
};

// The problem of class `c`, whose extra settings are `x`.  With `pool` > 0, the candidates are a
// seeded uniform sample of at most `pool` of the feasible configurations (in enumeration order),
// so that what follows the walk costs no more than `pool` candidates do.
ClassProblem problem_of(const ClassRecord &c, ClassExtra x, std::size_t pool = 0) {
  ClassProblem p;
  if (!x.space.empty()) p.space = SpaceSpec::parse(x.space, "class space", kMaxStoredSpaceText);  // empty: built-in defaults
  p.inventory = x.inventory;
  p.limits = x.partition_limits();
  p.billing = BillingWeights::parse(x.billing_weights);
  p.stop = x.stopping(c.settings.budget);
  p.settings = std::move(x);
  if (p.inventory.types.empty()) throw Error(Errc::corrupt, "class " + c.name + ": no node types recorded");
  p.inventory.validate();
  std::string over_limit;  // why the first configuration that fits the nodes breaks a limit
  const bool limited = p.limits.any() || p.limits.accounting.any();
  std::size_t kept = 0;  // candidates within the limits so far
  Rng rng(p.settings.seed, kStreamPool);
  EnumerateOptions all;
  all.max_candidates = std::numeric_limits<std::size_t>::max();
  // A stored class keeps the space it was created with, even one of before job_submit's limit
  // was lowered (its refits run outside slurmctld); a new class's space is held to the limit.
  if (pool == 0) all.max_combinations = static_cast<double>(kMaxStoredCombinations);
  enumerate_each(p.space, p.inventory, all, [&](const Candidate &cand) {
    if (!fits_slurm_request(cand.config, p.inventory.types[cand.node_type])) return;
    if (limited)
      if (std::string why = p.limits.violation(slurm_request(cand.config)); !why.empty()) {
        if (over_limit.empty()) over_limit = cand.config.format() + " " + why;
        return;
      }
    ++kept;
    if (pool == 0 || p.candidates.size() < pool) {
      p.candidates.push_back(cand);
      if (pool) p.candidates.back().billing_rate = static_cast<double>(kept - 1);  // its place, for the order
    } else if (const std::uint64_t j = rng.below(kept); j < pool) {  // reservoir sampling
      p.candidates[j] = cand;
      p.candidates[j].billing_rate = static_cast<double>(kept - 1);
    }
  });
  if (pool)
    std::sort(p.candidates.begin(), p.candidates.end(),
              [](const Candidate &a, const Candidate &b) { return a.billing_rate < b.billing_rate; });
  for (auto &cand : p.candidates) cand.billing_rate = billing_rate(cand.config, p.billing);
  if (p.candidates.empty() && !over_limit.empty()) {
    const bool part = p.limits.any(), acct = p.limits.accounting.any();
    std::string which, elsewhere;
    if (part) which = "the partition's limits (" + p.limits.describe() + (acct ? ")" : "");
    if (part && acct) which += " and ";
    if (acct) which += "the job's QOS and association limits (" + p.limits.accounting.text;
    if (part && acct)
      elsewhere = "submit elsewhere";
    else
      elsewhere = part ? "submit to another partition" : "use another QOS or account";
    throw_invalid("no configuration of the space " + p.space.format() + " is within " + which + "; e.g. " +
                  over_limit + "); give --autotune-space values within them, or " + elsewhere);
  }
  if (p.candidates.empty())
    throw_invalid("no configuration of the space " + p.space.format() +
                  " fits the nodes when every task gets the larger role's CPUs and memory");
  return p;
}

}  // namespace

ClassProblem load_problem(const ClassRecord &c) { return problem_of(c, class_extra(c)); }

PartitionLimits class_limits(const ClassRecord &c) { return class_extra(c).partition_limits(); }

std::vector<std::int64_t> abandoned_trials(const std::vector<TrialRecord> &trials, const std::vector<TrialJob> &jobs,
                                           double now, double grace) {
  std::vector<std::int64_t> out;
  for (const auto &t : trials) {
    if (t.status != TrialStatus::pending) continue;
    bool named = false, live = false;
    for (const auto &j : jobs)
      if ((j.seq > 0 && j.seq == t.seq) || (t.job_id && j.job_id == *t.job_id)) {
        named = true;
        live = live || !j.ended;
      }
    if (named ? !live : now - t.created > grace) out.push_back(t.id);
  }
  return out;
}

std::optional<TimeCost> time_cost(const ClassProblem &p, const TrialRecord &t) {
  if (!t.measurement) return std::nullopt;
  const Measurement &m = *t.measurement;
  TimeCost tc;
  if (m.samples_per_s > 0) tc.time = 1.0 / m.samples_per_s;
  else if (m.time_s > 0) tc.time = m.time_s;
  else return std::nullopt;
  Configuration cfg;
  try {
    cfg = Configuration::parse(t.config);
  } catch (const Error &) {
    return std::nullopt;
  }
  tc.cost = billing_rate(cfg, p.billing) * tc.time;
  return tc;
}

// ---- decisions --------------------------------------------------------------------------------

namespace {

// decide() on the problem `p` of class `c`, whose settings are `x`.
// The history classes' trials as the engine's history problems on the candidates of `p`
// (configurations outside p's space are left out), each scored with `gamma` against its own
// first successful trial, with their run times (HistoryProblem::times); `from` gets the class of
// each problem.
std::vector<HistoryProblem> history_problems(const ClassProblem &p, double gamma,
                                             const std::vector<HistoryClass> &history,
                                             std::vector<const HistoryClass *> *from) {
  std::vector<HistoryProblem> out;
  for (const auto &h : history) {
    ClassProblem hp;
    try {
      hp = load_problem(h.cls);
    } catch (const Error &) {
      continue;  // a class whose settings do not read is no history
    }
    std::vector<const TrialRecord *> finished;
    for (const auto &t : h.trials)
      if (t.status == TrialStatus::done || t.status == TrialStatus::failed || t.status == TrialStatus::timeout)
        finished.push_back(&t);
    std::stable_sort(finished.begin(), finished.end(), [](const TrialRecord *a, const TrialRecord *b) {
      return a->seq < b->seq;
    });
    HistoryProblem one;
    one.name = std::to_string(out.size());
    Reference ref;
    for (const TrialRecord *t : finished) {
      const auto idx = p.index_of(t->config);
      if (!idx) continue;
      if (t->status != TrialStatus::done) {
        one.done.push_back(Observation::failure(*idx));
        continue;
      }
      const auto tc = time_cost(hp, *t);
      if (!tc || !(tc->time > 0) || !(tc->cost > 0)) continue;
      if (!ref.valid()) ref = make_reference(tc->time, tc->cost);
      one.done.push_back(Observation::ok(*idx, score(tc->time, tc->cost, ref, gamma)));
      one.times.push_back(Observation::ok(*idx, tc->time));
    }
    if (one.done.empty()) continue;
    out.push_back(std::move(one));
    from->push_back(&h);
  }
  return out;
}

// EngineOptions::score_factor of `p`'s candidates for an objective of `gamma` against `ref`:
// (1 - gamma) / T_ref + gamma rate / C_ref, rate the candidate's billing rate (its cost per
// second).  Null when some factor is not > 0 (billing weights of 0 at gamma 1).
std::shared_ptr<const std::vector<double>> score_factors(const ClassProblem &p, const Reference &ref,
                                                         double gamma) {
  if (!ref.valid()) return nullptr;
  auto f = std::make_shared<std::vector<double>>(p.candidates.size());
  for (std::size_t j = 0; j < f->size(); ++j) {
    const double rate = p.candidates[j].billing_rate;
    if (!(std::isfinite(rate) && rate >= 0)) return nullptr;
    (*f)[j] = score(1.0, rate, ref, gamma);  // one second of a run at that rate
    if (!((*f)[j] > 0)) return nullptr;
  }
  return f;
}

Decision decide_on(const ClassRecord &c, ClassExtra x, const ClassProblem &p, const std::vector<TrialRecord> &trials,
                   ProposeFn propose, const std::vector<HistoryClass> *history = nullptr,
                   WarmStartFn warm = nullptr) {
  const double change_margin = x.change_margin;
  const double drift_threshold = x.drift_threshold;
  const int drift_confirm = std::max(1, x.drift_confirm);
  const int retune_budget = x.retune_budget;

  Decision d;
  d.state = c.state;
  d.state_reason = c.state_reason;
  d.stop_rule = c.stop_rule;
  d.best_trial = c.best_trial;

  // Finished trials in the order they finished.
  std::vector<const TrialRecord *> finished;
  for (const auto &t : trials)
    if (t.status == TrialStatus::done || t.status == TrialStatus::failed || t.status == TrialStatus::timeout)
      finished.push_back(&t);
  std::stable_sort(finished.begin(), finished.end(), [](const TrialRecord *a, const TrialRecord *b) {
    const double ea = a->ended.value_or(a->created), eb = b->ended.value_or(b->created);
    return ea != eb ? ea < eb : a->seq < b->seq;
  });

  // The references: fixed once, from the first successful trial.
  Reference ref;
  if (c.t_ref && c.c_ref && *c.t_ref > 0 && *c.c_ref > 0) {
    ref = Reference{*c.t_ref, *c.c_ref};
  } else {
    for (const TrialRecord *t : finished)
      if (t->status == TrialStatus::done)
        if (auto tc = time_cost(p, *t); tc && tc->time > 0 && tc->cost > 0) {
          ref = make_reference(tc->time, tc->cost);
          break;
        }
  }
  if (ref.valid()) {
    d.t_ref = ref.time;
    d.c_ref = ref.cost;
  }

  // Every measured trial's score.
  std::map<std::int64_t, double> score_of;
  if (ref.valid())
    for (const TrialRecord *t : finished)
      if (t->status == TrialStatus::done)
        if (auto tc = time_cost(p, *t)) {
          const double s = score(tc->time, tc->cost, ref, c.settings.gamma);
          score_of[t->id] = s;
          d.scores.emplace_back(t->id, s);
        }

  auto trial_by_id = [&](std::int64_t id) -> const TrialRecord * {
    for (const auto &t : trials)
      if (t.id == id) return &t;
    return nullptr;
  };
  // The lowest mean score per configuration among trials with seq >= from; returns the trial
  // with that configuration's lowest score.
  auto best_of = [&](int from, double *mean_out) -> const TrialRecord * {
    std::map<std::string, std::pair<double, int>> sums;
    std::map<std::string, const TrialRecord *> rep;
    for (const TrialRecord *t : finished) {
      if (t->seq < from || !score_of.count(t->id)) continue;
      auto &s = sums[t->config];
      s.first += score_of[t->id];
      s.second += 1;
      if (!rep.count(t->config) || score_of[t->id] < score_of[rep[t->config]->id]) rep[t->config] = t;
    }
    const TrialRecord *best = nullptr;
    double best_mean = 0;
    for (const auto &[cfg, s] : sums) {
      const double mean = s.first / s.second;
      if (!best || mean < best_mean) {
        best = rep[cfg];
        best_mean = mean;
      }
    }
    if (mean_out) *mean_out = best_mean;
    return best;
  };
  auto best_queue = [&](const TrialRecord &b, const std::string &why) {
    Recommendation r;
    r.config = b.config;
    r.origin = TrialOrigin::best;
    r.reason = why;
    d.queue = {r};
  };

  int epoch_start = x.epoch_start;
  std::size_t epoch_budget = p.stop.budget;

  if (c.state == ClassState::converged || c.state == ClassState::stale) {
    const TrialRecord *incumbent = c.best_trial ? trial_by_id(*c.best_trial) : nullptr;
    if (!incumbent) {
      d.state = ClassState::tuning;  // the best trial is gone (e.g. forgotten): search again
      d.state_reason = "the best trial is missing: tuning again";
    } else {
      // Drift: the last DriftConfirm re-measurements of the best, each against its score when
      // the class converged (one slow job on a busy node is noise, not a changed system).
      const double conv = score_of.count(incumbent->id) ? score_of[incumbent->id] : 0;
      std::vector<const TrialRecord *> window;  // its last DriftConfirm re-measurements
      for (const TrialRecord *t : finished)
        if (t->config == incumbent->config && t->seq > incumbent->seq && t->status == TrialStatus::done &&
            score_of.count(t->id))
          window.push_back(t);
      if (window.size() > static_cast<std::size_t>(drift_confirm))
        window.erase(window.begin(), window.end() - drift_confirm);
      const bool drift = c.state == ClassState::converged && conv > 0 &&
                         window.size() == static_cast<std::size_t>(drift_confirm) &&
                         std::all_of(window.begin(), window.end(), [&](const TrialRecord *t) {
                           return score_of[t->id] > conv * (1 + drift_threshold);
                         });
      if (!drift) {
        best_queue(*incumbent, "the class converged on it");
        return d;
      }
      const TrialRecord *latest = window.back();
      const double now = score_of[latest->id];
      std::string seqs;
      for (const TrialRecord *t : window) seqs += (seqs.empty() ? "" : ", ") + std::to_string(t->seq);
      const std::string what = "the best configuration got " + format_double(std::round((now / conv - 1) * 1000) / 10) +
                               "% worse on re-measurement (score " + format_double(std::round(conv * 1000) / 1000) +
                               " -> " + format_double(std::round(now * 1000) / 1000) + "; " +
                               (drift_confirm == 1 ? "trial " + seqs
                                                   : "worse by more than " + format_double(drift_threshold * 100) +
                                                         "% in trials " + seqs) +
                               ")";
      if (retune_budget <= 0) {
        d.state = ClassState::stale;
        d.state_reason = what + "; no retune budget (RetuneBudget=0): jobs keep running it";
        best_queue(*incumbent, "stale: " + what);
        return d;
      }
      d.state = ClassState::tuning;
      d.state_reason = what + ": tuning again with " + std::to_string(retune_budget) + " more trials";
      d.stop_rule.clear();
      epoch_start = latest->seq;
      epoch_budget = static_cast<std::size_t>(retune_budget);
      x.epoch_start = epoch_start;
      x.epoch_budget = epoch_budget;
      x.incumbent = incumbent->id;  // what the retune's winner must beat by ChangeMargin
      d.extra = format_class_extra(x);
      // fall through to the search of the new epoch
    }
  }

  // ---- tuning: the engine's next proposals within the current epoch
  std::vector<Observation> obs;
  std::set<std::size_t> pending_set;
  for (const TrialRecord *t : finished) {
    if (t->seq < epoch_start) continue;
    auto idx = p.index_of(t->config);
    if (!idx) continue;
    if (t->status == TrialStatus::done && score_of.count(t->id)) obs.push_back(Observation::ok(*idx, score_of[t->id]));
    else if (t->status != TrialStatus::done) obs.push_back(Observation::failure(*idx));
  }
  for (const auto &t : trials)
    if ((t.status == TrialStatus::pending || t.status == TrialStatus::running) && t.seq >= epoch_start)
      if (auto idx = p.index_of(t.config)) pending_set.insert(*idx);
  const std::vector<std::size_t> pending(pending_set.begin(), pending_set.end());

  EngineOptions opts = x.engine_options(c.settings.gamma);
  opts.stop = p.stop;
  opts.stop.budget = epoch_budget;
  opts.score_factor = score_factors(p, ref, c.settings.gamma);
  const CandidateSet set = CandidateSet::from_candidates(p.candidates, p.inventory);
  std::vector<const HistoryClass *> informed;
  if (history && warm && !history->empty() && epoch_start == 0) {
    const std::vector<HistoryProblem> hp = history_problems(p, c.settings.gamma, *history, &informed);
    if (!hp.empty()) opts.history = warm(set, hp, opts);
    // Once the class has its references, the history's time bases times the class's factors
    // (EngineOptions::history_time_model).
    if (opts.history && opts.score_factor && opts.effective_history_time_model())
      opts.history = time_scored(opts.history, *opts.score_factor);
  }
  const Proposal prop = propose(set, obs, pending, static_cast<std::size_t>(std::max(1, x.queue_depth)), opts);
  // What the class keeps of the warm start for autotune show: the informing classes with their
  // weights, or those set aside, or (no history informs this proposal any more, e.g. an
  // administrator withdrew an offer) nothing.
  auto use_of = [&](const std::string &base, double weight) {
    const HistoryClass *h = informed[std::stoul(base)];
    return HistoryUse{h->cls.id, h->cls.owner, h->cls.shared, h->cls.name, weight};
  };
  const bool informs = opts.history && opts.history->size() > 0;
  const bool set_aside = opts.history && !opts.history->set_aside.empty();
  if (informs || set_aside || (warm && (!x.history.empty() || x.own_weight || !x.history_set_aside.empty()))) {
    x.history.clear();
    x.own_weight.reset();
    x.history_failure_trust.reset();
    x.history_set_aside.clear();
    x.history_coherence.reset();
    x.history_top_failed = false;
    if (informs) {
      for (std::size_t b = 0; b < opts.history->size() && b < prop.history_weights.size(); ++b)
        x.history.push_back(use_of(opts.history->names[b], prop.history_weights[b]));
      x.own_weight = prop.own_weight;
      x.history_failure_trust = prop.history_feasibility_trust;
      x.history_top_failed = prop.history_top_failed;
    } else if (set_aside) {  // the search is the cold one
      for (const auto &name : opts.history->set_aside) x.history_set_aside.push_back(use_of(name, 0));
      x.history_coherence = opts.history->coherence;
    }
    d.extra = format_class_extra(x);
  }
  // Whether the last model step modelled the run time (autotune show); a step without a model
  // (the design, a stop) leaves what the last one did.
  if (prop.modelled && prop.time_modelled != x.time_modelled) {
    x.time_modelled = prop.time_modelled;
    d.extra = format_class_extra(x);
  }
  // And whether it proposed by the run time's form.
  if (prop.modelled && prop.form_modelled != x.form_modelled) {
    x.form_modelled = prop.form_modelled;
    d.extra = format_class_extra(x);
  }
  // Likewise the failures' edge it used (autotune show).
  if (prop.modelled && prop.failure_edge != x.failure_edge) {
    x.failure_edge = prop.failure_edge;
    d.extra = format_class_extra(x);
  }

  double epoch_best_mean = 0;
  const TrialRecord *epoch_best = best_of(epoch_start, &epoch_best_mean);
  if (prop.stop.stopped()) {
    d.stop_rule = stop_rule_name(prop.stop.rule);
    if (!epoch_best) {
      d.state = ClassState::stale;
      d.state_reason = "stopped by " + d.stop_rule + " without a successful trial: " + prop.stop.reason;
      d.queue.clear();
      return d;
    }
    const TrialRecord *winner = epoch_best;
    // Hysteresis: after drift, the class's earlier best (the incumbent when the retune began) is
    // kept unless the retune's winner is better than its latest score by more than the margin.
    const TrialRecord *old = x.incumbent ? trial_by_id(*x.incumbent) : nullptr;
    if (x.incumbent) {
      x.incumbent.reset();
      d.extra = format_class_extra(x);
    }
    if (old && old->config != epoch_best->config) {
      double old_latest = score_of.count(old->id) ? score_of[old->id] : 0;
      for (const TrialRecord *t : finished)
        if (t->config == old->config && score_of.count(t->id)) old_latest = score_of[t->id];
      if (old_latest > 0 && !(epoch_best_mean < old_latest * (1 - change_margin))) winner = old;
    }
    d.state = ClassState::converged;
    d.best_trial = winner->id;
    d.state_reason = "stopped by " + d.stop_rule + ": " + prop.stop.reason;
    if (winner != epoch_best)
      d.state_reason += "; the earlier best is kept (the new one is not better by more than " +
                        format_double(change_margin * 100) + "%)";
    best_queue(*winner, "the class converged on it");
    return d;
  }
  d.state = ClassState::tuning;
  if (d.state_reason.empty() || c.state == ClassState::tuning)
    d.state_reason = std::to_string(obs.size()) + " of " + std::to_string(epoch_budget) + " trials done";
  if (epoch_best) d.best_trial = epoch_best->id;
  for (std::size_t j = 0; j < prop.indices.size(); ++j) {
    const std::size_t idx = prop.indices[j];
    Recommendation r;
    r.config = p.candidates[idx].config.format();
    // The first prop.designed picks are the design's (or the history's before the model), even
    // when the model ran for the rest of the queue or for the weights.
    const bool by_model = prop.modelled && j >= prop.designed;
    const bool warm_pick = !prop.modelled && opts.history && opts.history->size() > 0;
    r.origin = by_model || warm_pick ? TrialOrigin::model : TrialOrigin::initial;
    r.reason = by_model    ? "largest expected improvement"
               : warm_pick ? "warm start: the best predicted by the classes it learns from"
                           : "initial design (spread over the space)";
    if (by_model && idx < prop.predictions.size()) {
      r.predicted = prop.predictions[idx].mean;
      r.stddev = prop.predictions[idx].std;
    }
    d.queue.push_back(std::move(r));
  }
  return d;
}

}  // namespace

Decision decide(const ClassRecord &c, const std::vector<TrialRecord> &trials, const Conf & /*conf*/,
                ProposeFn propose, const std::vector<HistoryClass> *history, WarmStartFn warm) {
  ClassExtra x = class_extra(c);
  const ClassProblem p = problem_of(c, x);
  return decide_on(c, std::move(x), p, trials, propose, history, warm);
}

namespace {

bool same_node_types(const Inventory &a, const Inventory &b) {
  if (a.types.size() != b.types.size()) return false;
  for (std::size_t i = 0; i < a.types.size(); ++i) {
    const NodeType &s = a.types[i], &t = b.types[i];
    if (s.name != t.name || s.cpus != t.cpus || s.mem_mb != t.mem_mb || s.gpus != t.gpus || s.features != t.features)
      return false;
  }
  return true;
}

}  // namespace

std::vector<HistoryClass> history_classes(Store &store, const ClassRecord &c) {
  const ClassExtra x = class_extra(c);
  std::vector<ClassRecord> candidates = store.list_classes(c.owner);
  for (auto &s : store.list_history_classes())
    if (s.owner != c.owner) candidates.push_back(std::move(s));
  std::vector<ClassRecord> matching;
  for (auto &h : candidates) {
    if (h.id == c.id || h.settings.mode != c.settings.mode) continue;
    try {
      const ClassExtra hx = class_extra(h);
      if (h.owner != c.owner && !hx.history_shared) continue;
      if (hx.space != x.space || !same_node_types(hx.inventory, x.inventory)) continue;
    } catch (const Error &) {
      continue;
    }
    matching.push_back(std::move(h));
  }
  std::stable_sort(matching.begin(), matching.end(),
                   [](const ClassRecord &a, const ClassRecord &b) { return a.updated > b.updated; });
  std::vector<HistoryClass> out;
  for (auto &h : matching) {
    if (out.size() >= kMaxHistoryClasses) break;
    if (store.count_trials(h.id, {TrialStatus::done}) < 2) continue;
    HistoryClass hc;
    hc.trials = store.trials(h.id);
    hc.cls = std::move(h);
    out.push_back(std::move(hc));
  }
  return out;
}

Decision decide_new_class(const ClassRecord &c, ProposeFn propose, std::size_t pool) {
  ClassExtra x = class_extra(c);
  const ClassProblem p = problem_of(c, x, pool);
  return decide_on(c, std::move(x), p, {}, propose);
}

Decision refit(Store &store, std::int64_t class_id, const Conf &conf, ProposeFn propose, int attempts,
               WarmStartFn warm) {
  for (int i = 0; i < attempts; ++i) {
    auto c = store.find_class_by_id(class_id);
    if (!c) throw Error(Errc::not_found, "class " + std::to_string(class_id) + " is gone");
    const auto trials = store.trials(class_id);
    std::vector<HistoryClass> history;
    if (warm && c->state == ClassState::tuning) history = history_classes(store, *c);
    Decision d = decide(*c, trials, conf, propose, &history, warm);
    if (store.apply_decision(class_id, c->version, d)) return d;
  }
  throw Error(Errc::busy, "the class kept changing while its next configurations were computed");
}

Decision converge_on(const ClassRecord &c, const std::vector<TrialRecord> &trials, const Conf &conf,
                     ProposeFn propose, const std::string &winner, std::optional<std::int64_t> job, const std::string &rule,
                     const std::string &reason) {
  Decision d = decide(c, trials, conf, propose);
  if (c.state != ClassState::tuning) return d;
  std::map<std::int64_t, double> score_of(d.scores.begin(), d.scores.end());
  const TrialRecord *best = nullptr;
  auto better = [&](const TrialRecord &t) {
    if (!best) return true;
    const bool mine = job && t.job_id == job, best_mine = job && best->job_id == job;
    if (mine != best_mine) return mine;
    return score_of[t.id] < score_of[best->id];
  };
  for (const auto &t : trials)
    if (t.config == winner && t.status == TrialStatus::done && score_of.count(t.id) && better(t)) best = &t;
  if (!best) throw Error(Errc::not_found, "class " + c.name + " has no measured trial of " + winner);
  d.state = ClassState::converged;
  d.best_trial = best->id;
  d.stop_rule = rule;
  d.state_reason = reason;
  Recommendation r;
  r.config = best->config;
  r.origin = TrialOrigin::best;
  r.reason = "the class converged on it";
  d.queue = {r};
  return d;
}

Decision converge(Store &store, std::int64_t class_id, const Conf &conf, ProposeFn propose,
                  const std::string &winner,
                  std::optional<std::int64_t> job, const std::string &rule, const std::string &reason,
                  int attempts) {
  for (int i = 0; i < attempts; ++i) {
    auto c = store.find_class_by_id(class_id);
    if (!c) throw Error(Errc::not_found, "class " + std::to_string(class_id) + " is gone");
    const auto trials = store.trials(class_id);
    Decision d = converge_on(*c, trials, conf, propose, winner, job, rule, reason);
    if (store.apply_decision(class_id, c->version, d)) return d;
  }
  throw Error(Errc::busy, "the class kept changing while its search was ended");
}

ModelView predict_neighbours(const ClassRecord &c, const std::vector<TrialRecord> &trials, const Conf &conf,
                             ProposeFn propose, const std::string &around, std::size_t count) {
  ModelView v;
  ClassProblem p = load_problem(c);
  Decision d = decide(c, trials, conf, propose);  // for the scores
  if (!d.t_ref || !d.c_ref) return v;
  std::map<std::int64_t, double> score_of(d.scores.begin(), d.scores.end());
  std::vector<Observation> obs;
  std::set<std::size_t> tried;
  for (const auto &t : trials) {
    auto idx = p.index_of(t.config);
    if (!idx) continue;
    if (t.status == TrialStatus::done && score_of.count(t.id)) {
      obs.push_back(Observation::ok(*idx, score_of[t.id]));
      tried.insert(*idx);
    } else if (t.status == TrialStatus::failed || t.status == TrialStatus::timeout) {
      obs.push_back(Observation::failure(*idx));
      tried.insert(*idx);
    }
  }
  auto centre = p.index_of(around);
  if (!centre) return v;
  // The class's model (its linear term by the class's gamma); only its predictions are read.
  EngineOptions opts = p.settings.engine_options(c.settings.gamma);
  opts.explore = Explore::none;
  opts.run_time_columns.reset();  // it proposes; the predictions are the Gaussian process's
  opts.stop.budget = 0;  // no stopping: we want the model
  opts.stop.min_improvement = 0;
  opts.stop.ei_fraction = 0;
  opts.score_factor = score_factors(p, Reference{*d.t_ref, *d.c_ref}, c.settings.gamma);
  const CandidateSet set = CandidateSet::from_candidates(p.candidates, p.inventory);
  const Proposal prop = propose(set, obs, {}, 1, opts);
  if (!prop.modelled || prop.predictions.size() != p.candidates.size()) return v;
  const Eigen::MatrixXd &X = set.encoded();
  std::vector<std::pair<double, std::size_t>> dist;
  for (std::size_t i = 0; i < p.candidates.size(); ++i)
    if (!tried.count(i)) dist.emplace_back(X.cols() ? (X.row(static_cast<Eigen::Index>(i)) - X.row(static_cast<Eigen::Index>(*centre))).norm() : 0.0, i);
  std::sort(dist.begin(), dist.end());
  for (std::size_t k = 0; k < dist.size() && k < count; ++k) {
    const std::size_t i = dist[k].second;
    v.configs.push_back(p.candidates[i].config.format());
    v.mean.push_back(prop.predictions[i].mean);
    v.stddev.push_back(prop.predictions[i].std);
  }
  return v;
}

}  // namespace autotune
