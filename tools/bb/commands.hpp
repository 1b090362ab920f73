// The commands of autotune-bb (see man/autotune-bb.1); main.cc reads the command line with the
// tools' parser (tools/args.hpp) and runs one of them.  Each returns the exit status; failures
// are thrown (UsageError: exit 2; anything else: exit 1) and main() prints them as one line.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../args.hpp"

namespace autotune::bb {

// A usage error (exit 2) as opposed to a failure of the operation (exit 1).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A command line read: the global --conf, the command and its options and arguments.
struct Invocation {
  std::string conf;     // --conf ("" for the default, Conf::default_path())
  std::string command;  // "create", "stage-in", ...
  cli::Args args;       // every option of a command may be repeated; read them with these:

  const std::vector<std::string> &pos() const { return args.positional(); }
  bool has(const std::string &option) const { return !args.values(option).empty(); }
  // The option's value; UsageError "COMMAND: --OPTION is required" without one, and
  // cli::ArgsError (given_twice) with more than one.
  std::string one(const std::string &option) const;
  std::optional<std::string> maybe(const std::string &option) const { return args.value(option); }
  std::vector<std::string> all(const std::string &option) const { return args.values(option); }
};

// As root, for burst_buffer.lua.
int cmd_create(const Invocation &);
int cmd_destroy(const Invocation &);
int cmd_stage_in(const Invocation &);
int cmd_stage_out(const Invocation &);
int cmd_pools(const Invocation &);
// Inside a job, as its user (status also as root).
int cmd_status(const Invocation &);
int cmd_summary(const Invocation &);
int cmd_put(const Invocation &);
int cmd_get(const Invocation &);
int cmd_ls(const Invocation &);
int cmd_check(const Invocation &);
int cmd_rm(const Invocation &);

}  // namespace autotune::bb
