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
//   <id>.manifest                 JSON: what the snapshot holds (written after all other parts)
//   latest                        the id of the newest complete snapshot (written last)
// where <id> is "c" followed by the 12-digit clock.  Binary parts carry a magic, a kind, a length
// and a CRC-32, so a torn or foreign object is reported as Error(corrupt), never loaded.
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
#pragma once

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

}  // namespace ssp
