// autotune admin: shared classes and the store itself.  Root and SlurmUser only.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <ctime>

#include "args.hpp"
#include "autotune/error.hpp"
#include "autotune/journal.hpp"
#include "autotune/log.hpp"
#include "autotune/names.hpp"
#include "autotune/units.hpp"
#include "commands.hpp"
#include "autotune_config.h"
#include "views.hpp"

namespace autotune::cli {

namespace {

const char kAdminUsage[] =
    "usage: autotune admin SUBCOMMAND [OPTIONS]   (root and SlurmUser only)\n\n"
    "  init                      create StateDir, the store and its incoming/ directory with\n"
    "                            the right owners and modes (idempotent)\n"
    "  create CLASS [--space SPEC] [--gamma G] [--budget N] [--mode jobs|steps]\n"
    "         [--metric time|throughput] [--allow-users]\n"
    "                            create a class shared by all users\n"
    "  allow CLASS yes|no        let ordinary users' jobs add measurements to a shared class\n"
    "  history CLASS [--user USER] yes|no\n"
    "                            offer a shared class's (or USER's class's) trials as history to\n"
    "                            every user's new classes of the same space and node types\n"
    "                            (warm start); no: only its owner's classes learn from it\n"
    "  forget CLASS [--user USER]  delete a shared class (or USER's class)\n"
    "  list                      every class of every user\n"
    "  nodes [NODE=SPEED ...]    the per-node speed scores learned from trials; with arguments,\n"
    "                            set them (1 = as fast as the median, below SlowNodeThreshold =\n"
    "                            left out of autotune jobs by select/autotune)\n"
    "  check                     the store's integrity check (SQLite's integrity_check and\n"
    "                            foreign_key_check): exit 0 when it is whole, 1 naming the damage;\n"
    "                            also says how many job ends wait in StateDir/spool\n"
    "  prune [--days D] [--keep-last N]\n"
    "                            remove finished trials that ended more than D days ago\n"
    "                            (TrialRetentionDays), keeping each class's best trial, its last\n"
    "                            N trials (TrialRetainLast) and the trials of a running search;\n"
    "                            ingest does the same at most once an hour when\n"
    "                            TrialRetentionDays is set\n";

// mkdir -p with an owner and a mode for the last component.
void make_dir(const std::string &path, uid_t uid, gid_t gid, mode_t mode) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    const std::string p = path.substr(0, i);
    if (::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) throw_io("cannot create " + p, errno);
  }
  if (::chown(path.c_str(), uid, gid) != 0) throw_io("cannot chown " + path, errno);
  if (::chmod(path.c_str(), mode) != 0) throw_io("cannot chmod " + path, errno);
}

int admin_init(const Caller &caller, const Conf &conf) {
  uid_t uid = slurm_user_uid();
  gid_t gid = 0;
  if (struct passwd *pw = getpwuid(uid)) gid = pw->pw_gid;
  if (getuid() != 0 && geteuid() != uid)
    throw Error(Errc::permission, "admin init must run as root or SlurmUser");
  make_dir(conf.core.state_dir, uid, gid, 0755);
  // Users leave their jobs' result files here for ingest, each in a directory of their own
  // (incoming/<uid>/, made by autotune-run): they may create entries but not list.
  make_dir(conf.core.state_dir + "/incoming", uid, gid, 01733);
  {
    Store store = open_store(caller, conf, true, true);
    const std::string path = store.path();
    if (::chown(path.c_str(), uid, gid) != 0) throw_io("cannot chown " + path, errno);
  }
  std::printf("store ready: %s (owner %s, mode 0600); results directory %s/incoming (mode 1733)\n",
              Store::path_in(conf.core.state_dir).c_str(), user_name(uid).c_str(), conf.core.state_dir.c_str());
  return 0;
}

}  // namespace

int cmd_admin(const Caller &caller, int argc, char **argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fputs(kAdminUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  require_privileged(caller, "autotune admin");
  const std::string sub = argv[1];
  const std::string prog = "autotune admin " + sub;
  const Conf conf = load_conf(caller);

  if (sub == "init") {
    Args a(argc - 2, argv + 2, {}, {}, prog);
    a.expect_positional(0, "");
    return admin_init(caller, conf);
  }
  if (sub == "create") {
    Args a(argc - 2, argv + 2, {"space", "gamma", "budget", "mode", "probe-batches", "metric"}, {"allow-users"},
           prog);
    a.expect_positional(1, "CLASS");
    const std::string name = a.positional()[0];
    validate_class_name(name, "CLASS");
    ClassSettings s;
    if (auto v = a.value("space")) s.space = *v;
    if (auto v = a.value("gamma")) s.gamma = parse_double("--gamma", *v, 0, 1);
    if (auto v = a.value("budget")) s.budget = static_cast<int>(parse_int("--budget", *v, 1, 10000));
    if (auto v = a.value("probe-batches")) s.probe_batches = static_cast<int>(parse_int("--probe-batches", *v, 1, 1000000));
    if (auto v = a.value("mode")) s.mode = parse_class_mode("--mode", *v);
    if (auto v = a.value("metric")) s.metric = parse_class_metric("--metric", *v);
    if (s.metric == ClassMetric::time && s.mode == ClassMode::steps)
      throw_invalid("--metric: 'time' measures a job's whole run; steps mode needs the program's throughput");
    Store store = open_store(caller, conf, true);
    if (store.find_shared_class(name)) throw_invalid("a shared class named '" + name + "' already exists");
    ClassRecord c = store.ensure_class(caller.uid, name, s, true, a.flag("allow-users"));
    std::printf("created shared class %s (gamma %s, budget %d, %s)\n", c.name.c_str(), num(c.settings.gamma).c_str(),
                c.settings.budget, c.allow_users ? "users' jobs add measurements" : "users' jobs only read it");
    return 0;
  }
  if (sub == "allow") {
    Args a(argc - 2, argv + 2, {}, {}, prog);
    a.expect_positional(2, "CLASS and yes|no");
    const bool allow = parse_bool("allow", a.positional()[1]);
    Store store = open_store(caller, conf, true);
    auto c = store.find_shared_class(a.positional()[0]);
    if (!c) throw Error(Errc::not_found, "no shared class '" + a.positional()[0] + "'; `autotune admin list` lists them");
    store.set_allow_users(c->id, allow);
    std::printf("shared class %s: users' jobs %s\n", c->name.c_str(), allow ? "add measurements" : "only read it");
    return 0;
  }
  if (sub == "history") {
    Args a(argc - 2, argv + 2, {"user"}, {}, prog);
    a.expect_positional(2, "CLASS and yes|no");
    const bool share = parse_bool("history", a.positional()[1]);
    Store store = open_store(caller, conf, true);
    std::optional<ClassRecord> c;
    if (auto u = a.value("user")) c = store.find_class(resolve_user(*u), a.positional()[0]);
    else c = store.find_shared_class(a.positional()[0]);
    if (!c) throw Error(Errc::not_found, "no such class '" + a.positional()[0] + "'; `autotune admin list` lists them");
    store.set_history_shared(c->id, share);
    std::printf("class %s (%s): %s\n", c->name.c_str(), c->shared ? "shared" : user_name(c->owner).c_str(),
                share ? "history for every user's classes of the same space and node types"
                      : "history for its owner's classes only");
    return 0;
  }
  if (sub == "forget") {
    Args a(argc - 2, argv + 2, {"user"}, {}, prog);
    a.expect_positional(1, "CLASS");
    Store store = open_store(caller, conf, true);
    std::optional<ClassRecord> c;
    if (auto u = a.value("user")) c = store.find_class(resolve_user(*u), a.positional()[0]);
    else c = store.find_shared_class(a.positional()[0]);
    if (!c) throw Error(Errc::not_found, "no such class '" + a.positional()[0] + "'; `autotune admin list` lists them");
    const size_t n = store.trials(c->id).size();
    store.forget_class(c->owner, c->name);
    std::printf("forgot class %s (%s, %zu trials)\n", c->name.c_str(), c->shared ? "shared" : user_name(c->owner).c_str(), n);
    return 0;
  }
  if (sub == "list") {
    Args a(argc - 2, argv + 2, {}, {}, prog);
    a.expect_positional(0, "");
    Store store = open_store(caller, conf, false);
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"CLASS", "OWNER", "STATE", "TRIALS", "BEST CONFIGURATION", "SCORE", "STOPPED BY"});
    for (const auto &c : store.list_classes())
      rows.push_back(status_row(summary_view(store, c), function_of(store, c)));
    std::fputs(format_table(rows).c_str(), stdout);
    return 0;
  }
  if (sub == "nodes") {
    Args a(argc - 2, argv + 2, {}, {}, prog);
    if (!a.positional().empty()) {
      Store store = open_store(caller, conf, true);
      for (const auto &kv : a.positional()) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) throw_invalid("'" + kv + "' is not NODE=SPEED");
        const std::string node = kv.substr(0, eq);
        for (char ch : node)
          if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.')
            throw_invalid("'" + node + "' is not a node name");
        store.update_node_speed(node, parse_double("SPEED of " + node, kv.substr(eq + 1), 0, 2), 1.0);
        std::printf("node %s: speed %s\n", node.c_str(), kv.substr(eq + 1).c_str());
      }
      return 0;
    }
    Store store = open_store(caller, conf, false);
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"NODE", "SPEED", "TRIALS", "UPDATED"});
    for (const auto &n : store.node_speeds())
      rows.push_back({log_escape(n.node), num(n.score, 3), std::to_string(n.samples), timestamp(n.updated)});
    std::fputs(format_table(rows).c_str(), stdout);
    return 0;
  }
  if (sub == "prune") {
    Args a(argc - 2, argv + 2, {"days", "keep-last"}, {}, prog);
    a.expect_positional(0, "");
    const double now = static_cast<double>(::time(nullptr));
    int days = conf.tuner.trial_retention_days;
    if (auto v = a.value("days")) days = static_cast<int>(parse_int("--days", *v, 1, 36500));
    if (days <= 0)
      throw_invalid("prune: no retention: set TrialRetentionDays in autotune.conf or give --days D (1-36500)");
    PrunePolicy p;
    p.ended_before = now - 86400.0 * days;
    p.keep_last = conf.tuner.trial_retain_last;
    if (auto v = a.value("keep-last")) p.keep_last = static_cast<int>(parse_int("--keep-last", *v, 1, 1000000));
    Store store = open_store(caller, conf, true);
    const PruneResult r = store.prune_trials(p);
    std::printf("pruned %zu trials of %zu classes (finished more than %d days ago; kept each class's best, its last %d "
                "trials and the trials of a running search)\n",
                r.trials, r.classes, days, p.keep_last);
    return 0;
  }
  if (sub == "check") {
    Args a(argc - 2, argv + 2, {}, {}, prog);
    a.expect_positional(0, "");
    const std::string path = Store::path_in(conf.core.state_dir);
    const char *remedy =
        "restore it from a backup, or move it aside (with its -wal and -shm files) and run `autotune admin init` for "
        "an empty store; until then autotune jobs run untuned";
    // Job ends that wait for ingest (the store was locked, full or damaged when they came).
    const std::string spool = spool_dir(conf.core.state_dir);
    const std::vector<std::string> waiting = list_job_ends(spool);
    if (!waiting.empty()) {
      const time_t since = static_cast<time_t>(std::stoll(waiting.front().substr(0, 20)) / 1000000000LL);
      struct tm tm;
      char when[32];
      localtime_r(&since, &tm);
      std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
      std::printf("%s: %zu job end(s) wait to be recorded, the oldest since %s (ingest.log says why)\n",
                  spool.c_str(), waiting.size(), when);
    }
    std::string r;
    try {
      Store store = open_store(caller, conf, false);
      r = store.integrity_check();
      if (r == "ok") {
        std::printf("%s: schema version %d, %zu classes, integrity ok\n", store.path().c_str(), store.schema_version(),
                    store.list_classes().size());
        return 0;
      }
    } catch (const Error &e) {
      if (e.code() != Errc::corrupt) throw;
      r = e.what();
    }
    std::printf("%s: damaged: %s\n%s: %s\n", path.c_str(), r.c_str(), path.c_str(), remedy);
    return 1;
  }
  throw_invalid("unknown admin subcommand '" + sub + "'; see `autotune admin --help'");
}

}  // namespace autotune::cli
