// Why the winner won: its score against the runner-up's, and what the model predicts for the
// untried configurations nearest to it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "autotune/conf.hpp"
#include "views.hpp"

namespace autotune::cli {

struct Neighbour {
  std::string config;
  double predicted = 0;  // model's predicted score
  double stddev = 0;     // its uncertainty (one standard deviation)
};

struct Explanation {
  std::optional<TrialRecord> winner, runner_up;
  std::optional<double> margin;      // (runner-up - winner) / runner-up
  std::vector<Neighbour> neighbours;  // nearest untried configurations, best predicted first
  std::string note;                   // when there is nothing (yet) to explain
};

Explanation explain(const ClassView &v, const Conf &conf);
std::string explanation_text(const Explanation &e);
nlohmann::json explanation_json(const Explanation &e);

}  // namespace autotune::cli
