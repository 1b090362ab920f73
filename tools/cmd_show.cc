// autotune show / report: one class in detail, as a table and as a plot.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "autotune/error.hpp"
#include "autotune/tuner.hpp"
#include "autotune_config.h"
#include "commands.hpp"
#include "explain.hpp"
#include "views.hpp"
#include "workflow_plan.hpp"

namespace autotune::cli {

namespace {

std::string measurement_cells(const TrialRecord &t, std::vector<std::string> &row) {
  if (t.measurement) {
    // A trial measured by time has no throughput: T is the wall time of its job's run.
    const bool by_time = !(t.measurement->samples_per_s > 0);
    row.push_back(by_time ? "time" : "throughput");
    row.push_back(by_time ? "-" : num(t.measurement->samples_per_s, 5));
    row.push_back(num(t.measurement->time_s));
    row.push_back(num(t.measurement->cost));
    row.push_back(t.measurement->score ? num(*t.measurement->score) : "-");
  } else {
    row.insert(row.end(), {"-", "-", "-", "-", "-"});
  }
  return {};
}

constexpr const char *kFunctionNoScore =
    "a function's trials have no score of their own: the workflow's runs are scored as a whole";

std::string function_winner_text(const FunctionOf &f) {
  const std::string why = kFunctionNoScore;
  if (!f.workflow.best_run) return "\nwinner: none yet (the workflow has no successful run yet; " + why + ")\n";
  std::string out = "\nwinner: the workflow's best run, run " + std::to_string(*f.workflow.best_run);
  if (f.best && f.best->trial_seq)
    out += ": trial " + std::to_string(*f.best->trial_seq) + " " + f.best->config;
  return out + " (" + why + "; see autotune workflow show " + f.workflow.name + ")\n";
}

}  // namespace

int cmd_show(const Caller &caller, int argc, char **argv) {
  Args a(argc - 1, argv + 1, {"user"}, {"help", "json"}, "autotune show");
  if (a.flag("help")) {
    std::printf(
        "usage: autotune show CLASS [--user USER] [--json]\n\n"
        "The class's settings and the partition and accounting (QOS, association) limits it was\n"
        "created with, and its measure (time: each job's whole run; throughput: the samples per\n"
        "second the program reports); every trial of the class with its configuration, what it was\n"
        "measured by, its measurement (samples/s, time, cost) and score, the recommendations\n"
        "queued for the next jobs, and why the winner won: its score against the runner-up's, and\n"
        "the model's predicted score and uncertainty for the untried configurations nearest to it; and\n"
        "which other classes informed its search (warm start) with their weights, and the model\n"
        "(kernel, input warping, linear term; whether it models run times or scores) and how it\n"
        "proposes.  Lower scores are better: score = (1-gamma)*T/T_ref + gamma*C/C_ref, with the\n"
        "first successful trial as reference.  For the class W.F of function F of a workflow W,\n"
        "whose trials have no score of their own (the workflow's runs are scored as a whole): the\n"
        "workflow's state, and the function's trial in the workflow's best run as the winner.\n\n"
        "  --user USER  another user's class (root and SlurmUser only)\n"
        "  --json       the class, its trials and the explanation as JSON\n");
    return 0;
  }
  auto [conf, store, c] = open_named_class(caller, a, false);
  const ClassView v = make_view(store, c);
  const std::optional<FunctionOf> fn = function_of(store, c);
  Explanation ex;
  if (fn)
    ex.note = kFunctionNoScore;
  else
    ex = explain(v, conf);
  std::optional<WorkflowAssignment> next;  // a function's: what the workflow's next run gives it
  if (fn)
    for (const WorkflowAssignment &w : parse_workflow_proposal(fn->workflow.proposal))
      if (w.function == fn->function) next = w;

  const ClassExtra cx = class_extra(c);
  if (a.flag("json")) {
    nlohmann::json j = view_json(v, true);
    j["explanation"] = explanation_json(ex);
    if (fn) {
      nlohmann::json w = {{"name", fn->workflow.name},
                          {"function", fn->function},
                          {"state", fn->workflow.state},
                          {"state_reason", fn->workflow.state_reason},
                          {"best_run", nullptr},
                          {"best_run_trial", nullptr}};
      if (fn->workflow.best_run) w["best_run"] = *fn->workflow.best_run;
      if (fn->best && fn->best->trial_seq) w["best_run_trial"] = *fn->best->trial_seq;
      w["next"] = next ? nlohmann::json{{"config", next->config}, {"origin", next->origin}, {"why", next->why}}
                       : nlohmann::json();
      j["workflow"] = w;
    } else {
      j["workflow"] = nullptr;
    }
    j["history_shared"] = cx.history_shared;
    j["warm_start"] = nlohmann::json::array();
    for (const auto &h : cx.history)
      j["warm_start"].push_back({{"class", h.name},
                                 {"owner", history_owner(h)},
                                 {"weight", h.weight}});
    if (cx.own_weight) j["own_weight"] = *cx.own_weight;
    if (cx.history_failure_trust) j["history_failure_trust"] = *cx.history_failure_trust;
    j["warm_start_set_aside"] = nlohmann::json::array();
    for (const auto &h : cx.history_set_aside)
      j["warm_start_set_aside"].push_back(
          {{"class", h.name}, {"owner", history_owner(h)}});
    if (cx.history_coherence) j["history_coherence"] = *cx.history_coherence;
    j["history_top_failed"] = cx.history_top_failed;
    const ClassModelText m = class_model_text(c, cx);
    j["model"] = m.model;
    j["proposals"] = m.proposals;
    j["time_model"] = time_model_name(cx.time_model);
    j["time_modelled"] = cx.time_modelled;
    j["form_modelled"] = cx.form_modelled;
    if (cx.failure_edge)
      j["failure_edge"] = {{"feature", cx.failure_edge->feature},
                           {"below", cx.failure_edge->below},
                           {"value", cx.failure_edge->value},
                           {"failures", cx.failure_edge->failures}};
    else
      j["failure_edge"] = nullptr;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }

  if (fn) {
    // The class's own state is that of its creation: the workflow decides.
    std::printf("class %s of %s: function %s of workflow %s, tuned with it run by run (autotune workflow show %s)\n",
                c.name.c_str(), user_name(c.owner).c_str(), fn->function.c_str(), fn->workflow.name.c_str(),
                fn->workflow.name.c_str());
    std::printf("workflow %s: %s", fn->workflow.name.c_str(), fn->workflow.state.c_str());
    if (!fn->workflow.state_reason.empty()) std::printf(" (%s)", fn->workflow.state_reason.c_str());
  } else {
    std::printf("class %s of %s: %s", c.name.c_str(), c.shared ? "all users (shared)" : user_name(c.owner).c_str(),
                to_string(c.state));
    if (!c.state_reason.empty()) std::printf(" (%s)", c.state_reason.c_str());
  }
  std::printf("\nsettings: gamma=%s budget=%d mode=%s probe-batches=%d space=%s\n", num(c.settings.gamma).c_str(),
              c.settings.budget, to_string(c.settings.mode), c.settings.probe_batches,
              c.settings.space.empty() ? "(site default)" : c.settings.space.c_str());
  switch (c.settings.metric) {
    case ClassMetric::time:
      std::printf("measure: time (the wall time of each job's whole run; TIME is seconds per job)\n");
      break;
    case ClassMetric::throughput:
      std::printf("measure: throughput (the samples per second the program reports; TIME is seconds per sample)\n");
      break;
    case ClassMetric::automatic:
      std::printf("measure: not fixed yet (the first measured trial fixes it: throughput when the program reports "
                  "it, else time)\n");
      break;
  }
  const PartitionLimits limits = class_limits(c);
  if (limits.any())
    std::printf("partition limits: %s (no configuration beyond them is tried)\n", limits.describe().c_str());
  if (limits.accounting.any())
    std::printf("accounting limits: %s (no configuration beyond them is tried)\n", limits.accounting.text.c_str());
  if (c.t_ref && c.c_ref)
    std::printf("references: T_ref=%s C_ref=%s (the first successful trial)\n", num(*c.t_ref).c_str(),
                num(*c.c_ref).c_str());
  if (fn) {
    // Parsed again only to name the search: the definition was validated when it was stored.
    std::printf("model: the workflow's (search %s, for the score of the whole run; autotune-workflow(1))\n",
                workflow_strategy_name(workflow_of(fn->workflow).search));
  } else {
    const ClassModelText m = class_model_text(c, cx);
    std::printf("model: %s; proposals: %s\n", m.model.c_str(), m.proposals.c_str());
  }
  if (const std::string line = failure_edge_line(cx); !fn && !line.empty()) std::printf("%s\n", line.c_str());
  if (fn)
    std::printf("trials: %d, one per run of the workflow the function ran in (the workflow's budget: %d runs)\n",
                v.used, fn->workflow.budget);
  else
    std::printf("trials: %d of %d used\n", v.used, c.settings.budget);
  if (cx.history_shared)
    std::printf("history: offered to every user's classes of the same space and node types (autotune admin history)\n");
  for (const auto &line : warm_start_lines(cx)) std::printf("%s\n", line.c_str());
  std::printf("\n");

  if (!v.trials.empty()) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"TRIAL", "ORIGIN", "STATUS", "JOB", "CONFIGURATION", "MEASURE", "SAMPLES/S", "TIME", "COST", "SCORE", ""});
    for (const auto &t : v.trials) {
      std::string job = t.job_id ? std::to_string(*t.job_id) : "-";
      if (t.step_id) job += "." + std::to_string(*t.step_id);
      std::vector<std::string> row = {std::to_string(t.seq), to_string(t.origin), to_string(t.status), job, t.config};
      measurement_cells(t, row);
      row.push_back(v.best && t.id == v.best->id ? "<- best" : "");
      rows.push_back(row);
    }
    std::fputs(format_table(rows).c_str(), stdout);
    // Why per-role resources were changed, and why trials failed.
    std::string adjusted, failed, uncounted;
    for (const auto &t : v.trials) {
      std::string job = t.job_id ? " (job " + std::to_string(*t.job_id) + (t.step_id ? "." + std::to_string(*t.step_id) : "") + ")" : "";
      if (t.origin == TrialOrigin::adjust) adjusted += "  trial " + std::to_string(t.seq) + job + ": " + t.reason + "\n";
      if (t.status == TrialStatus::failed || t.status == TrialStatus::timeout)
        failed += "  trial " + std::to_string(t.seq) + job + " " + to_string(t.status) + ": " + t.reason + "\n";
      if (t.status == TrialStatus::cancelled)
        uncounted += "  trial " + std::to_string(t.seq) + job + ": " + t.reason + "\n";
    }
    if (!adjusted.empty()) std::printf("\nadjusted from measured use:\n%s", adjusted.c_str());
    if (!failed.empty()) std::printf("\nfailed trials:\n%s", failed.c_str());
    if (!uncounted.empty()) std::printf("\nnot counted (cancelled, interrupted or dropped):\n%s", uncounted.c_str());
  } else {
    std::printf("no trials yet\n");
  }
  std::fputs((fn ? function_winner_text(*fn) : explanation_text(ex)).c_str(), stdout);
  if (next) {
    std::printf("\nnext configuration (the workflow's proposal for its next run):\n  %s  [%s%s%s]",
                next->config.c_str(), next->origin.c_str(), next->why.empty() ? "" : ": ", next->why.c_str());
    if (next->time) std::printf("  predicted time %s", num(*next->time).c_str());
    if (next->cost) std::printf(", cost %s", num(*next->cost).c_str());
    std::printf("\n");
  } else if (!v.queue.empty()) {
    std::printf(fn ? "\nnext configurations (the function's initial design, taken in order by its next jobs while "
                     "the workflow's runs propose nothing for it):\n"
                   : "\nnext configurations (taken by the class's next jobs, in order):\n");
    for (const auto &r : v.queue) {
      std::printf("  %s  [%s%s%s]", r.config.c_str(), to_string(r.origin), r.reason.empty() ? "" : ": ",
                  r.reason.c_str());
      if (r.predicted) std::printf("  predicted %s", num(*r.predicted).c_str());
      if (r.stddev) std::printf(" ± %s", num(*r.stddev, 2).c_str());
      std::printf("\n");
    }
  }
  return 0;
}

void run_gnuplot(const Caller &caller, const std::string &script, const std::string &file) {
  // gnuplot runs with the caller's own privileges: the output file is theirs.
  int pipefd[2];
  if (pipe(pipefd) != 0) throw_io("pipe", errno);
  const pid_t pid = fork();
  if (pid < 0) throw_io("fork", errno);
  if (pid == 0) {
    dup2(pipefd[0], 0);
    close(pipefd[0]);
    close(pipefd[1]);
    if (caller.setuid) {
      if (setresgid(getgid(), getgid(), getgid()) != 0 || setresuid(caller.uid, caller.uid, caller.uid) != 0) _exit(126);
      umask(022);
    }
    execl(AUTOTUNE_GNUPLOT, "gnuplot", static_cast<char *>(nullptr));
    std::fprintf(stderr, "autotune report: cannot run %s: %s\n", AUTOTUNE_GNUPLOT, std::strerror(errno));
    _exit(127);
  }
  close(pipefd[0]);
  size_t off = 0;
  while (off < script.size()) {
    const ssize_t n = write(pipefd[1], script.data() + off, script.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(pipefd[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(Errc::io, "gnuplot could not write '" + file + "'");
}

int cmd_report(const Caller &caller, int argc, char **argv) {
  Args a(argc - 1, argv + 1, {"user", "plot", "workflow"}, {"help"}, "autotune report");
  if (a.flag("help")) {
    std::printf(
        "usage: autotune report CLASS --plot FILE [--user USER]\n"
        "       autotune report --workflow NAME --plot FILE [--user USER]\n\n"
        "Plot the class's search with gnuplot: the score of every measured trial, the best score\n"
        "so far, and the winner marked.  FILE ends in .svg or .png; it is written with your own\n"
        "permissions.  With --workflow, the workflow's runs: each run's score, time and cost\n"
        "(relative to its first run), the best run so far, and where it converged; a workflow's\n"
        "function (class W.F) has no scores of its own and is plotted with its workflow.\n\n"
        "  --user USER  another user's class or workflow (root and SlurmUser only)\n");
    return 0;
  }
  a.expect_positional(a.value("workflow") ? 0 : 1, "CLASS");
  auto file = a.value("plot");
  if (!file) throw_invalid("--plot FILE is required; see `autotune report --help'");
  std::string ext = file->size() > 4 ? file->substr(file->size() - 4) : "";
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
  std::string terminal;
  if (ext == ".svg") terminal = "svg size 800,500 dynamic";
  else if (ext == ".png") terminal = "pngcairo size 800,500";
  else throw_invalid("--plot: '" + *file + "' must end in .svg or .png");
  for (char ch : *file)
    if (ch == '\'' || ch == '\n') throw_invalid("--plot: the file name may not contain quotes or newlines");
  if (auto w = a.value("workflow")) return workflow_report(caller, *w, a.value("user"), *file, terminal);
  auto [conf, store, c] = open_named_class(caller, a, false);
  if (const auto fn = function_of(store, c))
    throw_invalid(function_class_text(c, *fn) + ": " + kFunctionNoScore +
                  "; plot the runs with `autotune report --workflow " + fn->workflow.name + " --plot FILE`");
  const ClassView v = make_view(store, c);

  std::string data, best_line, winner;
  double best_so_far = 0;
  bool any = false;
  int points = 0;
  for (const auto &t : v.trials) {
    if (t.status != TrialStatus::done || !t.measurement || !t.measurement->score) continue;
    const double s = *t.measurement->score;
    best_so_far = any ? std::min(best_so_far, s) : s;
    any = true;
    ++points;
    data += std::to_string(t.seq) + " " + num(s, 8) + "\n";
    best_line += std::to_string(t.seq) + " " + num(best_so_far, 8) + "\n";
    if (v.best && t.id == v.best->id) winner = std::to_string(t.seq) + " " + num(s, 8) + "\n";
  }
  if (!any) throw Error(Errc::not_found, "class '" + c.name + "' has no measured trial to plot yet");
  std::string script = "set terminal " + terminal + "\nset output '" + *file + "'\n";
  script += "set title 'autotune class " + c.name + " (gamma " + num(c.settings.gamma) + ", " + to_string(c.state) +
            ")' noenhanced\n";
  script +=
      "set xlabel 'trial'\nset ylabel 'score (lower is better)'\nset grid\nset key top right\n"
      "set xtics 1\nset offsets 0.5, 0.5, 0, 0\n";
  script += "$scores << EOD\n" + data + "EOD\n$best << EOD\n" + best_line + "EOD\n";
  script += "$winner << EOD\n" + (winner.empty() ? std::string("NaN NaN\n") : winner) + "EOD\n";
  script +=
      "plot $scores using 1:2 with points pt 7 ps 1.2 lc rgb '#1f77b4' title 'trial score', \\\n"
      "     $best using 1:2 with steps lw 2 lc rgb '#2ca02c' title 'best so far', \\\n"
      "     $winner using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#d62728' title 'winner'\n";

  run_gnuplot(caller, script, *file);
  std::printf("%s: %d trials plotted, winner %s\n", file->c_str(), points,
              v.best ? ("trial " + std::to_string(v.best->seq)).c_str() : "not chosen yet");
  return 0;
}

}  // namespace autotune::cli
