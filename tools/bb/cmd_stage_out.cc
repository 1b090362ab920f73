// autotune-bb stage-out: copy an object, or every object under a key prefix, out of a job's
// buffer, writing as the job's user (slurm_bb_data_out, as root).
#include <cstdio>

#include "autotune/error.hpp"
#include "buffer.hpp"
#include "files.hpp"

namespace autotune::bb {

namespace {

// KEY ends in '/': each object under it becomes DEST/<rest of the key>, in key order.
int stage_out_dir(const Invocation &in, const std::string &prefix, const std::string &dest) {
  Opened o = find_buffer(in);
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

}  // namespace

int cmd_stage_out(const Invocation &in) {
  const std::string &key = in.pos()[0];
  const bool dir = prefix_key("stage-out KEY", key);
  const std::string dest = absolute_path("stage-out DEST", in.pos()[1]);
  if (dir) return stage_out_dir(in, key, dest);
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  TierStore s(o.options);
  if (!s.exists(key))
    throw Error(Errc::not_found, "stage-out KEY: no object '" + key + "' in the buffer of job " +
                                     std::to_string(o.buffer.job));
  write_object_to_file(s, key, "stage-out DEST", dest);
  std::printf("job %u: staged out '%s' to %s\n", o.buffer.job, key.c_str(), dest.c_str());
  return 0;
}

}  // namespace autotune::bb
