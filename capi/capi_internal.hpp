// Internal: the exception firewall shared by the C API's entry points (autotune.h).
#pragma once

#include <cstring>
#include <exception>
#include <new>

#include "autotune/autotune.h"
#include "autotune/error.hpp"

namespace autotune::capi {

int code_of(Errc c);

inline void put(char *err, size_t errlen, const char *msg) {
  if (!err || errlen == 0) return;
  std::strncpy(err, msg, errlen - 1);
  err[errlen - 1] = '\0';
}

// Runs `fn`; maps every exception to a code and a message.  Never throws.
template <typename Fn>
int firewall(char *err, size_t errlen, Fn &&fn) noexcept {
  try {
    fn();
    put(err, errlen, "");
    return AT_OK;
  } catch (const Error &e) {
    put(err, errlen, e.what());
    return code_of(e.code());
  } catch (const std::bad_alloc &) {
    put(err, errlen, "out of memory");
    return AT_EINTERNAL;
  } catch (const std::exception &e) {
    put(err, errlen, e.what());
    return AT_EINTERNAL;
  } catch (...) {
    put(err, errlen, "unknown exception");
    return AT_EINTERNAL;
  }
}

}  // namespace autotune::capi
