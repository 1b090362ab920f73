#include "views.hpp"

#include <nlohmann/json.hpp>

#include "cli.hpp"

namespace autotune::cli {

ClassView make_view(Store &store, const ClassRecord &c) {
  ClassView v;
  v.cls = c;
  v.trials = store.trials(c.id);
  v.queue = store.queue(c.id);
  const TrialRecord *best = nullptr;
  for (const auto &t : v.trials) {
    if (t.status == TrialStatus::done || t.status == TrialStatus::failed || t.status == TrialStatus::timeout)
      ++v.used;
    if (c.best_trial && t.id == *c.best_trial) best = &t;
  }
  auto scored = [](const TrialRecord &t) {
    return t.status == TrialStatus::done && t.measurement && t.measurement->score;
  };
  if (!best) {  // no decision recorded yet: the lowest score so far
    for (const auto &t : v.trials)
      if (scored(t) && (!best || *t.measurement->score < *best->measurement->score)) best = &t;
  }
  if (best) {
    v.best = *best;
    const TrialRecord *ru = nullptr;
    for (const auto &t : v.trials)
      if (scored(t) && t.config != best->config && (!ru || *t.measurement->score < *ru->measurement->score))
        ru = &t;
    if (ru) v.runner_up = *ru;
  }
  return v;
}

ClassView summary_view(Store &store, const ClassRecord &c) {
  if (!c.best_trial) return make_view(store, c);  // the lowest score so far: read the trials
  std::optional<TrialRecord> best = store.trial(*c.best_trial);
  if (!best || best->class_id != c.id) return make_view(store, c);
  ClassView v;
  v.cls = c;
  v.used = store.count_trials(c.id, {TrialStatus::done, TrialStatus::failed, TrialStatus::timeout});
  v.best = std::move(best);
  return v;
}

std::optional<FunctionOf> function_of(Store &store, const ClassRecord &c) {
  if (c.shared) return std::nullopt;
  for (std::size_t dot = c.name.find('.'); dot != std::string::npos; dot = c.name.find('.', dot + 1)) {
    auto wf = store.find_workflow(c.owner, c.name.substr(0, dot));
    const std::string fn = c.name.substr(dot + 1);
    if (!wf || !wf->function(fn)) continue;
    FunctionOf f{*wf, fn, std::nullopt, std::nullopt};
    if (wf->best_run)
      for (const auto &r : store.workflow_runs(wf->id))
        if (r.seq == *wf->best_run) {
          f.best_run = r;
          for (const auto &fr : store.workflow_functions(r.id))
            if (fr.function == fn) f.best = fr;
        }
    return f;
  }
  return std::nullopt;
}

std::string function_class_text(const ClassRecord &c, const FunctionOf &f) {
  return "class '" + c.name + "' is function " + f.function + " of workflow " + f.workflow.name;
}

std::vector<std::string> status_row(const ClassView &v, const std::optional<FunctionOf> &fn) {
  const ClassRecord &c = v.cls;
  if (fn) {
    // The class's own state is that of its creation: the workflow's, and its best run's score.
    const std::string &reason = fn->workflow.state_reason;
    std::string stop = "-";
    if (fn->workflow.state == "converged" && reason.rfind("stopped by ", 0) == 0)
      stop = reason.substr(11, reason.find(':') == std::string::npos ? std::string::npos : reason.find(':') - 11);
    return {c.name,
            user_name(c.owner),
            fn->workflow.state + " (workflow " + fn->workflow.name + ")",
            std::to_string(v.used) + "/" + std::to_string(fn->workflow.budget) + " runs",
            fn->best ? fn->best->config : "-",
            fn->best_run && fn->best_run->score ? num(*fn->best_run->score) + " (run)" : "-",
            stop};
  }
  std::string score = "-", config = "-";
  if (v.best) {
    config = v.best->config;
    if (v.best->measurement && v.best->measurement->score) score = num(*v.best->measurement->score);
  }
  std::string owner = c.shared ? "(shared)" : user_name(c.owner);
  return {c.name,
          owner,
          to_string(c.state),
          std::to_string(v.used) + "/" + std::to_string(c.settings.budget),
          config,
          score,
          c.stop_rule.empty() ? "-" : c.stop_rule};
}

nlohmann::json trial_json(const TrialRecord &t) { return trial_to_json(t); }

nlohmann::json view_json(const ClassView &v, bool full) {
  ClassExport e;
  e.cls = v.cls;
  e.owner_name = user_name(v.cls.owner);
  e.trials_used = v.used;
  e.best = v.best;
  if (full) {
    e.trials = v.trials;
    e.queue = v.queue;
  }
  return class_to_json(e, full);
}

}  // namespace autotune::cli
