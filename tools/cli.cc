#include "cli.hpp"

#include "autotune/error.hpp"

namespace autotune::tools {

Args::Args(int argc, char **argv, const std::vector<OptionSpec> &spec, bool allow_positional) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
      if (!allow_positional)
        throw_invalid("unexpected argument '" + a + "' (options start with --)");
      positional_.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const OptionSpec *s = nullptr;
    for (const auto &o : spec)
      if (name == o.name) s = &o;
    if (!s) throw_invalid("unknown option '--" + name + "' (see --help)");
    if (values_.count(name)) throw_invalid("--" + name + " is given twice");
    if (!s->takes_value) {
      if (eq != std::string::npos) throw_invalid("--" + name + " takes no value");
      values_[name] = "";
    } else if (eq != std::string::npos) {
      values_[name] = a.substr(eq + 1);
    } else {
      if (i + 1 >= argc) throw_invalid("--" + name + " needs a value");
      values_[name] = argv[++i];
    }
  }
}

std::optional<std::string> Args::get(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

}  // namespace autotune::tools
