// The --autotune* options of sbatch/salloc/srun as job_submit reads them: the spank plugin puts
// each value verbatim into the job's SPANK environment as AUTOTUNE_<NAME>; at_submit() looks them
// up (at_env_get) and validates them as capi/submit.cc's settings_from() does (class name,
// gamma, budget, mode, probe batches, the space clamped to the site's DefaultSpace and
// SpaceLimits); autotune-run parses AUTOTUNE_CONFIG.
//
// Input: lines of the environment ("AUTOTUNE_GAMMA=0.3"); each option is judged on its own.
#include <string>
#include <vector>

#include "autotune/autotune.h"
#include "autotune/conf.hpp"
#include "autotune/config.hpp"
#include "autotune/names.hpp"
#include "autotune/objective.hpp"
#include "autotune/space.hpp"
#include "autotune/store.hpp"
#include "autotune/units.hpp"
#include "fuzz.hpp"

using namespace autotune;

namespace {

// The built-in defaults, and a site with a default space and limits (etc/autotune.conf's).
const std::vector<Conf> &sites() {
  static const std::vector<Conf> s = {
      Conf::defaults(),
      Conf::load_text("DefaultSpace=nodes=1-4,cpus-per-worker=1-8:x2,mem-per-worker=1G-8G\n"
                      "SpaceLimits=nodes=1-16,cpus-per-worker=1-64,mem-per-worker=256M-64G\n"
                      "MaxBudget=100\nMaxProbeBatches=10000\nDefaultMode=steps\n",
                      "fuzz.conf"),
  };
  return s;
}

void check_space(const char *text, const Conf &conf) {
  SpaceSpec user;
  if (fuzz::refused([&] { user = SpaceSpec::parse(text, "--autotune-space"); })) return;
  // Documented: parse(format()) == *this.
  const std::string f = user.format();
  SpaceSpec again;
  FUZZ_CHECK(!fuzz::refused([&] { again = SpaceSpec::parse(f, "class space", kMaxStoredSpaceText); }),
             "format() of a parsed space does not parse: " + f);
  FUZZ_CHECK(again == user, "parse(format()) differs: " + f);
  const EngineConf &e = conf.engine;
  SpaceSpec space;
  if (fuzz::refused([&] { space = restrict_space(user, e.default_space, e.space_limits, "--autotune-space"); }))
    return;
  const std::string s = space.format();
  FUZZ_CHECK(SpaceSpec::parse(s, "space", kMaxStoredSpaceText) == space, "restricted space does not round-trip: " + s);
}

void check_config(const char *text) {
  Configuration c;
  if (fuzz::refused([&] { c = Configuration::parse(text, "AUTOTUNE_CONFIG"); })) return;
  if (fuzz::refused([&] { c.validate("AUTOTUNE_CONFIG"); })) return;
  // Documented: parse(format(c)) == c for every valid c.
  const std::string f = c.format();
  Configuration again;
  FUZZ_CHECK(!fuzz::refused([&] { again = Configuration::parse(f, "configuration"); }),
             "format() of a valid configuration does not parse: " + f);
  FUZZ_CHECK(again == c, "parse(format(c)) != c: " + f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  std::vector<std::string> lines = fuzz::lines(fuzz::as_text(data, size));
  std::vector<char *> env;
  for (auto &l : lines) env.push_back(l.data());
  auto get = [&](const char *key) { return at_env_get(env.data(), env.size(), key); };

  if (const char *v = get("AUTOTUNE_CLASS")) fuzz::refused([&] { validate_class_name(v, "--autotune"); });
  if (const char *v = get("AUTOTUNE_CONFIG")) check_config(v);
  for (const Conf &conf : sites()) {
    const EngineConf &e = conf.engine;
    if (const char *v = get("AUTOTUNE_GAMMA"))
      fuzz::refused([&] {
        const double g = parse_gamma("--autotune-gamma", v);
        FUZZ_CHECK(g >= 0 && g <= 1, std::string("gamma out of [0, 1] accepted: ") + v);
      });
    if (const char *v = get("AUTOTUNE_BUDGET"))
      fuzz::refused([&] { parse_int("--autotune-budget", v, 1, static_cast<long long>(e.max_budget)); });
    if (const char *v = get("AUTOTUNE_MODE")) fuzz::refused([&] { parse_class_mode("--autotune-mode", v); });
    if (const char *v = get("AUTOTUNE_PROBE_BATCHES"))
      fuzz::refused([&] { parse_int("--autotune-probe-batches", v, 1, conf.tuner.max_probe_batches); });
    if (const char *v = get("AUTOTUNE_SPACE")) check_space(v, conf);
  }
  return 0;
}
