// autotune: what slurm-autotune tried, what won and why; the store's administration; the
// offline replay benchmark.  See man/autotune.1.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <cstring>
#include <string>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "commands.hpp"

using namespace autotune;
using namespace autotune::cli;

namespace {

// `needs`: what each command keeps SlurmUser's identity for when setuid (see tools/cli.hpp).
// Commands that open the store or talk to slurmctld open no file the caller names in-process.
const Command kCommands[] = {
    {"status", "your classes: state, trials, best configuration, why the search stopped", Needs::store, cmd_status},
    {"show", "one class: every trial, its measurement and score, and why the winner won", Needs::store, cmd_show},
    {"report", "plot a class's search (score per trial, best so far, the winner) to SVG or PNG", Needs::store,
     cmd_report},
    {"export", "one class as JSON (settings, trials, best configuration)", Needs::store, cmd_export},
    {"forget", "delete one of your classes with everything measured for it", Needs::store, cmd_forget},
    {"workflow", "define your workflows, show their runs, stages and configurations", Needs::store, cmd_workflow},
    {"admin", "shared classes and the store itself (root and SlurmUser)", Needs::store, cmd_admin},
    {"replay", "the offline benchmark of the search on a table of measured configurations", Needs::nothing,
     cmd_replay},
    {"ingest", "record how an autotune job ended and refit its class (slurmctld runs it)", Needs::store, cmd_ingest},
    {"annotate", "record a steps-mode job's winner and released nodes in its AdminComment", Needs::slurm,
     cmd_annotate},
};

void usage(FILE *out) {
  std::fprintf(out,
               "usage: autotune COMMAND [OPTIONS]\n"
               "       autotune COMMAND --help\n\n"
               "Commands:\n");
  for (const auto &c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\nThe store and its limits are set in autotune.conf (beside slurm.conf).  Users see\n"
               "and change only their own classes; root and SlurmUser see all.  See autotune(1).\n");
}

int exit_code(Errc c) {
  switch (c) {
    case Errc::invalid_argument: return 2;
    case Errc::permission: return 4;
    case Errc::not_found: return 3;
    default: return 1;
  }
}

// The one place that runs a command: its privileges first, then the command.
int run(const Command &c, Caller caller, int argc, char **argv) {
  try {
    enter_command(caller, c.needs);
    return c.run(caller, argc, argv);
  } catch (const Error &e) {
    std::fprintf(stderr, "autotune %s: %s\n", c.name, e.what());
    return exit_code(e.code());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "autotune %s: %s\n", c.name, e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char **argv) {
  Caller caller;
  try {
    caller = init_caller();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "autotune: %s\n", e.what());
    return 1;
  }
  set_stderr_log_sink("autotune", LogLevel::info);
  // Usage, help and unknown commands need nothing of SlurmUser.
  const bool known = argc >= 2 && std::any_of(std::begin(kCommands), std::end(kCommands), [&](const Command &c) {
    return std::strcmp(argv[1], c.name) == 0 || (std::strcmp(argv[1], "help") == 0 && argc > 2 && std::strcmp(argv[2], c.name) == 0);
  });
  if (!known) {
    try {
      drop_privileges(caller);
    } catch (const std::exception &e) {
      std::fprintf(stderr, "autotune: %s\n", e.what());
      return 1;
    }
  }
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || (cmd == "help" && argc == 2)) {
    usage(stdout);
    return 0;
  }
  if (cmd == "help") {  // autotune help COMMAND = autotune COMMAND --help
    static char help_flag[] = "--help";
    char *args[] = {argv[2], help_flag, nullptr};
    for (const auto &c : kCommands)
      if (std::strcmp(argv[2], c.name) == 0) return run(c, caller, 2, args);
  }
  for (const auto &c : kCommands)
    if (cmd == c.name) return run(c, caller, argc - 1, argv + 1);
  std::string names;
  for (const auto &c : kCommands) names += std::string(names.empty() ? "" : ", ") + c.name;
  std::fprintf(stderr, "autotune: unknown command '%s'; commands: %s (see `autotune --help')\n",
               (cmd == "help" ? argv[2] : cmd.c_str()), names.c_str());
  return 2;
}
