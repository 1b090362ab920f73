// autotune-bb's arguments as burst_buffer.lua passes them from a job's #BB_LUA directives:
//   #BB_LUA buffer capacity=4G pool=autotune pmem=1G placement=bandwidth-proportional
//     -> autotune-bb create --job ID --uid UID --gid GID --capacity 4G --pmem 1G --placement ...
//   #BB_LUA stage_in source=/home/me/in destination=in.dat  -> autotune-bb stage-in --job ID SRC KEY
//   #BB_LUA stage_out source=out/ destination=/home/me/out  -> autotune-bb stage-out --job ID KEY DEST
// and as a job runs it ("put FILE KEY", "get KEY FILE", "ls PREFIX", "rm KEY", "--tier NAME=SIZE").
// Each input line is one command line, split at blanks (a #BB_LUA line is turned into the command
// line burst_buffer.lua builds); it is read with the tools' parser (tools/args.hpp) and its values
// with the parsers autotune-bb calls: parse_int (--job, --uid, --gid), parse_size (--capacity,
// --pmem, --tier), parse_placement, validate_tier_name and validate_tier_key.
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

void run(std::vector<std::string> w) {
  if (w.empty()) return;
  const std::string cmd = w[0];
  std::vector<char *> argv;
  for (std::size_t i = 1; i < w.size(); ++i) argv.push_back(w[i].data());
  const std::set<std::string> options =
      cmd == "create" ? std::set<std::string>{"job", "uid", "gid", "capacity", "pmem", "tier", "placement"}
                      : std::set<std::string>{"job"};
  const cli::Args a(static_cast<int>(argv.size()), argv.data(), options, {"help"}, "autotune-bb " + cmd);
  if (auto v = a.value("job")) parse_int("--job", *v, 1, 4294967294LL);
  if (auto v = a.value("uid")) parse_int("--uid", *v, 0, 4294967294LL);
  if (auto v = a.value("gid")) parse_int("--gid", *v, 0, 4294967294LL);
  if (auto v = a.value("capacity")) {
    const std::uint64_t b = parse_size("--capacity", *v, 'B');
    FUZZ_CHECK(parse_size("--capacity", format_size(b), 'B') == b, "format_size does not round-trip: " + *v);
  }
  if (auto v = a.value("pmem")) parse_size("--pmem", *v, 'B');
  if (auto v = a.value("tier")) {
    const std::size_t eq = v->find('=');
    if (eq == std::string::npos || eq == 0) throw_invalid("--tier: '" + *v + "' is not NAME=SIZE");
    validate_tier_name(v->substr(0, eq), "--tier");
    parse_size("--tier " + v->substr(0, eq), v->substr(eq + 1), 'B');
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
