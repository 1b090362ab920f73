/*
 * autotune.h — the C API of libautotune, for the Slurm plugin shims.
 *
 * Every function here catches every exception of the C++ core: it returns 0 on success and a
 * negative AT_E* code on failure, with a message in the caller's buffer (always NUL-terminated,
 * truncated to `errlen`).  No function writes to stdout or stderr; diagnostics go to the sink
 * set with at_set_log_sink().  All functions are safe to call from several threads at once
 * unless noted.
 */
#ifndef AUTOTUNE_AUTOTUNE_H
#define AUTOTUNE_AUTOTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes (negative; 0 is success).  They mirror autotune::Errc. */
enum {
  AT_OK = 0,
  AT_EINVAL = -1,   /* user input failed validation; the message says which field and why */
  AT_ENOENT = -2,   /* no such class, key, or file */
  AT_EIO = -3,      /* the operating system refused a read or write */
  AT_ECORRUPT = -4, /* stored data failed its checksum or schema check */
  AT_EBUSY = -5,    /* a lock could not be taken in time */
  AT_EPERM = -6,    /* not allowed for this caller */
  AT_EUNSUP = -7,   /* not supported by this build or machine */
  AT_EINTERNAL = -8, /* a bug: an invariant did not hold */
  AT_ENOSPC = -9     /* a capacity (storage tier, buffer) is too small for the request */
};

/* Log levels passed to the sink. */
enum { AT_LOG_ERROR = 0, AT_LOG_INFO = 1, AT_LOG_VERBOSE = 2, AT_LOG_DEBUG = 3 };

typedef void (*at_log_sink_fn)(int level, const char *message);

/* Install the sink for the core's diagnostics (NULL: drop them).  Call once, from init(). */
void at_set_log_sink(at_log_sink_fn sink);

/* Longest class name, in bytes. */
#define AT_CLASS_NAME_MAX 64

/*
 * Check a class name: 1..AT_CLASS_NAME_MAX characters from [A-Za-z0-9._-].
 * Returns AT_OK, or AT_EINVAL with a message that quotes the name and says what is allowed.
 */
int at_class_name_check(const char *name, char *err, size_t errlen);

/*
 * Find `key` in an environment array of "KEY=VALUE" strings (as Slurm keeps a job's
 * spank_job_env).  Returns a pointer into the matching entry's value, or NULL.
 */
const char *at_env_get(char *const *env, size_t count, const char *key);

#ifdef __cplusplus
}
#endif

#endif /* AUTOTUNE_AUTOTUNE_H */
