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

#include "autotune/adjust.hpp"
#include "autotune/engine_conf.hpp"
#include "autotune/tuner_conf.hpp"
#include "autotune/tier_conf.hpp"

namespace autotune {

struct ConfToken {
  std::string key;  // as written
  std::string value;
};

struct ConfLine {
  std::string file;
  int line = 0;
  std::vector<ConfToken> tokens;  // tokens[0] is the key that names the line
  // "FILE:LINE" for messages.
  std::string where() const;
  // The value of token `key` on this line (case-insensitive), if present.
  std::optional<std::string> get(std::string_view key) const;
};

class RawConf {
 public:
  static RawConf parse_text(std::string_view text, const std::string &file = "<text>");
  // Throws Error(not_found) when the file does not exist, Error(io) when it cannot be read.
  static RawConf parse_file(const std::string &path);

  // A single-valued key: its value, or nullopt when absent.  The line must hold only this key.
  // Throws when the key is given twice.  Marks the key as known.
  std::optional<std::string> take(std::string_view key);
  // Like take(), also returning where it was set (for messages).
  std::optional<ConfLine> take_line(std::string_view key);
  // All lines named by a repeated-record key.  Marks the key as known.
  std::vector<ConfLine> take_all(std::string_view key);
  // Throws Error(invalid_argument) for the first line whose key no section took.
  void reject_unknown() const;

  const std::vector<ConfLine> &lines() const { return lines_; }

 private:
  std::vector<ConfLine> lines_;
  std::vector<bool> taken_;
};

// The core section: where the store lives.
struct CoreConf {
  // StateDir: the directory of the profile store (owned by SlurmUser, not writable by users).
  std::string state_dir = "/var/lib/slurm-autotune";
};

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

// Section parsers (one per module that owns keys); each takes its keys from `raw`.
void parse_core_section(RawConf &raw, CoreConf &out);

}  // namespace autotune
