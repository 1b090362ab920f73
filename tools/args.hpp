// A small, strict command-line parser for the tools: long options (`--name VALUE`,
// `--name=VALUE`, flags), a few short aliases, positionals.  Anything unknown is an error that
// names the option and points at --help.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace autotune::cli {

class Args {
 public:
  // `with_value`: options that take a value; `flags`: options that do not.  Names without "--".
  Args(int argc, char **argv, const std::set<std::string> &with_value, const std::set<std::string> &flags,
       const std::string &command);

  bool flag(const std::string &name) const { return flags_.count(name) > 0; }
  std::optional<std::string> value(const std::string &name) const;
  const std::vector<std::string> &positional() const { return positional_; }
  // Exactly `n` positionals, described by `what` for the message (e.g. "CLASS").
  void expect_positional(size_t n, const std::string &what) const;

 private:
  std::string command_;
  std::set<std::string> flags_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace autotune::cli
