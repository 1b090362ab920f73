#include "autotune/table.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "autotune/error.hpp"

namespace autotune {
namespace {
constexpr std::size_t kMaxCsvBytes = 256u << 20;
}

Table Table::parse_csv(std::string_view text, const std::string &name) {
  Table t;
  t.name_ = name;
  std::size_t line = 1, i = 0;
  const std::size_t n = text.size();
  if (n >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 byte order mark
  while (i < n) {
    const std::size_t start_line = line;
    std::vector<std::string> fields;
    std::string f;
    bool quoted_field = false;
    for (;;) {
      if (i < n && text[i] == '"' && f.empty() && !quoted_field) {
        quoted_field = true;
        ++i;
        for (;;) {
          if (i >= n)
            throw_invalid(name + ":" + std::to_string(start_line) + ": unterminated quoted field");
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              f += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (text[i] == '\n') ++line;
          f += text[i++];
        }
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          throw_invalid(name + ":" + std::to_string(line) + ": text after a closing quote");
        continue;
      }
      if (i >= n || text[i] == '\n' || (text[i] == '\r' && (i + 1 >= n || text[i + 1] == '\n'))) {
        fields.push_back(std::move(f));
        if (i < n && text[i] == '\r') ++i;
        if (i < n) ++i;
        ++line;
        break;
      }
      if (text[i] == ',') {
        fields.push_back(std::move(f));
        f.clear();
        quoted_field = false;
        ++i;
        continue;
      }
      f += text[i++];
    }
    if (fields.size() == 1 && fields[0].empty() && !quoted_field) continue;  // blank line
    if (t.header_.empty()) {
      t.header_ = std::move(fields);
      for (std::size_t a = 0; a < t.header_.size(); ++a) {
        if (t.header_[a].empty())
          throw_invalid(name + ":" + std::to_string(start_line) + ": column " +
                        std::to_string(a + 1) + " of the header has no name");
        for (std::size_t b = 0; b < a; ++b)
          if (t.header_[a] == t.header_[b])
            throw_invalid(name + ":" + std::to_string(start_line) + ": column '" + t.header_[a] +
                          "' appears twice in the header");
      }
      continue;
    }
    if (fields.size() != t.header_.size())
      throw_invalid(name + ":" + std::to_string(start_line) + ": " + std::to_string(fields.size()) +
                    " fields, the header has " + std::to_string(t.header_.size()));
    t.rows_.push_back(std::move(fields));
    t.lines_.push_back(start_line);
  }
  return t;
}

Table Table::read_csv(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw Error(Errc::not_found, path + ": no such file");
    throw_io(path, errno);
  }
  if (!S_ISREG(st.st_mode)) throw_invalid(path + ": not a regular file");
  if (static_cast<std::size_t>(st.st_size) > kMaxCsvBytes)
    throw_invalid(path + ": larger than 256 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_io(path, errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw_io(path, errno);
  return parse_csv(ss.str(), path);
}

std::string Table::where(std::size_t row) const {
  return name_ + ":" + std::to_string(lines_[row]);
}

std::optional<std::size_t> Table::find(std::string_view column) const {
  for (std::size_t c = 0; c < header_.size(); ++c)
    if (header_[c] == column) return c;
  return std::nullopt;
}

std::size_t Table::column(std::string_view column, std::string_view field) const {
  if (auto c = find(column)) return *c;
  std::string cols;
  for (const auto &h : header_) cols += (cols.empty() ? "" : ", ") + h;
  throw Error(Errc::not_found, std::string(field) + ": no column '" + std::string(column) +
                                   "' in " + name_ +
                                   "; columns: " + (cols.empty() ? "(none)" : cols));
}

}  // namespace autotune
