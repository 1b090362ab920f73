// autotune-bb: the burst buffers of Slurm jobs on this node's storage tiers (autotune.conf's
// Tier= lines).  Run as root by etc/burst_buffer.lua (create, stage-in, stage-out, destroy,
// pools, status) and by jobs as their own user (put, get, ls, rm, status).  See
// man/autotune-bb.1.
//
// Trust: when root works on a job's buffer it first becomes the job's user (uid, gid and that
// user's groups), so every file is read, written and created with the user's rights and never
// with root's.  The owner and the size of a buffer come from the root-owned registry
// (JobBuffers), never from files the user can write.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/job_buffer.hpp"
#include "autotune/log.hpp"
#include "autotune/tier.hpp"
#include "autotune/units.hpp"

using namespace autotune;

namespace {

const char kUsage[] =
    "usage: autotune-bb [--conf FILE] COMMAND [OPTIONS] [ARGUMENTS]\n"
    "\n"
    "Burst buffers of Slurm jobs on the storage tiers of autotune.conf.  A job's buffer is a\n"
    "tier store of its own: each object is split across persistent memory and disk.\n"
    "\n"
    "Commands for burst_buffer.lua (as root):\n"
    "  create --job ID --uid UID --gid GID --capacity SIZE [--pmem SIZE] [--tier NAME=SIZE]...\n"
    "         [--placement bandwidth-proportional|fill-fastest]\n"
    "                       grant job ID a buffer of SIZE (K, M, G, T); --pmem sets how much of\n"
    "                       it is on the pmem tier (default: in proportion to tier capacities);\n"
    "                       its directories belong to UID:GID, mode 0700\n"
    "  destroy --job ID     remove the buffer and everything in it\n"
    "  stage-in --job ID SOURCE KEY\n"
    "                       copy the file SOURCE (an absolute path) into the buffer as object\n"
    "                       KEY, reading it as the job's user; with KEY ending in '/', copy\n"
    "                       every file under the directory SOURCE as KEY<relative path>\n"
    "  stage-out --job ID KEY DEST\n"
    "                       copy object KEY to the file DEST (an absolute path), writing it as\n"
    "                       the job's user (mode 0600, replaced atomically); with KEY ending in\n"
    "                       '/', copy every object under KEY, in key order, into the directory\n"
    "                       DEST (created 0700) as DEST/<rest of the key>\n"
    "  pools                the pool of Slurm's burst_buffer/lua, as JSON\n"
    "Commands inside a job (as its user; --job defaults to $AUTOTUNE_BB_JOB, else $SLURM_JOB_ID):\n"
    "  put FILE KEY         store FILE as object KEY\n"
    "  get KEY FILE|-       write object KEY to FILE (or standard output)\n"
    "  ls [PREFIX]          list objects: key, size, bytes per tier\n"
    "  rm KEY               remove object KEY\n"
    "  status [--job ID]    tiers and buffers; with --job, the buffer's usage per tier\n"
    "\n"
    "Options:\n"
    "  --conf FILE          autotune.conf (default: $AUTOTUNE_CONF, else beside $SLURM_CONF,\n"
    "                       else /etc/slurm/autotune.conf)\n"
    "  -h, --help           this text\n"
    "\n"
    "Keys are 1-200 characters from A-Z a-z 0-9 . _ - and '/' between components (no '.' or\n"
    "'..' component).  Errors are one line on standard error and a non-zero exit status.\n";

// A usage error (exit 2) as opposed to a failure of the operation (exit 1).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::string conf;
  std::string command;
  std::map<std::string, std::vector<std::string>> opts;
  std::vector<std::string> pos;

  bool has(const std::string &k) const { return opts.count(k) > 0; }
  std::string one(const std::string &k) const {
    auto it = opts.find(k);
    if (it == opts.end()) throw UsageError(command + ": " + k + " is required");
    if (it->second.size() > 1) throw UsageError(command + ": " + k + " is given twice");
    return it->second[0];
  }
  std::optional<std::string> maybe(const std::string &k) const {
    if (!has(k)) return std::nullopt;
    return one(k);
  }
};

// Options each command takes (all take a value).
const std::map<std::string, std::vector<std::string>> kCommandOptions = {
    {"create", {"--job", "--uid", "--gid", "--capacity", "--pmem", "--tier", "--placement"}},
    {"destroy", {"--job"}},
    {"stage-in", {"--job"}},
    {"stage-out", {"--job"}},
    {"pools", {}},
    {"status", {"--job"}},
    {"put", {"--job"}},
    {"get", {"--job"}},
    {"ls", {"--job"}},
    {"rm", {"--job"}},
};
const std::map<std::string, std::pair<size_t, size_t>> kPositional = {
    {"create", {0, 0}}, {"destroy", {0, 0}}, {"stage-in", {2, 2}}, {"stage-out", {2, 2}},
    {"pools", {0, 0}},  {"status", {0, 0}},  {"put", {2, 2}},      {"get", {2, 2}},
    {"ls", {0, 1}},     {"rm", {1, 1}},
};

Args parse_args(int argc, char **argv) {
  Args a;
  int i = 1;
  for (; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "-h" || s == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (s == "--conf" || s.rfind("--conf=", 0) == 0) {
      if (s == "--conf") {
        if (i + 1 >= argc) throw UsageError("--conf needs a file");
        a.conf = argv[++i];
      } else {
        a.conf = s.substr(7);
      }
      continue;
    }
    if (!s.empty() && s[0] == '-') throw UsageError("unknown option '" + s + "' (see --help)");
    a.command = s;
    ++i;
    break;
  }
  if (a.command.empty()) throw UsageError("no command given (see --help)");
  auto allowed = kCommandOptions.find(a.command);
  if (allowed == kCommandOptions.end())
    throw UsageError("unknown command '" + a.command +
                     "'; allowed: create, destroy, stage-in, stage-out, pools, status, put, get, "
                     "ls, rm");
  bool only_positional = false;
  for (; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "-h" || s == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (!only_positional && s == "--") {
      only_positional = true;
      continue;
    }
    if (!only_positional && s.size() > 2 && s.compare(0, 2, "--") == 0) {
      std::string key = s, value;
      const size_t eq = s.find('=');
      bool have_value = false;
      if (eq != std::string::npos) {
        key = s.substr(0, eq);
        value = s.substr(eq + 1);
        have_value = true;
      }
      const auto &ok = allowed->second;
      if (std::find(ok.begin(), ok.end(), key) == ok.end())
        throw UsageError(a.command + ": unknown option '" + key + "' (see --help)");
      if (!have_value) {
        if (i + 1 >= argc) throw UsageError(a.command + ": " + key + " needs a value");
        value = argv[++i];
      }
      a.opts[key].push_back(value);
      continue;
    }
    a.pos.push_back(s);
  }
  const auto [lo, hi] = kPositional.at(a.command);
  if (a.pos.size() < lo || a.pos.size() > hi)
    throw UsageError(
        a.command + ": expected " +
        (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
        " argument" + (hi == 1 ? "" : "s") + ", got " + std::to_string(a.pos.size()) +
        " (see --help)");
  return a;
}

std::uint32_t job_of(const Args &a) {
  if (auto v = a.maybe("--job"))
    return static_cast<std::uint32_t>(parse_int("--job", *v, 1, 4294967294LL));
  const std::uint32_t j = current_job_id();
  if (j == 0) throw UsageError(a.command + ": --job is required outside a job");
  return j;
}

Conf load_conf(const Args &a) { return Conf::load(a.conf.empty() ? Conf::default_path() : a.conf); }

// The sections of a (fully checked) autotune.conf that job buffers use.
TierSiteConf tier_site(const Conf &c) { return {c.path, c.core, c.tier}; }

std::string absolute_path(const std::string &field, const std::string &p) {
  if (p.empty() || p[0] != '/') throw_invalid(field + ": '" + p + "' is not an absolute path");
  for (char c : p)
    if (static_cast<unsigned char>(c) < 0x20)
      throw_invalid(field + ": '" + p + "' contains a control character");
  return p;
}

// Become the buffer's owner (uid, gid and the user's groups) when running as root.  A process
// that is not root must already be the owner.  Irreversible.
void become_owner(const JobBuffer &b) {
  ::umask(077);  // what is created in the buffer or staged out is private to its owner
  const uid_t me = ::geteuid();
  if (me != 0) {
    if (me != b.uid)
      throw Error(Errc::permission, "the burst buffer of job " + std::to_string(b.job) +
                                        " belongs to uid " + std::to_string(b.uid) +
                                        ", not to you (uid " + std::to_string(me) + ")");
    return;
  }
  if (b.uid == 0) return;
  errno = 0;
  const struct passwd *pw = ::getpwuid(b.uid);
  int rc = pw ? ::initgroups(pw->pw_name, b.gid) : ::setgroups(1, &b.gid);
  if (rc != 0) throw_io("setting the groups of uid " + std::to_string(b.uid), errno);
  if (::setresgid(b.gid, b.gid, b.gid) != 0) throw_io("setresgid " + std::to_string(b.gid), errno);
  if (::setresuid(b.uid, b.uid, b.uid) != 0) throw_io("setresuid " + std::to_string(b.uid), errno);
  if (::setuid(0) == 0) throw Error(Errc::internal, "could not drop root privileges");
}

// An owning read-only view of a whole file.
struct MappedFile {
  int fd = -1;
  void *addr = nullptr;
  std::size_t size = 0;
  ~MappedFile() {
    if (addr && addr != MAP_FAILED) ::munmap(addr, size);
    if (fd >= 0) ::close(fd);
  }
};

void open_source(MappedFile &m, const std::string &field, const std::string &path,
                 const JobBuffer *b) {
  m.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (m.fd < 0) {
    const int e = errno;
    std::string who = b ? " as uid " + std::to_string(::geteuid()) + " (the job's user)" : "";
    throw Error(e == EACCES || e == EPERM ? Errc::permission
                : e == ENOENT             ? Errc::not_found
                                          : Errc::io,
                field + ": cannot read '" + path + "'" + who + ": " + std::strerror(e));
  }
  struct stat st;
  if (::fstat(m.fd, &st) != 0) throw_io(path, errno);
  if (S_ISDIR(st.st_mode))
    throw_invalid(field + ": '" + path +
                  "' is a directory; stage a directory into a KEY ending in '/'");
  if (!S_ISREG(st.st_mode)) throw_invalid(field + ": '" + path + "' is not a regular file");
  m.size = static_cast<std::size_t>(st.st_size);
  if (m.size) {
    m.addr = ::mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, m.fd, 0);
    if (m.addr == MAP_FAILED) throw_io(path + ": mmap", errno);
    ::madvise(m.addr, m.size, MADV_SEQUENTIAL);
  }
}

// Write object `key` to `dest` through a temporary file beside it, renamed over `dest`.
void write_object_to_file(TierStore &s, const std::string &key, const std::string &field,
                          const std::string &dest) {
  struct stat st;
  if (::stat(dest.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw_invalid(field + ": '" + dest + "' is a directory; give the file name");
  const ObjectInfo info = s.stat(key);
  const std::string tmp = dest + ".autotune-bb." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    throw Error(e == EACCES || e == EPERM ? Errc::permission
                : e == ENOENT             ? Errc::not_found
                                          : Errc::io,
                field + ": cannot write '" + dest + "' as uid " + std::to_string(::geteuid()) +
                    ": " + std::strerror(e));
  }
  try {
    if (info.size) {
      if (::ftruncate(fd, static_cast<off_t>(info.size)) != 0) throw_io(tmp + ": ftruncate", errno);
      void *p = ::mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) throw_io(tmp + ": mmap", errno);
      try {
        s.get_into(key, p, info.size);
      } catch (...) {
        ::munmap(p, info.size);
        throw;
      }
      ::munmap(p, info.size);
    }
    if (::fsync(fd) != 0) throw_io(tmp + ": fsync", errno);
    ::close(fd);
    if (::rename(tmp.c_str(), dest.c_str()) != 0) throw_io(dest + ": rename", errno);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
}

std::string human(std::uint64_t b) {
  char buf[32];
  const char *u[] = {"B", "K", "M", "G", "T"};
  double v = static_cast<double>(b);
  int i = 0;
  while (v >= 1024 && i < 4) {
    v /= 1024;
    ++i;
  }
  if (i == 0)
    std::snprintf(buf, sizeof buf, "%" PRIu64 "B", b);
  else
    std::snprintf(buf, sizeof buf, "%.*f%s", v < 10 ? 2 : v < 100 ? 1 : 0, v, u[i]);
  return buf;
}

std::string bandwidth_text(std::uint64_t bw) { return bw ? human(bw) + "/s" : "measured"; }

// ---- commands --------------------------------------------------------------------------------

int cmd_create(const Args &a) {
  if (::geteuid() != 0)
    throw Error(Errc::permission,
                "create: must run as root (burst_buffer.lua runs it in slurmctld)");
  JobBufferRequest r;
  r.job = static_cast<std::uint32_t>(parse_int("--job", a.one("--job"), 1, 4294967294LL));
  r.uid = static_cast<uid_t>(parse_int("--uid", a.one("--uid"), 0, 4294967294LL));
  r.gid = static_cast<gid_t>(parse_int("--gid", a.one("--gid"), 0, 4294967294LL));
  r.capacity = parse_size("--capacity", a.one("--capacity"), 'B');
  if (auto p = a.maybe("--pmem")) r.pmem = parse_size("--pmem", *p, 'B');
  if (a.has("--tier"))
    for (const auto &t : a.opts.at("--tier")) {
      const size_t eq = t.find('=');
      if (eq == std::string::npos || eq == 0)
        throw_invalid("--tier: '" + t + "' is not NAME=SIZE (e.g. --tier disk=4G)");
      r.tiers.push_back(
          {t.substr(0, eq), parse_size("--tier " + t.substr(0, eq), t.substr(eq + 1), 'B')});
    }
  if (auto p = a.maybe("--placement")) r.placement = parse_placement("--placement", *p);
  JobBuffers jb(tier_site(load_conf(a)));
  const bool existed = jb.find(r.job).has_value();
  const JobBuffer b = jb.create(r);
  if (!existed) {
    // Lay the store out as the owner (pool, metadata), in a child that gives up root; undo the
    // grant if that fails.
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw_io("fork", errno);
    if (pid == 0) {
      try {
        become_owner(b);
        TierStore s(jb.store_options(b));
        ::_exit(0);
      } catch (const std::exception &e) {
        std::fprintf(stderr, "autotune-bb: create: job %u: %s\n", b.job, e.what());
        ::_exit(1);
      }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      jb.destroy(b.job);
      return 1;
    }
  }
  std::printf("job %u: buffer of %s (", b.job, format_size(b.capacity()).c_str());
  for (size_t i = 0; i < b.shares.size(); ++i)
    std::printf("%s%s %s", i ? ", " : "", b.shares[i].tier.c_str(),
                format_size(b.shares[i].bytes).c_str());
  std::printf("), owner %u:%u, %s\n", static_cast<unsigned>(b.uid), static_cast<unsigned>(b.gid),
              placement_name(b.placement));
  return 0;
}

int cmd_destroy(const Args &a) {
  if (::geteuid() != 0) throw Error(Errc::permission, "destroy: must run as root");
  const std::uint32_t job = job_of(a);
  JobBuffers jb(tier_site(load_conf(a)));
  const bool had = jb.destroy(job);
  std::printf("job %u: %s\n", job, had ? "buffer destroyed" : "no buffer (nothing to do)");
  return 0;
}

// The job's buffer record and store options, read as root before becoming the owner.
struct Opened {
  JobBuffer buffer;
  TierStoreOptions options;
};

Opened find_buffer(const Args &a) {
  const std::uint32_t job = job_of(a);
  JobBuffers jb(tier_site(load_conf(a)));
  auto b = jb.find(job);
  if (!b) throw Error(Errc::not_found, "job " + std::to_string(job) + " has no burst buffer");
  return {*b, jb.store_options(*b)};
}

// A key naming every object under it ("ckpt/"): validates it without its '/'.  False for a plain
// key (validated too).
bool prefix_key(const std::string &field, const std::string &key) {
  const bool dir = !key.empty() && key.back() == '/';
  validate_tier_key(dir ? key.substr(0, key.size() - 1) : key, field);
  return dir;
}

// Creates `dir` (mode 0700) when missing, as the current user; it must be a directory.
void make_dir(const std::string &field, const std::string &dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) return;
  const int e = errno;
  struct stat st;
  if (e == EEXIST && ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
  if (e == EEXIST) throw_invalid(field + ": '" + dir + "' exists and is not a directory");
  throw Error(e == EACCES || e == EPERM ? Errc::permission
              : e == ENOENT             ? Errc::not_found
                                        : Errc::io,
              field + ": cannot create the directory '" + dir + "' as uid " +
                  std::to_string(::geteuid()) + ": " + std::strerror(e));
}

// The regular files under `dir`, relative to it, sorted; symbolic links and special files are
// refused (naming them), subdirectories are walked.
void files_under(const std::string &field, const std::string &dir, const std::string &rel,
                 std::vector<std::string> &out) {
  const std::string path = rel.empty() ? dir : dir + "/" + rel;
  DIR *d = ::opendir(path.c_str());
  if (!d) {
    const int e = errno;
    throw Error(e == EACCES || e == EPERM ? Errc::permission
                : e == ENOENT             ? Errc::not_found
                                          : Errc::io,
                field + ": cannot read the directory '" + path + "' as uid " +
                    std::to_string(::geteuid()) + ": " + std::strerror(e));
  }
  std::vector<std::string> names;
  while (const dirent *e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto &n : names) {
    const std::string r = rel.empty() ? n : rel + "/" + n;
    struct stat st;
    if (::lstat((dir + "/" + r).c_str(), &st) != 0) throw_io(dir + "/" + r, errno);
    if (S_ISDIR(st.st_mode))
      files_under(field, dir, r, out);
    else if (S_ISREG(st.st_mode))
      out.push_back(r);
    else
      throw_invalid(field + ": '" + dir + "/" + r +
                    "' is not a regular file or a directory (symbolic links are not followed)");
  }
}

int stage_in_dir(const Args &a, const std::string &src, const std::string &prefix) {
  Opened o = find_buffer(a);
  become_owner(o.buffer);
  struct stat st;
  if (::stat(src.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    const int e = errno;
    if (::stat(src.c_str(), &st) == 0)
      throw_invalid("stage-in SOURCE: '" + src + "' is not a directory (the KEY '" + prefix +
                    "' ends in '/')");
    throw Error(e == EACCES || e == EPERM ? Errc::permission
                : e == ENOENT             ? Errc::not_found
                                          : Errc::io,
                "stage-in SOURCE: cannot read '" + src + "' as uid " + std::to_string(::geteuid()) +
                    " (the job's user): " + std::strerror(e));
  }
  std::vector<std::string> files;
  files_under("stage-in SOURCE", src, "", files);
  for (const auto &f : files) validate_tier_key(prefix + f, "stage-in SOURCE file '" + f + "'");
  TierStore s(o.options);
  std::uint64_t bytes = 0;
  for (const auto &f : files) {
    MappedFile m;
    open_source(m, "stage-in SOURCE", src + "/" + f, &o.buffer);
    bytes += s.put(prefix + f, m.addr, m.size).size;
  }
  std::printf("job %u: staged in %s as '%s' (%zu objects, %s)\n", o.buffer.job, src.c_str(),
              prefix.c_str(), files.size(), human(bytes).c_str());
  return 0;
}

int stage_out_dir(const Args &a, const std::string &prefix, const std::string &dest) {
  Opened o = find_buffer(a);
  become_owner(o.buffer);
  TierStore s(o.options);
  const auto objects = s.list(prefix);  // sorted by key
  if (objects.empty())
    throw Error(Errc::not_found, "stage-out KEY: no object under '" + prefix +
                                     "' in the buffer of job " + std::to_string(o.buffer.job));
  make_dir("stage-out DEST", dest);
  std::uint64_t bytes = 0;
  for (const auto &obj : objects) {
    const std::string rel = obj.key.substr(prefix.size());
    for (std::size_t at = rel.find('/'); at != std::string::npos; at = rel.find('/', at + 1))
      make_dir("stage-out DEST", dest + "/" + rel.substr(0, at));
    write_object_to_file(s, obj.key, "stage-out DEST", dest + "/" + rel);
    bytes += obj.size;
  }
  std::printf("job %u: staged out '%s' to %s (%zu objects, %s)\n", o.buffer.job, prefix.c_str(),
              dest.c_str(), objects.size(), human(bytes).c_str());
  return 0;
}

int cmd_stage_in(const Args &a) {
  const std::string src = absolute_path("stage-in SOURCE", a.pos[0]);
  if (prefix_key("stage-in KEY", a.pos[1])) return stage_in_dir(a, src, a.pos[1]);
  Opened o = find_buffer(a);
  become_owner(o.buffer);
  MappedFile m;
  open_source(m, "stage-in SOURCE", src, &o.buffer);
  TierStore s(o.options);
  const ObjectInfo info = s.put(a.pos[1], m.addr, m.size);
  std::printf("job %u: staged in %s as '%s' (%s", o.buffer.job, src.c_str(), info.key.c_str(),
              human(info.size).c_str());
  for (const auto &p : info.pieces)
    std::printf(", %s on %s", human(p.length).c_str(), p.tier.c_str());
  std::printf(")\n");
  return 0;
}

int cmd_stage_out(const Args &a) {
  const bool dir = prefix_key("stage-out KEY", a.pos[0]);
  const std::string dest = absolute_path("stage-out DEST", a.pos[1]);
  if (dir) return stage_out_dir(a, a.pos[0], dest);
  Opened o = find_buffer(a);
  become_owner(o.buffer);
  TierStore s(o.options);
  if (!s.exists(a.pos[0]))
    throw Error(Errc::not_found, "stage-out KEY: no object '" + a.pos[0] +
                                     "' in the buffer of job " + std::to_string(o.buffer.job));
  write_object_to_file(s, a.pos[0], "stage-out DEST", dest);
  std::printf("job %u: staged out '%s' to %s\n", o.buffer.job, a.pos[0].c_str(), dest.c_str());
  return 0;
}

int cmd_pools(const Args &a) {
  const Conf c = load_conf(a);
  JobBuffers jb(tier_site(c));  // refuses a configuration without tiers
  std::uint64_t total = 0;
  for (const auto &t : c.tier.tiers) total += t.capacity;
  // Slurm counts a pool in units of its granularity (1M): quantity * granularity bytes.
  std::printf("{\"pools\":[{\"id\":\"autotune\",\"quantity\":%" PRIu64 ",\"granularity\":%d}]}\n",
              total >> 20, 1 << 20);
  return 0;
}

int cmd_put(const Args &a) {
  validate_tier_key(a.pos[1], "put KEY");
  Opened o = find_buffer(a);
  become_owner(o.buffer);
  MappedFile m;
  open_source(m, "put FILE", a.pos[0], nullptr);
  TierStore s(o.options);
  s.put(a.pos[1], m.addr, m.size);
  return 0;
}

int cmd_get(const Args &a) {
  validate_tier_key(a.pos[0], "get KEY");
  Opened o = find_buffer(a);
  become_owner(o.buffer);
  TierStore s(o.options);
  if (!s.exists(a.pos[0]))
    throw Error(Errc::not_found, "get KEY: no object '" + a.pos[0] + "' in the buffer of job " +
                                     std::to_string(o.buffer.job));
  if (a.pos[1] == "-") {
    const auto v = s.get(a.pos[0]);
    if (!v.empty() && std::fwrite(v.data(), 1, v.size(), stdout) != v.size())
      throw_io("standard output", errno);
    if (std::fflush(stdout) != 0) throw_io("standard output", errno);
    return 0;
  }
  std::string dest = a.pos[1];
  if (dest[0] != '/') {
    char cwd[4096];
    if (!::getcwd(cwd, sizeof cwd)) throw_io("getcwd", errno);
    dest = std::string(cwd) + "/" + dest;
  }
  write_object_to_file(s, a.pos[0], "get FILE", dest);
  return 0;
}

int cmd_ls(const Args &a) {
  const std::string prefix = a.pos.empty() ? "" : a.pos[0];
  Opened o = find_buffer(a);
  become_owner(o.buffer);
  TierStore s(o.options);
  for (const auto &obj : s.list(prefix)) {
    std::printf("%s\t%" PRIu64, obj.key.c_str(), obj.size);
    for (const auto &t : o.options.tiers)
      std::printf("\t%s=%" PRIu64, t.name.c_str(), obj.bytes_on(t.name));
    std::printf("\n");
  }
  return 0;
}

int cmd_rm(const Args &a) {
  validate_tier_key(a.pos[0], "rm KEY");
  Opened o = find_buffer(a);
  become_owner(o.buffer);
  TierStore s(o.options);
  if (!s.remove(a.pos[0]))
    throw Error(Errc::not_found, "rm: no object '" + a.pos[0] + "' in the buffer of job " +
                                     std::to_string(o.buffer.job));
  return 0;
}

int cmd_status(const Args &a) {
  if (a.has("--job") || (::geteuid() != 0 && current_job_id() != 0)) {
    Opened o = find_buffer(a);
    std::printf("job %u  owner %u:%u  capacity %s  placement %s\n", o.buffer.job,
                static_cast<unsigned>(o.buffer.uid), static_cast<unsigned>(o.buffer.gid),
                human(o.buffer.capacity()).c_str(), placement_name(o.buffer.placement));
    become_owner(o.buffer);
    TierStore s(o.options);
    std::printf("%-10s %-5s %9s %9s %9s %8s %12s  %s\n", "TIER", "KIND", "SIZE", "USED", "FREE",
                "OBJECTS", "BANDWIDTH", "MEDIA");
    for (const auto &u : s.usage())
      std::printf("%-10s %-5s %9s %9s %9s %8" PRIu64 " %12s  %s\n", u.name.c_str(),
                  tier_kind_name(u.kind), human(u.capacity).c_str(), human(u.used).c_str(),
                  human(u.free).c_str(), u.objects,
                  (human(static_cast<std::uint64_t>(u.bandwidth)) + "/s").c_str(), u.media.c_str());
    return 0;
  }
  const Conf c = load_conf(a);
  JobBuffers jb(tier_site(c));
  const auto com = jb.commitments();
  std::printf("%-10s %-5s %9s %9s %12s  %s\n", "TIER", "KIND", "SIZE", "GRANTED", "BANDWIDTH",
              "PATH");
  for (size_t i = 0; i < c.tier.tiers.size(); ++i) {
    const auto &t = c.tier.tiers[i];
    std::printf("%-10s %-5s %9s %9s %12s  %s\n", t.name.c_str(), tier_kind_name(t.kind),
                human(t.capacity).c_str(), human(com[i].committed).c_str(),
                bandwidth_text(t.bandwidth).c_str(), t.path.c_str());
  }
  const auto all = jb.list();
  std::printf("\n%zu buffer%s\n", all.size(), all.size() == 1 ? "" : "s");
  for (const auto &b : all) {
    std::printf("job %-8u owner %u:%u  %s (", b.job, static_cast<unsigned>(b.uid),
                static_cast<unsigned>(b.gid), human(b.capacity()).c_str());
    for (size_t i = 0; i < b.shares.size(); ++i)
      std::printf("%s%s %s", i ? ", " : "", b.shares[i].tier.c_str(),
                  human(b.shares[i].bytes).c_str());
    std::printf(")  %s\n", placement_name(b.placement));
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  set_stderr_log_sink("autotune-bb", LogLevel::info);
  Args a;
  try {
    a = parse_args(argc, argv);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "autotune-bb: %s\n", e.what());
    return 2;
  }
  try {
    if (a.command == "create") return cmd_create(a);
    if (a.command == "destroy") return cmd_destroy(a);
    if (a.command == "stage-in") return cmd_stage_in(a);
    if (a.command == "stage-out") return cmd_stage_out(a);
    if (a.command == "pools") return cmd_pools(a);
    if (a.command == "status") return cmd_status(a);
    if (a.command == "put") return cmd_put(a);
    if (a.command == "get") return cmd_get(a);
    if (a.command == "ls") return cmd_ls(a);
    if (a.command == "rm") return cmd_rm(a);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "autotune-bb: %s\n", e.what());
    return 2;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "autotune-bb: %s\n", e.what());
    return 1;
  }
  return 1;
}
