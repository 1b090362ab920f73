// The commands of `autotune`; each parses its own arguments (argv[0] is the command name) and
// returns the exit status.  Errors are thrown as autotune::Error; main() prints them.  What a
// command keeps SlurmUser's identity for is part of its entry (`needs`): main() applies it
// (enter_command) before the command runs, so no command decides that for itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace autotune::cli {

struct Command {
  const char *name;
  const char *summary;
  Needs needs;
  int (*run)(const Caller &caller, int argc, char **argv);
};

int cmd_status(const Caller &, int, char **);
int cmd_show(const Caller &, int, char **);
int cmd_report(const Caller &, int, char **);
int cmd_export(const Caller &, int, char **);
int cmd_forget(const Caller &, int, char **);
int cmd_admin(const Caller &, int, char **);
int cmd_replay(const Caller &, int, char **);
int cmd_ingest(const Caller &, int, char **);
int cmd_annotate(const Caller &, int, char **);
int cmd_workflow(const Caller &, int, char **);
// The q-quantile of `v` (the median averages the middle two, unless one is infinite; others by
// nearest rank); NaN for none.  Shared by `autotune replay` and `replay --workflow`.
double quantile(std::vector<double> v, double q);
// autotune report --workflow NAME --plot FILE (cmd_workflow.cc).
int workflow_report(const Caller &caller, const std::string &name, const std::optional<std::string> &user,
                    const std::string &file, const std::string &terminal);
// Runs gnuplot on `script` with the caller's own rights (the plot is theirs); throws when it fails.
void run_gnuplot(const Caller &caller, const std::string &script, const std::string &file);

}  // namespace autotune::cli
