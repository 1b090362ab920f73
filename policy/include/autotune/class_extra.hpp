// What a class is searched with, fixed when the class is created: ClassSettings::extra, a JSON
// object whose keys are the member names below ("stop" an object of ClassStop's, "limits" and
// "accounting_limits" objects of the limits' fields, "batch" the engine's batch mode name).
//
// Every key is optional, so that a store written by an older version still reads: a missing key
// (or a null) takes the default below, which for the engine and tuner settings is autotune.conf's
// own (EngineConf{}, TunerConf{}: the same constants, not a copy of them).  Keys of no member are
// ignored on reading and dropped on writing.
//
// Thread safety: plain data; the functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autotune/design.hpp"
#include "autotune/engine_conf.hpp"
#include "autotune/limits.hpp"
#include "autotune/space.hpp"
#include "autotune/stopping.hpp"
#include "autotune/store.hpp"
#include "autotune/strategy.hpp"
#include "autotune/tuner_conf.hpp"

namespace autotune {

// autotune.conf's defaults (a default-constructed EngineConf and TunerConf).
const EngineConf &engine_defaults();
const TunerConf &tuner_defaults();

// When the class's search stops ("stop"; StoppingOptions, stopping.hpp).
struct ClassStop {
  std::optional<std::size_t> budget;  // nullopt: the class's budget (ClassSettings::budget)
  double min_improvement = engine_defaults().min_improvement;
  std::size_t round_trials = engine_defaults().round_trials;
  double ei_fraction = engine_defaults().ei_fraction;
  std::size_t min_trials = engine_defaults().min_trials;
};

// One class whose trials informed this class's search (a warm start, autotune/history.hpp), and
// the weight its model had in the last proposal.
struct HistoryUse {
  std::int64_t class_id = 0;
  std::uint32_t owner = 0;  // uid
  bool shared = false;      // a shared class (created by an administrator)
  std::string name;
  double weight = 0;
};

struct ClassExtra {
  std::string space;  // SpaceSpec text (space.hpp); empty: the built-in defaults
  // The node types of the partition (a stored node type lacking a key reads as name "node", 1
  // node of 1 CPU and 1 MB, no GPU, no feature, billing weight 1).
  Inventory inventory;
  std::string billing_weights;  // the partition's TRESBillingWeights; empty: Slurm's default
  std::uint64_t seed = engine_defaults().seed;
  // autotune.conf InitialTrials; unset (stored as "auto"): by the class's objective
  // (EngineOptions::effective_initial_trials()).  Settings without the key read as 3, the
  // count every class stored before auto existed.
  std::optional<std::size_t> initial_trials = engine_defaults().initial_trials;
  double xi = engine_defaults().exploration_margin;
  BatchMode batch = engine_defaults().batch;  // stored as batch_mode_name(): "believer", "liar"
  // The score model (autotune.conf InputWarping, LinearTrend and Kernel; "linear_trend" stored
  // as trend_name(): "auto", "yes", "no"; "kernel" as kernel_name(): "ard", "additive",
  // "ard+additive").
  // A class created before these keys were stored searched with the tuner's fixed model: input
  // warping, no linear term, ard, EI alone; a missing key reads as that (not as autotune.conf's
  // default), so that such a class goes on as it began.
  bool input_warping = engine_defaults().input_warping;
  Trend linear_trend = engine_defaults().linear_trend;
  GpKernel kernel = engine_defaults().kernel;
  // The exploration (EngineOptions::explore, design.hpp; stored as explore_name()): a new class
  // takes the engine's default, automatic (by the class's gamma).
  Explore explore = Explore::automatic;
  // The time model (autotune.conf TimeModel; EngineOptions::time_model, stored as
  // time_model_name(): "auto", "better", "yes", "no"); a class created before the key was
  // stored reads as "no", the model it began with.  And whether the class's last proposal used
  // it (Proposal::time_modelled; for autotune show).  "no" also turns off the warm start's time
  // bases (EngineOptions::history_time_model).
  TimeModel time_model = TimeModel::automatic;
  bool time_modelled = false;
  // Whether the class's last model step proposed by the run time's form
  // (Proposal::form_modelled, EngineOptions::run_time_columns; for autotune show).
  bool form_modelled = false;
  // The failures' edge the class's last model step used (Proposal::failure_edge; for autotune
  // show): where three or more failed trials lie beyond every successful one along a feature.
  std::optional<EdgeUse> failure_edge;
  ClassStop stop;
  int queue_depth = tuner_defaults().queue_depth;
  double change_margin = tuner_defaults().change_margin;
  double drift_threshold = tuner_defaults().drift_threshold;
  int drift_confirm = tuner_defaults().drift_confirm;
  int retune_budget = tuner_defaults().retune_budget;
  // The current search (a class that drifted searches again: a new epoch): the trials with seq
  // < epoch_start belong to an earlier one; its budget (nullopt: stop.budget's); while it runs
  // after drift, the id of the best trial before it, which its winner must beat by change_margin.
  int epoch_start = 0;
  std::optional<std::size_t> epoch_budget;
  std::optional<std::int64_t> incumbent;
  // The limits of the job that created the class (none for a class created before they were).
  // `limits` keeps the partition's only: its `accounting` member is accounting_limits.
  std::optional<PartitionLimits> limits;
  std::optional<AccountingLimits> accounting_limits;
  // Warm start: an administrator marked this class's trials as history for every user's classes
  // with the same space and node types (`autotune admin history`); and the classes that informed
  // the last proposal with their weights, and the weight of the class's own model; and the trust
  // in those classes' failed trials as a prior on where this class's runs fail (0 to 1;
  // engine/history.hpp history_failure_trust()); or the classes set aside because they do not
  // predict each other (weight 0), with their coherence (engine/history.hpp WarmStart::coherence);
  // and whether the informing classes got no weight because the configuration they rank best
  // among the class's trials failed (EngineOptions::history_top_must_run).
  bool history_shared = false;
  std::vector<HistoryUse> history;
  std::optional<double> own_weight;
  std::optional<double> history_failure_trust;
  std::vector<HistoryUse> history_set_aside;
  std::optional<double> history_coherence;
  bool history_top_failed = false;

  // The engine's options for the class's search with objective `gamma`: seed, initial trials,
  // xi, batch mode, the model and the exploration (the stopping rules and history are the
  // caller's).
  EngineOptions engine_options(double gamma) const;
  // The stopping options of the current search: `stop`, with its budget.
  StoppingOptions stopping(int class_budget) const;
  // `limits` and `accounting_limits` together (0 = no limit for those absent).
  PartitionLimits partition_limits() const;
  // Sets both from `l`, each only when it has a limit (so a class without any keeps no key).
  void set_partition_limits(const PartitionLimits &l);
};

// The class's extra settings.  Throws Error(corrupt) naming the class when its text is not a JSON
// object of the types above (an unknown batch mode included).
ClassExtra class_extra(const ClassRecord &c);
// The JSON text of `x` for ClassSettings::extra (members that are nullopt are left out).
std::string format_class_extra(const ClassExtra &x);

}  // namespace autotune
