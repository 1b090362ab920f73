// The commands of the `autotune` tool.  Each lives in its own file (cmd_<name>.cc) and is listed
// once in the table of autotune.cc.
//
// An entry point gets the arguments after the command name (argv[0] is the command name) and
// returns the exit status: 0 on success, 1 when the work failed (bad input data, I/O), 2 for a
// bad command line.  It prints results on stdout and errors as ONE line on stderr, prefixed with
// "autotune <command>: ".
#pragma once

namespace autotune::tools {

struct Command {
  const char *name;
  const char *summary;  // one line for `autotune --help`
  int (*run)(int argc, char **argv);
};

int cmd_replay(int argc, char **argv);

}  // namespace autotune::tools
