// Snapshot storage: where checkpoints of an ssp::Context go, behind a four-call interface so that
// other media (e.g. slurm-autotune's tiered pmem + disk store) can be plugged in without touching
// the parameter server.
//
// A checkpoint is a set of named objects ("parts") written by several ranks at once (each server
// rank writes the shards it owns; rank 0 writes the scheduler, the executors and, last, the
// manifest).  The four parts of a snapshot, after Litz (Qiao et al., USENIX ATC 2018):
//   <id>.scheduler                the scheduler's state (clock, task sizing, counters)
//   <id>.executor-<e>.queue       logical executor e's queue of remaining work
//   <id>.executor-<e>.state       logical executor e's application state
//   <id>.table-<name>.shard-<l>   logical server l's key-value pairs (rows) of table <name>
//   <id>.manifest                 JSON: what the snapshot holds and the size and CRC-32 of every
//                                 part above (written after all of them)
//   latest                        the id of the newest complete snapshot (written last)
// where <id> is "c" followed by the 12-digit clock.  Binary parts carry a magic, a kind, a length
// and a CRC-32.  A snapshot is trusted only through its manifest: a part is loaded only when it
// is listed there with its size and CRC-32 and matches both, so a missing, torn, damaged or
// foreign part is reported as Error(not_found|corrupt) naming it, never loaded.  Since the
// checksums describe the bytes, not the medium, a snapshot copied to another store (e.g. a
// directory staged out of a burst buffer) stays verifiable.
//
// Implementing a store: put() must replace an object atomically (readers see the old or the new
// bytes, never a mix) and be safe to call concurrently for different names from different
// processes; get() throws Error(not_found) for a missing name; list() returns the names in any
// order.  Names match [A-Za-z0-9][A-Za-z0-9._-]* (at most 200 characters).
//
//   ssp::DirectorySnapshotStore store("/scratch/ckpt");   // shared by every server rank
//   job.checkpoint_store = &store; job.checkpoint_every = 50;
//   ...
//   ctx.restore(store);          // on any number of ranks
//
// slurm-autotune's tier store (persistent memory + disk, a job's burst buffer) implements it in
// ssp/tier_store.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ssp {

class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;
  // Stores `bytes` under `name`, replacing any previous object atomically.
  virtual void put(const std::string &name, std::string_view bytes) = 0;
  // The bytes stored under `name`; Error(not_found) when there is none.
  virtual std::string get(const std::string &name) const = 0;
  // Every stored name.
  virtual std::vector<std::string> list() const = 0;
  // Removes `name` (no error when absent).
  virtual void remove(const std::string &name) = 0;

  // Throws Error(invalid_argument) unless `name` is a valid object name (see above).
  static void check_name(const std::string &name);
};

// One file per object in a directory (created, mode 0700, when missing).  put() writes a
// temporary file, fsyncs it and renames it into place.  The directory must be visible to every
// server rank and to rank 0 (a shared file system when ranks run on several nodes).
class DirectorySnapshotStore : public SnapshotStore {
 public:
  explicit DirectorySnapshotStore(std::string dir);
  void put(const std::string &name, std::string_view bytes) override;
  std::string get(const std::string &name) const override;
  std::vector<std::string> list() const override;
  void remove(const std::string &name) override;
  const std::string &dir() const { return dir_; }

 private:
  std::string dir_;
};

// What verify_snapshot() checked.
struct SnapshotCheck {
  std::string id;  // e.g. "c000000000120"
  std::int64_t clock = 0;
  int workers = 0;  // the rank counts it was taken with
  int servers = 0;
  bool has_job = false;     // it holds a suspended job
  std::size_t parts = 0;    // parts checked (the manifest and `latest` not counted)
  std::uint64_t bytes = 0;  // their total size as stored
  bool listed = false;      // the manifest lists its parts' checksums (false: an older format,
                            // whose parts were checked by their own framing only)
};

// Reads the snapshot `latest` names (or snapshot `id`), then every part its manifest lists, and
// checks each against the manifest and its framing, without MPI and without loading anything:
// whether a checkpoint (e.g. one staged out of a burst buffer) can be restored.  Throws
// Error(not_found) for a missing `latest`, manifest or part, Error(corrupt) for a damaged one,
// each naming the object.
SnapshotCheck verify_snapshot(const SnapshotStore &store, const std::string &id = "");

// The ids of the store's complete snapshots (those with a manifest), oldest first.
std::vector<std::string> list_snapshots(const SnapshotStore &store);

}  // namespace ssp
