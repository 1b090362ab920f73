// Opening a tier store (TierStore::Impl's constructor): checks the options (naming the tier and
// field at fault), lays out the directories (store_impl.hpp), creates, resizes and preallocates
// each pmem tier's pool and maps it (PmemMap) -- or, when the pool is gone under objects that
// had pieces in it, opens that tier as lost (no pool is made) --, removes what writers that died
// left behind, loads or measures the tiers' bandwidths (store_bandwidth.cc) and orders the tiers
// fastest first.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <utility>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/tier.hpp"
#include "autotune/units.hpp"
#include "tier/fs.hpp"
#include "tier/pmem_map.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::FileLock;
using tierfs::join;

TierStore::Impl::Impl(TierStoreOptions o) : opt(std::move(o)) {
  if (opt.tiers.empty()) throw_invalid("tier store: no tiers given (at least one is needed)");
  for (size_t i = 0; i < opt.tiers.size(); ++i) {
    const TierSpec &t = opt.tiers[i];
    const std::string f = "tier '" + t.name + "'";
    validate_tier_name(t.name, "tier store: tier name");
    if (t.path.empty() || t.path[0] != '/')
      throw_invalid(f + ": Path '" + t.path + "' is not absolute");
    if (t.capacity < kTierMinCapacity)
      throw_invalid(f + ": Capacity " + std::to_string(t.capacity) + " is below the minimum 1M");
    if (t.kind == TierKind::pmem && t.capacity % kTierPage)
      throw_invalid(f + ": Capacity " + std::to_string(t.capacity) + " is not a multiple of 4K");
    for (size_t j = 0; j < i; ++j) {
      if (opt.tiers[j].name == t.name) throw_invalid(f + " is given twice");
      if (opt.tiers[j].path == t.path)
        throw_invalid(f + ": Path '" + t.path + "' is also tier '" + opt.tiers[j].name + "'");
    }
  }
  if (opt.meta_dir.empty()) {
    const TierSpec *m = &opt.tiers[0];
    for (const auto &t : opt.tiers)
      if (t.kind == TierKind::disk) {
        m = &t;
        break;
      }
    opt.meta_dir = join(m->path, "meta");
  }
  meta = opt.meta_dir;
  objects_dir = join(meta, "objects");
  pending_dir = join(meta, "pending");
  lock_path = join(meta, "lock");
  bw_path = join(meta, "bandwidth");
  // A pmem tier's directory is made below, once it is known not to be lost.
  for (const auto &t : opt.tiers)
    if (t.kind != TierKind::pmem) tierfs::make_dirs(t.path, 0700);
  tierfs::make_dirs(objects_dir, 0700);
  tierfs::make_dirs(pending_dir, 0700);

  Fd lfd = open_lock();
  FileLock lk(lfd.get(), FileLock::exclusive, lock_path);
  Scan s0 = scan(true);
  for (const TierSpec &spec : opt.tiers) {
    Tier t;
    t.spec = spec;
    t.bandwidth = static_cast<double>(spec.bandwidth);
    t.measured = spec.bandwidth == 0;
    if (spec.kind == TierKind::disk) {
      t.data_dir = join(spec.path, "data");
      tierfs::make_dirs(t.data_dir, 0700);
    } else {
      const std::string pool = join(spec.path, "pool");
      t.pool = pool;
      // Objects with pieces on this tier: a pool is made only where none has any (a missing pool
      // under existing objects is damage to report, never a fresh empty pool to hand out).
      std::size_t on_tier = 0;
      std::string some;
      for (const auto *set : {&s0.records, &s0.reserved})
        for (const auto &r : *set)
          for (const auto &p : r.pieces)
            if (p.tier == spec.name) {
              if (on_tier++ < 3) some += (some.empty() ? "" : ", ") + shown(r.key);
              break;
            }
      struct stat dst;
      Fd fd;
      if (::stat(spec.path.c_str(), &dst) == 0)
        fd = tierfs::open_if_exists(pool, O_RDWR | O_NOFOLLOW);
      if (!fd) {
        if (on_tier > 0) {
          log(LogLevel::error, "tier '" + spec.name + "' (pmem): its pool " + pool +
                                   " is missing (pool missing); " + std::to_string(on_tier) +
                                   " object(s) had pieces there (" + some +
                                   (on_tier > 3 ? ", ..." : "") +
                                   "): they are missing; nothing is placed on the tier until "
                                   "they are removed");
          t.lost = true;
          tiers.push_back(std::move(t));
          continue;
        }
        tierfs::make_dirs(spec.path, 0700);
        fd = tierfs::open_file(pool, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
      }
      struct stat st;
      if (::fstat(fd.get(), &st) != 0) throw_io(pool, errno);
      // Only a pool this process's user made: not a link to another file, not another's file.
      if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || st.st_nlink != 1)
        throw Error(Errc::permission,
                    "tier '" + spec.name + "': its pool " + pool +
                        " is not a regular file of uid " + std::to_string(::geteuid()) +
                        " with one link (owner uid " + std::to_string(st.st_uid) + ", " +
                        std::to_string(st.st_nlink) + " links); refusing to use it");
      t.pool_dev = st.st_dev;
      t.pool_ino = st.st_ino;
      const std::uint64_t have = static_cast<std::uint64_t>(st.st_size);
      if (have > spec.capacity) {
        std::uint64_t end = 0;
        for (const auto *set : {&s0.records, &s0.reserved})
          for (const auto &r : *set)
            for (const auto &p : r.pieces)
              if (p.tier == spec.name)
                for (const auto &e : p.extents) end = std::max(end, e.off + e.len);
        if (end > spec.capacity)
          throw_invalid("tier '" + spec.name + "': Capacity " + format_size(spec.capacity) +
                        " is smaller than the " + format_size(end) +
                        " of its pool that objects use; remove objects first");
      }
      if (have != spec.capacity && ::ftruncate(fd.get(), static_cast<off_t>(spec.capacity)) != 0)
        throw_io(pool + ": ftruncate", errno);
      if (opt.preallocate && have < spec.capacity) {
        const int rc = ::posix_fallocate(fd.get(), static_cast<off_t>(have),
                                         static_cast<off_t>(spec.capacity - have));
        if (rc == ENOSPC)
          throw Error(Errc::no_space, "tier '" + spec.name + "': cannot reserve " +
                                          format_size(spec.capacity) + " for the pool " + pool +
                                          ": no space left on the file system");
        if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) throw_io(pool + ": posix_fallocate", rc);
      }
      fd.reset();
      t.map = std::make_unique<PmemMap>(pool);
    }
    tiers.push_back(std::move(t));
  }
  cleanup_orphans(s0);
  load_bandwidths();
  // Fastest first; pmem before disk when bandwidths tie.
  std::stable_sort(tiers.begin(), tiers.end(), [](const Tier &a, const Tier &b) {
    if (a.bandwidth != b.bandwidth) return a.bandwidth > b.bandwidth;
    return a.spec.kind == TierKind::pmem && b.spec.kind != TierKind::pmem;
  });
}

}  // namespace autotune
