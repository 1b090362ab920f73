// autotune-bb get KEY FILE|-: write an object of the job's buffer to a file or standard output
// (inside a job).
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "autotune/error.hpp"
#include "buffer.hpp"
#include "files.hpp"

namespace autotune::bb {

int cmd_get(const Invocation &in) {
  const std::string &key = in.pos()[0];
  validate_tier_key(key, "get KEY");
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  TierStore s(o.options);
  if (!s.exists(key))
    throw Error(Errc::not_found, "get KEY: no object '" + key + "' in the buffer of job " +
                                     std::to_string(o.buffer.job));
  if (in.pos()[1] == "-") {
    const auto v = s.get(key);
    if (!v.empty() && std::fwrite(v.data(), 1, v.size(), stdout) != v.size())
      throw_io("standard output", errno);
    if (std::fflush(stdout) != 0) throw_io("standard output", errno);
    return 0;
  }
  std::string dest = in.pos()[1];
  if (dest[0] != '/') {
    char cwd[4096];
    if (!::getcwd(cwd, sizeof cwd)) throw_io("getcwd", errno);
    dest = std::string(cwd) + "/" + dest;
  }
  write_object_to_file(s, key, "get FILE", dest);
  return 0;
}

}  // namespace autotune::bb
