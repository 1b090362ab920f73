// autotune workflow define|show|list|forget: a user's workflows on Slurm (man/autotune-workflow.1).
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "autotune/error.hpp"
#include "autotune/names.hpp"
#include "autotune/space.hpp"
#include "autotune/workflow.hpp"
#include "commands.hpp"
#include "workflow_plan.hpp"

namespace autotune::cli {

namespace {

// The workflow file, read with the caller's own rights (a child that drops SlurmUser's identity
// for good reads it and passes the text through a pipe): the caller names it, so it must be a file
// they may read.  "-" is standard input.  At most kMaxWorkflowText + 1 bytes are read.
std::string read_as_caller(const Caller &caller, const std::string &path) {
  int fds[2];
  if (::pipe(fds) != 0) throw_io("pipe", errno);
  const pid_t pid = ::fork();
  if (pid < 0) throw_io("fork", errno);
  if (pid == 0) {
    ::close(fds[0]);
    if (caller.setuid &&
        (setresgid(getgid(), getgid(), getgid()) != 0 || setresuid(caller.uid, caller.uid, caller.uid) != 0))
      _exit(126);
    const int fd = path == "-" ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const std::string msg = std::string("\x01") + std::strerror(errno);
      (void)!::write(fds[1], msg.data(), msg.size());
      _exit(1);
    }
    char buf[8192];
    std::size_t total = 0;
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (::write(fds[1], buf, static_cast<std::size_t>(n)) != n) _exit(1);
      total += static_cast<std::size_t>(n);
      if (total > kMaxWorkflowText) break;
    }
    _exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (text.size() <= kMaxWorkflowText) text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!text.empty() && text[0] == '\x01') throw Error(Errc::not_found, path + ": " + text.substr(1));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Error(Errc::io, path + ": cannot be read");
  if (text.size() > kMaxWorkflowText)
    throw_invalid(path + ": longer than " + std::to_string(kMaxWorkflowText) + " bytes");
  return text;
}

std::string n3(const std::optional<double> &v) { return v ? num(*v, 3) : "-"; }

WorkflowRecord named_workflow(Store &store, const Caller &caller, const Args &a, const std::string &name) {
  uid_t who = caller.uid;
  if (auto u = a.value("user")) {
    require_privileged(caller, "--user");
    who = resolve_user(*u);
  }
  auto wf = store.find_workflow(who, name);
  if (!wf)
    throw Error(Errc::not_found, "no workflow named '" + name + "'" + (who == caller.uid ? " of yours" : "") +
                                     "; `autotune workflow list` lists them, `autotune workflow define FILE` defines one");
  return *wf;
}

int define(const Caller &caller, const Args &a) {
  a.expect_positional(2, "FILE");
  const std::string path = a.positional()[1];
  const std::string text = read_as_caller(caller, path);
  const Workflow w = Workflow::parse(text, path);
  const Conf conf = load_conf(caller);
  WorkflowRecord rec;
  rec.name = w.name;
  rec.gamma = w.gamma;
  rec.budget = static_cast<int>(w.budget);
  rec.definition = w.to_json();
  for (std::size_t i = 0; i < w.functions.size(); ++i) {
    const WorkflowFunction &f = w.functions[i];
    const std::string field = path + ": functions[" + std::to_string(i) + "] '" + f.name + "'";
    // Each function is tuned as the class "WORKFLOW.FUNCTION".
    const std::string cls = w.name + "." + f.name;
    if (cls.size() > kClassNameMax)
      throw_invalid(field + ": name: the workflow's name, a dot and the function's name (" + cls + ") make " +
                    std::to_string(cls.size()) + " characters; at most " + std::to_string(kClassNameMax) +
                    " are allowed (the function's class)");
    if (f.space) {
      // Refused now rather than at each submission: within the site's SpaceLimits.
      const SpaceSpec s = restrict_space(*f.space, conf.engine.default_space, conf.engine.space_limits, field + ": space");
      check_space_size(s, 1, field + ": space");
    }
    rec.functions.push_back({f.name, f.after, f.space_text});
  }
  Store store = open_store(caller, conf, true, true);
  const bool existed = store.find_workflow(caller.uid, rec.name).has_value();
  const WorkflowRecord got = store.define_workflow(caller.uid, rec);
  std::printf("workflow %s %s: %zu functions, gamma %s, budget %d runs, search %s\n", got.name.c_str(),
              existed ? "was already defined so" : "defined", got.functions.size(), num(got.gamma).c_str(), got.budget,
              workflow_strategy_name(w.search));
  const auto stages = workflow_stages(got);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    std::string names;
    for (const auto &n : stages[s]) names += (names.empty() ? "" : ", ") + n;
    std::printf("  stage %zu: %s\n", s + 1, names.c_str());
  }
  std::printf("submit each function's job with --autotune-workflow=%s --autotune=FUNCTION\n", got.name.c_str());
  return 0;
}

nlohmann::json run_json(Store &store, const WorkflowRunRecord &r) {
  nlohmann::json j = {{"run", r.seq}, {"state", r.state}};
  auto opt = [&](const char *k, const std::optional<double> &v) { j[k] = v ? nlohmann::json(*v) : nlohmann::json(); };
  opt("time_s", r.time_s);
  opt("cost", r.cost);
  opt("score", r.score);
  opt("span_s", r.span_s);
  j["tier"] = nlohmann::json::parse(r.tier.empty() ? "{}" : r.tier, nullptr, false);
  j["functions"] = nlohmann::json::array();
  for (const auto &f : store.workflow_functions(r.id)) {
    nlohmann::json fj = {{"function", f.function}, {"config", f.config}, {"status", f.status}, {"why", f.reason}};
    auto o = [&](const char *k, const std::optional<double> &v) { fj[k] = v ? nlohmann::json(*v) : nlohmann::json(); };
    o("predicted_time_s", f.predicted_time);
    o("predicted_cost", f.predicted_cost);
    o("time_s", f.time_s);
    o("cost", f.cost);
    fj["job_id"] = f.job_id ? nlohmann::json(*f.job_id) : nlohmann::json();
    j["functions"].push_back(fj);
  }
  return j;
}

int show(const Caller &caller, const Args &a) {
  a.expect_positional(2, "NAME");
  const Conf conf = load_conf(caller);
  Store store = open_store(caller, conf, false);
  const WorkflowRecord wf = named_workflow(store, caller, a, a.positional()[1]);
  const auto runs = store.workflow_runs(wf.id);
  const Workflow w = workflow_of(wf);
  const auto stages = workflow_stages(w);
  const char *search = workflow_strategy_name(w.search);
  if (a.flag("json")) {
    nlohmann::json j = {{"workflow", wf.name}, {"owner", user_name(wf.owner)}, {"gamma", wf.gamma},
                        {"budget", wf.budget}, {"search", search}, {"state", wf.state}, {"reason", wf.state_reason}};
    j["best_run"] = wf.best_run ? nlohmann::json(*wf.best_run) : nlohmann::json();
    j["stages"] = stages;
    j["runs"] = nlohmann::json::array();
    for (const auto &r : runs) j["runs"].push_back(run_json(store, r));
    j["next"] = nlohmann::json::array();
    for (const auto &p : parse_workflow_proposal(wf.proposal))
      j["next"].push_back({{"function", p.function}, {"config", p.config}, {"origin", p.origin}, {"why", p.why}});
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  int done = 0;
  for (const auto &r : runs) done += r.state == "done";
  std::printf("workflow %s (owner %s): %s, %d runs done (budget %d), gamma %s, search %s\n", wf.name.c_str(),
              user_name(wf.owner).c_str(), wf.state.c_str(), done, wf.budget, num(wf.gamma).c_str(), search);
  if (!wf.state_reason.empty()) std::printf("  %s\n", wf.state_reason.c_str());
  std::printf("stages (a function's stage is its longest chain of predecessors):\n");
  for (std::size_t s = 0; s < stages.size(); ++s) {
    std::string names;
    for (const auto &n : stages[s]) names += (names.empty() ? "" : ", ") + n;
    std::printf("  stage %zu: %s\n", s + 1, names.c_str());
  }
  if (runs.empty()) {
    std::printf("no runs yet: submit each function's job with --autotune-workflow=%s --autotune=FUNCTION\n",
                wf.name.c_str());
  } else {
    std::printf("\nruns (time: the critical path of the functions' times; span: first start to last end):\n");
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"RUN", "STATE", "TIME (s)", "COST", "SCORE", "SPAN (s)", "TIER BYTES", ""});
    for (const auto &r : runs) {
      std::string tier = "-";
      const auto tj = nlohmann::json::parse(r.tier.empty() ? "{}" : r.tier, nullptr, false);
      if (tj.is_object() && !tj.empty()) {
        tier.clear();
        for (const auto &[k, v] : tj.items())
          if (v.is_number()) tier += (tier.empty() ? "" : " ") + k + "=" + std::to_string(v.get<long long>());
      }
      rows.push_back({std::to_string(r.seq), r.state, n3(r.time_s), n3(r.cost), n3(r.score), n3(r.span_s), tier,
                      wf.best_run && *wf.best_run == r.seq ? "<- best" : ""});
    }
    std::fputs(format_table(rows).c_str(), stdout);
    std::printf("\neach run's functions (predicted and measured time in s, cost in billing units x s):\n");
    for (const auto &r : runs) {
      std::vector<std::vector<std::string>> fr;
      fr.push_back({"RUN", "STAGE", "FUNCTION", "JOB", "STATUS", "CONFIGURATION", "PRED T", "T", "PRED C", "C"});
      std::string whys;
      for (const auto &f : store.workflow_functions(r.id)) {
        std::size_t stage = 0;
        for (std::size_t s = 0; s < stages.size(); ++s)
          for (const auto &n : stages[s])
            if (n == f.function) stage = s + 1;
        fr.push_back({std::to_string(r.seq), std::to_string(stage), f.function,
                      f.job_id ? std::to_string(*f.job_id) : "-", f.status, f.config, n3(f.predicted_time),
                      n3(f.time_s), n3(f.predicted_cost), n3(f.cost)});
        if (!f.reason.empty()) whys += "    " + f.function + ": " + f.reason + "\n";
      }
      std::fputs(format_table(fr).c_str(), stdout);
      if (!whys.empty()) std::printf("  why:\n%s", whys.c_str());
    }
  }
  const auto next = parse_workflow_proposal(wf.proposal);
  if (!next.empty()) {
    std::printf("\nnext run (taken by the next jobs of each function):\n");
    for (const auto &p : next)
      std::printf("  %s: %s [%s] predicted %s s, cost %s: %s\n", p.function.c_str(), p.config.c_str(), p.origin.c_str(),
                  n3(p.time).c_str(), n3(p.cost).c_str(), p.why.c_str());
  } else if (wf.state == "tuning") {
    std::printf("\nnext run: each function's next configuration of its initial design\n");
  }
  return 0;
}

int list(const Caller &caller, const Args &a) {
  a.expect_positional(1, "");
  const Conf conf = load_conf(caller);
  std::vector<WorkflowRecord> wfs;
  try {
    Store store = open_store(caller, conf, false);
    uid_t who = caller.uid;
    if (auto u = a.value("user")) {
      require_privileged(caller, "--user");
      who = resolve_user(*u);
    }
    wfs = a.flag("all") ? (require_privileged(caller, "--all"), store.list_workflows()) : store.list_workflows(who);
    if (wfs.empty()) {
      std::printf("no workflows yet: define one with `autotune workflow define FILE`\n");
      return 0;
    }
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"WORKFLOW", "OWNER", "STATE", "FUNCTIONS", "RUNS", "BEST RUN", "SCORE"});
    for (const auto &w : wfs) {
      const auto runs = store.workflow_runs(w.id);
      std::string score = "-";
      for (const auto &r : runs)
        if (w.best_run && r.seq == *w.best_run) score = n3(r.score);
      rows.push_back({w.name, user_name(w.owner), w.state, std::to_string(w.functions.size()),
                      std::to_string(runs.size()) + "/" + std::to_string(w.budget),
                      w.best_run ? std::to_string(*w.best_run) : "-", score});
    }
    std::fputs(format_table(rows).c_str(), stdout);
  } catch (const Error &e) {
    if (e.code() != Errc::not_found) throw;
    std::printf("no workflows yet: define one with `autotune workflow define FILE`\n");
  }
  return 0;
}

int forget(const Caller &caller, const Args &a) {
  a.expect_positional(2, "NAME");
  const Conf conf = load_conf(caller);
  Store store = open_store(caller, conf, true);
  const WorkflowRecord wf = named_workflow(store, caller, a, a.positional()[1]);
  const std::size_t runs = store.workflow_runs(wf.id).size();
  std::size_t classes = 0;
  for (const auto &f : wf.functions) classes += store.forget_class(wf.owner, wf.name + "." + f.name);
  store.forget_workflow(wf.owner, wf.name);
  std::printf("forgot workflow %s of %s (%zu runs, %zu function classes)\n", wf.name.c_str(),
              user_name(wf.owner).c_str(), runs, classes);
  return 0;
}

}  // namespace

int workflow_report(const Caller &caller, const std::string &name, const std::optional<std::string> &user,
                    const std::string &file, const std::string &terminal) {
  const Conf conf = load_conf(caller);
  Store store = open_store(caller, conf, false);
  uid_t who = caller.uid;
  if (user) {
    require_privileged(caller, "--user");
    who = resolve_user(*user);
  }
  auto wf = store.find_workflow(who, name);
  if (!wf) throw Error(Errc::not_found, "no workflow named '" + name + "'; `autotune workflow list` lists them");
  std::string scores, best, times, costs, winner;
  double best_so_far = 0, t0 = 0, c0 = 0;
  int points = 0;
  for (const auto &r : store.workflow_runs(wf->id)) {
    if (r.state != "done" || !r.score) continue;
    if (points == 0) {
      t0 = *r.time_s > 0 ? *r.time_s : 1;
      c0 = *r.cost > 0 ? *r.cost : 1;
    }
    best_so_far = points ? std::min(best_so_far, *r.score) : *r.score;
    ++points;
    const std::string x = std::to_string(r.seq) + " ";
    scores += x + num(*r.score, 8) + "\n";
    best += x + num(best_so_far, 8) + "\n";
    times += x + num(*r.time_s / t0, 8) + "\n";
    costs += x + num(*r.cost / c0, 8) + "\n";
    if (wf->best_run && *wf->best_run == r.seq) winner = x + num(*r.score, 8) + "\n";
  }
  if (!points) throw Error(Errc::not_found, "workflow '" + name + "' has no completed run to plot yet");
  std::string script = "set terminal " + terminal + "\nset output '" + file + "'\n";
  script += "set title 'autotune workflow " + wf->name + " (gamma " + num(wf->gamma) + ", " + wf->state +
            ")' noenhanced\n";
  script +=
      "set xlabel 'run'\nset ylabel 'score, and time and cost relative to the first run'\nset grid\n"
      "set key top right\nset xtics 1\nset offsets 0.5, 0.5, 0, 0\n";
  script += "$scores << EOD\n" + scores + "EOD\n$best << EOD\n" + best + "EOD\n$times << EOD\n" + times +
            "EOD\n$costs << EOD\n" + costs + "EOD\n";
  script += "$winner << EOD\n" + (winner.empty() ? std::string("NaN NaN\n") : winner) + "EOD\n";
  script +=
      "plot $scores using 1:2 with linespoints pt 7 ps 1.2 lc rgb '#1f77b4' title 'run score', \\\n"
      "     $best using 1:2 with steps lw 2 lc rgb '#2ca02c' title 'best so far', \\\n"
      "     $times using 1:2 with linespoints pt 4 dt 2 lc rgb '#9467bd' title 'time / first run', \\\n"
      "     $costs using 1:2 with linespoints pt 8 dt 3 lc rgb '#ff7f0e' title 'cost / first run', \\\n"
      "     $winner using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#d62728' title 'best run'\n";
  run_gnuplot(caller, script, file);
  std::printf("%s: %d runs plotted, best %s\n", file.c_str(), points,
              wf->best_run ? ("run " + std::to_string(*wf->best_run)).c_str() : "not chosen yet");
  return 0;
}

int cmd_workflow(const Caller &caller, int argc, char **argv) {
  Args a(argc - 1, argv + 1, {"user"}, {"help", "json", "all"}, "autotune workflow");
  if (a.flag("help") || a.positional().empty()) {
    std::printf(
        "usage: autotune workflow define FILE\n"
        "       autotune workflow show NAME [--json] [--user USER]\n"
        "       autotune workflow list [--all | --user USER]\n"
        "       autotune workflow forget NAME [--user USER]\n\n"
        "Workflows: pipelines of jobs tuned together, stage by stage, for the run's time and cost.\n"
        "define   registers the workflow file (JSON: workflow, gamma, budget in runs, search, functions with\n"
        "         name, after, space; see autotune-workflow(1)) as yours; jobs then name it with\n"
        "         sbatch --autotune-workflow=NAME --autotune=FUNCTION.  Defining the same file again\n"
        "         changes nothing; another definition under the same name is refused.\n"
        "show     its runs (time, cost, score, bytes per tier medium), stages, each function's\n"
        "         configuration with predicted and measured time and cost and why, the next run\n"
        "list     your workflows\n"
        "forget   deletes the workflow, its runs and its functions' classes\n\n"
        "  --user USER  another user's workflow (root and SlurmUser only)\n"
        "  --all        every user's workflows (list; root and SlurmUser only)\n"
        "  --json       show as JSON\n");
    return a.flag("help") ? 0 : 2;
  }
  const std::string sub = a.positional()[0];
  if (sub == "define") return define(caller, a);
  if (sub == "show") return show(caller, a);
  if (sub == "list") return list(caller, a);
  if (sub == "forget") return forget(caller, a);
  throw_invalid("unknown subcommand '" + sub + "'; one of: define, show, list, forget");
}

}  // namespace autotune::cli
