// autotune.conf as lines: the reader every section parser takes its keys from, and the core
// section (StateDir).  The typed whole file is autotune/conf.hpp (conf/); a program that needs
// only some sections (libssp's tier, the select plugin) reads those with this reader alone.
//
// Format, like slurm.conf: one `Key=Value` per line, '#' starts a comment, keys are
// case-insensitive.  A few keys name a repeated record whose line carries more `Key=Value` tokens
// (e.g. `Tier=fast Kind=pmem Path=/mnt/pmem Capacity=64G`).  A value with blanks is written in
// double quotes.  Malformed lines throw Error(invalid_argument) "FILE:LINE: ...".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  // IngestRetry: seconds between prep/autotune's tries of `autotune ingest --spool` while job
  // ends wait (the store locked, full or damaged), 1-3600.
  int ingest_retry_s = 30;
};

// Section parser of the core section: takes StateDir and IngestRetry from `raw`.
void parse_core_section(RawConf &raw, CoreConf &out);

// Where the tools look: $AUTOTUNE_CONF, else autotune.conf beside $SLURM_CONF, else
// /etc/slurm/autotune.conf.  `trusted_env` false ignores the environment (setuid tools).
std::string default_conf_path(bool trusted_env = true);

}  // namespace autotune
