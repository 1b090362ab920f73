#include "cli.hpp"

#include "args.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "autotune/error.hpp"
#include "autotune/units.hpp"
#include "autotune_config.h"

extern char **environ;

namespace autotune::cli {

uid_t slurm_user_uid() {
  const char *name = AUTOTUNE_SLURM_USER;
  if (struct passwd *pw = getpwnam(name)) return pw->pw_uid;
  return 0;
}

std::string user_name(uid_t uid) {
  if (struct passwd *pw = getpwuid(uid)) return pw->pw_name;
  return std::to_string(uid);
}

uid_t resolve_user(const std::string &s) {
  if (s.empty()) throw_invalid("--user: empty user name");
  if (struct passwd *pw = getpwnam(s.c_str())) return pw->pw_uid;
  bool digits = true;
  for (char c : s) digits = digits && c >= '0' && c <= '9';
  if (digits) return static_cast<uid_t>(parse_int("--user", s, 0, 4294967294LL));
  throw_invalid("--user: no user named '" + s + "'");
}

Caller init_caller() {
  Caller c;
  c.uid = getuid();
  c.setuid = geteuid() != getuid();
  c.user = user_name(c.uid);
  c.privileged = c.uid == 0 || c.uid == slurm_user_uid();
  if (c.setuid) {
    // Keep only what chooses the configuration (checked later) and the locale.
    std::vector<std::pair<std::string, std::string>> keep;
    for (const char *k : {"SLURM_CONF", "AUTOTUNE_CONF", "LANG", "LC_ALL", "TZ", "TERM"})
      if (const char *v = std::getenv(k)) keep.emplace_back(k, v);
    clearenv();
    for (const auto &[k, v] : keep) setenv(k.c_str(), v.c_str(), 1);
    setenv("PATH", "/usr/bin:/bin", 1);
    umask(077);
  }
  return c;
}

bool trusted_path(const std::string &path, std::string *why) {
  const uid_t su = slurm_user_uid();
  std::string p = path;
  while (!p.empty()) {
    struct stat st;
    if (lstat(p.c_str(), &st) != 0) {
      if (why) *why = p + ": " + std::strerror(errno);
      return false;
    }
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      const ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
      if (n < 0) {
        if (why) *why = p + ": unreadable link";
        return false;
      }
      buf[n] = 0;
      std::string target = buf[0] == '/' ? std::string(buf) : p.substr(0, p.rfind('/') + 1) + buf;
      if (st.st_uid != 0 && st.st_uid != su) {
        if (why) *why = p + " is a link owned by uid " + std::to_string(st.st_uid);
        return false;
      }
      return trusted_path(target, why);
    }
    if (st.st_uid != 0 && st.st_uid != su) {
      if (why) *why = p + " is owned by uid " + std::to_string(st.st_uid) + ", not root or SlurmUser";
      return false;
    }
    const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_dir) {
      if (why) *why = p + " is writable by group or others";
      return false;
    }
    if (p == "/") break;
    const size_t slash = p.rfind('/');
    p = slash == 0 ? "/" : p.substr(0, slash);
  }
  return true;
}

Conf load_conf(const Caller &caller) {
  std::string path = Conf::default_path(true);
  if (path.empty() || path[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd)) path = std::string(cwd) + "/" + path;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Conf::defaults();
    throw_io(path, errno);
  }
  if (caller.setuid) {
    std::string why;
    if (!trusted_path(path, &why))
      throw Error(Errc::permission, path + ": not trusted while running setuid (" + why + ")");
  }
  return Conf::load(path);
}

Store open_store(const Caller &caller, const Conf &conf, bool write, bool create) {
  const std::string path = Store::path_in(conf.core.state_dir);
  struct stat st;
  if (!create && ::stat(conf.core.state_dir.c_str(), &st) != 0 && errno == ENOENT)
    throw Error(Errc::not_found, path + ": there is no profile store yet (no autotune job has run; StateDir=" +
                                     conf.core.state_dir + ")");
  if (caller.setuid) {
    std::string why;
    if (!trusted_path(conf.core.state_dir, &why))
      throw Error(Errc::permission, conf.core.state_dir + ": not trusted while running setuid (" + why + ")");
  }
  try {
    return Store(path, {create, !write && !create, 5000});
  } catch (const Error &e) {
    if (e.code() == Errc::not_found && !create)
      throw Error(Errc::not_found, path + ": there is no profile store yet (no autotune job has run; StateDir=" +
                                       conf.core.state_dir + ")");
    throw;
  }
}

void require_privileged(const Caller &caller, const std::string &what) {
  if (!caller.privileged)
    throw Error(Errc::permission, what + " is for root and SlurmUser (" AUTOTUNE_SLURM_USER ") only");
}

ClassRecord find_class_for(Store &store, const Caller &caller, const std::string &name,
                           std::optional<uid_t> owner, bool for_writing) {
  if (owner && *owner != caller.uid && !caller.privileged)
    throw Error(Errc::permission, "--user: only root and SlurmUser may name another user's class");
  const uid_t who = owner.value_or(caller.uid);
  if (auto c = store.find_class(who, name)) return *c;
  if (!owner) {
    if (auto c = store.find_shared_class(name)) {
      if (for_writing && !caller.privileged)
        throw Error(Errc::permission, "class '" + name + "' is a shared class; only root and SlurmUser may change it");
      return *c;
    }
  }
  throw Error(Errc::not_found, "no class '" + name + "'" + (owner ? " of user " + user_name(*owner) : "") +
                                   "; `autotune status` lists " + (owner ? "them" : "your classes"));
}

NamedClass open_named_class(const Caller &caller, const Args &args, bool for_writing) {
  args.expect_positional(1, "CLASS");
  std::optional<uid_t> owner;
  if (auto u = args.value("user")) owner = resolve_user(*u);
  Conf conf = load_conf(caller);
  Store store = open_store(caller, conf, for_writing);
  ClassRecord c = find_class_for(store, caller, args.positional()[0], owner, for_writing);
  return NamedClass{std::move(conf), std::move(store), std::move(c)};
}

std::string format_table(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width;
  for (const auto &r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto &r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string num(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string timestamp(double t) {
  const time_t s = static_cast<time_t>(t);
  struct tm tm;
  localtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

}  // namespace autotune::cli
