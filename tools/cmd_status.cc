// autotune status / export / forget: a user's view of their classes.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "autotune/error.hpp"
#include "commands.hpp"
#include "views.hpp"

namespace autotune::cli {

int cmd_status(const Caller &caller, int argc, char **argv) {
  Args a(argc - 1, argv + 1, {"user"}, {"help", "all", "json"}, "autotune status");
  if (a.flag("help")) {
    std::printf(
        "usage: autotune status [--all | --user USER] [--json]\n\n"
        "A table of your tuning classes: state (tuning, converged, stale), trials done out of the\n"
        "budget, the best configuration so far, its score, and the rule that stopped the search.\n"
        "A workflow's function (class W.F) has its workflow's state, runs and best run instead:\n"
        "the function's configuration in that run, and the run's score.\n"
        "Shared classes an administrator created are listed too.\n\n"
        "  --all        every user's classes (root and SlurmUser only)\n"
        "  --user USER  USER's classes (root and SlurmUser only)\n"
        "  --json       the same as JSON\n");
    return 0;
  }
  a.expect_positional(0, "");
  const bool all = a.flag("all");
  if (all) require_privileged(caller, "--all");
  uid_t who = caller.uid;
  if (auto u = a.value("user")) {
    require_privileged(caller, "--user");
    who = resolve_user(*u);
  }
  const Conf conf = load_conf(caller);
  std::vector<ClassRecord> classes;
  try {
    Store store = open_store(caller, conf, false);
    if (all) {
      classes = store.list_classes();
    } else {
      classes = store.list_classes(who);
      for (auto &c : store.list_shared_classes())  // shared classes are visible to everybody
        if (c.owner != who) classes.push_back(c);
    }
    std::vector<ClassView> views;
    for (auto &c : classes) views.push_back(summary_view(store, c));
    if (a.flag("json")) {
      nlohmann::json j = nlohmann::json::array();
      for (auto &v : views) {
        nlohmann::json c = view_json(v, false);
        const std::optional<FunctionOf> fn = function_of(store, v.cls);
        c["workflow"] = fn ? nlohmann::json{{"name", fn->workflow.name},
                                            {"function", fn->function},
                                            {"state", fn->workflow.state},
                                            {"best_run", fn->workflow.best_run ? nlohmann::json(*fn->workflow.best_run)
                                                                               : nlohmann::json()}}
                           : nlohmann::json();
        j.push_back(std::move(c));
      }
      std::printf("%s\n", j.dump(2).c_str());
      return 0;
    }
    if (views.empty()) {
      std::printf("no classes yet: submit a job with --autotune=CLASS\n");
      return 0;
    }
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"CLASS", "OWNER", "STATE", "TRIALS", "BEST CONFIGURATION", "SCORE", "STOPPED BY"});
    for (auto &v : views) rows.push_back(status_row(v, function_of(store, v.cls)));
    std::fputs(format_table(rows).c_str(), stdout);
  } catch (const Error &e) {
    if (e.code() != Errc::not_found) throw;
    if (a.flag("json")) {
      std::printf("[]\n");
      return 0;
    }
    std::printf("no classes yet: submit a job with --autotune=CLASS\n");
  }
  return 0;
}

int cmd_export(const Caller &caller, int argc, char **argv) {
  Args a(argc - 1, argv + 1, {"user"}, {"help", "json"}, "autotune export");
  if (a.flag("help")) {
    std::printf(
        "usage: autotune export CLASS [--json] [--user USER]\n\n"
        "Everything about one class as JSON on standard output: its settings, state, every trial\n"
        "with its configuration, measurement and score, and the best configuration.  autotune-run\n"
        "uses it to warm-start in-allocation tuning from the class's history.\n\n"
        "  --user USER  another user's class (root and SlurmUser only)\n");
    return 0;
  }
  auto [conf, store, c] = open_named_class(caller, a, false);
  std::printf("%s\n", view_json(make_view(store, c), true).dump(2).c_str());
  return 0;
}

int cmd_forget(const Caller &caller, int argc, char **argv) {
  Args a(argc - 1, argv + 1, {"user"}, {"help"}, "autotune forget");
  if (a.flag("help")) {
    std::printf(
        "usage: autotune forget CLASS [--user USER]\n\n"
        "Delete one of your classes with all its trials and measurements; the next job with\n"
        "--autotune=CLASS starts a new search.  A workflow's function (class W.F) is forgotten\n"
        "with its workflow: autotune workflow forget W.\n\n"
        "  --user USER  another user's class (root and SlurmUser only)\n");
    return 0;
  }
  auto [conf, store, c] = open_named_class(caller, a, true);
  if (c.shared) throw Error(Errc::permission, "class '" + c.name + "' is shared; use `autotune admin forget`");
  // A function's trials are what its workflow's runs were measured with: forgetting them alone
  // would cut the runs' link to them (workflow_functions.class_id is set to null).
  if (const auto fn = function_of(store, c))
    throw_invalid(function_class_text(c, *fn) +
                  ", tuned with it run by run; forget the workflow with its functions' classes: `autotune workflow "
                  "forget " + fn->workflow.name + "`");
  const size_t trials = store.trials(c.id).size();
  store.forget_class(c.owner, c.name);
  std::printf("forgot class %s of %s (%zu trials)\n", c.name.c_str(), user_name(c.owner).c_str(), trials);
  return 0;
}

}  // namespace autotune::cli
