#include "autotune/units.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "autotune/error.hpp"

namespace autotune {
namespace {

std::string quote(std::string_view field, std::string_view value) {
  return std::string(field) + ": '" + std::string(value) + "'";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::uint64_t parse_size(std::string_view field, std::string_view value, char default_unit) {
  const std::string allowed =
      "allowed: a number with an optional unit K, M, G or T (e.g. 512M, 2G)";
  if (value.empty()) throw_invalid(std::string(field) + ": empty size; " + allowed);
  std::string s(value);
  char *end = nullptr;
  errno = 0;
  if (!(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.'))
    throw_invalid(quote(field, value) + " is not a size; " + allowed);
  const double num = std::strtod(s.c_str(), &end);
  if (errno != 0 || end == s.c_str() || !std::isfinite(num) || num < 0)
    throw_invalid(quote(field, value) + " is not a size; " + allowed);
  std::string unit = lower(std::string_view(end));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "ib") unit.resize(unit.size() - 2);
  else if (unit.size() == 2 && unit[1] == 'b') unit.resize(1);
  if (unit.empty()) unit = std::string(1, static_cast<char>(std::tolower(default_unit)));
  double mult;
  if (unit == "b") mult = 1;
  else if (unit == "k") mult = 1024.0;
  else if (unit == "m") mult = 1024.0 * 1024;
  else if (unit == "g") mult = 1024.0 * 1024 * 1024;
  else if (unit == "t") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw_invalid(quote(field, value) + " has an unknown unit '" + std::string(end) + "'; " + allowed);
  const double bytes = num * mult;
  if (bytes > 9.0e18) throw_invalid(quote(field, value) + " is too large");
  const double rounded = std::round(bytes);
  if (std::fabs(bytes - rounded) > 1e-6 * std::max(1.0, bytes))
    throw_invalid(quote(field, value) + " is not a whole number of bytes");
  return static_cast<std::uint64_t>(rounded);
}

std::string format_size(std::uint64_t bytes) {
  static const char units[] = {'T', 'G', 'M', 'K'};
  static const std::uint64_t mults[] = {1ull << 40, 1ull << 30, 1ull << 20, 1ull << 10};
  if (bytes == 0) return "0";
  for (int i = 0; i < 4; ++i)
    if (bytes % mults[i] == 0) return std::to_string(bytes / mults[i]) + units[i];
  return std::to_string(bytes) + "B";
}

std::uint64_t parse_mem_mb(std::string_view field, std::string_view value) {
  const std::uint64_t b = parse_size(field, value, 'M');
  return (b + (1ull << 20) - 1) >> 20;
}

double parse_double(std::string_view field, std::string_view value, double lo, double hi) {
  std::string s(value);
  char *end = nullptr;
  errno = 0;
  const double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  const std::string range = "allowed: a number from " + format_double(lo) + " to " + format_double(hi);
  if (s.empty() || errno != 0 || *end != '\0' || !std::isfinite(v) || std::isspace(static_cast<unsigned char>(s[0])))
    throw_invalid(quote(field, value) + " is not a number; " + range);
  if (v < lo || v > hi) throw_invalid(quote(field, value) + " is out of range; " + range);
  return v;
}

long long parse_int(std::string_view field, std::string_view value, long long lo, long long hi) {
  long long v = 0;
  const std::string range = "allowed: a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  const char *b = value.data(), *e = value.data() + value.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (value.empty() || ec == std::errc::invalid_argument || p != e)
    throw_invalid(quote(field, value) + " is not a whole number; " + range);
  if (ec == std::errc::result_out_of_range || v < lo || v > hi)
    throw_invalid(quote(field, value) + " is out of range; " + range);
  return v;
}

bool parse_bool(std::string_view field, std::string_view value) {
  const std::string v = lower(value);
  if (v == "yes" || v == "true" || v == "1" || v == "on") return true;
  if (v == "no" || v == "false" || v == "0" || v == "off") return false;
  throw_invalid(quote(field, value) + " is not a boolean; allowed: yes, no, true, false, 1, 0, on, off");
}

std::string format_double(double v) {
  char buf[64];
  // Integers in full: %g's shortest form of 10 is "1e+01".
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::vector<std::pair<std::string_view, std::string_view>> split_assignments(std::string_view field,
                                                                             std::string_view text,
                                                                             std::string_view value_name) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) throw_invalid(std::string(field) + ": empty item in '" + std::string(text) + "'");
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw_invalid(std::string(field) + ": '" + std::string(item) + "' is not DIMENSION=" + std::string(value_name));
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

}  // namespace autotune
