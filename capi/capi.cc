// The C API: an exception firewall around the C++ core (see autotune.h).
#include "autotune/autotune.h"

#include <cstring>
#include <exception>
#include <new>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/names.hpp"
#include "capi_internal.hpp"

namespace autotune::capi {

int code_of(Errc c) {
  switch (c) {
    case Errc::invalid_argument: return AT_EINVAL;
    case Errc::not_found: return AT_ENOENT;
    case Errc::io: return AT_EIO;
    case Errc::corrupt: return AT_ECORRUPT;
    case Errc::busy: return AT_EBUSY;
    case Errc::permission: return AT_EPERM;
    case Errc::unsupported: return AT_EUNSUP;
    case Errc::internal: return AT_EINTERNAL;
    case Errc::no_space: return AT_ENOSPC;
  }
  return AT_EINTERNAL;
}

}  // namespace autotune::capi

namespace {

using autotune::capi::firewall;

at_log_sink_fn g_c_sink = nullptr;
void c_sink_adapter(autotune::LogLevel level, const char *message) {
  if (at_log_sink_fn s = g_c_sink) s(static_cast<int>(level), message);
}

}  // namespace

extern "C" {

void at_set_log_sink(at_log_sink_fn sink) {
  g_c_sink = sink;
  autotune::set_log_sink(sink ? c_sink_adapter : nullptr);
}

int at_class_name_check(const char *name, char *err, size_t errlen) {
  return firewall(err, errlen, [&] {
    if (!name) autotune::throw_invalid("--autotune: no class name given");
    autotune::validate_class_name(name);
  });
}

const char *at_env_get(char *const *env, size_t count, const char *key) {
  if (!env || !key) return nullptr;
  const size_t klen = std::strlen(key);
  for (size_t i = 0; i < count; ++i) {
    const char *e = env[i];
    if (e && std::strncmp(e, key, klen) == 0 && e[klen] == '=') return e + klen + 1;
  }
  return nullptr;
}

}  // extern "C"
