// autotune.conf: the administrator's configuration (every key is documented in
// etc/autotune.conf).
//
// Format, like slurm.conf: one `Key=Value` per line, '#' starts a comment, keys are
// case-insensitive.  A few keys name a repeated record whose line carries more `Key=Value` tokens
// (e.g. `Tier=fast Kind=pmem Path=/mnt/pmem Capacity=64G`).  A value with blanks is written in
// double quotes.  Unknown keys, keys given twice, and malformed values fail closed: loading
// throws Error(invalid_argument) with "FILE:LINE: Key: ..." naming what is allowed.
//
// Sections: each module that owns keys parses them from a RawConf in its own function, called by
// Conf::load(); what no section took is rejected as unknown.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/adjust_conf.hpp"
#include "autotune/raw_conf.hpp"
#include "autotune/engine_conf.hpp"
#include "autotune/tuner_conf.hpp"
#include "autotune/tier_conf.hpp"

namespace autotune {

struct Conf {
  std::string path;  // the file it was read from; empty for built-in defaults
  CoreConf core;
  EngineConf engine;
  TunerConf tuner;
  TierConf tier;  // storage tiers (autotune/tier_conf.hpp)
  AdjustConf adjust;  // per-role adjustment from measured use (autotune/adjust.hpp)

  // Read and validate `path`.  Throws Error(not_found|io|invalid_argument).
  static Conf load(const std::string &path);
  // Parse text (tests, `autotune conf --check -`).
  static Conf load_text(std::string_view text, const std::string &file = "<text>");
  // The built-in defaults (no file).
  static Conf defaults() { return Conf{}; }
  // Where the tools look: $AUTOTUNE_CONF, else autotune.conf beside $SLURM_CONF, else
  // /etc/slurm/autotune.conf.  `trusted_env` false ignores the environment (setuid tools).
  static std::string default_path(bool trusted_env = true);

 private:
  static Conf from_raw(RawConf raw, std::string path);
};

}  // namespace autotune
