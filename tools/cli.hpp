// Shared by the `autotune` commands: who is calling, the trusted configuration, the store, and
// the small pieces of output every command uses.
//
// Privileges: `autotune` may be installed setuid to SlurmUser (make install does so when run as
// root), so that users can read their own rows of a store they cannot open themselves.  When it
// runs setuid:
//  - the environment is cleared (no core dumps, umask 077), and no path is taken from it: the
//    configuration is the site's, fixed when the build was configured (site_autotune_conf(),
//    site_slurm_conf(); libslurm is pointed at the latter too);
//  - the configuration and the store are used only if every component of their paths (symbolic
//    links and their targets included) is owned by root or SlurmUser and writable by nobody else;
//  - the dispatcher decides once per command what it keeps SlurmUser's identity for (Needs): a
//    command that needs neither the store nor Slurm drops it for good before it parses its
//    arguments, so every file it reads or writes is opened with the caller's own rights; the
//    others open no file the caller names in-process (a plot is written by a child that has
//    dropped privileges);
//  - every query is restricted to the caller's real uid, and an error about a file the caller
//    may not read does not show its content.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "autotune/class_extra.hpp"
#include "autotune/conf.hpp"
#include "autotune/store.hpp"

namespace autotune::cli {

struct Caller {
  uid_t uid = 0;          // real uid: whose classes these are
  std::string user;       // its name (or the number)
  bool privileged = false;  // root or SlurmUser: may see and change every class
  bool setuid = false;      // running with SlurmUser's effective ids (other than the real ones)
};

// What a command keeps SlurmUser's identity for; the dispatcher applies it (enter_command) before
// the command sees its arguments.
enum class Needs {
  nothing,  // privileges are dropped for good: the command runs as the caller (replay)
  store,    // the store, which only SlurmUser may open (status, show, ...)
  slurm,    // SlurmUser's credential towards slurmctld (annotate)
};

// Must be called first in main(): identifies the caller and, when setuid, clears the environment
// (pointing libslurm at site_slurm_conf()), sets umask 077 and forbids core dumps.
Caller init_caller();

// Applies `needs` to `caller` before a command runs: for Needs::nothing, drop_privileges().
void enter_command(Caller &caller, Needs needs);

// Drops SlurmUser's identity for good (real, effective and saved uid and gid become the caller's)
// and verifies that it cannot be regained; afterwards caller.setuid is false.  Throws
// Error(permission) when that fails.  A no-op when not setuid.
void drop_privileges(Caller &caller);

// The configuration files of a setuid run, fixed when the build was configured: autotune.conf and
// slurm.conf in the configure-time sysconfdir.
std::string site_autotune_conf();
std::string site_slurm_conf();

// The configuration: when setuid, site_autotune_conf() only; otherwise $AUTOTUNE_CONF, else
// autotune.conf beside $SLURM_CONF, else the built-in path.  A missing file means the defaults.
// When setuid the file must be trusted (see above), and when the caller may not read it, an error
// in it is reported without its content.
Conf load_conf(const Caller &caller);

// When setuid: throws Error(permission) unless site_slurm_conf() is trusted and readable by the
// caller (the only slurm.conf libslurm then reads).  Call before the first libslurm call that
// reads slurm.conf.
void require_site_slurm_conf(const Caller &caller);

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

// Who an informing (or set-aside) class belongs to: its owner's name, or "shared" when an
// administrator offered it to every user.
std::string history_owner(const HistoryUse &h);
// autotune show's "warm start:" lines for a class (none when no other class informs it): the
// informing classes with their weights and the class's own; that they have no weight because the
// configuration they rank best among the class's trials failed; the trust in their failures; or
// the classes set aside with their coherence.
std::vector<std::string> warm_start_lines(const ClassExtra &cx);
// autotune show's "failures:" line (empty when the class's last model step used no failures'
// edge): the feature and value beyond which configurations are proposed less, and why.
std::string failure_edge_line(const ClassExtra &cx);
// autotune show's "model:" and "proposals:" texts: the model the class was created with, and what
// its automatic choices are at its gamma (design.hpp; with a warm start when earlier classes
// informed its last proposal).
struct ClassModelText {
  std::string model, proposals;
};
ClassModelText class_model_text(const ClassRecord &c, const ClassExtra &cx);
// "2026-11-29 18:40:55" in local time.
std::string timestamp(double unix_seconds);

// Is every component of the absolute `path` owned by root or SlurmUser and not writable by group
// or others (a directory with the sticky bit may be)?  Symbolic links are followed component by
// component: the link itself must be owned by root or SlurmUser, and its target is checked the
// same way from its own first component.  On false, `why` says which component failed.
bool trusted_path(const std::string &path, std::string *why);

// The SlurmUser this build was configured for (--with-slurm-user).
uid_t slurm_user_uid();

}  // namespace autotune::cli
