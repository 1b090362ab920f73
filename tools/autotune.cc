// autotune: the command-line tool of slurm-autotune.
//
//   autotune <command> [options]      autotune --help      autotune <command> --help
//
// Each command lives in its own file (cmd_<name>.cc, declared in commands.hpp); add it to the
// table below.
#include <cstdio>
#include <cstring>
#include <string>

#include "autotune_config.h"
#include "commands.hpp"

namespace {

using autotune::tools::Command;

const Command kCommands[] = {
    {"replay", "benchmark a search strategy on a table of measured configurations",
     autotune::tools::cmd_replay},
};

void usage(FILE *out) {
  std::fprintf(out,
               "Usage: autotune <command> [options]\n"
               "       autotune <command> --help\n\n"
               "Commands:\n");
  for (const auto &c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
}

const Command *find(const char *name) {
  for (const auto &c : kCommands)
    if (std::strcmp(c.name, name) == 0) return &c;
  return nullptr;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h") {
    usage(stdout);
    return 0;
  }
  if (first == "--version") {
    std::printf("autotune (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
    return 0;
  }
  if (first == "help" && argc >= 3) {
    if (const Command *c = find(argv[2])) {
      char help[] = "--help";
      char *args[] = {argv[2], help, nullptr};
      return c->run(2, args);
    }
  }
  const Command *c = find(argv[1]);
  if (!c) {
    std::string names;
    for (const auto &k : kCommands) names += std::string(names.empty() ? "" : ", ") + k.name;
    std::fprintf(stderr, "autotune: unknown command '%s'; commands: %s (see autotune --help)\n",
                 argv[1], names.c_str());
    return 2;
  }
  return c->run(argc - 1, argv + 1);
}
