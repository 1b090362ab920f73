// A CSV table of measured configurations (autotune replay) or of any rows of text.
//
// RFC 4180 CSV: the first line is the header; fields separated by commas; a field in double
// quotes may hold commas, newlines and "" for a quote; CRLF or LF line ends; blank lines are
// skipped.  Every row must have as many fields as the header.  Errors name the file and line.
//
// Thread safety: immutable after construction.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune {

class Table {
 public:
  // Throws Error(not_found) for a missing file, Error(io) when it cannot be read,
  // Error(invalid_argument) for malformed CSV ("FILE:LINE: ...") or a file larger than 256 MiB.
  static Table read_csv(const std::string &path);
  static Table parse_csv(std::string_view text, const std::string &name = "<text>");

  const std::string &name() const { return name_; }
  const std::vector<std::string> &header() const { return header_; }
  std::size_t rows() const { return rows_.size(); }
  const std::string &cell(std::size_t row, std::size_t col) const { return rows_[row][col]; }
  // The line of the file where a row starts, for messages ("FILE:LINE").
  std::string where(std::size_t row) const;

  std::optional<std::size_t> find(std::string_view column) const;
  // Throws Error(not_found): "FIELD: no column 'x' in FILE; columns: a, b, c".
  std::size_t column(std::string_view column, std::string_view field) const;

 private:
  std::string name_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;
};

}  // namespace autotune
