// The tier store: objects (a key and its bytes) split across persistent memory and disk.
//
// Link: tier/libautotune_tier.la, then tier/libautotune_tier_conf.la and
// common/libautotune_common.la; they bring libpmem2, libxxhash and hwloc.
//
// A store is a set of tiers (TierSpec: a directory on each medium, its capacity and bandwidth)
// plus a metadata directory.  put() splits one object across the tiers by a placement policy
// (tier_conf.hpp: fill-fastest or bandwidth-proportional), writes the pieces, makes them durable
// and then commits the object by writing its record last; get() reassembles and verifies it.
//
//   autotune::TierStoreOptions o;
//   o.tiers = {{"pm", autotune::TierKind::pmem, "/mnt/pmem0/ckpt", 8ull << 30, 0},
//              {"ssd", autotune::TierKind::disk, "/scratch/ckpt", 512ull << 30, 0}};
//   autotune::TierStore store(o);                  // creates the directories and the pool
//   store.put("ckpt/42/rank3/model", buf.data(), buf.size());
//   std::vector<unsigned char> back = store.get("ckpt/42/rank3/model");
//
// Inside a Slurm job with a burst buffer, open_job_buffer() (job_buffer.hpp) returns the store of
// the job's buffer.
//
// Media.  The pmem tier is one pool file (<path>/pool, `capacity` bytes, preallocated) mapped
// with libpmem2 at the finest store granularity the mapping supports: byte or cache-line on DAX
// persistent memory, page (msync) on any other file system, e.g. tmpfs standing in for pmem.  A
// pmem piece is a list of page-aligned extents of the pool.  A disk piece is one file under
// <path>/data written with write(2) and fsync(2).
//
// Durability and crashes.  Data is written into space no committed object uses, persisted
// (pmem: flush + drain, or msync; disk: fsync of the file and its directory), and only then is
// the object's record (key, size, pieces, XXH3-64 checksum of each piece, a checksum of the
// record itself) written to a temporary file, fsync'd and renamed into <meta>/objects: the rename
// is the commit.  A writer killed at any point leaves either the previous version of the object
// or the new one, whole; space it had reserved is reclaimed by the next put or the next store
// that opens the directory (a reservation is held under flock(2) by its writer, so a dead
// writer's is recognised).  get() recomputes every piece's checksum and throws a TierFault (an
// Error(corrupt)) naming the key, the tier and the byte range on a mismatch.
//
// Lost and damaged data.  Pieces can vanish under the store (a pmem pool or a disk file deleted,
// a pool truncated) or change (bytes overwritten).  Each such fault is a TierFault saying which
// object, which tier and which bytes, and whether they are missing or damaged:
//   pool missing   the object's piece was in a pmem tier's pool and the pool file is gone
//   piece missing  the piece's disk file is gone, or its pool extents lie past the pool's end
//   damaged        the piece is there but its bytes do not match its checksum (or it is short)
// A pool is never recreated under objects that have pieces in it: a store whose pool is gone
// opens with that tier marked lost (TierUsage::pool_missing), places nothing there, and reports
// the objects that had pieces on it as missing; objects wholly on other tiers stay readable.
// Once those objects are removed, the next open makes a new, empty pool.  A store that is open
// when its pool is deleted or replaced keeps reading its own mapping, but places no new object
// there (put checks the pool file under the store lock).  check() tells each
// object's state without reading its bytes (cheap), or reading and checking them.
//
// Several objects (e.g. the parts of a checkpoint) are not committed together: write the parts,
// then a small manifest object naming them and their ObjectInfo::checksum, and trust the set only
// through the manifest -- its put is atomic like any other.
//
// Demotion.  When a put needs more of the fastest tier than is free and TierStoreOptions::demotion
// is set, the coldest objects (least recently read or written) have their pieces on that tier
// moved to the next slower tier with room, each move being itself a commit of a new record.
//
// Concurrency.  Any number of threads and processes may use one store directory at once.
// Allocation and commit are serialised by an flock on <meta>/lock; readers take a shared flock on
// the record they read, and an overwrite, removal or demotion waits for them before the old
// space can be reused.  All member functions are thread-safe.
//
// Keys are 1..200 characters from [A-Za-z0-9._-] and '/', as in "ckpt/42/rank3"; no component is
// empty, "." or "..", and a key does not start with '.' or '/'.  No key can name a path outside
// the store.
//
// Errors are autotune::Error: invalid_argument (a bad key or option), not_found (no such object),
// no_space (the object does not fit in the free space of all tiers), corrupt (a record check
// failed; a TierFault for an object's missing or damaged bytes), permission / io (the operating
// system refused).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/tier_conf.hpp"

namespace autotune {

// The store granularity of a pmem mapping (see PmemMap in the sources).
enum class PmemGranularity { byte, cache_line, page };
const char *pmem_granularity_name(PmemGranularity g) noexcept;  // "byte", "cache-line", "page"

inline constexpr std::size_t kTierKeyMax = 200;
// Throws Error(invalid_argument) naming `field`, the key and what is allowed.
void validate_tier_key(std::string_view key, std::string_view field = "key");

// One contiguous piece of an object's bytes, as handed to put(); an object may be gathered from
// several (e.g. a checkpoint's header and its tensors) without copying them together first.
struct ConstBytes {
  const void *data = nullptr;
  std::size_t size = 0;
};

struct TierStoreOptions {
  // At least one tier; `path` is this store's own directory on the tier (created 0700 if
  // missing).  Bandwidth 0 means measured: a short probe at the first open, remembered in the
  // metadata directory and refined from the throughput of later puts.
  std::vector<TierSpec> tiers;
  PlacementPolicy placement = PlacementPolicy::automatic;
  bool demotion = true;
  // Records, reservations and the lock.  Empty: "<path of the first disk tier>/meta", or
  // "<path of the first tier>/meta" when there is no disk tier.
  std::string meta_dir;
  // Pieces smaller than this are not split off (see placement in the sources); objects below
  // twice this size go whole to the fastest tier with room.
  std::uint64_t min_part = 1ull << 20;
  // Reserve the pmem pool's blocks when it is created (posix_fallocate), so that a full
  // file system shows up as Error(no_space) at open instead of SIGBUS at a later store.
  bool preallocate = true;
  // Fault injection for tests: called at each named step of put() ("reserved", "written",
  // "persisted", "record-written", "committed") and of demotion ("demote-written").  Leave null.
  void (*step_hook)(const char *step) = nullptr;

  static TierStoreOptions from_conf(const TierConf &conf);
};

// Where one byte range of an object lives.
struct TierPiece {
  std::string tier;
  std::uint64_t offset = 0;  // in the object
  std::uint64_t length = 0;
};

struct ObjectInfo {
  std::string key;
  std::uint64_t size = 0;
  // XXH3-64 over the pieces' (offset, length, XXH3-64 of their bytes), in offset order; it
  // changes when the bytes change, and stays the same when a demotion moves a piece.
  std::uint64_t checksum = 0;
  std::int64_t created_ns = 0;    // CLOCK_REALTIME of the put
  std::int64_t accessed_ns = 0;   // last put or get (drives demotion: oldest first)
  std::vector<TierPiece> pieces;  // in offset order
  std::uint64_t bytes_on(std::string_view tier) const;
};

struct TierUsage {
  std::string name;
  TierKind kind = TierKind::disk;
  std::string path;
  std::uint64_t capacity = 0;
  std::uint64_t used = 0;       // by committed objects (pmem: whole pages)
  std::uint64_t in_flight = 0;  // reserved by puts in progress
  std::uint64_t free = 0;
  std::uint64_t objects = 0;  // objects with a piece on this tier
  double bandwidth = 0;       // bytes per second used for placement
  bool measured = false;      // bandwidth measured (true) or configured
  std::string media;          // e.g. "tmpfs, page granularity (msync), NUMA node 0"
  // A pmem tier whose pool file was gone at open while objects had pieces in it: nothing is
  // placed there (free is 0) until those objects are removed and the store is opened again.
  bool pool_missing = false;
};

// Whether an object's bytes are all there and whole.
enum class ObjectState { ok, missing, damaged };
const char *object_state_name(ObjectState s) noexcept;  // "ok", "missing", "damaged"

// An object whose bytes cannot be read whole (see "Lost and damaged data" above).  Its code() is
// Errc::corrupt; kind() tells the three faults apart.  Messages:
//   object 'K': missing (pool missing): bytes A..B were on tier 'T' (pmem), whose pool P is gone
//   object 'K': missing (piece missing): bytes A..B were on tier 'T' (disk) in F, which is gone
//   object 'K': damaged: checksum mismatch in bytes A..B on tier 'T' (pmem)
class TierFault : public Error {
 public:
  enum class Kind { pool_missing, piece_missing, damaged };
  TierFault(Kind kind, std::string key, std::string tier, TierKind tier_kind,
            const std::string &message);
  Kind kind() const noexcept { return kind_; }
  // missing for pool_missing and piece_missing, damaged for damaged.
  ObjectState state() const noexcept;
  const std::string &key() const noexcept { return key_; }
  const std::string &tier() const noexcept { return tier_; }
  TierKind tier_kind() const noexcept { return tier_kind_; }

 private:
  Kind kind_;
  std::string key_, tier_;
  TierKind tier_kind_;
};
// "pool missing", "piece missing", "damaged"
const char *tier_fault_name(TierFault::Kind k) noexcept;

// One object and its state (TierStore::check).
struct ObjectHealth {
  ObjectInfo info;
  ObjectState state = ObjectState::ok;
  std::string tier;     // the tier of the (first) fault; empty when ok
  std::string message;  // the fault as get() reports it; empty when ok
};

struct VerifyProblem {
  std::string key;
  std::string message;
};

class TierStore {
 public:
  // Opens the store, creating its directories and pool when missing (never a pool under objects
  // that had pieces in it: that tier is opened as lost, see TierUsage::pool_missing).  Throws
  // Error(invalid_argument) for bad options (naming the tier and field), Error(no_space) when the
  // pmem pool cannot be reserved, Error(io|permission) from the file system.  Cleans up after
  // writers that died (their reservations and unreferenced files).
  explicit TierStore(TierStoreOptions options);
  ~TierStore();
  TierStore(TierStore &&) noexcept;
  TierStore &operator=(TierStore &&) noexcept;
  TierStore(const TierStore &) = delete;
  TierStore &operator=(const TierStore &) = delete;

  // Store `size` bytes under `key` (replacing any previous object atomically) with the store's
  // placement policy, or with `placement`.  Returns where the pieces went.  Preconditions: `data`
  // is readable for `size` bytes (may be null when size == 0) and not modified during the call.
  ObjectInfo put(std::string_view key, const void *data, std::size_t size);
  ObjectInfo put(std::string_view key, const std::vector<ConstBytes> &segments);
  ObjectInfo put(std::string_view key, const std::vector<ConstBytes> &segments,
                 PlacementPolicy placement);

  // The whole object, verified.  Throws Error(not_found), TierFault (missing or damaged bytes)
  // or Error(corrupt) (a damaged record).
  std::vector<unsigned char> get(std::string_view key);
  // Into a buffer of `capacity` bytes (Error(invalid_argument) when the object is larger);
  // returns the object's description (its size is the number of bytes written).
  ObjectInfo get_into(std::string_view key, void *buffer, std::size_t capacity);

  ObjectInfo stat(std::string_view key);  // Error(not_found) when absent
  bool exists(std::string_view key);
  bool remove(std::string_view key);  // false when absent
  // Every committed object whose key starts with `prefix`, sorted by key.
  std::vector<ObjectInfo> list(std::string_view prefix = {});
  // Per tier, fastest first.
  std::vector<TierUsage> usage();
  // Move the coldest objects' pieces off the fastest tier until `bytes` are free there (or no
  // object is left to move).  Returns the number of bytes freed on the fastest tier.
  std::uint64_t demote(std::uint64_t bytes);
  // Read and check every object; an empty result means all of them are whole.
  std::vector<VerifyProblem> verify();
  // Every committed object whose key starts with `prefix`, sorted by key, with its state.
  // read_data false: what can be told without reading the bytes (a pool missing, a disk piece's
  // file gone or short, pool extents past the pool's end), so damaged bytes show as ok; true:
  // every piece is read and checked as get() does.
  std::vector<ObjectHealth> check(std::string_view prefix = {}, bool read_data = false);

  const TierStoreOptions &options() const noexcept;
  // The tiers as ordered for placement: fastest (highest bandwidth) first.
  std::vector<TierSpec> tiers_fastest_first() const;
  // Granularity of the pmem tier's mapping; page when the store has no pmem tier.
  PmemGranularity pmem_granularity() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace autotune
