#include "workflow_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "autotune/candidates.hpp"
#include "autotune/error.hpp"
#include "autotune/objective.hpp"
#include "autotune/rng.hpp"
#include "autotune/stopping.hpp"
#include "autotune/tuner.hpp"
#include "autotune/units.hpp"
#include "autotune/workflow.hpp"
#include "autotune/workflow_search.hpp"

namespace autotune {

namespace {

std::string fmt(double v, const char *f = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::optional<ClassRecord> function_class(Store &store, const WorkflowRecord &wf, const std::string &fn) {
  return store.find_class(wf.owner, wf.name + "." + fn);
}

}  // namespace

Workflow workflow_of(const WorkflowRecord &wf) { return Workflow::parse(wf.definition, "workflow " + wf.name); }

std::vector<std::vector<std::string>> workflow_stages(const WorkflowRecord &wf) { return workflow_stages(workflow_of(wf)); }

std::vector<std::vector<std::string>> workflow_stages(const Workflow &w) {
  const Stages st = cut_stages(w);
  std::vector<std::vector<std::string>> out;
  for (const auto &stage : st.stage) {
    out.emplace_back();
    for (std::size_t i : stage) out.back().push_back(w.functions[i].name);
  }
  return out;
}

std::optional<double> run_critical_path(const WorkflowRecord &wf, const std::vector<WorkflowFunctionRun> &measured) {
  const Workflow w = workflow_of(wf);
  std::vector<double> t(w.functions.size(), -1);
  for (const auto &m : measured)
    if (auto i = w.find(m.function); i && m.status == "done" && m.time_s) t[*i] = *m.time_s;
  for (double x : t)
    if (x < 0) return std::nullopt;
  return critical_path(w, t);
}

// The adapter to the workflow search (workflow_search.hpp): each function's candidates are its
// class's (enumerated on the partition's node types the class was created with) with their
// billing rates; each completed run (done, or with failed functions) is one WorkflowRun of the
// candidates its functions ran.  Runs with a function cancelled, missing, or on a configuration
// outside its class's candidates are left out.
WorkflowPlan plan_workflow(Store &store, const Conf &conf, const WorkflowRecord &wf) {
  WorkflowPlan plan;
  plan.t_ref = wf.t_ref;
  plan.c_ref = wf.c_ref;
  const Workflow w = workflow_of(wf);
  std::vector<ClassProblem> problems;
  std::vector<FunctionCandidates> fc;
  for (const auto &f : w.functions) {
    const auto c = function_class(store, wf, f.name);
    if (!c) {
      plan.state_reason = "function " + f.name + " has not run yet";
      return plan;
    }
    problems.push_back(load_problem(*c));
    FunctionCandidates cand;
    cand.candidates = CandidateSet::from_candidates(problems.back().candidates, problems.back().inventory);
    for (const auto &x : problems.back().candidates) cand.rate.push_back(x.billing_rate);
    fc.push_back(std::move(cand));
  }
  std::vector<WorkflowRun> runs;
  std::vector<int> seqs;  // the run each of `runs` is
  for (const auto &r : store.workflow_runs(wf.id)) {
    if (r.state != "done" && r.state != "incomplete") continue;
    WorkflowRun run;
    run.functions.resize(w.functions.size());
    std::vector<char> seen(w.functions.size(), 0);
    bool usable = true;
    for (const auto &f : store.workflow_functions(r.id)) {
      const auto i = w.find(f.function);
      if (!i) continue;
      const auto k = problems[*i].index_of(f.config);
      if (!k || f.status == "cancelled" || f.status == "pending") {
        usable = false;
        break;
      }
      FunctionMeasurement &m = run.functions[*i];
      m.candidate = *k;
      m.failed = f.status != "done" || !f.time_s || !(*f.time_s > 0);
      if (!m.failed) {
        m.time = *f.time_s;
        m.cost = f.cost && *f.cost > 0 ? *f.cost : problems[*i].candidates[*k].billing_rate * m.time;
      }
      seen[*i] = 1;
    }
    if (!usable || std::count(seen.begin(), seen.end(), 1) != static_cast<long>(seen.size())) continue;
    runs.push_back(std::move(run));
    seqs.push_back(r.seq);
  }
  WorkflowSearchOptions o = workflow_search_options(w);
  // The site's InitialTrials (autotune.conf) is the number of runs of the initial designs, as it
  // is the number of a class's initial trials; auto: kInitialTrials (a class's smaller design
  // where time counts, design.hpp, was measured on single jobs, not on workflows).
  o.initial_runs = std::max<std::size_t>(1, conf.engine.initial_trials.value_or(kInitialTrials));
  o.seed = Rng(static_cast<std::uint64_t>(wf.owner) * 1000003u + static_cast<std::uint64_t>(wf.id), 17).next();
  if (wf.t_ref && wf.c_ref && *wf.t_ref > 0 && *wf.c_ref > 0) o.reference = make_reference(*wf.t_ref, *wf.c_ref);
  const WorkflowProposal p = propose_workflow(w, fc, runs, o);
  if (p.best_run) plan.best_run = seqs[*p.best_run];
  if (p.stopped() || p.functions.empty()) {
    plan.state = "converged";
    plan.state_reason = std::string("stopped by ") + stop_rule_name(p.stop.rule) + ": " + p.stop.reason;
    if (!p.best_run) {
      plan.state_reason += "; no run succeeded, so jobs run as submitted";
      return plan;
    }
    plan.state_reason += "; best run " + std::to_string(*plan.best_run) + " (score " + fmt(p.best_score) + ")";
    for (const auto &r : store.workflow_runs(wf.id))
      if (r.seq == *plan.best_run) {
        std::vector<WorkflowAssignment> as;
        for (const auto &f : store.workflow_functions(r.id))
          as.push_back({f.function, f.config, "best", "the best run's configuration (run " + std::to_string(r.seq) + ")",
                        f.time_s, f.cost});
        plan.proposal = format_workflow_proposal(as);
      }
    return plan;
  }
  std::vector<WorkflowAssignment> as;
  for (std::size_t i = 0; i < w.functions.size(); ++i) {
    const FunctionProposal &fp = p.functions[i];
    WorkflowAssignment a;
    a.function = w.functions[i].name;
    a.config = problems[i].candidates[fp.candidate].config.format();
    const bool modelled = !std::isnan(fp.time);
    a.origin = modelled ? "model" : "initial";
    if (modelled) {
      a.time = fp.time;
      a.cost = std::isnan(fp.cost) ? std::optional<double>() : std::optional<double>(fp.cost);
    }
    a.why = fp.reason.rfind("stage ", 0) == 0 ? fp.reason : "stage " + std::to_string(fp.stage + 1) + ": " + fp.reason;
    as.push_back(std::move(a));
  }
  plan.proposal = format_workflow_proposal(as);
  plan.state_reason = "run " + std::to_string(runs.size() + 1) + " of " + std::to_string(wf.budget) +
                      (std::isnan(p.time) ? ": initial designs"
                                          : ": stage proposal, predicted time " + fmt(p.time) + " s, cost " +
                                                fmt(p.cost) + ", score " + fmt(p.score));
  if (p.best_run) plan.state_reason += " (best run so far " + std::to_string(*plan.best_run) + ", score " + fmt(p.best_score) + ")";
  return plan;
}

std::vector<std::string> workflow_job_ended(Store &store, const Conf &conf, std::uint32_t uid,
                                            const std::string &workflow, int run_seq, const TrialRecord &trial,
                                            std::int64_t job_id, const std::map<std::string, double> &tier_bytes) {
  std::vector<std::string> log;
  std::optional<WorkflowRecord> wf = store.find_workflow(uid, workflow);
  if (!wf) {
    log.push_back("workflow " + workflow + " of uid " + std::to_string(uid) + " is gone (forgotten?); run not recorded");
    return log;
  }
  std::optional<WorkflowRunRecord> run;
  for (const auto &r : store.workflow_runs(wf->id))
    if (r.seq == run_seq) run = r;
  if (!run) {
    log.push_back("workflow " + workflow + ": no run " + std::to_string(run_seq) + "; nothing recorded");
    return log;
  }
  std::string fn;
  for (const auto &f : store.workflow_functions(run->id))
    if (f.class_id && *f.class_id == trial.class_id && f.trial_seq && *f.trial_seq == trial.seq) fn = f.function;
  if (fn.empty()) {
    log.push_back("workflow " + workflow + " run " + std::to_string(run_seq) + ": trial " + std::to_string(trial.seq) +
                  " is none of its functions'; nothing recorded");
    return log;
  }
  if (is_final(trial.status)) {
    WorkflowFunctionRun f;
    f.run_id = run->id;
    f.function = fn;
    f.status = to_string(trial.status);
    f.job_id = job_id;
    f.started = trial.started;
    f.ended = trial.ended;
    if (trial.measurement && trial.status == TrialStatus::done) {
      f.time_s = trial.measurement->time_s;
      f.cost = trial.measurement->cost;
    }
    const bool first = store.finish_workflow_function(f);
    if (first && !tier_bytes.empty()) {
      // The data this function passed on, by medium: summed over the run's functions.
      nlohmann::json t = nlohmann::json::parse(run->tier.empty() ? "{}" : run->tier, nullptr, false);
      if (!t.is_object()) t = nlohmann::json::object();
      for (const auto &[medium, bytes] : tier_bytes) t[medium] = t.value(medium, 0.0) + bytes;
      store.set_workflow_run_tier(run->id, t.dump());
      run->tier = t.dump();
    }
    if (first)
      log.push_back("workflow " + workflow + " run " + std::to_string(run_seq) + ": function " + fn + " " + f.status +
                    (f.time_s ? " in " + fmt(*f.time_s) + " s, cost " + fmt(f.cost.value_or(0)) : ""));
  }
  // Complete when every function it has ended, and it has them all or takes no more jobs.
  const std::vector<WorkflowFunctionRun> fs = store.workflow_functions(run->id);
  bool all_final = true, all_done = true;
  for (const auto &f : fs) {
    all_final = all_final && f.status != "pending";
    all_done = all_done && f.status == "done";
  }
  const bool complete = fs.size() == wf->functions.size();
  if (!all_final || (!complete && run->state == "open") || run->state == "done" || run->state == "incomplete")
    return log;
  WorkflowRunRecord r = *run;
  for (const auto &f : fs) {
    if (f.started) r.started = r.started ? std::min(*r.started, *f.started) : *f.started;
    if (f.ended) r.ended = r.ended ? std::max(*r.ended, *f.ended) : *f.ended;
  }
  if (r.started && r.ended) r.span_s = *r.ended - *r.started;
  r.state = complete && all_done ? "done" : "incomplete";
  if (r.state == "done") {
    r.time_s = run_critical_path(*wf, fs);
    double cost = 0;
    for (const auto &f : fs) cost += f.cost.value_or(0);
    r.cost = cost;
    if (!wf->t_ref || !wf->c_ref) {
      wf->t_ref = r.time_s;
      wf->c_ref = cost > 0 ? cost : 1.0;
    }
    r.score = (1 - wf->gamma) * *r.time_s / *wf->t_ref + wf->gamma * cost / *wf->c_ref;
  }
  store.finish_workflow_run(r);
  log.push_back("workflow " + workflow + " run " + std::to_string(run_seq) + " " + r.state +
                (r.score ? ": time " + fmt(*r.time_s) + " s (critical path), cost " + fmt(*r.cost) + ", score " +
                               fmt(*r.score)
                         : ""));
  if (wf->state == "converged") {
    WorkflowPlan keep;
    keep.state = wf->state;
    keep.state_reason = wf->state_reason;
    keep.best_run = wf->best_run;
    keep.t_ref = wf->t_ref;
    keep.c_ref = wf->c_ref;
    keep.proposal = wf->proposal;
    store.set_workflow_plan(wf->id, keep);
    return log;
  }
  const WorkflowPlan plan = plan_workflow(store, conf, *wf);
  store.set_workflow_plan(wf->id, plan);
  log.push_back("workflow " + workflow + ": " + plan.state + (plan.state_reason.empty() ? "" : " (" + plan.state_reason + ")"));
  return log;
}

}  // namespace autotune
