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

std::vector<std::string> status_row(const ClassView &v) {
  const ClassRecord &c = v.cls;
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
