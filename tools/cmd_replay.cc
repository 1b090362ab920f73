// autotune replay: the offline benchmark of the tuning engine on a table of measured
// configurations (see engine/include/autotune/replay.hpp for the table format).  It needs nothing
// of SlurmUser (Needs::nothing): when `autotune` is setuid, the dispatcher has dropped those
// privileges for good before this runs, so the table is read with the caller's own rights.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/history.hpp"
#include "autotune/objective.hpp"
#include "autotune/optimizer.hpp"
#include "autotune/replay.hpp"
#include "autotune/run_time_model.hpp"
#include "autotune/table.hpp"
#include "autotune/units.hpp"
#include "args.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "replay_args.hpp"

namespace autotune::cli {
namespace {

const char kHelp[] =
    "Usage: autotune replay --table FILE [options]\n"
    "\n"
    "Replays searches on a CSV of measured configurations: one search problem per value of the\n"
    "group column, each proposal answered from the table.  Prints, per problem and overall, the\n"
    "trials until the best found is within 5% and 10% of the true optimum (median and p90 over\n"
    "seeds), the fraction of runs within 10% after --at trials, the regret when the search\n"
    "stopped, which rule stopped it, and the time of one proposal step.\n"
    "\n"
    "Table:\n"
    "  --table FILE           CSV with a header line (required)\n"
    "  --group COLUMN         one problem per value of COLUMN (default: one problem)\n"
    "  --features A,B,...     feature columns (default: every column but the group, time, cost\n"
    "                         and ok columns); numeric when every value is a number, else\n"
    "                         categorical\n"
    "  --derive NAME=A*B,...  add features that are products or ratios of numeric columns\n"
    "                         (e.g. the total memory: nodes*mem_per_node; the learning rate\n"
    "                         per sample of the batch: lr/batch_size); a '/' divides by the\n"
    "                         column after it, which must not be 0\n"
    "  --time-column NAME     measured time (default time_s)\n"
    "  --cost-column NAME     cost of the run = rate x nodes x time (default cost)\n"
    "  --ok-column NAME       1 = completed, 0 = failed or timed out (default ok)\n"
    "  --workflow FILE        replay workflows of the table's problems instead (see\n"
    "                         autotune replay --workflow FILE --help)\n"
    "Search:\n"
    "  --gamma G              objective: 0 fastest .. 1 cheapest (default 0.5)\n"
    "  --strategy LIST        bo, random, exhaustive, comma-separated to compare side by side\n"
    "                         (default bo,random)\n"
    "  --budget N             trials per search (default 20)\n"
    "  --seeds N              searches per problem and strategy (default 30)\n"
    "  --seed S               first seed; the runs use S, S+1, ... (default 1)\n"
    "  --initial N|auto       initial design size (default auto: 2 without a history over\n"
    "                         numeric features when gamma <= 0.5, 4 for a design among the\n"
    "                         cheapest (--cheap-design), else 3)\n"
    "  --xi X                 EI margin, standard deviations of the log score (default 0.01)\n"
    "  --batch K              trials proposed at once (default 1)\n"
    "  --batch-mode MODE      believer or liar (default believer)\n"
    "  --input-warping yes|no\n"
    "                         learn a warping of each numeric feature's scale (default yes)\n"
    "  --linear-trend auto|yes|no\n"
    "                         add a linear term to the model's kernel (default auto: yes\n"
    "                         when gamma < 0.25 or 0.5 <= gamma <= 0.75)\n"
    "  --kernel K             ard (one Matern term, a length scale per feature), additive (a\n"
    "                         sum of one-feature terms with learnt weights) or ard+additive\n"
    "                         (both) (default ard)\n"
    "Exploration and warm start:\n"
    "  --explore MODE         auto, none, spacefill, random, local, thompson or hedge: how\n"
    "                         the exploring proposals are made (farthest from the tried ones,\n"
    "                         at random, the highest EI among the candidates nearest the best,\n"
    "                         the lowest of one draw from the model's posterior, or a\n"
    "                         portfolio of EI, a lower confidence bound and that draw; default\n"
    "                         auto: without a history over numeric features, thompson on\n"
    "                         every proposal when 0.25 <= gamma < 0.4, else local on 0.4 of\n"
    "                         the proposals; without a history when a feature is categorical,\n"
    "                         thompson when 0.25 <= gamma < 0.5 or gamma > 0.75; with\n"
    "                         --history or --history-others, thompson when 0.5 <= gamma <=\n"
    "                         0.75; else none)\n"
    "  --explore-share F      share of the proposals after the initial design that explore\n"
    "                         (default 0.25, 1: all; with --explore other than none or auto)\n"
    "  --explore-collapse F   also explore when the largest EI < F x best score (default 0: off)\n"
    "  --feasibility-power K|auto\n"
    "                         the failure model's probability that a configuration runs\n"
    "                         weights the proposals raised to the power K, from 1 to 64: above\n"
    "                         1, a likely failure is tried only for a proportionally larger\n"
    "                         gain (default auto: 4 when 0.75 <= gamma < 1, without a history\n"
    "                         from 0.5 when a feature is categorical; at gamma 1, 8 for the\n"
    "                         run times' model's proposals, 1 for the scores'; else 1)\n"
    "  --feasibility-iterations N|auto\n"
    "                         L-BFGS iterations of the failure model's fit, from 1 to 50\n"
    "                         (default auto: 15 where the initial design is among the\n"
    "                         cheapest (--cheap-design), else 5)\n"
    "  --failure-edge yes|no  when every feature is numeric and three or more failed\n"
    "                         trials lie beyond every successful one along a feature (too\n"
    "                         little memory, too high a learning rate), the candidates out\n"
    "                         there are taken to fail likewise: the probability that they\n"
    "                         run is divided by the number of those failures plus 2 (default\n"
    "                         yes)\n"
    "  --bowl-mean SD         without a history, over numeric features only: the prior mean\n"
    "                         rises (or falls) from the centre of the space to its corners by\n"
    "                         an amount fitted to the trials, whose prior standard deviation is\n"
    "                         SD standard deviations of the log score, from 0 (off) to 10\n"
    "                         (default 0.5)\n"
    "  --run-time-model auto|off|nodes=COL,cpus=COL,mem=COL[/DIVISOR]\n"
    "                         the columns of each configuration's node count, vCPUs and\n"
    "                         memory (GiB, or divided by DIVISOR) in all (cpus-per-node=\n"
    "                         and mem-per-node= for columns per node); the run time is\n"
    "                         then also modelled by its form (Amdahl's law, a\n"
    "                         memory spill, a failure threshold), which proposes above\n"
    "                         gamma 0 whenever it explains every trial's success or failure\n"
    "                         and orders the trials better than the Gaussian process by the\n"
    "                         margin. auto (the default): the columns by their usual names\n"
    "                         (nodes; total_vcpus or vcpus_per_node; total_mem_gib or\n"
    "                         mem_gib_per_node; Slurm's total-cpus, total-mem), else off\n"
    "  --run-time-margin M    that margin in Kendall's concordance, -2 to 2 (default 0.1);\n"
    "                         a perfect order is enough where the process's is within M\n"
    "  --run-time-particles N the form's particles, 64 to 100000 (default 1000)\n"
    "  --time-model auto|better|yes|no\n"
    "                         without a history: model the run time and multiply each\n"
    "                         configuration's known score factor back (its cost per second,\n"
    "                         cost/time, or where a row gives neither, estimated from the rows\n"
    "                         that do); better: whenever the run times' model orders the\n"
    "                         trials better than the scores'; auto (default): as better, and\n"
    "                         from gamma 0.5 to below 1 over numeric features also at every\n"
    "                         other step unless it orders them clearly worse, and at gamma 1\n"
    "                         when a feature is categorical at every step\n"
    "  --cheap-design SHARE|auto\n"
    "                         without a history: the initial design is drawn from the SHARE\n"
    "                         (above 0, at most 1) of the configurations of the lowest cost per\n"
    "                         second (as --time-model knows it; 1: from all of them; default\n"
    "                         auto: 0.1 at gamma 1 when a feature is categorical, else 1);\n"
    "                         below 1, while fewer than two trials succeeded, the design\n"
    "                         continues among the cheaper half (or the SHARE, if larger)\n"
    "  --time-linear-trend auto|yes|no\n"
    "                         a linear term in the run times' model's kernel (default auto:\n"
    "                         as --linear-trend, and with --linear-trend auto also yes when\n"
    "                         0.75 < gamma < 1)\n"
    "  --history FILE         warm-start every search from every problem of FILE (same format\n"
    "                         and feature columns)\n"
    "  --history-others       warm-start from the table's other problems (leave-one-out)\n"
    "  --history-mode MODE    taf or rgpe: how the history's models and the problem's own are\n"
    "                         combined (default rgpe)\n"
    "  --history-ties MODE    own or shared: who wins a ranking tie with the problem's own model\n"
    "                         (default shared)\n"
    "  --history-gate Z       a history model gets weight only if it orders the problem's trials\n"
    "                         better than a random order at Z standard deviations (default\n"
    "                         1.645; 0: no gate)\n"
    "  --history-picks N      the history's models pick the first N trials, until one of them\n"
    "                         fails; the rest of the initial design fills the space (default 1,\n"
    "                         and 0 when 0.5 <= gamma <= 0.75: the history acts through its\n"
    "                         gated weights only; N >= --initial: the history replaces the\n"
    "                         design)\n"
    "  --history-confirm Z|off\n"
    "                         the history earns more of the initial design: while its models'\n"
    "                         combined mean orders the problem's trials better than a random\n"
    "                         order at Z standard deviations, the next design trial is the\n"
    "                         weighted history's (its models gated at Z) instead of a\n"
    "                         space-filling one (default 1, and off when 0.5 <= gamma <= 0.75)\n"
    "  --history-confirm-after yes|no\n"
    "                         with --history-confirm: after the initial design too, a history\n"
    "                         that passes the test is gated at Z instead of --history-gate\n"
    "                         (default no)\n"
    "  --history-doubt N|off  with --history-confirm: unless the history's models pass its\n"
    "                         test right then, trial --initial + N is one more space-filling\n"
    "                         trial (default 2 at gamma 1 with --history-confirm on, else\n"
    "                         off)\n"
    "  --history-own-floor C  once the problem has its own model, its weight is at least\n"
    "                         n / (n + C), n its successful trials (default 8 when gamma >=\n"
    "                         0.25, else 0: off)\n"
    "  --history-feasibility F\n"
    "                         the history's failures as a prior on where runs fail: a\n"
    "                         candidate's probability of running is multiplied by\n"
    "                         (1 - h)^(F t), h the share of the history's problems that failed\n"
    "                         there, t from 0 to 1 as far as h orders failures above\n"
    "                         successes in the history's problems and in the problem's own\n"
    "                         trials (default 1; 0: off)\n"
    "  --history-coherence C  a history of two or more problems whose models order each\n"
    "                         other's measurements with 2 AUC - 1 below C (leave-one-out) is\n"
    "                         set aside: the search runs as without it (default 0.1; -1:\n"
    "                         never)\n"
    "  --history-top-must-run yes|no\n"
    "                         once the problem has its own model, a history whose best-ranked\n"
    "                         tried configuration failed on the problem gets no weight\n"
    "                         (default yes)\n"
    "  --history-time-model auto|yes|no\n"
    "                         from the problem's first success on, each history problem's\n"
    "                         model of its run times, times the problem's known score factor\n"
    "                         (as --time-model), predicts the problem's score (default auto: when\n"
    "                         0 < gamma < 1)\n"
    "Stopping rules (the budget always applies):\n"
    "  --stop-improvement F   stop when a round improves the best by less than F (default 0: off)\n"
    "  --round N              trials per round (default 3)\n"
    "  --stop-ei F            stop when the largest EI < F x best score (default 0: off)\n"
    "  --min-trials N         the two rules above apply from N trials on (default 6)\n"
    "Output:\n"
    "  --at N                 report the fraction within 10% after N trials (default 12)\n"
    "  --json                 machine-readable output\n"
    "  --trace                print every run: the candidates in the order tried, how each was\n"
    "                         proposed (design, model, explore, random, exhaustive; \"(time)\":\n"
    "                         by the time model) and the best so far relative to the optimum\n"
    "                         (x = failed)\n";

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Summary {
  std::vector<double> to5, to10, regret, trials, step_ms;
  size_t within_at = 0, runs = 0;
  size_t trials_failed = 0;  // over every run (of the trials counted in `trials`): a wasted job each
  std::map<std::string, size_t> stops;

  void add(const ReplayRun &r, const std::vector<char> &ok, size_t at) {
    const size_t a = r.trials_to_within(0.05), b = r.trials_to_within(0.10);
    to5.push_back(a ? static_cast<double>(a) : kInf);
    to10.push_back(b ? static_cast<double>(b) : kInf);
    regret.push_back(r.regret_after(r.best_ratio.size()));
    trials.push_back(static_cast<double>(r.tried.size()));
    for (double s : r.step_seconds) step_ms.push_back(1e3 * s);
    for (size_t i : r.tried) trials_failed += !ok[i];
    within_at += b != 0 && b <= at;
    ++runs;
    ++stops[stop_rule_name(r.stop.rule)];
  }
  void merge(const Summary &o) {
    for (auto [dst, src] : {std::pair{&to5, &o.to5},
                            {&to10, &o.to10},
                            {&regret, &o.regret},
                            {&trials, &o.trials},
                            {&step_ms, &o.step_ms}})
      dst->insert(dst->end(), src->begin(), src->end());
    within_at += o.within_at;
    runs += o.runs;
    trials_failed += o.trials_failed;
    for (const auto &[k, v] : o.stops) stops[k] += v;
  }
  std::string stop_text() const {
    std::string s;
    for (const auto &[k, v] : stops) s += (s.empty() ? "" : " ") + k + ":" + std::to_string(v);
    return s;
  }
  double failed_share() const {
    const double all = std::accumulate(trials.begin(), trials.end(), 0.0);
    return all > 0 ? static_cast<double>(trials_failed) / all : 0.0;
  }
};

nlohmann::json to_json(const Summary &s) {
  nlohmann::json j;
  j["runs"] = s.runs;
  j["to5_median"] = json_number(quantile(s.to5, 0.5));
  j["to5_p90"] = json_number(quantile(s.to5, 0.9));
  j["to10_median"] = json_number(quantile(s.to10, 0.5));
  j["to10_p90"] = json_number(quantile(s.to10, 0.9));
  j["within10_at"] = s.runs ? static_cast<double>(s.within_at) / static_cast<double>(s.runs) : 0.0;
  j["regret_median"] = json_number(quantile(s.regret, 0.5));
  j["regret_p90"] = json_number(quantile(s.regret, 0.9));
  j["trials_median"] = quantile(s.trials, 0.5);
  j["failed_share"] = s.failed_share();
  j["step_ms_median"] = quantile(s.step_ms, 0.5);
  j["step_ms_max"] =
      s.step_ms.empty() ? 0.0 : *std::max_element(s.step_ms.begin(), s.step_ms.end());
  j["stops"] = s.stops;
  nlohmann::json per = nlohmann::json::array();
  for (double v : s.to10) per.push_back(json_number(v));
  j["to10_per_run"] = per;
  return j;
}

struct Settings {
  std::string table;
  ReplaySpec spec;
  double gamma = 0.5;
  std::vector<Strategy> strategies{Strategy::bo, Strategy::random};
  size_t seeds = 30, batch = 1, at = 12;
  std::uint64_t seed = 1;
  EngineOptions engine;
  bool json = false;
  bool trace = false;
  std::string history_file;
  bool history_others = false;
};

Settings parse_settings(int argc, char **argv) {
  const Args args(argc - 1, argv + 1,
                  {"table", "group", "features", "derive", "time-column", "cost-column", "ok-column", "gamma",
                   "strategy", "budget", "seeds", "seed", "initial", "xi", "batch", "batch-mode", "input-warping", "linear-trend", "kernel",
                   "stop-improvement", "round", "stop-ei", "min-trials", "at",
                   "explore", "explore-share", "explore-collapse", "history", "history-ties", "history-mode",
                   "history-gate", "history-picks", "history-confirm", "history-confirm-after", "history-doubt",
                   "history-feasibility", "history-own-floor", "history-coherence",
                   "history-top-must-run", "history-time-model", "feasibility-power", "time-linear-trend", "bowl-mean", "time-model", "cheap-design",
                   "feasibility-iterations", "failure-edge", "run-time-model", "run-time-margin", "run-time-particles"},
                  {"json", "trace", "help", "history-others"}, "autotune replay");
  args.expect_positional(0, "");
  Settings s;
  if (args.flag("help")) return s;
  parse_table_options(args, s.table, s.spec);
  if (auto v = args.value("gamma")) s.gamma = parse_gamma("--gamma", *v);
  s.engine.gamma = s.gamma;  // the objective (the automatic exploration and linear term read it)
  if (auto v = args.value("strategy")) {
    s.strategies.clear();
    for (const auto &name : split_list(*v))
      s.strategies.push_back(parse_strategy("--strategy", name));
  }
  auto count = [&](const char *name, long long lo, long long hi, size_t *dst) {
    if (auto v = args.value(name))
      *dst = static_cast<size_t>(parse_int(std::string("--") + name, *v, lo, hi));
  };
  count("budget", 1, 100000, &s.engine.stop.budget);
  count("seeds", 1, 100000, &s.seeds);
  if (auto v = args.value("initial")) s.engine.initial_trials = parse_initial_trials("--initial", *v);
  count("batch", 1, 1000, &s.batch);
  count("round", 1, 1000, &s.engine.stop.round_trials);
  count("min-trials", 0, 100000, &s.engine.stop.min_trials);
  count("at", 1, 100000, &s.at);
  if (auto v = args.value("history-picks"))
    s.engine.history_picks = static_cast<size_t>(parse_int("--history-picks", *v, 0, 1000));
  if (auto v = args.value("seed"))
    s.seed = static_cast<std::uint64_t>(parse_int("--seed", *v, 0, 9007199254740991LL));
  if (auto v = args.value("xi")) s.engine.xi = parse_double("--xi", *v, 0, 10);
  if (auto v = args.value("batch-mode")) s.engine.batch = parse_batch_mode("--batch-mode", *v);
  if (auto v = args.value("input-warping"))
    s.engine.input_warping = parse_bool("--input-warping", *v);
  if (auto v = args.value("linear-trend")) s.engine.linear_trend = parse_trend("--linear-trend", *v);
  if (auto v = args.value("kernel")) s.engine.gp.kernel = parse_kernel("--kernel", *v);
  if (auto v = args.value("stop-improvement"))
    s.engine.stop.min_improvement = parse_double("--stop-improvement", *v, 0, 1);
  if (auto v = args.value("stop-ei")) s.engine.stop.ei_fraction = parse_double("--stop-ei", *v, 0, 1);
  if (auto v = args.value("explore")) s.engine.explore = parse_explore("--explore", *v);
  if (auto v = args.value("explore-share"))
    s.engine.explore_share = parse_double("--explore-share", *v, 0, 1);
  if (auto v = args.value("explore-collapse"))
    s.engine.explore_collapse = parse_double("--explore-collapse", *v, 0, 1);
  if (auto v = args.value("history")) {
    if (v->empty()) throw_invalid("--history: empty file name");
    s.history_file = *v;
  }
  s.history_others = args.flag("history-others");
  if (auto v = args.value("history-mode")) {
    if (*v != "rgpe" && *v != "taf")
      throw_invalid("--history-mode: '" + *v + "' is not allowed; allowed: rgpe, taf");
    s.engine.history_mode =
        *v == "taf" ? EngineOptions::HistoryMode::taf : EngineOptions::HistoryMode::rgpe;
  }
  if (auto v = args.value("history-ties")) {
    if (*v != "own" && *v != "shared")
      throw_invalid("--history-ties: '" + *v + "' is not allowed; allowed: own, shared");
    s.engine.history_ties_to_own = *v == "own";
  }
  if (auto v = args.value("history-gate"))
    s.engine.history_gate = parse_double("--history-gate", *v, 0, 10);
  if (auto v = args.value("history-confirm")) {
    if (*v == "off") {
      s.engine.history_confirm = -1;
    } else {
      try {
        s.engine.history_confirm = parse_double("--history-confirm", *v, 0, 10);
      } catch (const Error &) {
        throw_invalid("--history-confirm: '" + *v + "' is not allowed; allowed: off or a number " +
                      "from 0 to 10");
      }
    }
  }
  if (auto v = args.value("history-confirm-after"))
    s.engine.history_confirm_after = parse_bool("--history-confirm-after", *v);
  if (auto v = args.value("history-doubt")) {
    if (*v == "off") {
      s.engine.history_doubt = 0;
    } else {
      try {
        s.engine.history_doubt = static_cast<size_t>(parse_int("--history-doubt", *v, 1, 100));
      } catch (const Error &) {
        throw_invalid("--history-doubt: '" + *v + "' is not allowed; allowed: off or a number of "
                      "trials after the initial design from 1 to 100");
      }
    }
  }
  if (auto v = args.value("history-own-floor"))
    s.engine.history_own_floor = parse_double("--history-own-floor", *v, 0, 1000);
  if (auto v = args.value("history-feasibility"))
    s.engine.history_feasibility = parse_double("--history-feasibility", *v, 0, 10);
  if (auto v = args.value("history-coherence"))
    s.engine.history_coherence = parse_double("--history-coherence", *v, -1, 1);
  if (auto v = args.value("failure-edge"))
    s.engine.failure_edge = parse_bool("--failure-edge", *v);
  if (auto v = args.value("history-top-must-run"))
    s.engine.history_top_must_run = parse_bool("--history-top-must-run", *v);
  if (auto v = args.value("feasibility-power"); v && *v != "auto") {
    try {
      s.engine.feasibility_power = parse_double("--feasibility-power", *v, 1, 64);
    } catch (const Error &e) {
      throw_invalid(std::string(e.what()) + ", or auto");
    }
  }
  if (auto v = args.value("feasibility-iterations"); v && *v != "auto") {
    try {
      s.engine.feasibility_iterations =
          static_cast<int>(parse_int("--feasibility-iterations", *v, 1, 50));
    } catch (const Error &e) {
      throw_invalid(std::string(e.what()) + ", or auto");
    }
  }
  if (auto v = args.value("time-linear-trend"))
    s.engine.time_linear_trend = parse_trend("--time-linear-trend", *v);
  if (auto v = args.value("bowl-mean"))
    s.engine.bowl_mean_sd = parse_double("--bowl-mean", *v, 0, 10);
  if (auto v = args.value("time-model")) s.engine.time_model = parse_time_model("--time-model", *v);
  if (auto v = args.value("run-time-model")) {
    if (*v == "off") {
      s.engine.run_time_columns.reset();
    } else {
      try {
        s.engine.run_time_columns = RunTimeColumns::parse(*v);
      } catch (const Error &e) {
        throw_invalid("--run-time-model: " + std::string(e.what()) + "; or auto, or off");
      }
    }
  }
  if (auto v = args.value("run-time-margin"))
    s.engine.run_time_margin = parse_double("--run-time-margin", *v, -2, 2);
  if (auto v = args.value("run-time-particles"))
    s.engine.run_time_particles = static_cast<std::size_t>(parse_int("--run-time-particles", *v, 64, 100000));
  if (auto v = args.value("cheap-design"); v && *v != "auto") {
    try {
      s.engine.cheap_design = parse_double("--cheap-design", *v, 0, 1);
    } catch (const Error &e) {
      throw_invalid(std::string(e.what()) + " (above 0), or auto");
    }
    if (!(*s.engine.cheap_design > 0))
      throw_invalid("--cheap-design: '" + *v + "' must be above 0 and at most 1, or auto");
  }
  if (auto v = args.value("history-time-model"))
    s.engine.history_time_model = parse_time_model("--history-time-model", *v, false);
  s.engine.predictions = false;
  s.json = args.flag("json");
  s.trace = args.flag("trace");
  return s;
}

void print_trace(const ReplayProblem &p, const EngineOptions &o, const ReplayRun &run) {
  std::printf("%s %s seed %llu (stopped by %s):\n", p.name.c_str(), strategy_name(o.strategy),
              static_cast<unsigned long long>(o.seed), stop_rule_name(run.stop.rule));
  double prev = kInf;
  for (size_t t = 0; t < run.tried.size(); ++t) {
    const size_t i = run.tried[t];
    const double r = run.best_ratio[t];
    std::printf("  %2zu %-20s %-70s %s%s\n", t + 1, t < run.proposed_by.size() ? run.proposed_by[t].c_str() : "",
                p.candidates.label(i).c_str(), p.ok[i] ? "" : "x ",
                r < prev ? ("best " + format_double(std::round(r * 1000) / 1000)).c_str() : "");
    prev = r;
  }
}

}  // namespace

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  if (q == 0.5) {
    const size_t n = v.size();
    if (n % 2) return v[n / 2];
    const double a = v[n / 2 - 1], b = v[n / 2];
    return std::isinf(a) || std::isinf(b) ? std::max(a, b) : 0.5 * (a + b);
  }
  const size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::max<size_t>(k, 1) - 1];
}

// Workflows (DAGs of functions, each a problem of the table): cmd_replay_workflow.cc.
int cmd_replay_workflow(const Caller &, int argc, char **argv);

int cmd_replay(const Caller &caller, int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--workflow", 0) == 0) return cmd_replay_workflow(caller, argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    }
  Settings s;
  try {
    s = parse_settings(argc, argv);
  } catch (const Error &e) {
    std::fprintf(stderr, "autotune replay: %s\n", e.what());
    return 2;
  }
  try {
    const Table table = Table::read_csv(s.table);
    const std::vector<ReplayProblem> problems = load_problems(table, s.spec);
    // Columns named for the run time's form must be there (auto turns it off where they are not).
    if (s.engine.run_time_columns && !s.engine.run_time_columns->automatic)
      for (const auto &pr : problems)
        if (const std::string e = allocations_error(pr.candidates, *s.engine.run_time_columns); !e.empty())
          throw_invalid("--run-time-model: problem '" + pr.name + "': " + e);
    std::vector<ReplayProblem> history_problems;
    if (!s.history_file.empty())
      history_problems = load_problems(Table::read_csv(s.history_file), s.spec);
    // Each problem's warm start, prepared once (outside the proposal steps, as ingest does).
    std::vector<std::shared_ptr<const WarmStart>> warm(problems.size());
    std::vector<size_t> warm_sources(problems.size(), 0);
    if (!history_problems.empty() || s.history_others)
      for (size_t p = 0; p < problems.size(); ++p) {
        std::vector<HistoryProblem> hist;
        auto add = [&](const ReplayProblem &h) {
          HistoryProblem hp = history_of(h, s.gamma);
          hp.done = map_history(h.candidates, hp.done, problems[p].candidates);
          hp.times = map_history(h.candidates, hp.times, problems[p].candidates);
          if (!hp.done.empty()) hist.push_back(std::move(hp));
        };
        for (const auto &h : history_problems) add(h);
        if (s.history_others)
          for (size_t q = 0; q < problems.size(); ++q)
            if (q != p) add(problems[q]);
        warm[p] = prepare_warm_start(problems[p].candidates, hist, s.engine);
        warm_sources[p] = warm[p]->size();
      }
    const size_t budget = s.engine.stop.budget;
    std::vector<std::vector<Summary>> sums(problems.size(),
                                           std::vector<Summary>(s.strategies.size()));
    std::vector<Summary> overall(s.strategies.size());
    for (size_t p = 0; p < problems.size(); ++p)
      for (size_t k = 0; k < s.strategies.size(); ++k) {
        for (size_t i = 0; i < s.seeds; ++i) {
          EngineOptions o = s.engine;
          o.strategy = s.strategies[k];
          o.seed = s.seed + i;
          if (o.strategy == Strategy::bo) o.history = warm[p];
          const ReplayRun run = replay_once(problems[p], s.gamma, o, s.batch);
          if (s.trace && !s.json) print_trace(problems[p], o, run);
          sums[p][k].add(run, problems[p].ok, s.at);
        }
        overall[k].merge(sums[p][k]);
      }

    if (s.json) {
      nlohmann::json j;
      j["table"] = s.table;
      j["gamma"] = s.gamma;
      j["budget"] = budget;
      j["seeds"] = s.seeds;
      j["first_seed"] = s.seed;
      j["batch"] = s.batch;
      j["at"] = s.at;
      j["problems"] = nlohmann::json::array();
      for (size_t p = 0; p < problems.size(); ++p) {
        nlohmann::json jp;
        jp["name"] = problems[p].name;
        jp["candidates"] = problems[p].candidates.size();
        jp["history_problems"] = warm_sources[p];
        if (warm[p]) {
          jp["history_set_aside"] = warm[p]->set_aside.size();
          jp["history_coherence"] = std::isnan(warm[p]->coherence) ? nlohmann::json(nullptr)
                                                                    : nlohmann::json(warm[p]->coherence);
        }
        for (size_t k = 0; k < s.strategies.size(); ++k)
          jp["results"][strategy_name(s.strategies[k])] = to_json(sums[p][k]);
        j["problems"].push_back(jp);
      }
      for (size_t k = 0; k < s.strategies.size(); ++k)
        j["overall"][strategy_name(s.strategies[k])] = to_json(overall[k]);
      std::printf("%s\n", j.dump(2).c_str());
      return 0;
    }

    std::printf("replay %s: %zu problem%s, gamma %s, budget %zu, %zu seed%s from %llu, batch %zu\n",
                s.table.c_str(), problems.size(), problems.size() == 1 ? "" : "s",
                format_double(s.gamma).c_str(), budget, s.seeds, s.seeds == 1 ? "" : "s",
                static_cast<unsigned long long>(s.seed), s.batch);
    if (!history_problems.empty() || s.history_others) {
      std::printf("history:%s%s%s; base models per problem:", s.history_file.empty() ? "" : " ",
                  s.history_file.c_str(), s.history_others ? " + the table's other problems" : "");
      for (size_t p = 0; p < problems.size(); ++p) std::printf(" %zu", warm_sources[p]);
      std::printf("\nhistory coherence per problem (set aside below %s):",
                  format_double(s.engine.history_coherence).c_str());
      for (size_t p = 0; p < problems.size(); ++p) {
        if (std::isnan(warm[p]->coherence))
          std::printf(" -");
        else
          std::printf(" %.2f", warm[p]->coherence);
      }
      std::printf("\n");
    }
    std::printf("features:");
    for (const auto &c : problems.front().candidates.columns())
      std::printf(" %s%s", c.name.c_str(), c.scale == Scale::categorical ? "(categorical)" : "");
    std::printf("\n\n%-32s %-10s %8s %8s %8s %8s %9s %8s %8s %7s %8s  %s\n", "problem",
                "strategy", "to5-med", "to5-p90", "to10-med", "to10-p90", "in10@", "regret",
                "reg-p90", "failed", "step-ms", "stopped by");
    auto row = [&](const std::string &name, const char *strategy, const Summary &m) {
      char at[32];
      // One decimal: a target such as ">= 90%" must not be met by rounding.
      std::snprintf(at, sizeof at, "%.1f%%", m.runs ? 100.0 * m.within_at / m.runs : 0.0);
      std::printf("%-32s %-10s %8s %8s %8s %8s %9s %8s %8s %7s %8.2f  %s\n", name.c_str(),
                  strategy, count_text(quantile(m.to5, 0.5), budget).c_str(),
                  count_text(quantile(m.to5, 0.9), budget).c_str(),
                  count_text(quantile(m.to10, 0.5), budget).c_str(),
                  count_text(quantile(m.to10, 0.9), budget).c_str(), at,
                  pct(quantile(m.regret, 0.5)).c_str(), pct(quantile(m.regret, 0.9)).c_str(),
                  pct(m.failed_share()).c_str(), quantile(m.step_ms, 0.5), m.stop_text().c_str());
    };
    for (size_t p = 0; p < problems.size(); ++p)
      for (size_t k = 0; k < s.strategies.size(); ++k)
        row(k == 0 ? problems[p].name : "", strategy_name(s.strategies[k]), sums[p][k]);
    for (size_t k = 0; k < s.strategies.size(); ++k)
      row(k == 0 ? "all (" + std::to_string(overall[k].runs) + " runs)" : "",
          strategy_name(s.strategies[k]), overall[k]);
    std::printf(
        "\nin10@ = runs within 10%% of the optimum after %zu trials; regret = best found / "
        "optimum - 1 when the search stopped; failed = share of the trials that failed (a "
        "wasted job each); >%zu = not reached within the budget.\n",
        s.at, budget);
    if (s.strategies.size() >= 2) {
      const double a = quantile(overall[0].to10, 0.5), b = quantile(overall[1].to10, 0.5);
      std::printf("median trials to within 10%%: %s %s, %s %s", strategy_name(s.strategies[0]),
                  count_text(a, budget).c_str(), strategy_name(s.strategies[1]),
                  count_text(b, budget).c_str());
      if (std::isfinite(a) && std::isfinite(b) && a > 0) std::printf(" (ratio %.2f)", b / a);
      std::printf("\n");
    }
    return 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "autotune replay: %s\n", e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "autotune replay: %s\n", e.what());
    return 1;
  }
}

}  // namespace autotune::cli
