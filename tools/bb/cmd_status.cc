// autotune-bb status: the tiers and every buffer granted on them; with --job (or inside a job,
// as its user), that buffer's usage per tier.  autotune-bb summary: the tiers and the number of
// buffers, nothing about whose (for `scontrol show bbstat`, which any user may run).
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "buffer.hpp"

namespace autotune::bb {

int print_tiers(const Invocation &in, bool buffers);

int cmd_status(const Invocation &in) {
  if (in.has("job") || (::geteuid() != 0 && current_job_id() != 0)) {
    Opened o = find_buffer(in);
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
  return print_tiers(in, true);
}

// `scontrol show bbstat` (any user; Slurm does not say who asks): the tiers and how much of
// each is granted, and how many buffers there are, but no buffer's owner or job.
int cmd_summary(const Invocation &in) { return print_tiers(in, false); }

int print_tiers(const Invocation &in, bool buffers) {
  const Conf c = load_conf(in);
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
  if (!buffers) return 0;
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

}  // namespace autotune::bb
