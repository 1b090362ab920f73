#include "args.hpp"

#include "autotune/error.hpp"

namespace autotune::cli {

Args::Args(int argc, char **argv, const std::set<std::string> &with_value, const std::set<std::string> &flags,
           const std::string &command)
    : command_(command) {
  const std::string hint = "; see `" + command + " --help'";
  bool only_positional = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (only_positional || a.size() < 2 || a[0] != '-' || a == "-") {
      positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    if (a == "-h") a = "--help";
    if (a.rfind("--", 0) != 0) throw_invalid("unknown option '" + a + "'" + hint);
    std::string name = a.substr(2), val;
    bool has_val = false;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      val = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_val = true;
    }
    if (flags.count(name)) {
      if (has_val) throw_invalid("--" + name + " takes no value" + hint);
      flags_.insert(name);
    } else if (with_value.count(name)) {
      if (!has_val) {
        if (i + 1 >= argc) throw_invalid("--" + name + " needs a value" + hint);
        val = argv[++i];
      }
      if (values_.count(name)) throw_invalid("--" + name + " given twice" + hint);
      values_[name] = val;
    } else {
      throw_invalid("unknown option '--" + name + "'" + hint);
    }
  }
}

std::optional<std::string> Args::value(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

void Args::expect_positional(size_t n, const std::string &what) const {
  const std::string hint = "; see `" + command_ + " --help'";
  if (positional_.size() < n) throw_invalid("missing " + what + hint);
  if (positional_.size() > n) throw_invalid("unexpected argument '" + positional_[n] + "'" + hint);
}

}  // namespace autotune::cli
