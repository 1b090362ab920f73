#include "views.hpp"

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

nlohmann::json trial_json(const TrialRecord &t) {
  nlohmann::json j = {{"trial", t.seq},
                      {"id", t.id},
                      {"config", t.config},
                      {"status", to_string(t.status)},
                      {"origin", to_string(t.origin)},
                      {"reason", t.reason},
                      {"job_id", t.job_id ? nlohmann::json(*t.job_id) : nlohmann::json()},
                      {"step_id", t.step_id ? nlohmann::json(*t.step_id) : nlohmann::json()},
                      {"created", t.created},
                      {"started", t.started ? nlohmann::json(*t.started) : nlohmann::json()},
                      {"ended", t.ended ? nlohmann::json(*t.ended) : nlohmann::json()}};
  if (t.measurement) {
    const Measurement &m = *t.measurement;
    auto opt = [](const std::optional<double> &x) { return x ? nlohmann::json(*x) : nlohmann::json(); };
    j["measurement"] = {{"samples_per_s", m.samples_per_s}, {"time_s", m.time_s},
                        {"cost", m.cost},                   {"score", opt(m.score)},
                        {"worker_cpu", opt(m.worker_cpu)},  {"worker_mem_mb", opt(m.worker_mem_mb)},
                        {"server_cpu", opt(m.server_cpu)},  {"server_mem_mb", opt(m.server_mem_mb)},
                        {"nodes", m.nodes}};
  }
  return j;
}

nlohmann::json view_json(const ClassView &v, bool full) {
  const ClassRecord &c = v.cls;
  auto opt = [](const std::optional<double> &x) { return x ? nlohmann::json(*x) : nlohmann::json(); };
  nlohmann::json j = {{"class", c.name},
                      {"owner", user_name(c.owner)},
                      {"owner_uid", c.owner},
                      {"shared", c.shared},
                      {"state", to_string(c.state)},
                      {"state_reason", c.state_reason},
                      {"stop_rule", c.stop_rule},
                      {"trials_used", v.used},
                      {"settings",
                       {{"space", c.settings.space},
                        {"gamma", c.settings.gamma},
                        {"budget", c.settings.budget},
                        {"mode", c.settings.mode},
                        {"probe_batches", c.settings.probe_batches}}},
                      {"t_ref", opt(c.t_ref)},
                      {"c_ref", opt(c.c_ref)}};
  if (c.shared) j["allow_users"] = c.allow_users;
  j["best"] = v.best ? trial_json(*v.best) : nlohmann::json();
  if (full) {
    // What the class is searched with (space, node types, billing weights, engine options):
    // autotune-run rebuilds the class's problem from it (tuner.hpp load_problem).
    try {
      j["settings"]["extra"] = nlohmann::json::parse(c.settings.extra);
    } catch (const std::exception &) {
      j["settings"]["extra"] = nullptr;
    }
    j["best_trial_id"] = c.best_trial ? nlohmann::json(*c.best_trial) : nlohmann::json();
    j["trials"] = nlohmann::json::array();
    for (const auto &t : v.trials) j["trials"].push_back(trial_json(t));
    j["queue"] = nlohmann::json::array();
    for (const auto &r : v.queue)
      j["queue"].push_back({{"config", r.config},
                            {"origin", to_string(r.origin)},
                            {"reason", r.reason},
                            {"predicted", opt(r.predicted)},
                            {"stddev", opt(r.stddev)}});
  }
  return j;
}

}  // namespace autotune::cli
