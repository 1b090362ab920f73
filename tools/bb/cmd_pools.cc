// autotune-bb pools: the pool of Slurm's burst_buffer/lua, as JSON (slurm_bb_pools, as root).
#include <cinttypes>
#include <cstdio>

#include "buffer.hpp"

namespace autotune::bb {

int cmd_pools(const Invocation &in) {
  const Conf c = load_conf(in);
  JobBuffers jb(tier_site(c));  // refuses a configuration without tiers
  std::uint64_t total = 0;
  for (const auto &t : c.tier.tiers) total += t.capacity;
  // Slurm counts a pool in units of its granularity (1M): quantity * granularity bytes.
  std::printf("{\"pools\":[{\"id\":\"autotune\",\"quantity\":%" PRIu64 ",\"granularity\":%d}]}\n",
              total >> 20, 1 << 20);
  return 0;
}

}  // namespace autotune::bb
