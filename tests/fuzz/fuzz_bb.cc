// autotune-bb's arguments as burst_buffer.lua passes them from a job's #BB_LUA directives:
//   #BB_LUA buffer capacity=4G pool=autotune pmem=1G placement=bandwidth-proportional
//     -> autotune-bb create --job ID --uid UID --gid GID --capacity 4G --pmem 1G --placement ...
//   #BB_LUA stage_in source=/home/me/in destination=in.dat  -> autotune-bb stage-in --job ID SRC KEY
//   #BB_LUA stage_out source=out/ destination=/home/me/out  -> autotune-bb stage-out --job ID KEY DEST
// and as a job runs it ("put FILE KEY", "get KEY FILE", "ls PREFIX", "rm KEY", "--tier NAME=SIZE").
// Each input line is one command line after "autotune-bb", split at blanks (a #BB_LUA line is
// turned into the command line burst_buffer.lua builds); it is read with the tools' parser
// (tools/args.hpp) as autotune-bb reads it, and its values with the parsers autotune-bb calls:
// parse_int (--job, --uid, --gid), parse_size (--capacity, --pmem, --tier), parse_placement,
// validate_tier_name and validate_tier_key.
#include <set>
#include <string>
#include <vector>

#include "args.hpp"
#include "autotune/tier.hpp"
#include "autotune/tier_conf.hpp"
#include "autotune/units.hpp"
#include "fuzz.hpp"

using namespace autotune;

namespace {

std::vector<std::string> words(const std::string &line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t j = line.find_first_of(" \t", i);
    if (i < line.size()) out.push_back(line.substr(i, j == std::string::npos ? std::string::npos : j - i));
    i = j == std::string::npos ? line.size() : j;
  }
  return out;
}

// burst_buffer.lua's translation of one directive into autotune-bb's command line.
std::vector<std::string> from_directive(const std::vector<std::string> &w) {
  if (w.size() < 2) return {};
  std::vector<std::string> out;
  std::string source, destination;
  if (w[1] == "buffer") out = {"create", "--job", "42", "--uid", "1000", "--gid", "1000"};
  for (std::size_t i = 2; i < w.size(); ++i) {
    const auto eq = w[i].find('=');
    if (eq == std::string::npos || eq == 0) return {};
    const std::string k = w[i].substr(0, eq), v = w[i].substr(eq + 1);
    if (w[1] == "buffer" && (k == "capacity" || k == "pmem" || k == "placement")) {
      out.push_back("--" + k);
      out.push_back(v);
    } else if (k == "source") {
      source = v;
    } else if (k == "destination") {
      destination = v;
    }
  }
  if (w[1] == "stage_in") out = {"stage-in", "--job", "42", source, destination};
  if (w[1] == "stage_out") out = {"stage-out", "--job", "42", source, destination};
  return out;
}

// A KEY argument; "KEY/" names every object under it (stage-in, stage-out).
void key(const std::string &k, const std::string &field) {
  const bool dir = !k.empty() && k.back() == '/';
  validate_tier_key(dir ? k.substr(0, k.size() - 1) : k, field);
}

// The command line read as tools/bb/main.cc's read_command_line() reads it (that function is
// internal to autotune-bb's main.cc): the global options up to the command, then the command's
// options, each repeatable, and its arguments, with the same Args::Syntax.
void run(std::vector<std::string> w) {
  std::vector<char *> argv;
  for (auto &x : w) argv.push_back(x.data());
  cli::Args::Syntax before;
  before.repeatable = {"conf"};
  before.stop_at_positional = true;
  before.help_ends = true;
  const cli::Args global(static_cast<int>(argv.size()), argv.data(), {"conf"}, {"help"}, "autotune-bb", before);
  if (global.flag("help")) return;
  (void)global.values("conf");
  const auto &rest = global.positional();
  if (rest.empty() || rest[0].empty() || rest[0][0] == '-') return;  // usage errors of main.cc
  const std::string cmd = rest[0];
  FUZZ_CHECK(global.first_positional() >= 0 && global.first_positional() < static_cast<int>(argv.size()) &&
                 cmd == argv[global.first_positional()],
             "first_positional() does not index the command");
  const std::set<std::string> options =
      cmd == "create" ? std::set<std::string>{"job", "uid", "gid", "capacity", "pmem", "tier", "placement"}
                      : std::set<std::string>{"job"};
  cli::Args::Syntax after;
  after.repeatable = options;
  after.dash_words_positional = true;
  after.help_ends = true;
  const int at = global.first_positional() + 1;
  const cli::Args a(static_cast<int>(argv.size()) - at, argv.data() + at, options, {"help"}, "autotune-bb " + cmd,
                    after);
  if (a.flag("help")) return;
  if (auto v = a.value("job")) parse_int("--job", *v, 1, 4294967294LL);
  if (auto v = a.value("uid")) parse_int("--uid", *v, 0, 4294967294LL);
  if (auto v = a.value("gid")) parse_int("--gid", *v, 0, 4294967294LL);
  if (auto v = a.value("capacity")) {
    const std::uint64_t b = parse_size("--capacity", *v, 'B');
    FUZZ_CHECK(parse_size("--capacity", format_size(b), 'B') == b, "format_size does not round-trip: " + *v);
  }
  if (auto v = a.value("pmem")) parse_size("--pmem", *v, 'B');
  for (const std::string &t : a.values("tier")) {
    const std::size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0) throw_invalid("--tier: '" + t + "' is not NAME=SIZE");
    validate_tier_name(t.substr(0, eq), "--tier");
    parse_size("--tier " + t.substr(0, eq), t.substr(eq + 1), 'B');
  }
  if (auto v = a.value("placement")) parse_placement("--placement", *v);
  const auto &pos = a.positional();
  if (cmd == "stage-in" && pos.size() == 2) key(pos[1], "stage-in KEY");
  if (cmd == "stage-out" && pos.size() == 2) key(pos[0], "stage-out KEY");
  if (cmd == "put" && pos.size() == 2) validate_tier_key(pos[1], "put KEY");
  if ((cmd == "get" || cmd == "rm") && !pos.empty()) validate_tier_key(pos[0], cmd + " KEY");
  if (cmd == "ls" && pos.size() == 1 && !pos[0].empty()) key(pos[0], "ls PREFIX");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  for (const std::string &line : fuzz::lines(fuzz::as_text(data, size))) {
    std::vector<std::string> w = words(line);
    if (!w.empty() && w[0] == "#BB_LUA") w = from_directive(w);
    fuzz::refused([&] { run(w); });
  }
  return 0;
}
