// The search without a model: the options of a class's search, what a proposal is, the initial
// design, and the part of a proposal that needs no Gaussian process.  propose() (optimizer.hpp)
// continues where propose_without_model() stops; programs that never fit a model (slurmctld's
// job_submit plugin, which only creates a class and its initial design) link this alone.
// The strategy itself is described in optimizer.hpp.
//
// Thread safety: pure; concurrent calls are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/candidates.hpp"
#include "autotune/engine_conf.hpp"
#include "autotune/gp_options.hpp"
#include "autotune/observation.hpp"
#include "autotune/stopping.hpp"
#include "autotune/strategy.hpp"

namespace autotune {

struct WarmStart;  // history.hpp

// Proposals that do not follow expected improvement, so that the search keeps exploring when the
// model has settled on one region (optimizer.hpp, step 4a):
//  none       every proposal after the initial design maximizes (constrained) EI;
//  spacefill  the untried candidate farthest from every tried or running one (in the encoded
//             inputs), weighted by its probability of running;
//  random     a seeded uniform draw among the untried candidates, kept with its probability of
//             running (else drawn again, up to 16 times);
//  local      the highest EI among the untried candidates nearest the incumbent (a trust region);
//  thompson   Thompson sampling: the lowest log score of one seeded joint draw from the score
//             model's posterior over (a bounded subset of) the untried candidates, among those
//             whose joint draw of the feasibility model's c(x) is > 0 (optimizer.hpp, step 8);
//  hedge      a portfolio (GP-Hedge, Hoffman, Brochu & de Freitas, UAI 2011) of EI, a lower
//             confidence bound and Thompson sampling, the arm drawn by EXP3's weights (Auer et
//             al. 2002) re-derived from the trials so far (optimizer.hpp, step 8);
//  automatic  by the objective (EngineOptions::gamma): without a warm start, thompson on every
//             proposal when kThompsonGammaLow <= gamma < kLocalGammaLow over numeric features,
//             and in a space with a categorical feature when kThompsonGammaLow <= gamma <
//             kCategoricalPowerGammaLow, or when gamma > kThompsonCategoricalGammaLow; local on
//             a share kLocalShare of the proposals
//             elsewhere over numeric features; with a warm start, thompson when the model has
//             the linear term (effective_linear_trend()) and gamma >= kLinearLowGammaBelow;
//             else none (bench/README.md, "An exploration chosen by the objective" and the
//             sections after it).
enum class Explore { none, spacefill, random, local, thompson, hedge, automatic };
// The lowest objective for which Explore::automatic is Thompson sampling without a warm start:
// chosen by bench/engine-cv on generated problems at gamma 0, 0.25, 0.5, 0.75 and 1, where
// scout-dev.csv did not contradict.  Its upper end: kLocalGammaLow over numeric features,
// kCategoricalPowerGammaLow in a space with a categorical feature (below).
constexpr double kThompsonGammaLow = 0.25;
// Without a warm start over numeric features (every Slurm class's space), Thompson sampling only
// below kLocalGammaLow; outside [kThompsonGammaLow, kLocalGammaLow) EI, with a share kLocalShare
// of the proposals after the design local search (Explore::local, a trust region around the
// incumbent) instead of EI alone: chosen on scout-dev.csv (seeds 1-50), bench/synthetic-table
// seeds 1, 2, 5 and 11 and the cliff shape's folds 1 and 2 at gamma 0 to 1, checked on synthetic
// seeds 7-10, cliff folds 31, 32, 41 and 42 and scout-dev.csv seeds 51-150 (bench/README.md,
// "Local search on a share of the proposals over numeric features").
constexpr double kLocalGammaLow = 0.4, kLocalShare = 0.4;
// ... and, in a space with a categorical feature (CandidateSet::has_categorical()) and without a
// warm start, above this gamma: chosen by bench/engine-cv on the parameter-server shapes (ps,
// ps-grid; folds 1 and 2 at gamma 0, 0.75, 0.875 and 1) and checked on folds 7 to 10 at gamma 1
// (bench/README.md, "Thompson sampling where a feature is categorical").  scout-dev.csv's
// spaces, and a Slurm class's (CandidateSet::from_candidates()), are all numeric.
constexpr double kThompsonCategoricalGammaLow = 0.75;
// In a space with a categorical feature, without a warm start, from gamma
// kCategoricalPowerGammaLow to below kFeasibilityPowerGammaLow (the linear term's band), the
// proposals are EI weighted by the probability of running to the power kFeasibilityPowerAuto, as
// from kFeasibilityPowerGammaLow on: at 0.5 instead of Thompson sampling, above it instead of
// the power 1.  On the parameter-server shapes the search failed more often than random search
// there (the ps shape: 42-49% of the trials against 34%).  Chosen on ps and ps-grid folds 1 and 2
// at gamma 0.5 (against the failure model's longer fit, and EI alone), checked on folds 31, 32,
// 41 and 42 at 0.5, 1 and 2 at 0.6 and 0.7, 31 and 32 at 0.6; below 0.5 (0, 0.25, 0.4, 0.45) it
// lost, and on the cliff shape (numeric) at 0.5 too (bench/README.md, "EI with the chance of
// running to the fourth power from gamma 0.5 where a feature is categorical").
constexpr double kCategoricalPowerGammaLow = 0.5;
// The objectives for which Trend::automatic adds the linear term: chosen the same way at gamma
// 0.25, 0.5 and 0.75, cold and with a warm start (bench/README.md, "A linear term chosen by the
// objective"); and below kLinearLowGammaBelow, where a warm-started search keeps EI alone (no
// Thompson sampling): cold, chosen on folds 1 and 2 at gamma 0 and 0.1 and checked on folds 21
// to 24 and scout-dev.csv; with a history, chosen on folds 21 and 22 (folds 1 and 2 split) and
// checked on folds 23 and 24 and scout-dev.csv (bench/README.md, "The linear term below gamma
// 0.25").
constexpr double kLinearGammaLow = 0.5, kLinearGammaHigh = 0.75, kLinearLowGammaBelow = 0.25;
// The objectives for which a warm start's history, by default, picks none of the initial design
// and earns none of it (EngineOptions::history_picks 0, history_confirm off): it acts through
// its gated weights only.  Chosen by bench/engine-cv with a related and a shuffled history on
// generated folds 3 and 4 at gamma 0, 0.5 and 0.75 and checked on folds 5 and 6 (bench/README.md,
// "A history that picks nothing where the linear term is on"): there, the history's picks cost
// more than they gained, and a misleading history's cost most.
constexpr double kHistoryDesignGammaLow = 0.5, kHistoryDesignGammaHigh = 0.75;
// The floor of the problem's own model's weight (EngineOptions::history_own_floor) by default:
// kHistoryOwnFloor from gamma kHistoryOwnFloorGammaLow on, else none.  Generated folds 1 and 2
// (bench/engine-cv, a related and a shuffled history, gamma 0, 0.25, 0.5, 0.75, 1) are level
// with it from gamma 0.25 on and chose none at gamma 0; synthetic histories of scout-dev.csv's
// shape (bench/synthetic-table seeds 1-3) chose 8 among 4, 8 and 16, and seeds 4-6 checked it
// (bench/README.md, "A floor under the problem's own weight").
constexpr double kHistoryOwnFloor = 8, kHistoryOwnFloorGammaLow = 0.25;
// The doubted history's extra space-filling trial (EngineOptions::history_doubt) by default:
// the second after the initial design, from gamma kHistoryDoubtGammaLow on, where
// history_confirm is on.  Chosen at gamma 1 among 2 and 3, and the test of the history at
// history_confirm's level or at 0 (or always), on generated folds 1 and 2 with scout-dev.csv's
// and synthetic histories (bench/synthetic-table seeds 1, 3, 5), with related and moved
// histories, and on scout-dev.csv with synthetic histories seeds 1-6; checked on folds 29 to 32
// and on scout-dev.csv with synthetic histories seeds 7-12.  At gamma 0.875 the same folds lost
// with it and at 0.25 they were level, so it is off below gamma 1 (bench/README.md, "A doubted
// history looks away once").
constexpr std::size_t kHistoryDoubt = 2;
constexpr double kHistoryDoubtGammaLow = 1;
// The coherence below which a history is set aside (EngineOptions::history_coherence): the
// shuffled copies of generated folds 1 and 2 and of scout-dev.csv measure -0.04 to 0.07 (raw
// scores), their related and moved histories and the synthetic workloads 0.18 to 0.78
// (bench/README.md, "A history whose problems do not predict each other is set aside").
constexpr double kHistoryCoherenceMin = 0.1;
// The initial design's size by default (EngineOptions::initial_trials unset): kSmallDesign trials
// for a cold search (no history informs it) over numeric features only with gamma <=
// kSmallDesignGammaHigh, else kInitialTrials.  Chosen between 2 and 3 by bench/engine-cv on
// generated folds 1 and 2 (cliff, ps, ps-grid) at gamma 0, 0.25 and 0.5 with scout-dev.csv and
// bench/synthetic-table seeds 1 and 2 (there 2 also lost at gamma 0.75 and 1, and 1 did worse
// than 2); the folds' categorical shapes (ps, ps-grid) gained nothing, so they keep 3.  Checked
// on folds 3 and 4 and synthetic seeds 7-10 (bench/README.md, "A smaller initial design where
// time counts").
constexpr std::size_t kInitialTrials = 3, kSmallDesign = 2, kMaxInitialTrials = 1000;
constexpr double kSmallDesignGammaHigh = 0.5;
// EngineOptions::TimeModel::automatic: the time model is used when its leave-one-out
// concordance exceeds the score model's by more than kTimeModelMargin, and is considered from
// kTimeModelMinTrials successful trials on.  The margin was chosen among 0, 0.1, 0.2, 0.3, 0.4
// and 0.5 on scout-dev.csv, bench/synthetic-table seeds 1 and 2 and cliff folds 1 and 2 (the
// synthetic seeds gain less and scout-dev.csv loses less as it grows), checked on synthetic
// seeds 7-10, cliff folds 3, 4, 21 and 22 and ps-grid folds 1 and 2 (bench/README.md, "The
// time model").
constexpr double kTimeModelMargin = 0.3;
constexpr std::size_t kTimeModelMinTrials = 4;
// EngineOptions::run_time_margin: chosen among 0, 0.1 and 0.2 on the choosing sets (bench/README.md,
// "The run time's form in the engine"); capped at a perfect ordering since 2026-12-07 (same
// section, "A perfect ordering is enough").
constexpr double kRunTimeMargin = 0.1;
// The run time's form also proposes from kFormMinTrialsUnfailed successful trials while no trial
// has failed (after a failure, from kTimeModelMinTrials): chosen on the choosing sets at gamma 1
// and 0.5 against the form from 4 successes always and from 3 always (that cost the measured
// workloads that fail early, kmeans and terasort, on scout-dev.csv seeds 101-250, which this rule
// matches within noise), checked on synthetic seeds 7 and 8 and cliff folds 31 and 32
// (bench/README.md, "The form from three successes while none has failed").
constexpr std::size_t kFormMinTrialsUnfailed = 3;
// With a history the run time's form proposes from kFormMinTrialsWarm successful trials (before,
// the history's picks and gated model make the steps).  Chosen on the choosing sets with each
// problem's history its table's other problems (--history-others), gamma 1 and 0.5, against the
// form off with a history (then a related history did worse than none on the synthetic
// workloads) and from 4, 5 and 6 successes: 6 at first, as 4 and 5 cost lr on scout-dev.csv;
// 5 since the form's pick with a history is weighed by P(runs) (4 still costs join at 0.5);
// checked on synthetic seeds 7 and 8, cliff folds 31 and 32 and shuffled histories
// (bench/README.md, "The form with a history" and "The form from five successes with a
// history").
constexpr std::size_t kFormMinTrialsWarm = 5;
// From gamma kTimeModelTurnsGammaLow to below 1, over numeric features only,
// TimeModel::automatic also lets the time model take turns with the score model: at a step with
// an odd number of successful trials it is used unless its concordance falls below the score
// model's by more than kTimeModelMargin.  Chosen against the choice by concordance alone and
// against plain turns (no such floor) at gamma 0.25, 0.5 and 0.75 on scout-dev.csv,
// bench/synthetic-table seeds 1 and 2 and generated folds 1 and 2 (there the categorical shapes
// lost with turns, and at gamma 0.25 the cliff shape and scout-dev.csv); checked on synthetic
// seeds 7-10, scout-dev.csv seeds 51-150 and folds 3 and 4 (bench/README.md, "The time model
// by turns").
constexpr double kTimeModelTurnsGammaLow = 0.5;
bool automatic_time_model_turns(double gamma, bool categorical);
// Between the objectives whose defaults were chosen (0.75 and 1), the cold search's failures
// cluster where time is cheap: the time model's proposals failed half the time on the cliff
// shape at gamma 0.9.  By default (EngineOptions::time_linear_trend and feasibility_power
// automatic) the time model has the linear term above kLinearGammaHigh and below 1, and from
// kFeasibilityPowerGammaLow to below 1 the probability of running is raised to the power
// kFeasibilityPowerAuto.  Chosen on generated folds 1 and 2 (cliff, ps, ps-grid) at gamma 0.75
// and 0.9, and checked on folds 3 and 4 and scout-dev.csv there and at 0.8, 0.85, 0.95 and 0.99
// (bench/README.md, "Between gamma 0.75 and 1").
constexpr double kFeasibilityPowerGammaLow = 0.75, kFeasibilityPowerAuto = 4;
// At gamma 1 the time model's proposals fail about three times as often as the score model's (it
// predicts cheap run times for the small allocations next to the memory cliff): by default a
// proposal of the time model there weighs the probability of running to the power
// kTimeModelFeasibilityPower, the score model's to the power 1 as before.  Chosen on generated
// folds 1 and 2 (cliff, ps, ps-grid; against the powers 1 and 4), checked on folds 3, 4, 31 and
// 32, scout-dev.csv and bench/synthetic-table seeds 7 and 8 (bench/README.md, "The run times'
// model's proposals at gamma 1").
constexpr double kTimeModelFeasibilityPower = 8;
// At gamma 1, in a space with a categorical feature, and without a history, a search that knows
// each candidate's cost per second (EngineOptions::rate) draws its initial design from the
// kCheapDesignShare of the candidates with the lowest rates, and TimeModel::automatic models the
// run times at every step (automatic_time_model_always()): on the parameter-server shapes the
// cheapest configurations are small allocations whose run time the flavor, batch size, learning
// rate and sync decide, which a model of the scores had to learn from trials spread over rates
// up to 32 times apart.  Chosen on generated ps and ps-grid folds 1 and 2 (against each part
// alone, the cheapest quarter, and EI instead of Thompson sampling), checked on ps and ps-grid
// folds 31, 32, 41 and 42 (bench/README.md, "The cheapest rates first where a feature is
// categorical").  Spaces of numeric features only (every class's, scout-dev.csv's) keep the
// design over the whole space and the choice of model by concordance.
// That design has kCheapDesignTrials trials (chosen against 3 and 5 on the same folds, checked
// on the same checking folds: "Four design trials among the cheapest", in that section).
constexpr double kCheapDesignShare = 0.1;
constexpr std::size_t kCheapDesignTrials = 4;
// While fewer than two of its trials have succeeded, that design continues (the candidate
// farthest from those chosen) among the kCheapContinuationShare of the candidates with the
// lowest rates (or the design's own share, if larger), then over every candidate; before, it
// continued over every candidate, mostly at the costliest corners of the space.  Chosen on
// generated ps and ps-grid folds 1 and 2 (against continuing among the design's tenth, a
// quarter, and every candidate), checked on folds 31, 32, 41 and 42 (bench/README.md, "The
// design's continuation among the cheaper half of the rates").
constexpr double kCheapContinuationShare = 0.5;
// The failure model's hyperparameters start from the score model's and are fitted for
// kFeasibilityIterations L-BFGS iterations (five did as well as ten on scout-dev.csv, where few
// trials fail: bench/README.md, "Fitting the hyperparameters").  Where the run times' model
// proposes at every step and the design is among the cheapest rates (gamma 1, a categorical
// feature, no history), a third of the trials fail and five iterations leave the failure model
// near the run times' length scales, which do not say where memory or a learning rate runs out:
// there it runs kFeasibilityIterationsCheap.  Chosen on generated ps and ps-grid folds 1 and 2
// (against 10, and three starts from the prior), checked on folds 31, 32, 41 and 42, and at
// gamma 0, 0.5 and 0.75 on folds 1 and 2, where it changed nothing or lost (bench/README.md,
// "The failure model fitted longer where the cheapest rates come first").
constexpr int kFeasibilityIterations = 5, kFeasibilityIterationsCheap = 15;
bool automatic_time_model_always(double gamma, bool categorical);
// The share of the candidates, by lowest cost rate, that the cold initial design is drawn from
// by default (1: all of them).
double automatic_cheap_design(double gamma, bool warm, bool categorical);
bool automatic_time_linear_trend(double gamma);
// The automatic power of the probability of running for a proposal at `gamma`, of the time model
// when `time_modelled`, cold in a space with a categorical feature when `categorical_cold`.
double automatic_feasibility_power(double gamma, bool time_modelled = false,
                                   bool categorical_cold = false);
// "none", "spacefill", "random", "local", "thompson", "hedge", "auto"
const char *explore_name(Explore e);
// What Explore::automatic and Trend::automatic are for an objective of `gamma`, with or without a
// warm start, for a model with or without the linear term, in a space with or without a
// categorical feature (EngineOptions::effective_explore(), effective_linear_trend()).
Explore automatic_explore(double gamma, bool warm, bool linear, bool categorical = false);
bool automatic_linear_trend(double gamma);
// The initial design's size by default for an objective of `gamma`, with or without a warm
// start, in a space with or without a categorical feature (EngineOptions::
// effective_initial_trials()).
std::size_t automatic_initial_trials(double gamma, bool warm, bool categorical);
// An initial design's size as a user gives it (autotune.conf InitialTrials, replay --initial):
// "auto" (nullopt: by the objective) or a whole number from 1 to kMaxInitialTrials.  Throws
// Error(invalid_argument) naming `field` and what is allowed.
std::optional<std::size_t> parse_initial_trials(std::string_view field, std::string_view value);
// Whether a warm start's history picks and earns design trials by default at `gamma`
// (kHistoryDesignGammaLow/High; EngineOptions::effective_history_picks()).
bool automatic_history_design(double gamma);
// Throws Error(invalid_argument) naming `field` and the allowed values.
Explore parse_explore(std::string_view field, std::string_view value);

// Which numeric features of a candidate set are the allocation's node count, vCPUs and memory
// (in all, or per node), and the factor that turns that memory into GiB (run_time_model.hpp).
struct RunTimeColumns {
  std::string nodes = "nodes", cpus = "total-cpus", mem = "total-mem";
  bool cpus_per_node = false, mem_per_node = false;  // the column is per node: times nodes
  double mem_to_gib = 1.0 / 1024;                    // from_candidates(): MB
  // allocations_of() looks for the columns by their usual names instead: nodes; total-cpus,
  // total_vcpus or total_cpus, else vcpus_per_node, cpus_per_node or node-cpus per node;
  // total-mem (MB) or total_mem_gib, else mem_gib_per_node or node-mem (MB) per node.
  bool automatic = false;
  // "auto", or "nodes=COL,cpus=COL,mem=COL[/DIVISOR]" with cpus-per-node= or mem-per-node= in
  // place of cpus= or mem= for a column per node (memory in GiB unless divided).  Throws
  // Error(invalid_argument) naming the part that is wrong.
  static RunTimeColumns parse(const std::string &text);
};

struct EngineOptions {
  Strategy strategy = Strategy::bo;
  std::uint64_t seed = 1;
  // The initial design's size: the first trials, spread over the space, before any model.
  // Unset: by the objective, the warm start and the space (automatic_initial_trials()).
  std::optional<std::size_t> initial_trials;
  std::size_t design_draws = 64;  // random subsets compared by the maximin criterion
  double xi = 0.01;               // EI margin, in standard deviations of the standardized log score
  bool input_warping = true;      // warp the numeric inputs (gp.hpp) of both models
  // A linear term in both models' kernels (gp.hpp) and the warm start's base models: no, yes,
  // or automatic: yes when kLinearGammaLow <= gamma <= kLinearGammaHigh or gamma <
  // kLinearLowGammaBelow (effective_linear_trend()).
  Trend linear_trend = Trend::automatic;
  // The time model's own linear term (TimeModel below): no, yes, or automatic
  // (effective_time_linear_trend()).
  Trend time_linear_trend = Trend::automatic;
  BatchMode batch = BatchMode::kriging_believer;
  // How failed trials steer the search (both never propose a failed candidate again):
  //  classifier  a second GP on +1 (succeeded) / -1 (failed) labels models a constraint c(x);
  //              EI is weighted by P(c(x) > 0) = Phi(mu_c / sigma_c) (constrained EI: Gardner et
  //              al., ICML 2014; Gelbart, Snoek & Adams, UAI 2014), and the score model sees only
  //              successful trials.
  //  impute      a failure enters the score model with the worst score seen.
  enum class Failures { classifier, impute };
  Failures failures = Failures::classifier;
  StoppingOptions stop;
  // Exploration: the share of the proposals after the initial design made by `explore` instead
  // of EI (spacefill: the untried candidate farthest from every taken one; random; local: the
  // highest EI among the untried candidates nearest the incumbent, a twentieth of them, >= 5;
  // thompson; hedge; automatic: by gamma, below) (the trials t = initial, ... for which
  // floor((t - initial + 1) share) grows; share 1: every one; automatic sets its own), and the EI
  // collapse rule: a proposal whose largest EI is below explore_collapse x the best score
  // explores too (0: never).
  Explore explore = Explore::automatic;  // chosen by bench/engine-cv (bench/README.md)
  double explore_share = 0.25;
  double explore_collapse = 0.0;
  // The objective's weight of cost (objective.hpp: score = (1 - gamma) time + gamma cost, each
  // relative to a reference); only Explore::automatic reads it.  Callers pass the class's or
  // the replay's gamma; 1 (the default) keeps EI alone.
  double gamma = 1;
  // The exploration that runs: Explore::automatic resolved by gamma, the warm start and whether
  // the space has a categorical feature (with its share), else explore and explore_share as set.
  Explore effective_explore(double *share, bool categorical = false) const;
  // initial_trials resolved: as set, else by gamma, the warm start (a history that informs the
  // search) and whether the space has a categorical feature; a cold design among the cheapest
  // rates (`rate` given, effective_cheap_design() < 1) has kCheapDesignTrials.
  std::size_t effective_initial_trials(bool categorical) const;
  // Whether the models have the linear term: linear_trend resolved by gamma.
  bool effective_linear_trend() const;
  // Whether the time model has it: time_linear_trend resolved (automatic: yes where
  // effective_linear_trend() is, and above kLinearGammaHigh below 1).
  bool effective_time_linear_trend() const;
  // feasibility_power resolved by gamma, for a proposal of the time model when `time_modelled`,
  // in a space with a categorical feature when `categorical` (automatic_feasibility_power()).
  double effective_feasibility_power(bool time_modelled = false, bool categorical = false) const;
  // Whether the warm start uses its time bases (history_time_model resolved by gamma).
  bool effective_history_time_model() const;
  // history_picks and history_confirm (< 0: off) resolved by gamma.
  std::size_t effective_history_picks() const;
  double effective_history_confirm() const;
  // history_doubt (0: off) resolved: kHistoryDoubt from gamma kHistoryDoubtGammaLow on while
  // history_confirm is on, else off.
  std::size_t effective_history_doubt() const;
  // history_own_floor resolved by gamma.
  double effective_history_own_floor() const;
  // Warm start (history.hpp): base models prepared from other problems, or null.
  std::shared_ptr<const WarmStart> history;
  // Whether `history` holds a problem: a warm start (an empty history is a cold start).
  bool warm() const;
  // RGPE's weights: a draw in which the target's own model orders the trials as well as the
  // best base model counts for the target alone (false: ties are shared, as in the paper).
  bool history_ties_to_own = false;
  // The gate (history.hpp): once the target has its own model, a base model gets weight only if
  // its mean orders the target's trials better than a random order at this many standard
  // deviations of Kendall's test (0: no gate).
  double history_gate = 1.645;  // chosen by bench/engine-cv (bench/README.md)
  // With a warm start, the first history_picks trials are the history's, until one of them
  // fails; the rest of the initial design (up to initial_trials) is space-filling (0: the whole
  // initial design, the history acts through its weights only; >= initial_trials: the history
  // replaces the design).
  // Unset: by the objective, 1, or 0 for kHistoryDesignGammaLow <= gamma <=
  // kHistoryDesignGammaHigh (effective_history_picks()).
  std::optional<std::size_t> history_picks;  // chosen by bench/engine-cv (bench/README.md)
  // Picks the history earns (history.hpp): before each trial of the initial design after the
  // first history_picks, the history's combined mean (its base models weighted equally) is
  // tested against the problem's finished trials (Kendall's test, as the gate, at this many
  // standard deviations); while it passes, the trial is the weighted ensemble's (EI, or its
  // lowest mean before the problem has a model; the bases gated at history_confirm for that
  // step) instead of the next space-filling point.  < 0: off (the design after the history's
  // picks is space-filling).  With the default design (3 trials, one history pick) the third
  // trial is the history's when the first two are in its order.  Unset: by the objective, 1, or
  // off where the history picks no design trials by default (effective_history_confirm()).
  std::optional<double> history_confirm;  // chosen by bench/engine-cv (bench/README.md)
  // With history_confirm >= 0: the same test after the initial design too -- while the
  // history's combined mean passes it, the bases are gated at history_confirm instead of
  // history_gate.
  bool history_confirm_after = false;
  // A doubted history (history.hpp): with history_confirm >= 0, the trial initial_trials +
  // history_doubt - 1 (counting from 0; the second after the initial design by default) is one
  // more space-filling point, as the design's, unless the history's combined mean passes
  // history_confirm's test on the finished trials right then.  A history that has not shown it
  // orders the problem's trials by then looks away from where it points once; one that has
  // costs nothing.  0: off.  Unset: kHistoryDoubt from gamma kHistoryDoubtGammaLow on while
  // history_confirm is on, else off (effective_history_doubt()).
  std::optional<std::size_t> history_doubt;  // chosen by bench/engine-cv (bench/README.md)
  // The history's failures as a prior on where trials run (history.hpp): a candidate's
  // probability of running, which weights every proposal (and decides Thompson sampling's draw),
  // is multiplied by (1 - h)^(history_feasibility x t): h, the share of the history's problems
  // that measured the candidate and failed there; t from 0 to 1, the trust earned by how well h
  // orders failures above successes -- in the history's own problems (leave-one-out) and in the
  // problem's trials.  A history whose failures do not predict each other's, or the problem's,
  // steers nothing.  0: off.
  double history_feasibility = 1;  // chosen by bench/engine-cv (bench/README.md)
  // The proposals weight a candidate's value (EI, and the spacefill, random and local
  // explorations' choices) by its probability of running: the failure model's P raised to this
  // power k (times the history's prior above).  k > 1 takes a likely failure only for a
  // proportionally larger gain, since a failed trial wastes a job and a trial of the budget.
  // Thompson sampling's draw of where runs succeed is its own.  1 is constrained EI as
  // published; 8 cut the failed trials of generated problems by a quarter but lost optima next
  // to failures on scout-dev.csv at gamma 1 (bench/README.md, "Fewer failed trials").  Unset
  // (the default): kFeasibilityPowerAuto from gamma kFeasibilityPowerGammaLow (cold in a space
  // with a categorical feature, kCategoricalPowerGammaLow) to below 1; at
  // gamma 1 kTimeModelFeasibilityPower for the time model's proposals and 1 for the score
  // model's; else 1 (automatic_feasibility_power()).  Set, it holds for every proposal.
  std::optional<double> feasibility_power;
  // Each candidate's cost per second (its billing rate), known before it runs; null: unknown.
  // Unlike score_factor it needs no reference trial, so the initial design can use it.
  std::shared_ptr<const std::vector<double>> rate;
  // With `rate`: the cold initial design is the maximin subset of the candidates whose rate is
  // at most the rate of rank floor(share x n) among the n candidates (ties included), from 0
  // (exclusive) to 1 (1: every candidate, the design as without rates); below 1 its
  // continuation stays among the max(share, kCheapContinuationShare) of the lowest rates while
  // any of them is left.  Unset: automatic_cheap_design() (kCheapDesignShare at gamma 1 in a
  // space with a categorical feature, without a history; else 1).
  std::optional<double> cheap_design;
  double effective_cheap_design(bool categorical) const;
  // Whether the cold initial design is drawn among the cheapest: `rate` given and
  // effective_cheap_design() < 1.
  bool design_among_cheapest(bool categorical) const;
  // The failures' edge (FailureEdge below): in a space of numeric features, a candidate's
  // probability of running, which weights every proposal (and decides Thompson sampling's draw),
  // is multiplied by the edge's factor.  false: off.  (Where a feature is categorical, the
  // parameter-server shapes, it lost to random search on one choosing problem more and is not
  // used.)
  bool failure_edge = true;  // chosen by bench/engine-cv (bench/README.md)
  // The L-BFGS iterations of the failure model's fit, from 1 to 50; unset:
  // kFeasibilityIterationsCheap where the initial design is among the cheapest
  // (design_among_cheapest()), else kFeasibilityIterations.
  std::optional<int> feasibility_iterations;
  int effective_feasibility_iterations(bool categorical) const;
  // The cold search's bowl prior mean (optimizer.cc, bowl_mean): over a space of numeric
  // features only, and without a history, the score model's prior mean is a (q(x) - mean q),
  // q(x) the mean over the numeric columns of 4 (x_j - 1/2)^2 (0 at the centre of the encoded
  // box, 1 at its corners), with the amplitude a fitted to the problem's own trials: the
  // posterior mean of a under a Gaussian prior N(0, bowl_mean_sd^2), in standard deviations of
  // the log score, the trials' residuals taken as independent with unit variance (ridge
  // regression).  An unexplored corner of a space whose trials so far rise towards the edges
  // is predicted that much dearer, and the first model steps stop going to the corner of
  // largest variance (most often the largest allocation).  0: off.  Chosen by replay on
  // scout-dev.csv and bench/synthetic-table seeds 1 and 2, checked on other seeds and on
  // generated folds (bench/README.md, "The cold search's bowl prior mean").
  double bowl_mean_sd = 0.5;
  // The time model.  A score is (1 - gamma) T / T_ref + gamma C / C_ref, and C = rate x T, so a
  // score is T x f: the run time times a factor f = (1 - gamma) / T_ref + gamma rate / C_ref
  // that is known before the candidate runs (its cost rate: the billing rate of its allocation).
  // score_factor holds f per candidate (null: unknown; every value finite and > 0).  With it,
  // and without a history, the search may model log T (log score - log f) and add log f back to
  // every prediction, so what a candidate costs per second is known rather than learnt:
  // - TimeModel::automatic: at every step from kTimeModelMinTrials successful trials on, both
  //   models are fitted and the time model is used when its leave-one-out predictions order the
  //   successful trials better than the score model's by more than kTimeModelMargin (Kendall's
  //   concordance, from -1 to 1); a run time that falls faster than the rate rises (a data set
  //   that fits in memory only on dear nodes) is modelled better as a score, and keeps it.
  //   From gamma 0.5 to below 1 over numeric features the time model also takes every other
  //   step (automatic_time_model_turns()) unless it orders the trials worse by more than the
  //   margin;
  //   At gamma 1 in a space with a categorical feature it is used at every step
  //   (automatic_time_model_always(), kCheapDesignShare);
  // - better: as automatic without the turns, and without every step at gamma 1;
  // - yes: the time model whenever score_factor is given; no: never.
  // Chosen by bench/engine-cv and replay (bench/README.md, "The time model").
  using TimeModel = autotune::TimeModel;  // gp_options.hpp
  TimeModel time_model = TimeModel::automatic;
  std::shared_ptr<const std::vector<double>> score_factor;
  // The warm start's time bases (history.hpp, time_scored()): once the problem's score factors
  // are known (its first success), each history problem's model of its run times times the
  // problem's factor predicts the problem's score, rather than the history problem's own score,
  // whose mix of time and cost is set by that problem's own references.  automatic: for
  // 0 < gamma < 1 (at 0 and 1 the two orders agree); yes, no.  The callers (replay, the tuner)
  // apply it: effective_history_time_model().  Chosen by bench/engine-cv and replay
  // (bench/README.md, "The warm start's time bases").
  TimeModel history_time_model = TimeModel::automatic;
  // Once the problem has its own model, its weight is at least n / (n + history_own_floor), n
  // its successful trials (the bases' weights scaled down to make room): however well a history
  // orders the trials, the problem's own measurements take over as they accumulate.  0: off
  // (RGPE's weights as they are).  Unset: by the objective, kHistoryOwnFloor from gamma
  // kHistoryOwnFloorGammaLow on, else 0 (effective_history_own_floor()).
  std::optional<double> history_own_floor;  // chosen as kHistoryOwnFloor says
  // A history of two or more problems whose coherence (history.hpp: how well its problems'
  // models order each other's measurements, 2 AUC - 1, leave-one-out) is below this is set
  // aside: the search runs as without it.  From -1 (never) to 1.
  double history_coherence = kHistoryCoherenceMin;
  // Once the target has its own model, a history whose top-ranked tried candidate (the lowest
  // mean of the bases, weighted equally, among the candidates tried) failed on the target gets
  // no weight: its best guess does not run here, so it does not know this problem.  false: off.
  bool history_top_must_run = true;  // chosen by bench/engine-cv (bench/README.md)
  // How the weighted models propose once the target has its own model: rgpe, EI on the
  // weighted ensemble (Feurer et al. 2018); taf, the weighted sum of the target's EI and each
  // history model's predicted improvement over the target's best trial (the transfer
  // acquisition function of Wistuba, Schilling & Schmidt-Thieme, Machine Learning 2018), which
  // keeps the target's own uncertainty driving exploration.
  enum class HistoryMode { rgpe, taf };
  HistoryMode history_mode = HistoryMode::rgpe;  // chosen by bench/engine-cv (bench/README.md)
  // The run time's form (run_time_model.hpp): once score factors are known and differ (gamma
  // above 0), over candidates whose allocation these columns give (nodes,
  // vCPUs and memory), a particle posterior of a data-parallel job's run time by Amdahl's law,
  // a memory spill and a failure threshold.  At every model step from kTimeModelMinTrials
  // successful trials on (from kFormMinTrialsUnfailed while none has failed; with a history from
  // kFormMinTrialsWarm), when its posterior explains every trial (none that most of it
  // predicts to fail ran, none that most of it predicts to run failed) and its leave-one-out
  // predictions order the successful trials better than the Gaussian process's by at least
  // run_time_margin (Kendall's concordance, from -1 to 1; or perfectly, where the Gaussian
  // process's are within the margin of perfect), the step proposes by the expected
  // improvement over its particles instead (with a history, times the chance of running that
  // weighs the model's picks, the history's failures in it: bench/README.md, "The form's pick
  // and a history's failures").  Unset: off.  The default looks for the columns by
  // their usual names (RunTimeColumns::automatic), so it is on for Slurm's candidates and for
  // tables of node counts and VM types, and off elsewhere (the parameter-server shapes).
  // Chosen by replay (bench/README.md, "The run time's form in the engine").
  std::optional<RunTimeColumns> run_time_columns = RunTimeColumns::parse("auto");
  double run_time_margin = kRunTimeMargin;  // from -2 to 2
  std::size_t run_time_particles = 1000;    // from 64 to 100,000
  GpFitOptions gp;          // its seed is derived from `seed`
  bool predictions = true;  // fill Proposal::predictions
  // Throws Error(invalid_argument) for initial_trials = 0, design_draws = 0, xi < 0, a share
  // or collapse fraction outside [0, 1], a history gate or history_feasibility outside [0, 10],
  // a history_confirm above 10 or not a number, a history_doubt above 100, a history_own_floor outside [0, 1000], a
  // history_coherence outside [-1, 1], a feasibility_power outside [1, 64], feasibility_iterations outside [1, 50], a bowl_mean_sd outside [0, 10], a
  // score_factor or rate value not finite or <= 0, a cheap_design outside (0, 1], a
  // run_time_margin outside [-2, 2], run_time_particles outside [64, 100000], bad stop.
  void validate() const;
};

// The options of a class's search from the site's autotune.conf, for a budget of `budget` trials
// (the job's --autotune-budget, or conf.default_budget).
EngineOptions engine_options(const EngineConf &conf, std::size_t budget);

// What a proposal reports of the failures' edge (Proposal::failure_edge).
struct EdgeUse {
  std::string feature;
  bool below = true;
  double value = 0;
  int failures = 0;
  bool operator==(const EdgeUse &o) const {
    return feature == o.feature && below == o.below && value == o.value && failures == o.failures;
  }
  bool operator!=(const EdgeUse &o) const { return !(*this == o); }
};

// A model prediction for one candidate, in score units: the mean and standard deviation of the
// log-normal predictive distribution (the GP models the log score).
struct Prediction {
  double mean = 0;
  double std = 0;
};

struct Proposal {
  // Up to k distinct candidates, none done or pending.  Fewer when the budget (done + pending +
  // these <= budget) or the untried candidates run out; none when the search stopped.
  std::vector<std::size_t> indices;
  StopDecision stop;
  // The best successful observation so far (index and score), if any.
  std::optional<std::size_t> best_index;
  double best_score = std::numeric_limits<double>::quiet_NaN();
  // With a model (bo, at least two successful candidates): per candidate predictions (when
  // options.predictions), the largest expected improvement over the untried candidates in score
  // units, and the fitted hyperparameters (length scales per feature group: a short one means
  // the score is sensitive to that feature).
  bool modelled = false;
  std::vector<Prediction> predictions;
  double max_ei = std::numeric_limits<double>::quiet_NaN();
  GpHyper hyper;
  // With a warm start: the weight of each base model (WarmStart::names' order) and of the
  // target's own model (1 without history).
  std::vector<double> history_weights;
  double own_weight = 1.0;
  // With a warm start and EngineOptions::history_feasibility: the trust in the history's
  // failures, from 0 (none) to 1 (history_failure_trust()).
  double history_feasibility_trust = 0.0;
  // With a warm start and EngineOptions::history_top_must_run: the history's top-ranked tried
  // candidate failed, so the bases got no weight.
  bool history_top_failed = false;
  // How many of `indices`, the first ones, the initial design chose (or its continuation, the
  // history's picks before the model, the random or exhaustive order) rather than the model.
  std::size_t designed = 0;
  // How many of `indices` were exploration picks (EngineOptions::explore) rather than EI's.
  std::size_t explored = 0;
  // Whether the model steps modelled the run time (EngineOptions::time_model) rather than the score.
  bool time_modelled = false;
  // Whether the model steps proposed by the run time's form (EngineOptions::run_time_columns).
  bool form_modelled = false;
  // The failures' edge the model step used (EngineOptions::failure_edge, FailureEdge): its
  // feature, whether the failures lie below the successes' values of it (or above), the
  // innermost failure's value, and how many failures lie there.  Unset: none.
  std::optional<EdgeUse> failure_edge;
};

// The initial design order: `count` candidates (count <= candidates.size()), the first
// `options.initial_trials` of them the maximin subset of the design's pool (every candidate, or
// the cheapest rates: EngineOptions::cheap_design), the rest continuing greedily away from the
// ones before (for a design among the cheapest, within the kCheapContinuationShare of the
// lowest rates while any of it is left).  Depends only on the seed, the candidate set and the
// rates.
std::vector<std::size_t> initial_design(const CandidateSet &candidates, std::size_t count,
                                        const EngineOptions &options);

// The proposal up to the point where a model is needed: validation, the history's stopping
// rules, the budget, the random and exhaustive strategies, and the initial design with its
// continuation while fewer than two distinct candidates succeeded.  `taken` marks each candidate
// 0 untried, 1 done, 2 pending, 3 picked by this call; `slots` is how many picks this call may
// make in all.  needs_model: bo, at least two distinct successes and slots left over.  Same
// preconditions and errors as propose().
struct DesignStep {
  Proposal proposal;
  std::vector<char> taken;
  std::size_t slots = 0;
  bool needs_model = false;
  // The history passed EngineOptions::history_confirm's test: the model's step gates the bases
  // at history_confirm (and, in the initial design, picks from the ensemble: the design left the
  // slots to it).
  bool history_confirmed = false;
};

// Where trials fail for too little (or too much) of one thing -- a data set that does not fit in
// the total memory, a learning rate at which training diverges -- the failed trials lie beyond
// every successful one along that feature, and so does every untried candidate with less of it.
// The failure model (a GP classifier over every feature, optimizer.cc) learns such a threshold
// slowly from a dozen trials.  The failures' edge: along each numeric encoded column of
// `encoded` (`numeric_columns`) and in each direction, the failed trials of `done` below the
// lowest value of a successful trial (or above the highest); of the columns and directions with
// at least kFailureEdgeMinFailures of them, the one with the most (the first of equals).  A
// candidate's factor is 1 / (m + 2), m those failures, at or beyond the innermost of them,
// rising linearly to 1 at the nearest success, and 1 on the successes' side.  Trials that fail
// now and then anywhere (time-outs) do not count: they are not beyond every success.
constexpr int kFailureEdgeMinFailures = 3;  // chosen by bench/engine-cv (bench/README.md)
struct FailureEdge {
  int column = -1;             // the encoded column; -1: no edge
  double sign = 1;             // +1: the failures lie below the successes; -1: above
  double failed = 0, ran = 0;  // sign x the innermost such failure's value, the nearest success's
  int failures = 0;            // m
  std::size_t innermost = 0;   // the candidate of the innermost such failure
  explicit operator bool() const { return column >= 0; }
  // The factor of a candidate whose encoded value in `column` is x.
  double factor(double x) const;
};
FailureEdge failure_edge(const Eigen::MatrixXd &encoded, const std::vector<int> &numeric_columns,
                         const std::vector<Observation> &done);

// The pairs of `y` of distinct value that `s` orders otherwise (RGPE's ranking loss, history.hpp;
// two failures tie and do not count).
std::size_t ranking_loss(const Eigen::VectorXd &s, const Eigen::VectorXd &y);

// ranking_loss() against one `y` for many `s` (RGPE's draws): y's order is worked out once, and a
// loss is then a count, without branches, over the pairs of distinct y.  Same result as
// ranking_loss(s, y) for s without NaN, ties in s included: with s[j] == s[k] for j < k of
// distinct y, the pair counts when y[j] < y[k].
class RankingLoss {
 public:
  explicit RankingLoss(const Eigen::VectorXd &y);
  // Where s[j] goes in sorted() (y's ascending order, ties in y by index).
  Eigen::Index position(Eigen::Index j) const { return pos_[static_cast<std::size_t>(j)]; }
  std::size_t pairs() const { return pairs_; }        // pairs of distinct y
  std::size_t operator()(const Eigen::VectorXd &s) const;
  // Kendall's concordance of s with y: the pairs in the same order less the pairs in the other,
  // over the pairs, from -1 to 1 (0 without pairs).
  double concordance(const Eigen::VectorXd &s) const {
    return pairs_ > 0 ? 1 - 2 * static_cast<double>((*this)(s)) / static_cast<double>(pairs_) : 0.0;
  }
  // The loss of s given in y's order: t[position(j)] = s[j].
  std::size_t sorted(const Eigen::VectorXd &t) const;

 private:
  std::vector<Eigen::Index> order_;  // order_[p]: the index at position p
  std::vector<Eigen::Index> pos_;    // its inverse
  std::vector<Eigen::Index> next_;   // next_[p]: the first position of a greater y
  std::size_t pairs_ = 0;
};

// The variant RankingLoss::sorted() counts with: "avx2" (four pairs at a time) where the CPU has
// AVX2, else "baseline" (two at a time on SSE2); the counts are the same.  use_ranking_variant()
// makes the named one run from now on (for tests, which check both), false for one this build or
// CPU does not have; not while another thread counts.
const char *ranking_variant();
bool use_ranking_variant(const char *name);

// Kendall's test against a random order (the gate of history.hpp and history_confirmed()): with
// n ranked trials, P pairs of distinct ranks and `discordant` of them ordered otherwise by a
// model, kendall_limit is the most discordant pairs a model may have to order them better than a
// random order at z standard deviations, P/2 - z sqrt(P (2n + 5) / 36); kendall_passes: P > 0
// and discordant within that limit.
double kendall_limit(std::size_t pairs, std::size_t n, double z);
bool kendall_passes(std::size_t discordant, std::size_t pairs, std::size_t n, double z);

// Whether the history's combined mean (its base models' means weighted equally) orders the
// finished trials `done` (successes by score, failures after every success) better than a random
// order at z (kendall_passes).  False with fewer than two trials of distinct rank.
bool history_confirmed(const WarmStart &history, const std::vector<Observation> &done, double z);
DesignStep propose_without_model(const CandidateSet &candidates, const std::vector<Observation> &done,
                                 const std::vector<std::size_t> &pending, std::size_t k,
                                 const EngineOptions &options);

// propose() for a history that needs no model (e.g. a new class: its initial design).  Throws
// Error(invalid_argument) when the history needs one.  Same results as propose() otherwise.
Proposal propose_design(const CandidateSet &candidates, const std::vector<Observation> &done,
                        const std::vector<std::size_t> &pending, std::size_t k,
                        const EngineOptions &options);

// What computes a class's next proposal: propose (optimizer.hpp, with the model) or
// propose_design (no model).  The tuner (autotune/tuner.hpp) is given one by its caller.
using ProposeFn = Proposal (*)(const CandidateSet &, const std::vector<Observation> &,
                               const std::vector<std::size_t> &, std::size_t, const EngineOptions &);

}  // namespace autotune
