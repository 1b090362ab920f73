// autotune-bb put FILE KEY: store a file as an object of the job's buffer (inside a job).
#include "buffer.hpp"
#include "files.hpp"

namespace autotune::bb {

int cmd_put(const Invocation &in) {
  validate_tier_key(in.pos()[1], "put KEY");
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  MappedFile m;
  open_source(m, "put FILE", in.pos()[0], nullptr);
  TierStore s(o.options);
  s.put(in.pos()[1], m.addr, m.size);
  return 0;
}

}  // namespace autotune::bb
