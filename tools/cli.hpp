// Command-line options of the autotune commands: GNU-style long options.
//
//   --name=value, --name value, --flag
// An option not in the spec, a missing value, an option given twice, or a positional argument
// (unless allowed) is a usage error (Error(invalid_argument) naming the option).
//
// Thread safety: none needed (used from main only).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace autotune::tools {

struct OptionSpec {
  const char *name;  // without the leading "--"
  bool takes_value;
};

class Args {
 public:
  // argv[0] is the command name and is skipped.
  Args(int argc, char **argv, const std::vector<OptionSpec> &spec, bool allow_positional = false);

  bool flag(const std::string &name) const { return values_.count(name) != 0; }
  std::optional<std::string> get(const std::string &name) const;
  const std::vector<std::string> &positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace autotune::tools
