#include "buffer.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune::bb {

std::uint32_t job_of(const Invocation &in) {
  if (auto v = in.maybe("job"))
    return static_cast<std::uint32_t>(parse_int("--job", *v, 1, 4294967294LL));
  const std::uint32_t j = current_job_id();
  if (j == 0) throw UsageError(in.command + ": --job is required outside a job");
  return j;
}

Conf load_conf(const Invocation &in) {
  return Conf::load(in.conf.empty() ? Conf::default_path() : in.conf);
}

TierSiteConf tier_site(const Conf &c) { return {c.path, c.core, c.tier}; }

Opened find_buffer(const Invocation &in) {
  const std::uint32_t job = job_of(in);
  JobBuffers jb(tier_site(load_conf(in)));
  auto b = jb.find(job);
  if (!b) throw Error(Errc::not_found, "job " + std::to_string(job) + " has no burst buffer");
  return {*b, jb.store_options(*b)};
}

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

bool prefix_key(const std::string &field, const std::string &key) {
  const bool dir = !key.empty() && key.back() == '/';
  validate_tier_key(dir ? key.substr(0, key.size() - 1) : key, field);
  return dir;
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

}  // namespace autotune::bb
