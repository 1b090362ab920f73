#include "args.hpp"

namespace autotune::cli {

Args::Args(int argc, char **argv, const std::set<std::string> &with_value,
           const std::set<std::string> &flags, const std::string &command)
    : Args(argc, argv, with_value, flags, command, Syntax{}) {}

Args::Args(int argc, char **argv, const std::set<std::string> &with_value,
           const std::set<std::string> &flags, const std::string &command, const Syntax &syntax)
    : command_(command), first_positional_(argc) {
  using Kind = ArgsError::Kind;
  const std::string hint = "; see `" + command + " --help'";
  bool only_positional = false;
  for (int i = 0; i < argc; ++i) {
    const std::string word = argv[i];
    std::string a = word;
    const bool plain = a.size() < 2 || a[0] != '-' || a == "-";
    if (syntax.stop_at_positional && !only_positional && (plain || a == "--")) {
      first_positional_ = i;
      positional_.assign(argv + i, argv + argc);
      return;
    }
    if (only_positional || plain) {
      positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    if (a == "-h") a = "--help";
    if (a.rfind("--", 0) != 0) {
      if (syntax.dash_words_positional) {
        positional_.push_back(a);
        continue;
      }
      throw ArgsError(Kind::unknown_option, a.substr(1), a, "unknown option '" + a + "'" + hint);
    }
    std::string name = a.substr(2), val;
    bool has_val = false;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      val = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_val = true;
    }
    if (flags.count(name)) {
      if (has_val)
        throw ArgsError(Kind::takes_no_value, name, word, "--" + name + " takes no value" + hint);
      flags_.insert(name);
      if (syntax.help_ends && name == "help") return;
    } else if (with_value.count(name)) {
      if (!has_val) {
        if (i + 1 >= argc)
          throw ArgsError(Kind::needs_value, name, word, "--" + name + " needs a value" + hint);
        val = argv[++i];
      }
      if (values_.count(name) && !syntax.repeatable.count(name))
        throw ArgsError(Kind::given_twice, name, word, "--" + name + " given twice" + hint);
      values_[name].push_back(val);
    } else {
      throw ArgsError(Kind::unknown_option, name, word, "unknown option '--" + name + "'" + hint);
    }
  }
}

std::optional<std::string> Args::value(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  if (it->second.size() > 1)
    throw ArgsError(ArgsError::Kind::given_twice, name, "--" + name,
                    "--" + name + " given twice; see `" + command_ + " --help'");
  return it->second.front();
}

std::vector<std::string> Args::values(const std::string &name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

void Args::expect_positional(size_t n, const std::string &what) const {
  const std::string hint = "; see `" + command_ + " --help'";
  if (positional_.size() < n) throw_invalid("missing " + what + hint);
  if (positional_.size() > n) throw_invalid("unexpected argument '" + positional_[n] + "'" + hint);
}

}  // namespace autotune::cli
