#include "autotune/conf.hpp"

namespace autotune {

Conf Conf::from_raw(RawConf raw, std::string path) {
  Conf c;
  c.path = std::move(path);
  parse_core_section(raw, c.core);
  parse_engine_section(raw, c.engine);
  parse_tuner_section(raw, c.tuner);
  parse_tier_section(raw, c.tier);
  parse_adjust_section(raw, c.adjust);
  raw.reject_unknown();
  return c;
}

Conf Conf::load(const std::string &path) { return from_raw(RawConf::parse_file(path), path); }

Conf Conf::load_text(std::string_view text, const std::string &file) {
  return from_raw(RawConf::parse_text(text, file), file);
}

std::string Conf::default_path(bool trusted_env) { return default_conf_path(trusted_env); }

}  // namespace autotune
