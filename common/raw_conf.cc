// The autotune.conf reader: lines of Key=Value tokens, and the core section (docs/architecture.md).
#include "autotune/raw_conf.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {
namespace {

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

constexpr size_t kMaxConfBytes = 1 << 20;

}  // namespace

std::string ConfLine::where() const { return file + ":" + std::to_string(line); }

std::optional<std::string> ConfLine::get(std::string_view key) const {
  for (const auto &t : tokens)
    if (iequal(t.key, key)) return t.value;
  return std::nullopt;
}

RawConf RawConf::parse_text(std::string_view text, const std::string &file) {
  RawConf rc;
  int lineno = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    ConfLine line{file, lineno, {}};
    const std::string where = file + ":" + std::to_string(lineno);
    size_t i = 0;
    while (i < raw.size()) {
      while (i < raw.size() && std::isspace(static_cast<unsigned char>(raw[i]))) ++i;
      if (i >= raw.size() || raw[i] == '#') break;
      size_t k = i;
      while (k < raw.size() && raw[k] != '=' && !std::isspace(static_cast<unsigned char>(raw[k])) && raw[k] != '#') ++k;
      std::string key(raw.substr(i, k - i));
      if (k >= raw.size() || raw[k] != '=')
        throw_invalid(where + ": '" + key + "' is not Key=Value");
      for (char ch : key)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-')
          throw_invalid(where + ": '" + key + "' is not a valid key name");
      ++k;
      std::string value;
      if (k < raw.size() && raw[k] == '"') {
        const size_t close = raw.find('"', k + 1);
        if (close == std::string_view::npos) throw_invalid(where + ": " + key + ": unterminated quote");
        value = std::string(raw.substr(k + 1, close - k - 1));
        k = close + 1;
      } else {
        size_t e = k;
        while (e < raw.size() && !std::isspace(static_cast<unsigned char>(raw[e])) && raw[e] != '#') ++e;
        value = std::string(raw.substr(k, e - k));
        k = e;
      }
      if (k < raw.size() && !std::isspace(static_cast<unsigned char>(raw[k])) && raw[k] != '#')
        throw_invalid(where + ": " + key + ": unexpected text after the value");
      line.tokens.push_back({key, value});
      i = k;
    }
    if (!line.tokens.empty()) rc.lines_.push_back(std::move(line));
  }
  rc.taken_.assign(rc.lines_.size(), false);
  return rc;
}

RawConf RawConf::parse_file(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw Error(Errc::not_found, path + ": no such file");
    throw_io(path, errno);
  }
  if (!S_ISREG(st.st_mode)) throw_invalid(path + ": not a regular file");
  if (static_cast<size_t>(st.st_size) > kMaxConfBytes) throw_invalid(path + ": larger than 1 MiB");
  std::ifstream in(path);
  if (!in) throw_io(path, errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_text(ss.str(), path);
}

std::optional<ConfLine> RawConf::take_line(std::string_view key) {
  std::optional<ConfLine> found;
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (!iequal(lines_[i].tokens[0].key, key)) continue;
    if (found)
      throw_invalid(lines_[i].where() + ": " + std::string(key) + " is given twice (first at " +
                    found->where() + ")");
    if (lines_[i].tokens.size() > 1)
      throw_invalid(lines_[i].where() + ": " + std::string(key) + " takes one value; unexpected '" +
                    lines_[i].tokens[1].key + "=' after it");
    taken_[i] = true;
    found = lines_[i];
  }
  return found;
}

std::optional<std::string> RawConf::take(std::string_view key) {
  auto l = take_line(key);
  if (!l) return std::nullopt;
  return l->tokens[0].value;
}

std::vector<ConfLine> RawConf::take_all(std::string_view key) {
  std::vector<ConfLine> out;
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (!iequal(lines_[i].tokens[0].key, key)) continue;
    taken_[i] = true;
    out.push_back(lines_[i]);
  }
  return out;
}

void RawConf::reject_unknown() const {
  for (size_t i = 0; i < lines_.size(); ++i)
    if (!taken_[i])
      throw_invalid(lines_[i].where() + ": unknown key '" + lines_[i].tokens[0].key +
                    "' (the keys are documented in etc/autotune.conf)");
}

void parse_core_section(RawConf &raw, CoreConf &out) {
  if (auto l = raw.take_line("StateDir")) {
    const std::string &v = l->tokens[0].value;
    if (v.empty() || v[0] != '/') throw_invalid(l->where() + ": StateDir: '" + v + "' is not an absolute path");
    out.state_dir = v;
  }
  if (auto l = raw.take_line("IngestRetry"))
    out.ingest_retry_s = static_cast<int>(parse_int(l->where() + ": IngestRetry", l->tokens[0].value, 1, 3600));
}

std::string default_conf_path(bool trusted_env) {
  if (trusted_env) {
    if (const char *p = std::getenv("AUTOTUNE_CONF"); p && *p) return p;
    if (const char *s = std::getenv("SLURM_CONF"); s && *s) {
      std::string d(s);
      const size_t slash = d.rfind('/');
      return (slash == std::string::npos ? std::string(".") : d.substr(0, slash)) + "/autotune.conf";
    }
  }
  return "/etc/slurm/autotune.conf";
}

}  // namespace autotune
