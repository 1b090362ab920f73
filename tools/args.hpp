// A small, strict command-line parser for the tools: long options (`--name VALUE`,
// `--name=VALUE`, flags), a few short aliases, positionals.  Anything unknown is an error that
// names the option and points at --help.
//
// The defaults are `autotune`'s: options and positionals in any order, each option at most once,
// "--" ends the options.  A Syntax adapts the reading for a command line of another shape
// (autotune-bb's: global options before a subcommand, repeatable options, "-x" arguments).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "autotune/error.hpp"

namespace autotune::cli {

// What Args refuses.  what() is Args' own message ("unknown option '--x'; see `CMD --help'");
// a command that words its messages otherwise reads kind(), option() and word().
class ArgsError : public Error {
 public:
  enum class Kind { unknown_option, needs_value, takes_no_value, given_twice };
  ArgsError(Kind kind, std::string option, std::string word, const std::string &message)
      : Error(Errc::invalid_argument, message),
        kind_(kind),
        option_(std::move(option)),
        word_(std::move(word)) {}
  Kind kind() const { return kind_; }
  // The option's name without "--" and without "=VALUE" ("size" for "--size=1G").
  const std::string &option() const { return option_; }
  // The word of the command line as given ("--size=1G", "-x").
  const std::string &word() const { return word_; }

 private:
  Kind kind_;
  std::string option_, word_;
};

class Args {
 public:
  // How a command line is read beyond the names of its options.
  struct Syntax {
    // Options with a value that may be given more than once: values() has each in order; value()
    // refuses one given more than once (ArgsError::given_twice) when it is read.
    std::set<std::string> repeatable;
    // Read options only up to the first positional (a subcommand): that word and every word after
    // it are positional() unread, and first_positional() is its index in argv.  "-" and "--"
    // stop the reading too and are left as that first positional, for the caller to judge.
    bool stop_at_positional = false;
    // A word with one dash other than "-h" ("-x", "-file") is a positional, not an unknown option.
    bool dash_words_positional = false;
    // With "help" among the flags: the words after --help (or -h) are neither read nor refused.
    bool help_ends = false;
  };

  // `with_value`: options that take a value; `flags`: options that do not.  Names without "--".
  // Throws ArgsError.
  Args(int argc, char **argv, const std::set<std::string> &with_value,
       const std::set<std::string> &flags, const std::string &command);
  Args(int argc, char **argv, const std::set<std::string> &with_value,
       const std::set<std::string> &flags, const std::string &command, const Syntax &syntax);

  bool flag(const std::string &name) const { return flags_.count(name) > 0; }
  std::optional<std::string> value(const std::string &name) const;
  // Every value of a repeatable option, in the order given (empty when it was not given).
  std::vector<std::string> values(const std::string &name) const;
  const std::vector<std::string> &positional() const { return positional_; }
  // Exactly `n` positionals, described by `what` for the message (e.g. "CLASS").
  void expect_positional(size_t n, const std::string &what) const;
  // With Syntax::stop_at_positional: the index in argv of the first positional (argc when none).
  int first_positional() const { return first_positional_; }

 private:
  std::string command_;
  std::set<std::string> flags_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
  int first_positional_ = 0;
};

}  // namespace autotune::cli
