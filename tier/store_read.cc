// Reading objects.  get_into opens the object's record under a shared flock (so that an
// overwrite, removal or demotion waits before reusing its space), retries when the record was
// replaced meanwhile, reads every piece in parallel and checks it (read_piece, store_pieces.cc),
// and marks the object recently used (the record's mtime).  verify reads every object that way
// and reports the ones that are not whole.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier/record.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::FileLock;
using tierfs::join;

ObjectInfo TierStore::Impl::get_into(std::string_view key_view, void *buf, std::size_t cap,
                                     std::vector<unsigned char> *grow) {
  validate_tier_key(key_view);
  const std::string key(key_view);
  const std::string path = join(objects_dir, key_to_filename(key));
  for (int attempt = 0; attempt < 100; ++attempt) {
    Fd fd = tierfs::open_if_exists(path, O_RDONLY);
    if (!fd) throw Error(Errc::not_found, "no object " + shown(key) + " in the store");
    FileLock lk(fd.get(), FileLock::shared, path);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) throw_io(path, errno);
    if (st.st_nlink == 0) continue;  // replaced or removed while we waited
    const ObjectRecord r = decode_record(tierfs::read_small_file(fd.get(), path), path);
    if (r.key != key) throw Error(Errc::corrupt, path + ": holds the record of " + shown(r.key));
    if (grow) {
      grow->resize(static_cast<std::size_t>(r.size));
      buf = grow->data();
      cap = grow->size();
    }
    if (r.size > cap)
      throw_invalid("get " + shown(key) + ": the object is " + std::to_string(r.size) +
                    " bytes, the buffer " + std::to_string(cap));
    std::vector<std::function<void()>> tasks;
    for (const auto &p : r.pieces) {
      Tier &t = tier_of(p, key);
      unsigned char *dst = static_cast<unsigned char *>(buf) + p.offset;
      tasks.push_back([&, pp = &p, tt = &t, dst] { read_piece(*tt, *pp, dst, key); });
    }
    run_tasks(tasks, true);
    ::futimens(fd.get(), nullptr);  // recently used (mtime); best effort
    return info_of(r, now_ns());
  }
  throw Error(Errc::busy, "get " + shown(key) + ": the object kept changing while being read");
}

std::vector<VerifyProblem> TierStore::verify() {
  std::vector<VerifyProblem> out;
  auto names = tierfs::list_dir(impl_->objects_dir);
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    if (name.empty() || name[0] == '.') continue;
    const auto key = filename_to_key(name);
    if (!key) {
      out.push_back({name, join(impl_->objects_dir, name) + ": not the name of an object record"});
      continue;
    }
    try {
      get(*key);
    } catch (const Error &e) {
      if (e.code() != Errc::not_found) out.push_back({*key, e.what()});
    }
  }
  return out;
}

}  // namespace autotune
