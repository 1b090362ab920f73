// TierStore::Impl (internal): the state of an open tier store, shared by the files that implement
// it (see autotune/tier.hpp for the contract), and the small helpers they have in common.  Each
// part is defined in a file of its own:
//   store.cc            the public TierStore: construction, forwarding to Impl, key validation
//   store_open.cc       opening: checking the options, creating the directories and pmem pools,
//                       cleaning up after writers that died
//   store_bandwidth.cc  the bandwidth and latency of each tier: the probe, <meta>/bandwidth, and
//                       the refinement from the throughput of puts
//   store_scan.cc       what the store holds: records through their cache, the scan of committed
//                       records and reservations, the removal of unreferenced files
//   store_space.cc      free space, computed from a scan: bytes used, pmem gaps and allocation
//   store_pieces.cc     the bytes of one piece: writing and persisting, reading and checking
//   store_write.cc      put (plan, reserve, write, commit), the commit of a record, remove
//   store_read.cc       get and verify
//   store_demote.cc     demotion of the coldest objects off the fastest tier
//   store_list.cc       stat, exists, list and usage
//
// Layout of a store:
//   <pmem tier path>/pool            the pmem pool, mapped with libpmem2 (PmemMap)
//   <disk tier path>/data/<id>.<tier> one file per disk piece
//   <meta>/lock                      flock: allocation, commit, removal, demotion, cleanup
//   <meta>/objects/<key, '/'->'%'>   committed records (record.hpp); the rename into this
//                                    directory is the commit
//   <meta>/pending/<id>.resv         a put's reservation, flock'd by its writer while it lives
//   <meta>/pending/<id>.rec          a record being written, renamed into objects/ to commit
//   <meta>/bandwidth                 measured bandwidths ("<tier> <bytes per second>" lines)
//
// Free space is never stored: it is the complement of what committed records and live
// reservations use, recomputed under the lock.  So a writer that dies leaves nothing to repair
// but files nobody references, which cleanup_orphans() deletes.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier/placement.hpp"
#include "tier/pmem_map.hpp"
#include "tier/record.hpp"

namespace autotune {

inline constexpr std::size_t kChunk = 1 << 20;  // copy + hash step

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline std::uint64_t round_page(std::uint64_t n) {
  return (n + kTierPage - 1) / kTierPage * kTierPage;
}

// A key as error messages show it: quoted.
inline std::string shown(const std::string &key) { return "'" + key + "'"; }

// Runs the tasks, in parallel (one thread each, the first on the calling thread) or one after the
// other; rethrows the first failure after all have finished.  (store_pieces.cc)
void run_tasks(std::vector<std::function<void()>> &tasks, bool parallel);

struct TierStore::Impl {
  struct Tier {
    TierSpec spec;
    std::string data_dir;          // disk
    std::unique_ptr<PmemMap> map;  // pmem
    std::string pool;              // pmem: <path>/pool
    bool lost = false;   // pmem: the pool was gone at open under objects (no map, no room)
    dev_t pool_dev = 0;  // pmem: the mapped pool file, to tell when it is deleted or replaced
    ino_t pool_ino = 0;
    double bandwidth = 0;  // guarded by mu
    double latency = 0;    // seconds a piece costs whatever its size (measured tiers)
    bool measured = false;
    std::string media;  // filled lazily by usage()
  };
  struct Cached {
    ino_t ino = 0;
    struct timespec ctime {};
    ObjectRecord rec;
    std::int64_t accessed_ns = 0;
  };
  // What committed records and live reservations hold, at one instant (under the lock).
  struct Scan {
    std::vector<ObjectRecord> records;
    std::vector<std::int64_t> accessed;  // per record
    std::vector<ObjectRecord> reserved;  // live reservations
    bool found_dead = false;             // a dead writer's reservation was seen
  };

  TierStoreOptions opt;
  std::vector<Tier> tiers;  // fastest first
  std::string meta, objects_dir, pending_dir, lock_path, bw_path;
  std::mutex mu;       // cache, bandwidths, media
  std::mutex save_mu;  // the bandwidth file
  std::map<std::string, Cached> cache;
  std::atomic<std::uint64_t> counter{0};

  // store_open.cc
  explicit Impl(TierStoreOptions o);

  int tier_index(const std::string &name) const {
    for (size_t i = 0; i < tiers.size(); ++i)
      if (tiers[i].spec.name == name) return static_cast<int>(i);
    return -1;
  }
  Tier &tier_of(const PieceRecord &p, const std::string &key) {
    const int i = tier_index(p.tier);
    if (i < 0)
      throw Error(Errc::corrupt, "object " + shown(key) + " has a piece on tier '" + p.tier +
                                     "', which this store does not have");
    return tiers[static_cast<size_t>(i)];
  }
  void hook(const char *step) const {
    if (opt.step_hook) opt.step_hook(step);
  }
  std::string new_id() {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%x-%llx-%llx", static_cast<unsigned>(::getpid()),
                  static_cast<unsigned long long>(now_ns()),
                  static_cast<unsigned long long>(counter.fetch_add(1)));
    return buf;
  }
  tierfs::Fd open_lock() { return tierfs::open_file(lock_path, O_RDWR | O_CREAT, 0600); }

  // -- records (store_scan.cc) ---------------------------------------------------------------
  // The record of `name` in objects/, through the cache; nullopt when it vanished.
  std::optional<Cached> load_record(const std::string &name);
  Scan scan(bool clean_dead);
  void cleanup_orphans(const Scan &s);
  ObjectInfo info_of(const ObjectRecord &r, std::int64_t accessed) const;

  // -- space (store_space.cc) ----------------------------------------------------------------
  // Per tier: true for a pmem tier whose pool file is no longer the one mapped (deleted or
  // replaced since the open, e.g. /dev/shm wiped under a running job); put places nothing there.
  std::vector<bool> pools_gone() const;
  std::vector<std::uint64_t> used_bytes(const Scan &s) const;
  std::vector<Extent> pmem_gaps(const Scan &s, size_t t) const;
  std::vector<TierRoom> rooms(const Scan &s);
  std::vector<Extent> alloc_pmem(std::vector<Extent> &gaps, std::uint64_t len) const;
  std::string no_space_message(const std::string &key, std::uint64_t size, const Scan &s);

  // -- data (store_pieces.cc) ----------------------------------------------------------------
  // Writes and persists one piece; returns its XXH3-64.  `copied` (may be empty) is called once
  // a disk piece's bytes are all handed to the kernel, before its fsync.
  std::uint64_t write_piece(Tier &t, const PieceRecord &p, const std::vector<ConstBytes> &segs,
                            std::uint64_t seg_offset, const std::function<void()> &copied = {});
  void read_piece(Tier &t, const PieceRecord &p, unsigned char *dst, const std::string &key);
  // What is wrong with a piece that can be told without reading it (a lost pool, a disk file
  // gone or short, extents past the pool's end); nullopt when nothing is.
  std::optional<TierFault> piece_fault(const Tier &t, const PieceRecord &p,
                                       const std::string &key) const;

  // -- operations ----------------------------------------------------------------------------
  // store_write.cc
  ObjectInfo put(std::string_view key, const std::vector<ConstBytes> &segs, PlacementPolicy policy);
  void remove_files(const ObjectRecord &r, const ObjectRecord *keep);
  void commit_record(const ObjectRecord &r, const std::string &tmp, bool &committed);
  // store_read.cc
  ObjectInfo get_into(std::string_view key, void *buf, std::size_t cap,
                      std::vector<unsigned char> *grow);
  // store_demote.cc
  std::uint64_t demote_locked(Scan &s, std::uint64_t want, const std::string &skip_key);
  bool demote_one(const ObjectRecord &victim, std::int64_t accessed, Scan &s);

  // -- bandwidth (store_bandwidth.cc) --------------------------------------------------------
  void load_bandwidths();
  void probe(Tier &t);
  void save_bandwidths();
  void learn(Tier &t, std::uint64_t bytes, double seconds);
};

}  // namespace autotune
