// The engine's section of autotune.conf: defaults of the search (every key is documented with
// its default in etc/autotune.conf).
//
//   InitialTrials=auto  DefaultBudget=20  MaxBudget=100  DefaultGamma=0.5  Seed=1
//   StopImprovement=0  RoundTrials=3  StopEIFraction=0  MinTrials=6
//   ExplorationMargin=0.01  BatchMode=believer  InputWarping=yes  LinearTrend=auto
//   Kernel=ard  TimeModel=auto
//   DefaultSpace=SPEC  SpaceLimits=SPEC   (space.hpp syntax)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "autotune/gp_options.hpp"
#include "autotune/space.hpp"
#include "autotune/stopping.hpp"
#include "autotune/strategy.hpp"

namespace autotune {

class RawConf;

struct EngineConf {
  // InitialTrials; unset (auto): by the class's objective (design.hpp, automatic_initial_trials()).
  std::optional<std::size_t> initial_trials;
  std::size_t default_budget = 20;
  std::size_t max_budget = 100;  // the largest budget a job may ask for
  double default_gamma = 0.5;
  std::uint64_t seed = 1;
  double min_improvement = 0.0;  // StopImprovement; 0 = rule off
  std::size_t round_trials = 3;
  double ei_fraction = 0.0;  // StopEIFraction; 0 = rule off (see etc/autotune.conf)
  std::size_t min_trials = 6;
  double exploration_margin = 0.01;
  bool input_warping = true;
  Trend linear_trend = Trend::automatic;  // LinearTrend (gp_options.hpp)
  GpKernel kernel = GpKernel::ard;  // Kernel (gp_options.hpp)
  TimeModel time_model = TimeModel::automatic;  // TimeModel (gp_options.hpp)
  BatchMode batch = BatchMode::kriging_believer;
  SpaceSpec default_space;  // empty: the built-in defaults of space.hpp
  SpaceSpec space_limits;   // empty: no limits

  // The stopping options for a class with `budget` trials.
  StoppingOptions stopping(std::size_t budget) const;
};

// Takes the keys above from `raw`.  Throws Error(invalid_argument) "FILE:LINE: Key: ..." for a
// malformed value, DefaultBudget > MaxBudget, or a DefaultSpace outside SpaceLimits.
void parse_engine_section(RawConf &raw, EngineConf &out);

}  // namespace autotune
