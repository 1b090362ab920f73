// autotune-bb rm KEY: remove an object of the job's buffer (inside a job).
#include "autotune/error.hpp"
#include "buffer.hpp"

namespace autotune::bb {

int cmd_rm(const Invocation &in) {
  const std::string &key = in.pos()[0];
  validate_tier_key(key, "rm KEY");
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  TierStore s(o.options);
  if (!s.remove(key))
    throw Error(Errc::not_found,
                "rm: no object '" + key + "' in the buffer of job " + std::to_string(o.buffer.job));
  return 0;
}

}  // namespace autotune::bb
