// The tuner: from a class's trials to its next state and recommendations.
//
// Policy only (docs/architecture.md, "Rules that hold everywhere": policy apart from storage):
// decide() is a pure function of the class record and its trials; refit() takes a snapshot from
// the store, decides, and applies the decision with optimistic concurrency
// (Store::apply_decision), retrying when a job took a recommendation meanwhile.  Everything slow
// (enumerating the space, fitting the Gaussian process) happens here, outside slurmctld:
// job_submit only takes the head of the precomputed queue.
//
// What a class is searched with is fixed when the class is created (ClassSettings::extra, JSON;
// class_extra.hpp): the node types of its partition, the partition's limits and billing weights,
// the engine options (seed, initial trials, stopping rules) and the canonical space.  A later
// change of autotune.conf affects new classes, never a running search.
//
// States:
//  tuning     the queue holds the engine's next proposals (initial design, then expected
//             improvement, pending-aware).  When a stopping rule fires the class converges on the
//             configuration with the lowest mean score.
//  converged  every job runs the best configuration, which is thereby re-measured.  If its
//             last DriftConfirm scores are each worse than its score at convergence by more than
//             DriftThreshold, the class goes back to tuning with RetuneBudget more trials (a new search epoch:
//             the model then learns only from trials of the new epoch, since the old ones
//             describe a system that changed), and says so.  A new best replaces the old one
//             only when it is better by more than ChangeMargin (hysteresis).
//  stale      drift was detected but no retune budget is left: jobs keep running the best, and
//             `autotune show` says why.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotune/class_extra.hpp"
#include "autotune/conf.hpp"
#include "autotune/config.hpp"
#include "autotune/design.hpp"
#include "autotune/history.hpp"
#include "autotune/limits.hpp"
#include "autotune/space.hpp"
#include "autotune/store.hpp"
#include "autotune/tuner_conf.hpp"

namespace autotune {

// Billing weights of a partition (Slurm's TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2").
// Mem weights are per MB unless suffixed K/M/G/T (per that unit).  Empty: Slurm's default,
// billing = allocated CPUs.
struct BillingWeights {
  double cpu = 1.0, mem_per_mb = 0.0, node = 0.0, gpu = 0.0;
  std::string text;  // as given
  static BillingWeights parse(const std::string &text);
};

// Billing units per second of a configuration (Slurm's billing TRES of its request).
double billing_rate(const Configuration &c, const BillingWeights &w);

// The search problem of one class, rebuilt from its settings.
struct ClassProblem {
  ClassExtra settings;  // as the class keeps them (class_extra.hpp): seed, engine options, epoch
  SpaceSpec space;
  Inventory inventory;
  PartitionLimits limits;
  BillingWeights billing;
  std::vector<Candidate> candidates;  // feasible for Slurm's uniform request (config.hpp)
  StoppingOptions stop;               // the current search's (settings.stopping())
  // The candidate whose configuration is `config`, if any.
  std::optional<std::size_t> index_of(const std::string &config) const;
};

// The settings' extra JSON for a new class: everything ClassProblem needs, fixed from now on.
std::string make_class_extra(const SpaceSpec &space, const Inventory &inventory, const std::string &billing_weights,
                             const Conf &conf, std::size_t budget, std::uint64_t seed,
                             const PartitionLimits &limits = {});
ClassProblem load_problem(const ClassRecord &c);
// The partition limits recorded with the class (none for a class created before they were).
PartitionLimits class_limits(const ClassRecord &c);

// A job of a class as slurmctld still knows it: its id, the trial its AdminComment names (0: none,
// e.g. a job of a converged class) and whether it has ended.
struct TrialJob {
  int seq = 0;
  std::int64_t job_id = 0;
  bool ended = false;
};
// The pending trials whose job will never run, by id.  A trial is pending from the submission
// (job_submit took it) until its job's end is recorded (ingest marks it running with the job's
// start time), and again after its job was requeued; Slurm calls no epilog for a job that ends before it starts
// (cancelled while pending, deadline passed): such a trial would hold its configuration and a
// slot of the budget for ever.  It is abandoned when every job naming it (by trial, or by job id
// once it started) has ended, or when none does and it was taken more than `grace` seconds before
// `now` (the job is gone from slurmctld's memory).
std::vector<std::int64_t> abandoned_trials(const std::vector<TrialRecord> &trials, const std::vector<TrialJob> &jobs,
                                           double now, double grace);

// The objective of a trial: T (seconds per sample; per job when the app reports no samples) and
// C (billing rate x T).  nullopt when the trial has no usable measurement.
struct TimeCost {
  double time = 0, cost = 0;
};
std::optional<TimeCost> time_cost(const ClassProblem &p, const TrialRecord &t);

// How many of a new class's feasible configurations job_submit draws its initial design from.
inline constexpr std::size_t kNewClassPool = 256;

// The tuner's decision for a class (pure).  `propose` computes the engine's next proposals:
// autotune::propose (engine/optimizer.hpp, fits the model) in the tools that refit, or
// propose_design (engine/design.hpp) where no model may be fitted (slurmctld creating a class,
// which has no trial yet).  Every function below that decides takes it the same way.
//
// Warm start (autotune/history.hpp): with `history` and `warm` (autotune::prepare_warm_start, in
// the tools that refit; never in slurmctld), the trials of the history classes -- scored with
// this class's gamma, each against its own reference -- inform the first search of the class
// (epoch 0).  The decision's extra then lists the classes whose models got weight, and the
// class's own model's weight (ClassExtra::history, own_weight).
struct HistoryClass {
  ClassRecord cls;
  std::vector<TrialRecord> trials;
};
using WarmStartFn = std::shared_ptr<const WarmStart> (*)(const CandidateSet &,
                                                         const std::vector<HistoryProblem> &,
                                                         const EngineOptions &);
Decision decide(const ClassRecord &c, const std::vector<TrialRecord> &trials, const Conf &conf,
                ProposeFn propose, const std::vector<HistoryClass> *history = nullptr,
                WarmStartFn warm = nullptr);

// The classes whose trials may inform class `c`'s search: the other classes of c's owner, and
// the classes an administrator marked as shared history (ClassExtra::history_shared, any owner),
// whose space (text) and node types are c's and which have at least two measured trials; the
// kMaxHistoryClasses most recently updated.  Nothing of another user's class unless shared.
inline constexpr std::size_t kMaxHistoryClasses = 10;
std::vector<HistoryClass> history_classes(Store &store, const ClassRecord &c);

// The first decision of a class that has no trial yet, as decide() would make it, but with the
// candidates a seeded sample of at most `pool` of the space's feasible configurations (all of
// them when there are no more): what job_submit stores with a new class, so that its cost is
// bounded by the walk over the space (kMaxCombinations constant-time checks) and `pool`
// candidates, whatever the space's size.  The class's later decisions (refit, outside slurmctld)
// use every candidate.  Throws as decide() does for a space with nothing feasible.
Decision decide_new_class(const ClassRecord &c, ProposeFn propose, std::size_t pool = kNewClassPool);

// Snapshot, decide, apply; retries up to `attempts` times when the class changed meanwhile.
// Returns the decision applied.  Throws Error(busy) when every attempt lost the race.
// With `warm`, the class's first search is warm-started from history_classes().
Decision refit(Store &store, std::int64_t class_id, const Conf &conf, ProposeFn propose, int attempts = 20,
               WarmStartFn warm = nullptr);

// The end of an in-allocation search (steps.hpp): a job that tuned inside its allocation stopped
// by `rule` on the configuration `winner`, which the class now converges on (the tuner's own
// stopping rules see only the class's whole space; the job searched what fits its allocation).
// The best trial is the one of `winner` with the lowest score, preferring trials of `job`.
// Scores and references are decide()'s.  Throws Error(not_found) when the class has no measured
// trial of `winner`.  A class that is not tuning is left as it is (returns its decide()).
Decision converge_on(const ClassRecord &c, const std::vector<TrialRecord> &trials, const Conf &conf,
                     ProposeFn propose, const std::string &winner, std::optional<std::int64_t> job, const std::string &rule,
                     const std::string &reason);
// converge_on() applied to the store, retrying like refit().
Decision converge(Store &store, std::int64_t class_id, const Conf &conf, ProposeFn propose,
                  const std::string &winner,
                  std::optional<std::int64_t> job, const std::string &rule, const std::string &reason,
                  int attempts = 20);

// Predictions of the class's model for `configs` (mean, stddev in score units); empty when the
// class has fewer than two successful trials.
struct ModelView {
  std::vector<std::string> configs;
  std::vector<double> mean, stddev;
};
ModelView predict_neighbours(const ClassRecord &c, const std::vector<TrialRecord> &trials, const Conf &conf,
                             ProposeFn propose, const std::string &around, std::size_t count);

}  // namespace autotune
