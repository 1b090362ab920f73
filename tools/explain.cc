#include "explain.hpp"

#include <nlohmann/json.hpp>

#include "autotune/optimizer.hpp"
#include "autotune/error.hpp"
#include "autotune/tuner.hpp"
#include "cli.hpp"

namespace autotune::cli {

Explanation explain(const ClassView &v, const Conf &conf) {
  Explanation e;
  if (!v.best) {
    e.note = "no measured trial yet";
    return e;
  }
  e.winner = v.best;
  e.runner_up = v.runner_up;
  if (v.runner_up && v.best->measurement && v.best->measurement->score && v.runner_up->measurement->score) {
    const double w = *v.best->measurement->score, r = *v.runner_up->measurement->score;
    if (r > 0) e.margin = (r - w) / r;
  }
  try {
    const ModelView m = predict_neighbours(v.cls, v.trials, conf, propose, v.best->config, 3);
    for (std::size_t i = 0; i < m.configs.size(); ++i) e.neighbours.push_back({m.configs[i], m.mean[i], m.stddev[i]});
    if (m.configs.empty()) e.note = "the model needs two successful configurations before it predicts";
  } catch (const Error &err) {
    e.note = std::string("no model predictions: ") + err.what();
  }
  return e;
}

std::string explanation_text(const Explanation &e) {
  std::string out = "\n";
  if (!e.winner) return out + "winner: none yet (" + e.note + ")\n";
  const auto score = [](const TrialRecord &t) {
    return t.measurement && t.measurement->score ? num(*t.measurement->score) : std::string("-");
  };
  out += "winner: trial " + std::to_string(e.winner->seq) + " " + e.winner->config + " score " + score(*e.winner) + "\n";
  if (e.runner_up) {
    out += "  runner-up: trial " + std::to_string(e.runner_up->seq) + " " + e.runner_up->config + " score " +
           score(*e.runner_up);
    if (e.margin) out += " (the winner is " + num(*e.margin * 100, 3) + "% lower)";
    out += "\n";
  } else {
    out += "  no other configuration measured yet\n";
  }
  if (!e.neighbours.empty()) {
    out += "  the model's predictions for the untried configurations nearest to the winner:\n";
    for (const auto &n : e.neighbours)
      out += "    " + n.config + "  predicted " + num(n.predicted) + " ± " + num(n.stddev, 2) + "\n";
  } else if (!e.note.empty()) {
    out += "  (" + e.note + ")\n";
  }
  return out;
}

nlohmann::json explanation_json(const Explanation &e) {
  nlohmann::json j;
  j["winner"] = e.winner ? trial_json(*e.winner) : nlohmann::json();
  j["runner_up"] = e.runner_up ? trial_json(*e.runner_up) : nlohmann::json();
  j["margin"] = e.margin ? nlohmann::json(*e.margin) : nlohmann::json();
  j["neighbours"] = nlohmann::json::array();
  for (const auto &n : e.neighbours)
    j["neighbours"].push_back({{"config", n.config}, {"predicted", n.predicted}, {"stddev", n.stddev}});
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

}  // namespace autotune::cli
