// autotune-bb create: grant a job its buffer (burst_buffer.lua's slurm_bb_setup, as root).
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "autotune/error.hpp"
#include "autotune/units.hpp"
#include "buffer.hpp"

namespace autotune::bb {

int cmd_create(const Invocation &in) {
  if (::geteuid() != 0)
    throw Error(Errc::permission,
                "create: must run as root (burst_buffer.lua runs it in slurmctld)");
  JobBufferRequest r;
  r.job = static_cast<std::uint32_t>(parse_int("--job", in.one("job"), 1, 4294967294LL));
  r.uid = static_cast<uid_t>(parse_int("--uid", in.one("uid"), 0, 4294967294LL));
  r.gid = static_cast<gid_t>(parse_int("--gid", in.one("gid"), 0, 4294967294LL));
  r.capacity = parse_size("--capacity", in.one("capacity"), 'B');
  if (auto p = in.maybe("pmem")) r.pmem = parse_size("--pmem", *p, 'B');
  for (const auto &t : in.all("tier")) {
    const size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0)
      throw_invalid("--tier: '" + t + "' is not NAME=SIZE (e.g. --tier disk=4G)");
    r.tiers.push_back(
        {t.substr(0, eq), parse_size("--tier " + t.substr(0, eq), t.substr(eq + 1), 'B')});
  }
  if (auto p = in.maybe("placement")) r.placement = parse_placement("--placement", *p);
  JobBuffers jb(tier_site(load_conf(in)));
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

}  // namespace autotune::bb
