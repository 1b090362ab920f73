#include "cli.hpp"

#include "args.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "autotune/design.hpp"
#include "autotune/error.hpp"
#include "autotune/units.hpp"
#include "autotune_config.h"

#ifndef AUTOTUNE_SYSCONFDIR
#error "AUTOTUNE_SYSCONFDIR (the configure-time sysconfdir) must be defined"
#endif

namespace autotune::cli {

uid_t slurm_user_uid() {
  const char *name = AUTOTUNE_SLURM_USER;
  if (struct passwd *pw = getpwnam(name)) return pw->pw_uid;
  return 0;
}

std::string user_name(uid_t uid) {
  // Remembered: a listing of many classes names the same owners again and again, and each
  // getpwuid() may read the whole user database.
  static std::map<uid_t, std::string> known;
  if (auto it = known.find(uid); it != known.end()) return it->second;
  std::string name = std::to_string(uid);
  if (struct passwd *pw = getpwuid(uid)) name = pw->pw_name;
  if (known.size() < 65536) known.emplace(uid, name);
  return name;
}

uid_t resolve_user(const std::string &s) {
  if (s.empty()) throw_invalid("--user: empty user name");
  if (struct passwd *pw = getpwnam(s.c_str())) return pw->pw_uid;
  bool digits = true;
  for (char c : s) digits = digits && c >= '0' && c <= '9';
  if (digits) return static_cast<uid_t>(parse_int("--user", s, 0, 4294967294LL));
  throw_invalid("--user: no user named '" + s + "'");
}

std::string site_autotune_conf() { return AUTOTUNE_SYSCONFDIR "/autotune.conf"; }
std::string site_slurm_conf() { return AUTOTUNE_SYSCONFDIR "/slurm.conf"; }

Caller init_caller() {
  Caller c;
  c.uid = getuid();
  c.setuid = geteuid() != getuid() || getegid() != getgid();
  c.user = user_name(c.uid);
  c.privileged = c.uid == 0 || c.uid == slurm_user_uid();
  if (c.setuid) {
    // No core dump (or ptrace by the caller) of a process that holds SlurmUser's identity.
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    // Nothing of the caller's environment chooses a file: keep only the locale and the terminal
    // (glibc ignores locale and zone paths in a setuid process), and point libslurm, which
    // reads SLURM_CONF when it first needs its configuration, at the site's slurm.conf.
    std::vector<std::pair<std::string, std::string>> keep;
    for (const char *k : {"LANG", "LC_ALL", "TZ", "TERM"})
      if (const char *v = std::getenv(k)) keep.emplace_back(k, v);
    if (clearenv() != 0) throw Error(Errc::permission, "cannot clear the environment");
    for (const auto &[k, v] : keep) setenv(k.c_str(), v.c_str(), 1);
    setenv("PATH", "/usr/bin:/bin", 1);
    setenv("SLURM_CONF", site_slurm_conf().c_str(), 1);
    umask(077);
  }
  return c;
}

void drop_privileges(Caller &caller) {
  if (!caller.setuid) return;
  const uid_t uid = getuid(), euid = geteuid();
  const gid_t gid = getgid();
  auto fail = [](const std::string &what) {
    throw Error(Errc::permission, "cannot drop SlurmUser's privileges (" + what + ")");
  };
  if (setresgid(gid, gid, gid) != 0) fail(std::string("setresgid: ") + std::strerror(errno));
  if (setresuid(uid, uid, uid) != 0) fail(std::string("setresuid: ") + std::strerror(errno));
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (getresuid(&r, &e, &s) != 0 || getresgid(&rg, &eg, &sg) != 0) fail("getresuid");
  if (r != uid || e != uid || s != uid || rg != gid || eg != gid || sg != gid) fail("ids still differ");
  if (uid != 0 && euid != uid && (seteuid(euid) == 0 || setuid(euid) == 0)) fail("SlurmUser's uid could be regained");
  caller.setuid = false;
}

void enter_command(Caller &caller, Needs needs) {
  if (needs == Needs::nothing) drop_privileges(caller);
}

namespace {

// One component that must be trusted: owner root or SlurmUser, not writable by group or others
// (a sticky directory may be: nobody can replace what others own in it).
bool trusted_entry(const std::string &p, const struct stat &st, uid_t su, std::string *why) {
  if (st.st_uid != 0 && st.st_uid != su) {
    if (why)
      *why = p + (S_ISLNK(st.st_mode) ? " is a link" : " is") + " owned by uid " + std::to_string(st.st_uid) +
             ", not root or SlurmUser";
    return false;
  }
  if (S_ISLNK(st.st_mode)) return true;  // a link's own mode bits mean nothing
  const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_dir) {
    if (why) *why = p + " is writable by group or others";
    return false;
  }
  return true;
}

std::vector<std::string> components(const std::string &path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    if (slash > pos) out.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return out;
}

}  // namespace

bool trusted_path(const std::string &path, std::string *why) {
  if (path.empty() || path[0] != '/') {
    if (why) *why = "'" + path + "' is not an absolute path";
    return false;
  }
  const uid_t su = slurm_user_uid();
  struct stat st;
  if (lstat("/", &st) != 0) {
    if (why) *why = std::string("/: ") + std::strerror(errno);
    return false;
  }
  if (!trusted_entry("/", st, su, why)) return false;
  // `dir` is the resolved directory reached so far (no links in it, every component checked);
  // `todo` the components still to walk, in reverse order.
  std::string dir;  // "" stands for "/"
  std::vector<std::string> todo = components(path);
  std::reverse(todo.begin(), todo.end());
  int links = 0;
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (name == ".") continue;
    if (name == "..") {
      dir = dir.substr(0, dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
      continue;
    }
    const std::string p = dir + "/" + name;
    if (lstat(p.c_str(), &st) != 0) {
      if (why) *why = p + ": " + std::strerror(errno);
      return false;
    }
    if (!trusted_entry(p, st, su, why)) return false;
    if (S_ISLNK(st.st_mode)) {
      if (++links > 40) {
        if (why) *why = path + ": too many levels of symbolic links";
        return false;
      }
      char buf[4096];
      const ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
      if (n <= 0) {
        if (why) *why = p + ": unreadable link";
        return false;
      }
      buf[n] = 0;
      std::vector<std::string> target = components(buf);
      todo.insert(todo.end(), target.rbegin(), target.rend());
      if (buf[0] == '/') dir.clear();
      continue;
    }
    if (!todo.empty() && !S_ISDIR(st.st_mode)) {
      if (why) *why = p + " is not a directory";
      return false;
    }
    dir = p;
  }
  return true;
}

Conf load_conf(const Caller &caller) {
  std::string path = caller.setuid ? site_autotune_conf() : Conf::default_path(true);
  if (path.empty() || path[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd)) path = std::string(cwd) + "/" + path;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Conf::defaults();
    throw_io(path, errno);
  }
  if (!caller.setuid) return Conf::load(path);
  std::string why;
  if (!trusted_path(path, &why))
    throw Error(Errc::permission, path + ": not trusted while running setuid (" + why + ")");
  // access() asks with the real ids: what the caller may not read, an error does not show.
  const std::string withheld = path + ": not a valid autotune.conf (the details are not shown, as " + caller.user +
                               " may not read the file; run `autotune` as root or SlurmUser to see them)";
  try {
    return Conf::load(path);
  } catch (const Error &e) {
    if (access(path.c_str(), R_OK) == 0) throw;
    throw Error(e.code(), withheld);
  } catch (const std::exception &) {
    if (access(path.c_str(), R_OK) == 0) throw;
    throw Error(Errc::io, withheld);
  }
}

void require_site_slurm_conf(const Caller &caller) {
  if (!caller.setuid) return;
  const std::string path = site_slurm_conf();
  std::string why;
  if (!trusted_path(path, &why))
    throw Error(Errc::permission, path + ": not trusted while running setuid (" + why +
                                      "); a setuid autotune reads only this slurm.conf");
  if (access(path.c_str(), R_OK) != 0)
    throw Error(Errc::permission, path + ": not readable by " + caller.user + " (" + std::strerror(errno) + ")");
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

std::string history_owner(const HistoryUse &h) {
  return h.shared ? std::string("shared") : user_name(h.owner);
}

namespace {

// The time model (autotune.conf TimeModel): whether the class's last model step modelled the run
// times, with each configuration's known cost per second multiplied back (never with a warm start).
std::string time_model_text(const ClassExtra &cx, double gamma) {
  if (cx.time_model == TimeModel::no) return "";
  if (!cx.history.empty()) return ", scores modelled (with a warm start)";
  if (cx.time_model == TimeModel::yes) return ", run times modelled (TimeModel=yes)";
  // Whether the two models take turns (design.hpp): a class's space has numeric features only
  // (CandidateSet::from_candidates), so its gamma decides.
  const bool turns = cx.time_model == TimeModel::automatic && automatic_time_model_turns(gamma, false);
  const std::string rule = cx.time_model == TimeModel::better ? "better" : "auto";
  if (turns)
    return cx.time_modelled ? ", run times modelled (auto: by turns with the scores, or as they order the trials better)"
                            : ", scores modelled (auto: run times by turns, or once their model orders the trials better)";
  return cx.time_modelled ? ", run times modelled (" + rule + ": they order the trials better than the scores)"
                          : ", scores modelled (" + rule + ": run times once their model orders the trials better)";
}

}  // namespace

ClassModelText class_model_text(const ClassRecord &c, const ClassExtra &cx) {
  const bool warm = !cx.history.empty();
  const std::string at_gamma = " (auto at gamma " + num(c.settings.gamma);
  const std::string why = at_gamma + (warm ? " with a warm start)" : ")");
  const EngineOptions eo = cx.engine_options(c.settings.gamma);
  const bool linear = eo.effective_linear_trend();
  // The run times' model's own linear term (above gamma 0.75 below 1 under auto), where it can
  // propose: never with a warm start.
  const bool time_linear = eo.effective_time_linear_trend();
  const std::string time_text =
      cx.time_model != TimeModel::no && !warm && time_linear != linear
          ? std::string(", the run times' model ") + (time_linear ? "with" : "without") + " a linear term" +
                (cx.linear_trend == Trend::automatic ? why : "")
          : "";
  const double power = eo.effective_feasibility_power();
  // The run times' model's proposals, where it can propose (never with a warm start), may weigh
  // it more (at gamma 1 under auto: design.hpp, kTimeModelFeasibilityPower).
  const double time_power = cx.time_model != TimeModel::no && !warm ? eo.effective_feasibility_power(true) : power;
  auto weighted = [&](double k) {
    return " weighted by its chance of running to the power " + num(k) + at_gamma + ")";
  };
  const Explore e = cx.explore == Explore::automatic ? automatic_explore(c.settings.gamma, warm, linear) : cx.explore;
  ClassModelText v;
  v.model = std::string(kernel_name(cx.kernel)) + " kernel" + (cx.input_warping ? ", input warping" : "") +
            (linear ? ", linear term" : ", no linear term") + (cx.linear_trend == Trend::automatic ? why : "") +
            time_model_text(cx, c.settings.gamma) + time_text;
  // Automatic local search is on a share of the proposals (the cold choice over numeric features
  // outside Thompson sampling's band: design.hpp, kLocalShare).
  v.proposals = (e == Explore::none       ? std::string("expected improvement")
                 : e == Explore::thompson ? std::string("Thompson sampling")
                 : e == Explore::local && cx.explore == Explore::automatic
                     ? "expected improvement, local search near the best on " + num(kLocalShare) + " of the proposals"
                     : std::string(explore_name(e))) +
                (cx.explore == Explore::automatic ? why : "") +
                (power != 1 ? ", each" + weighted(power) : "") +
                (time_power != power ? ", the run times' model's each" + weighted(time_power) : "") +
                (cx.form_modelled ? "; the last by the run time's form (it orders the trials better)" : "");
  return v;
}

std::vector<std::string> warm_start_lines(const ClassExtra &cx) {
  std::vector<std::string> out;
  if (!cx.history.empty()) {
    std::string line = "warm start: informed by";
    for (std::size_t i = 0; i < cx.history.size(); ++i) {
      const auto &h = cx.history[i];
      line += (i ? ", " : " ") + history_owner(h) + "/" + h.name + " (weight " + num(h.weight, 2) + ")";
    }
    out.push_back(line + "; the class's own model: weight " + num(cx.own_weight.value_or(0), 2));
    if (cx.history_top_failed)
      out.push_back("warm start: the configuration those classes rank best among this class's trials "
                    "failed here, so they have no weight");
    if (cx.history_failure_trust.value_or(0) > 0)
      out.push_back("warm start: where those classes' runs failed is proposed less (trust in their failures " +
                    num(*cx.history_failure_trust, 2) + ")");
  }
  if (!cx.history_set_aside.empty()) {
    std::string line = "warm start: set aside";
    for (std::size_t i = 0; i < cx.history_set_aside.size(); ++i) {
      const auto &h = cx.history_set_aside[i];
      line += (i ? ", " : " ") + history_owner(h) + "/" + h.name;
    }
    out.push_back(line + ": they do not predict each other's measurements (coherence " +
                  num(cx.history_coherence.value_or(0), 2) + ", below " + num(kHistoryCoherenceMin, 2) + ")");
  }
  return out;
}

std::string failure_edge_line(const ClassExtra &cx) {
  if (!cx.failure_edge) return "";
  const EdgeUse &e = *cx.failure_edge;
  return "failures: configurations with " + e.feature + (e.below ? " at most " : " at least ") +
         num(e.value, 10) + " are proposed less: " + std::to_string(e.failures) + " failed trials lie there, " +
         (e.below ? "below" : "above") + " every successful one";
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
