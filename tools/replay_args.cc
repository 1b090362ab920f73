#include "replay_args.hpp"

#include <cmath>
#include <cstdio>


namespace autotune::cli {

std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t c = s.find(',', pos);
    if (c == std::string::npos) c = s.size();
    out.push_back(s.substr(pos, c - pos));
    pos = c + 1;
  }
  return out;
}

void parse_table_options(const Args &args, std::string &table, ReplaySpec &spec) {
  const auto file = args.value("table");
  if (!file || file->empty()) throw_invalid("--table FILE is required (see --help)");
  table = *file;
  if (auto v = args.value("group")) {
    if (v->empty()) throw_invalid("--group: empty column name");
    spec.group = *v;
  }
  if (auto v = args.value("features")) {
    spec.features = split_list(*v);
    for (const auto &f : spec.features)
      if (f.empty()) throw_invalid("--features: '" + *v + "' has an empty column name");
  }
  if (auto v = args.value("derive"))
    for (const auto &item : split_list(*v)) spec.derived.push_back(DerivedFeature::parse(item));
  if (auto v = args.value("time-column")) spec.time_column = *v;
  if (auto v = args.value("cost-column")) spec.cost_column = *v;
  if (auto v = args.value("ok-column")) spec.ok_column = *v;
}

std::string count_text(double v, std::size_t budget) {
  if (std::isinf(v)) return ">" + std::to_string(budget);
  char buf[32];
  std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f" : "%.1f", v);
  return buf;
}

std::string pct(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
  return buf;
}

nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace autotune::cli
