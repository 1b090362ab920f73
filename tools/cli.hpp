// Shared by the `autotune` commands: who is calling, the trusted configuration, the store, and
// the small pieces of output every command uses.
//
// Privileges: `autotune` may be installed setuid to SlurmUser (make install does so when run as
// root), so that users can read their own rows of a store they cannot open themselves.  When it
// runs setuid, the environment is cleared, the configuration and the store are used only if
// their files and directories are owned by root or SlurmUser and writable by nobody else, every
// query is restricted to the caller's real uid, and files are written with the caller's own
// privileges.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "autotune/conf.hpp"
#include "autotune/store.hpp"

namespace autotune::cli {

struct Caller {
  uid_t uid = 0;          // real uid: whose classes these are
  std::string user;       // its name (or the number)
  bool privileged = false;  // root or SlurmUser: may see and change every class
  bool setuid = false;      // running with an effective uid other than the real one
};

// Must be called first in main(): identifies the caller and, when setuid, clears the environment.
Caller init_caller();

// The configuration: $AUTOTUNE_CONF, else autotune.conf beside $SLURM_CONF, else the built-in
// path; a missing file means the defaults.  When setuid, the file must be trusted (see above).
Conf load_conf(const Caller &caller);

// The store of `conf`.  `write` opens it read-write (creating it only when `create`).
Store open_store(const Caller &caller, const Conf &conf, bool write, bool create = false);

// Throws Error(permission) unless the caller is privileged.
void require_privileged(const Caller &caller, const std::string &what);

// The uid of a user name or number; throws Error(invalid_argument) naming --user.
uid_t resolve_user(const std::string &name_or_uid);
std::string user_name(uid_t uid);

// The class a caller means by NAME: their own, else (for reading) the shared one.  A privileged
// caller may name another owner with `owner`.  Throws Error(not_found) with a message that says
// how to list classes.
ClassRecord find_class_for(Store &store, const Caller &caller, const std::string &name,
                           std::optional<uid_t> owner, bool for_writing);

// A command's CLASS argument (exactly one positional) and --user, resolved: the configuration,
// the store (read-write when `for_writing`) and the class, by find_class_for's rules.
struct NamedClass {
  Conf conf;
  Store store;
  ClassRecord cls;
};
class Args;
NamedClass open_named_class(const Caller &caller, const Args &args, bool for_writing);

// Fixed-width text table: the first row is the header.
std::string format_table(const std::vector<std::vector<std::string>> &rows);

// "3.142", "1.23e+06": a short, readable number.
std::string num(double v, int digits = 4);
// "2026-11-29 18:40:55" in local time.
std::string timestamp(double unix_seconds);

// Is `path` (and every directory above it) owned by root or SlurmUser and not writable by others?
bool trusted_path(const std::string &path, std::string *why);

// The SlurmUser this build was configured for (--with-slurm-user).
uid_t slurm_user_uid();

}  // namespace autotune::cli
