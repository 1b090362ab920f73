// autotune-bb ls [PREFIX]: the objects of the job's buffer, with their bytes per tier (inside a
// job).
#include <cinttypes>
#include <cstdio>

#include "buffer.hpp"

namespace autotune::bb {

int cmd_ls(const Invocation &in) {
  const std::string prefix = in.pos().empty() ? "" : in.pos()[0];
  Opened o = find_buffer(in);
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

}  // namespace autotune::bb
