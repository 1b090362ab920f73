#include "autotune/error.hpp"

#include <cstring>

namespace autotune {

const char *errc_name(Errc c) noexcept {
  switch (c) {
    case Errc::invalid_argument: return "invalid argument";
    case Errc::not_found: return "not found";
    case Errc::io: return "I/O error";
    case Errc::corrupt: return "corrupt data";
    case Errc::busy: return "busy";
    case Errc::permission: return "permission denied";
    case Errc::unsupported: return "unsupported";
    case Errc::internal: return "internal error";
    case Errc::no_space: return "no space";
  }
  return "unknown error";
}

void throw_invalid(const std::string &message) { throw Error(Errc::invalid_argument, message); }

void throw_io(const std::string &what, int errnum) {
  throw Error(Errc::io, what + ": " + std::strerror(errnum));
}

}  // namespace autotune
