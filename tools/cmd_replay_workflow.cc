// autotune replay --workflow: the offline benchmark of the workflow search (workflow_search.hpp)
// on a table of measured configurations, each function of a workflow file answered from its
// problem of the table (workflow_replay.hpp).  Like replay, it needs nothing of SlurmUser.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/objective.hpp"
#include "autotune/replay.hpp"
#include "autotune/table.hpp"
#include "autotune/units.hpp"
#include "autotune/workflow.hpp"
#include "autotune/workflow_replay.hpp"
#include "autotune/workflow_search.hpp"
#include "args.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "replay_args.hpp"

namespace autotune::cli {
namespace {

const char kHelp[] =
    "Usage: autotune replay --workflow FILE[,FILE...] --table FILE [options]\n"
    "\n"
    "Replays searches of workflows (DAGs of functions, each a problem of the table) run by run:\n"
    "one trial is one run of the whole workflow, each function answered from its problem's rows.\n"
    "Strategies side by side on the same seeds.  Prints, per workflow, the true optimum (exact:\n"
    "stage by stage for fork-join workflows, else exhaustive over the Pareto fronts), then per\n"
    "strategy the runs until the best run is within 5% and 10% of the optimum (median, p90), the\n"
    "fraction of searches within 10% after --at runs, the median best score after --at runs\n"
    "relative to the optimum, the regret when the search stopped, and the time of one proposal.\n"
    "\n"
    "Workflow and table:\n"
    "  --workflow LIST        workflow files (JSON, see man autotune(1)), comma-separated\n"
    "  --table FILE           CSV with a header line (required)\n"
    "  --group COLUMN         one problem per value of COLUMN (the functions' \"problem\")\n"
    "  --features A,B,...     feature columns (default: every column but the group, time, cost\n"
    "                         and ok columns)\n"
    "  --derive NAME=A*B,...  add features that are products or ratios (A/B) of numeric columns\n"
    "  --time-column NAME     measured time (default time_s)\n"
    "  --cost-column NAME     cost of the run (default cost)\n"
    "  --ok-column NAME       1 = completed, 0 = failed (default ok)\n"
    "Search:\n"
    "  --gamma G              override the workflow file's gamma (0 fastest .. 1 cheapest)\n"
    "  --budget N             override the workflow file's budget (runs per search)\n"
    "  --strategy LIST        stage, function, flat, random, comma-separated\n"
    "                         (default stage,function,flat,random)\n"
    "  --seeds N              searches per workflow and strategy (default 20)\n"
    "  --seed S               first seed; the searches use S, S+1, ... (default 1)\n"
    "  --initial N            runs of the initial design (default 4)\n"
    "  --acquisition A        how the stage strategy chooses: ei (default), logei, lcb or\n"
    "                         thompson (see workflow_search.hpp)\n"
    "  --exploit F            stage: run the best combination of measured configurations when\n"
    "                         it has not run together and beats the best run by more than F\n"
    "                         (default -1: never)\n"
    "  --exploit-last yes|no  stage: the budget's last run is that combination whenever it\n"
    "                         beats the best run (default yes)\n"
    "  --fresh yes|no         stage: a function whose choice is already measured takes its\n"
    "                         best unmeasured candidate instead (default yes)\n"
    "  --kappa K              optimism of lcb and thompson, in standard deviations (default 1)\n"
    "  --xi X                 logei's margin, standard deviations of the log time (default 0.01)\n"
    "  --input-warping yes|no\n"
    "                         learn a warping of each numeric feature's scale (default yes)\n"
    "  --linear-trend yes|no  add a linear term to the models' kernel (default: none in the\n"
    "                         stage strategy's models; function and flat choose by gamma as\n"
    "                         autotune replay does)\n"
    "  --kernel K             ard, additive or ard+additive: the models' kernel (autotune\n"
    "                         replay --help; default ard)\n"
    "  --flat-pool N          random joint configurations of the flat strategy (default 1000)\n"
    "  --stop-improvement F   stop when a round of runs improves the best by less than F\n"
    "                         (default 0: off)\n"
    "  --round N              runs per round (default 3)\n"
    "  --min-trials N         the rule above applies from N runs on (default 6)\n"
    "Output:\n"
    "  --at N                 report the fraction within 10% and the score after N runs\n"
    "                         (default 12)\n"
    "  --json                 machine-readable output\n";

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Summary {
  std::vector<double> to5, to10, regret, at_ratio, runs_made, step_ms;
  size_t within_at = 0, searches = 0;
  std::map<std::string, size_t> stops;
  void add(const ReplayRun &r, size_t at) {
    const size_t a = r.trials_to_within(0.05), b = r.trials_to_within(0.10);
    to5.push_back(a ? static_cast<double>(a) : kInf);
    to10.push_back(b ? static_cast<double>(b) : kInf);
    regret.push_back(r.regret_after(r.best_ratio.size()));
    at_ratio.push_back(r.best_ratio.empty() ? kInf
                                            : r.best_ratio[std::min(at, r.best_ratio.size()) - 1]);
    runs_made.push_back(static_cast<double>(r.tried.size()));
    for (double s : r.step_seconds) step_ms.push_back(1e3 * s);
    within_at += b != 0 && b <= at;
    ++searches;
    ++stops[stop_rule_name(r.stop.rule)];
  }
};

nlohmann::json to_json(const Summary &s) {
  nlohmann::json j;
  j["searches"] = s.searches;
  j["to5_median"] = json_number(quantile(s.to5, 0.5));
  j["to5_p90"] = json_number(quantile(s.to5, 0.9));
  j["to10_median"] = json_number(quantile(s.to10, 0.5));
  j["to10_p90"] = json_number(quantile(s.to10, 0.9));
  j["within10_at"] =
      s.searches ? static_cast<double>(s.within_at) / static_cast<double>(s.searches) : 0.0;
  j["score_at_median"] = json_number(quantile(s.at_ratio, 0.5));
  j["regret_median"] = json_number(quantile(s.regret, 0.5));
  j["regret_p90"] = json_number(quantile(s.regret, 0.9));
  j["runs_median"] = quantile(s.runs_made, 0.5);
  j["step_ms_median"] = quantile(s.step_ms, 0.5);
  j["step_ms_max"] =
      s.step_ms.empty() ? 0.0 : *std::max_element(s.step_ms.begin(), s.step_ms.end());
  j["stops"] = s.stops;
  return j;
}

struct Settings {
  std::vector<std::string> workflows;
  std::string table;
  ReplaySpec spec;
  std::optional<double> gamma;
  std::optional<size_t> budget;
  std::vector<WorkflowStrategy> strategies{WorkflowStrategy::stage, WorkflowStrategy::function,
                                           WorkflowStrategy::flat, WorkflowStrategy::random};
  size_t seeds = 20, at = 12;
  std::uint64_t seed = 1;
  WorkflowSearchOptions search;
  bool json = false;
};

Settings parse_settings(int argc, char **argv) {
  const Args args(
      argc - 1, argv + 1,
      {"workflow",      "table",        "group",   "features",     "derive",    "time-column",
       "cost-column",   "ok-column",    "gamma",   "budget",       "strategy",  "seeds",
       "seed",          "initial",      "exploit", "exploit-last", "fresh",     "xi",
       "input-warping", "linear-trend", "kernel", "kappa",   "acquisition",  "flat-pool", "stop-improvement",
       "round",         "min-trials",   "at"},
      {"json", "help"}, "autotune replay --workflow");
  args.expect_positional(0, "");
  Settings s;
  const auto wf = args.value("workflow");
  if (!wf || wf->empty())
    throw_invalid("--workflow: empty; allowed: workflow files, comma-separated");
  for (const auto &f : split_list(*wf)) {
    if (f.empty()) throw_invalid("--workflow: '" + *wf + "' has an empty file name");
    s.workflows.push_back(f);
  }
  parse_table_options(args, s.table, s.spec);
  if (auto v = args.value("gamma")) s.gamma = parse_gamma("--gamma", *v);
  if (auto v = args.value("budget"))
    s.budget = static_cast<size_t>(
        parse_int("--budget", *v, 1, static_cast<long long>(kMaxWorkflowBudget)));
  if (auto v = args.value("strategy")) {
    s.strategies.clear();
    for (const auto &name : split_list(*v))
      s.strategies.push_back(parse_workflow_strategy("--strategy", name));
  }
  auto count = [&](const char *name, long long lo, long long hi, size_t *dst) {
    if (auto v = args.value(name))
      *dst = static_cast<size_t>(parse_int(std::string("--") + name, *v, lo, hi));
  };
  count("seeds", 1, 100000, &s.seeds);
  count("initial", 1, 1000, &s.search.initial_runs);
  count("flat-pool", 1, 100000, &s.search.flat_pool);
  count("round", 1, 1000, &s.search.stop.round_trials);
  count("min-trials", 0, 100000, &s.search.stop.min_trials);
  count("at", 1, 100000, &s.at);
  if (auto v = args.value("seed"))
    s.seed = static_cast<std::uint64_t>(parse_int("--seed", *v, 0, 9007199254740991LL));
  if (auto v = args.value("exploit"))
    s.search.exploit_margin = parse_double("--exploit", *v, -1, 1);
  if (auto v = args.value("exploit-last")) s.search.exploit_last = parse_bool("--exploit-last", *v);
  if (auto v = args.value("fresh")) s.search.fresh = parse_bool("--fresh", *v);
  if (auto v = args.value("xi")) s.search.engine.xi = parse_double("--xi", *v, 0, 10);
  if (auto v = args.value("input-warping"))
    s.search.engine.input_warping = parse_bool("--input-warping", *v);
  if (auto v = args.value("linear-trend"))
    s.search.engine.linear_trend = parse_bool("--linear-trend", *v) ? Trend::yes : Trend::no;
  if (auto v = args.value("kernel")) s.search.engine.gp.kernel = parse_kernel("--kernel", *v);
  if (auto v = args.value("kappa")) s.search.kappa = parse_double("--kappa", *v, 0, 100);
  if (auto v = args.value("acquisition")) {
    using A = WorkflowSearchOptions::Acquisition;
    if (*v == "ei")
      s.search.acquisition = A::ei;
    else if (*v == "logei") {
      s.search.acquisition = A::ei;
      s.search.log_ei = true;
    } else if (*v == "lcb")
      s.search.acquisition = A::lcb;
    else if (*v == "thompson")
      s.search.acquisition = A::thompson;
    else
      throw_invalid("--acquisition: '" + *v + "' is not allowed; allowed: ei, lcb, thompson");
  }
  if (auto v = args.value("stop-improvement"))
    s.search.stop.min_improvement = parse_double("--stop-improvement", *v, 0, 1);
  s.search.engine.predictions = false;
  s.json = args.flag("json");
  return s;
}

}  // namespace

int cmd_replay_workflow(const Caller &, int argc, char **argv) {
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
    std::vector<std::string> names;
    for (const auto &p : problems) names.push_back(p.name);
    nlohmann::json jall;
    jall["table"] = s.table;
    jall["seeds"] = s.seeds;
    jall["first_seed"] = s.seed;
    jall["at"] = s.at;
    jall["workflows"] = nlohmann::json::array();
    for (const auto &file : s.workflows) {
      Workflow w = Workflow::load(file, &names);
      if (s.gamma) w.gamma = *s.gamma;
      if (s.budget) w.budget = *s.budget;
      const WorkflowReplay r = make_workflow_replay(w, problems);
      const WorkflowOptimum opt = workflow_optimum(r, w.gamma);
      const Stages st = cut_stages(w);
      std::vector<Summary> sums(s.strategies.size());
      for (size_t k = 0; k < s.strategies.size(); ++k)
        for (size_t i = 0; i < s.seeds; ++i) {
          WorkflowSearchOptions o = s.search;
          o.strategy = s.strategies[k];
          o.seed = s.seed + i;
          o.stop.budget = w.budget;
          sums[k].add(replay_workflow_once(r, opt, o), s.at);
        }
      if (s.json) {
        nlohmann::json jw;
        jw["workflow"] = w.name;
        jw["file"] = file;
        jw["gamma"] = w.gamma;
        jw["budget"] = w.budget;
        jw["functions"] = w.functions.size();
        jw["stages"] = st.stage.size();
        jw["fork_join"] = st.exact;
        jw["optimum"] = {{"score", opt.score},
                         {"time", opt.time},
                         {"cost", opt.cost},
                         {"method", opt.stage_by_stage ? "stage by stage" : "exhaustive"},
                         {"combinations", opt.combinations}};
        for (size_t f = 0; f < w.functions.size(); ++f)
          jw["optimum"]["choice"][w.functions[f].name] =
              r.problems[f]->candidates.label(opt.choice[f]);
        for (size_t k = 0; k < s.strategies.size(); ++k)
          jw["results"][workflow_strategy_name(s.strategies[k])] = to_json(sums[k]);
        jall["workflows"].push_back(jw);
        continue;
      }
      std::printf(
          "workflow %s (%s): %zu functions in %zu stages (%s), gamma %s, budget %zu runs, "
          "%zu seeds from %llu\n",
          w.name.c_str(), file.c_str(), w.functions.size(), st.stage.size(),
          st.exact ? "fork-join: stages exact" : "not fork-join: stages an upper bound",
          format_double(w.gamma).c_str(), w.budget, s.seeds,
          static_cast<unsigned long long>(s.seed));
      std::printf(
          "optimum: score %.4f (time %.5g, cost %.5g; reference T %.5g, C %.5g), %s over "
          "%.0f Pareto combinations\n",
          opt.score, opt.time, opt.cost, r.reference.time, r.reference.cost,
          opt.stage_by_stage ? "stage by stage" : "exhaustive", opt.combinations);
      for (size_t f = 0; f < w.functions.size(); ++f)
        std::printf("  %-12s stage %zu  %s\n", w.functions[f].name.c_str(), st.level[f] + 1,
                    r.problems[f]->candidates.label(opt.choice[f]).c_str());
      std::printf("%-10s %8s %8s %8s %8s %9s %9s %8s %8s %8s  %s\n", "strategy", "to5-med",
                  "to5-p90", "to10-med", "to10-p90", "in10@", "score@", "regret", "reg-p90",
                  "step-ms", "stopped by");
      for (size_t k = 0; k < s.strategies.size(); ++k) {
        const Summary &m = sums[k];
        char at[32], sc[32];
        std::snprintf(at, sizeof at, "%.1f%%", m.searches ? 100.0 * m.within_at / m.searches : 0.0);
        std::snprintf(sc, sizeof sc, "%.3f", quantile(m.at_ratio, 0.5));
        std::string stops;
        for (const auto &[n, c] : m.stops)
          stops += (stops.empty() ? "" : " ") + n + ":" + std::to_string(c);
        std::printf("%-10s %8s %8s %8s %8s %9s %9s %8s %8s %8.2f  %s\n",
                    workflow_strategy_name(s.strategies[k]),
                    count_text(quantile(m.to5, 0.5), w.budget).c_str(),
                    count_text(quantile(m.to5, 0.9), w.budget).c_str(),
                    count_text(quantile(m.to10, 0.5), w.budget).c_str(),
                    count_text(quantile(m.to10, 0.9), w.budget).c_str(), at, sc,
                    pct(quantile(m.regret, 0.5)).c_str(), pct(quantile(m.regret, 0.9)).c_str(),
                    quantile(m.step_ms, 0.5), stops.c_str());
      }
      std::printf("\n");
    }
    if (s.json) {
      std::printf("%s\n", jall.dump(2).c_str());
      return 0;
    }
    std::printf(
        "in10@/score@ = searches within 10%% of the optimum / median best score relative "
        "to the optimum after %zu runs; regret = best / optimum - 1 when the search "
        "stopped; >N = not reached within the budget.\n",
        s.at);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "autotune replay: %s\n", e.what());
    return 1;
  }
}

}  // namespace autotune::cli
