// autotune-bb: the burst buffers of Slurm jobs on this node's storage tiers (autotune.conf's
// Tier= lines).  Run as root by etc/burst_buffer.lua (create, stage-in, stage-out, destroy,
// pools, status) and by jobs as their own user (put, get, ls, check, rm, status).  See
// man/autotune-bb.1.
//
// The command line is read with the tools' parser (tools/args.hpp): the global options before
// the command, then the command's options (each may be repeated: a command reads them once, or
// all, as --tier) and arguments, in any order; a word with one dash ("-", "-file") is an argument.
// -h or --help anywhere prints the usage.  Usage errors exit 2, failures 1, each one line on
// standard error.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "commands.hpp"

using namespace autotune;
using namespace autotune::bb;
using autotune::cli::Args;
using autotune::cli::ArgsError;

std::string autotune::bb::Invocation::one(const std::string &option) const {
  auto v = maybe(option);
  if (!v) throw UsageError(command + ": --" + option + " is required");
  return *v;
}

namespace {

const char kUsage[] =
    "usage: autotune-bb [--conf FILE] COMMAND [OPTIONS] [ARGUMENTS]\n"
    "\n"
    "Burst buffers of Slurm jobs on the storage tiers of autotune.conf.  A job's buffer is a\n"
    "tier store of its own: each object is split across persistent memory and disk.\n"
    "\n"
    "Commands for burst_buffer.lua (as root):\n"
    "  create --job ID --uid UID --gid GID --capacity SIZE [--pmem SIZE] [--tier NAME=SIZE]...\n"
    "         [--placement auto|bandwidth-proportional|fill-fastest]\n"
    "                       grant job ID a buffer of SIZE (K, M, G, T); --pmem sets how much of\n"
    "                       it is on the pmem tier (default: in proportion to tier capacities);\n"
    "                       its directories belong to UID:GID, mode 0700\n"
    "  destroy --job ID     remove the buffer and everything in it\n"
    "  stage-in --job ID SOURCE KEY\n"
    "                       copy the file SOURCE (an absolute path) into the buffer as object\n"
    "                       KEY, reading it as the job's user; with KEY ending in '/', copy\n"
    "                       every file under the directory SOURCE as KEY<relative path>\n"
    "  stage-out --job ID KEY DEST\n"
    "                       copy object KEY to the file DEST (an absolute path), writing it as\n"
    "                       the job's user (mode 0600, replaced atomically); with KEY ending in\n"
    "                       '/', copy every object under KEY, in key order, into the directory\n"
    "                       DEST (created 0700) as DEST/<rest of the key>; an object that is\n"
    "                       missing or damaged is skipped and named on standard error and in\n"
    "                       DEST.incomplete, the others are copied, and the exit status is 1\n"
    "  pools                the pool of Slurm's burst_buffer/lua, as JSON\n"
    "Commands inside a job (as its user; --job defaults to $AUTOTUNE_BB_JOB, else $SLURM_JOB_ID):\n"
    "  put FILE KEY         store FILE as object KEY\n"
    "  get KEY FILE|-       write object KEY to FILE (or standard output)\n"
    "  ls [PREFIX]          list objects: key, size, bytes per tier, state (ok, missing:\n"
    "                       a piece's pool or file is gone, damaged: a piece is short; bytes\n"
    "                       that changed show only in check)\n"
    "  check [PREFIX]       read and check every object: key and ok, or key, missing or\n"
    "                       damaged, the tier and what is wrong; exit 1 when any is not ok\n"
    "  rm KEY               remove object KEY\n"
    "  status [--job ID]    tiers and buffers; with --job, the buffer's usage per tier\n"
    "  summary              tiers and the number of buffers, not whose (scontrol show bbstat)\n"
    "\n"
    "Options:\n"
    "  --conf FILE          autotune.conf (default: $AUTOTUNE_CONF, else beside $SLURM_CONF,\n"
    "                       else /etc/slurm/autotune.conf)\n"
    "  -h, --help           this text\n"
    "\n"
    "Keys are 1-200 characters from A-Z a-z 0-9 . _ - and '/' between components (no '.' or\n"
    "'..' component).  Errors are one line on standard error and a non-zero exit status.\n";

struct Command {
  const char *name;
  std::set<std::string> options;  // each takes a value; names without "--"
  size_t min_args, max_args;      // positional arguments
  int (*run)(const Invocation &);
};

const Command kCommands[] = {
    {"create", {"job", "uid", "gid", "capacity", "pmem", "tier", "placement"}, 0, 0, cmd_create},
    {"destroy", {"job"}, 0, 0, cmd_destroy},
    {"stage-in", {"job"}, 2, 2, cmd_stage_in},
    {"stage-out", {"job"}, 2, 2, cmd_stage_out},
    {"pools", {}, 0, 0, cmd_pools},
    {"status", {"job"}, 0, 0, cmd_status},
    {"summary", {}, 0, 0, cmd_summary},
    {"put", {"job"}, 2, 2, cmd_put},
    {"get", {"job"}, 2, 2, cmd_get},
    {"ls", {"job"}, 0, 1, cmd_ls},
    {"check", {"job"}, 0, 1, cmd_check},
    {"rm", {"job"}, 1, 1, cmd_rm},
};

// autotune-bb's wording of what the parser refused: `command` is "" before the command.
UsageError usage_error(const ArgsError &e, const std::string &command) {
  using Kind = ArgsError::Kind;
  if (command.empty()) {
    if (e.kind() == Kind::needs_value) return UsageError("--" + e.option() + " needs a file");
    return UsageError("unknown option '" + e.word() + "' (see --help)");  // also --help=VALUE
  }
  if (e.kind() == Kind::needs_value)
    return UsageError(command + ": --" + e.option() + " needs a value");
  if (e.kind() == Kind::given_twice)
    return UsageError(command + ": --" + e.option() + " is given twice");
  return UsageError(command + ": unknown option '--" + e.option() +
                    "' (see --help)");  // also --help=VALUE
}

bool is_help(const std::string &word) { return word == "-h" || word == "--help"; }

// The command line read, or nullopt when the usage was asked for (and printed).  Throws
// UsageError.
std::optional<Invocation> read_command_line(int argc, char **argv) {
  // Before the command: --conf (the last one counts) and --help.
  Args::Syntax before;
  before.repeatable = {"conf"};
  before.stop_at_positional = true;
  before.help_ends = true;
  std::optional<Args> global;
  try {
    global.emplace(argc - 1, argv + 1, std::set<std::string>{"conf"}, std::set<std::string>{"help"},
                   "autotune-bb", before);
  } catch (const ArgsError &e) {
    throw usage_error(e, "");
  }
  if (global->flag("help")) return std::nullopt;
  const auto &rest = global->positional();
  if (rest.empty() || rest[0].empty()) throw UsageError("no command given (see --help)");
  if (rest[0][0] == '-')
    throw UsageError("unknown option '" + rest[0] + "' (see --help)");  // "-", "--"
  const std::string name = rest[0];
  const Command *cmd = nullptr;
  for (const auto &c : kCommands)
    if (name == c.name) cmd = &c;
  if (!cmd)
    throw UsageError(
        "unknown command '" + name +
        "'; allowed: create, destroy, stage-in, stage-out, pools, status, summary, put, get, ls, check, rm");

  // The command's options and arguments.
  Args::Syntax after;
  after.repeatable = cmd->options;
  after.dash_words_positional = true;
  after.help_ends = true;
  const int at = 1 + global->first_positional() + 1;  // argv index of the word after the command
  std::optional<Args> args;
  try {
    args.emplace(argc - at, argv + at, cmd->options, std::set<std::string>{"help"},
                 "autotune-bb " + name, after);
  } catch (const ArgsError &e) {
    throw usage_error(e, name);
  }
  // -h and --help print the usage even after "--".
  const auto &pos = args->positional();
  if (args->flag("help") || std::any_of(pos.begin(), pos.end(), is_help)) return std::nullopt;
  const size_t lo = cmd->min_args, hi = cmd->max_args;
  if (pos.size() < lo || pos.size() > hi)
    throw UsageError(
        name + ": expected " +
        (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
        " argument" + (hi == 1 ? "" : "s") + ", got " + std::to_string(pos.size()) +
        " (see --help)");
  const auto confs = global->values("conf");
  return Invocation{confs.empty() ? "" : confs.back(), name, std::move(*args)};
}

int run(const Invocation &in) {
  for (const auto &c : kCommands)
    if (in.command == c.name) return c.run(in);
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  set_stderr_log_sink("autotune-bb", LogLevel::info);
  std::optional<Invocation> in;
  try {
    in = read_command_line(argc, argv);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "autotune-bb: %s\n", e.what());
    return 2;
  }
  if (!in) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  try {
    return run(*in);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "autotune-bb: %s\n", e.what());
    return 2;
  } catch (const ArgsError &e) {  // an option given twice, found when the command reads it
    std::fprintf(stderr, "autotune-bb: %s\n", usage_error(e, in->command).what());
    return 2;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "autotune-bb: %s\n", e.what());
    return 1;
  }
}
