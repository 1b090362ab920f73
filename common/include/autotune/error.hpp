// Named errors of libautotune.
//
// Every failure the core reports is an autotune::Error: a code from the enum below and a message
// meant for the person who caused it (it names the field, the value, and what is allowed).  The C
// API (autotune.h) turns them into negative return codes and a message buffer; nothing is thrown
// across the C boundary.
#pragma once

#include <stdexcept>
#include <string>

namespace autotune {

enum class Errc {
  invalid_argument = 1,  // user input that fails validation
  not_found,             // a class, key, file, or column that does not exist
  io,                    // the operating system refused a read, write, or map
  corrupt,               // stored data that fails its checksum or its schema
  busy,                  // a lock that could not be taken in time
  permission,            // the caller may not do this
  unsupported,           // a feature this build or this machine does not have
  internal,              // a broken invariant: a bug
  no_space,              // a capacity (storage tier, buffer) is too small for the request
};

const char *errc_name(Errc c) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string &message) : std::runtime_error(message), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

// Shorthands for the common cases.
[[noreturn]] void throw_invalid(const std::string &message);
[[noreturn]] void throw_io(const std::string &what, int errnum);

}  // namespace autotune
