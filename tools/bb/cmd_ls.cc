// autotune-bb ls [PREFIX]: the objects of the job's buffer, with their bytes per tier and their
// state as far as it can be told without reading them (inside a job).  autotune-bb check
// [PREFIX]: every object read and checked, one line each with what is wrong.
#include <cinttypes>
#include <cstdio>

#include "buffer.hpp"

namespace autotune::bb {

int cmd_ls(const Invocation &in) {
  const std::string prefix = in.pos().empty() ? "" : in.pos()[0];
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  TierStore s(o.options);
  for (const auto &h : s.check(prefix, false)) {
    std::printf("%s\t%" PRIu64, h.info.key.c_str(), h.info.size);
    for (const auto &t : o.options.tiers)
      std::printf("\t%s=%" PRIu64, t.name.c_str(), h.info.bytes_on(t.name));
    std::printf("\t%s\n", object_state_name(h.state));
  }
  return 0;
}

int cmd_check(const Invocation &in) {
  const std::string prefix = in.pos().empty() ? "" : in.pos()[0];
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  TierStore s(o.options);
  std::size_t ok = 0, bad = 0;
  for (const auto &h : s.check(prefix, true)) {
    if (h.state == ObjectState::ok) {
      std::printf("%s\tok\n", h.info.key.c_str());
      ++ok;
    } else {
      std::printf("%s\t%s\t%s\t%s\n", h.info.key.c_str(), object_state_name(h.state),
                  h.tier.c_str(), h.message.c_str());
      ++bad;
    }
  }
  if (bad) {
    std::fprintf(stderr,
                 "autotune-bb: check: %zu of %zu objects of job %u are missing or damaged\n", bad,
                 ok + bad, o.buffer.job);
    return 1;
  }
  return 0;
}

}  // namespace autotune::bb
