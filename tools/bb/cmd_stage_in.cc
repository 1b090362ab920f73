// autotune-bb stage-in: copy a file, or every file under a directory, into a job's buffer,
// reading as the job's user (slurm_bb_data_in, as root).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "autotune/error.hpp"
#include "buffer.hpp"
#include "files.hpp"

namespace autotune::bb {

namespace {

// SOURCE is a directory, KEY a prefix ending in '/': each file under it becomes KEY<relative path>.
int stage_in_dir(const Invocation &in, const std::string &src, const std::string &prefix) {
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  struct stat st;
  if (::stat(src.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    const int e = errno;
    if (::stat(src.c_str(), &st) == 0)
      throw_invalid("stage-in SOURCE: '" + src + "' is not a directory (the KEY '" + prefix +
                    "' ends in '/')");
    throw Error(e == EACCES || e == EPERM ? Errc::permission
                : e == ENOENT             ? Errc::not_found
                                          : Errc::io,
                "stage-in SOURCE: cannot read '" + src + "' as uid " + std::to_string(::geteuid()) +
                    " (the job's user): " + std::strerror(e));
  }
  std::vector<std::string> files;
  files_under("stage-in SOURCE", src, "", files);
  for (const auto &f : files) validate_tier_key(prefix + f, "stage-in SOURCE file '" + f + "'");
  TierStore s(o.options);
  std::uint64_t bytes = 0;
  for (const auto &f : files) {
    MappedFile m;
    open_source(m, "stage-in SOURCE", src + "/" + f, &o.buffer);
    bytes += s.put(prefix + f, m.addr, m.size).size;
  }
  std::printf("job %u: staged in %s as '%s' (%zu objects, %s)\n", o.buffer.job, src.c_str(),
              prefix.c_str(), files.size(), human(bytes).c_str());
  return 0;
}

}  // namespace

int cmd_stage_in(const Invocation &in) {
  const std::string src = absolute_path("stage-in SOURCE", in.pos()[0]);
  const std::string &key = in.pos()[1];
  if (prefix_key("stage-in KEY", key)) return stage_in_dir(in, src, key);
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  MappedFile m;
  open_source(m, "stage-in SOURCE", src, &o.buffer);
  TierStore s(o.options);
  const ObjectInfo info = s.put(key, m.addr, m.size);
  std::printf("job %u: staged in %s as '%s' (%s", o.buffer.job, src.c_str(), info.key.c_str(),
              human(info.size).c_str());
  for (const auto &p : info.pieces)
    std::printf(", %s on %s", human(p.length).c_str(), p.tier.c_str());
  std::printf(")\n");
  return 0;
}

}  // namespace autotune::bb
