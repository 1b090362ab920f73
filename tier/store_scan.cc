// What the store holds: the records of committed objects, read through a cache keyed by the
// record file's inode and ctime (load_record); the scan of every committed record and live
// reservation at one instant, which under the store lock also tells a dead writer's reservation
// (its flock is free) and deletes it with its unfinished record (scan); the deletion of disk
// piece files that no record or reservation references (cleanup_orphans); and the ObjectInfo of
// a record (info_of).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier/record.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::FileLock;
using tierfs::join;

namespace {

std::int64_t mtime_ns(const struct stat &st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

}  // namespace

std::optional<TierStore::Impl::Cached> TierStore::Impl::load_record(const std::string &name) {
  const std::string path = join(objects_dir, name);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    throw_io(path, errno);
  }
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = cache.find(name);
    if (it != cache.end() && it->second.ino == st.st_ino &&
        it->second.ctime.tv_sec == st.st_ctim.tv_sec &&
        it->second.ctime.tv_nsec == st.st_ctim.tv_nsec)
      return it->second;
  }
  Fd fd = tierfs::open_if_exists(path, O_RDONLY);
  if (!fd) return std::nullopt;
  if (::fstat(fd.get(), &st) != 0) throw_io(path, errno);
  Cached c;
  c.ino = st.st_ino;
  c.ctime = st.st_ctim;
  c.accessed_ns = mtime_ns(st);
  c.rec = decode_record(tierfs::read_small_file(fd.get(), path), path);
  std::lock_guard<std::mutex> g(mu);
  cache[name] = c;
  return c;
}

TierStore::Impl::Scan TierStore::Impl::scan(bool clean_dead) {
  Scan s;
  std::set<std::string> names;
  for (const std::string &name : tierfs::list_dir(objects_dir)) {
    if (name.empty() || name[0] == '.') continue;
    names.insert(name);
    try {
      auto c = load_record(name);
      if (!c) continue;
      s.records.push_back(std::move(c->rec));
      s.accessed.push_back(c->accessed_ns);
    } catch (const Error &e) {
      // Its space cannot be known: leave the record for verify() to report.
      log(LogLevel::error, e.what());
    }
  }
  {
    std::lock_guard<std::mutex> g(mu);
    for (auto it = cache.begin(); it != cache.end();)
      it = names.count(it->first) ? std::next(it) : cache.erase(it);
  }
  std::set<std::string> live;
  std::vector<std::string> entries = tierfs::list_dir(pending_dir);
  for (const std::string &name : entries) {
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".resv") != 0) continue;
    const std::string path = join(pending_dir, name);
    Fd fd = tierfs::open_if_exists(path, O_RDWR);
    if (!fd) continue;
    // Without the store lock a writer may not have locked its new reservation yet: only a
    // scan under the lock (clean_dead) can tell a dead writer's reservation from a live one.
    if (clean_dead && FileLock::try_lock(fd.get(), FileLock::exclusive)) {
      // Its writer is gone (flock is released when a process dies).
      s.found_dead = true;
      if (clean_dead) ::unlink(path.c_str());
      continue;
    }
    live.insert(name.substr(0, name.size() - 5));
    try {
      s.reserved.push_back(decode_record(tierfs::read_small_file(fd.get(), path), path));
    } catch (const Error &e) {
      log(LogLevel::error, e.what());
    }
  }
  if (clean_dead)
    for (const std::string &name : entries) {
      if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".rec") != 0) continue;
      if (!live.count(name.substr(0, name.size() - 4))) ::unlink(join(pending_dir, name).c_str());
    }
  return s;
}

void TierStore::Impl::cleanup_orphans(const Scan &s) {
  std::set<std::string> referenced;
  for (const auto *set : {&s.records, &s.reserved})
    for (const auto &r : *set)
      for (const auto &p : r.pieces)
        if (!p.file.empty()) referenced.insert(p.file);
  for (const auto &t : tiers) {
    if (t.spec.kind != TierKind::disk) continue;
    for (const std::string &name : tierfs::list_dir(t.data_dir))
      if (!referenced.count(name)) {
        log(LogLevel::verbose, "tier '" + t.spec.name + "': removing unreferenced " + name);
        ::unlink(join(t.data_dir, name).c_str());
      }
  }
}

ObjectInfo TierStore::Impl::info_of(const ObjectRecord &r, std::int64_t accessed) const {
  ObjectInfo o;
  o.key = r.key;
  o.size = r.size;
  o.checksum = object_digest(r.pieces);
  o.created_ns = r.created_ns;
  o.accessed_ns = accessed;
  for (const auto &p : r.pieces) o.pieces.push_back({p.tier, p.offset, p.length});
  return o;
}

}  // namespace autotune
