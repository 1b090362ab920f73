// Checkpoints of libssp on slurm-autotune's tier store: persistent memory and disk, e.g. the
// burst buffer of a Slurm job (autotune/tier.hpp, autotune/job_buffer.hpp).
//
// TierSnapshotStore implements the four calls of SnapshotStore (snapshot.hpp) over an
// autotune::TierStore: snapshot object <name> is the tier object "<prefix>/<name>", split across
// the tiers by the store's placement policy (auto by default: on the fastest tier whole when it
// fits there, else pmem and disk pieces written in parallel that finish together) and committed
// atomically, so each
// put() replaces its object whole.  The tier store checks every piece of an object against its
// XXH3 checksum on get(); the snapshot as a whole is trusted only through its manifest, which
// lists each part's size and CRC-32 (Context::restore and verify_snapshot load nothing that is
// missing from it or does not match it).
//
//   // Inside a Slurm job with `#BB_LUA buffer capacity=4G pool=autotune pmem=1G`
//   // (as the job's user; the buffer is gone when the job ends unless staged out):
//   auto store = ssp::TierSnapshotStore::open_job_buffer();
//   // Or on any directories (no Slurm):
//   autotune::TierStoreOptions o;
//   o.tiers = {{"pmem", autotune::TierKind::pmem, "/dev/shm/me/ckpt", 1ull << 30, 0},
//              {"disk", autotune::TierKind::disk, "/var/tmp/me/ckpt", 8ull << 30, 0}};
//   auto store = std::make_unique<ssp::TierSnapshotStore>(autotune::TierStore(o));
//
//   job.checkpoint_store = store.get();     // checkpoints every job.checkpoint_every clocks
//   ...
//   ctx.restore(*store);                    // in a later run, on any number of ranks
//
// Keeping a checkpoint after the job: stage the prefix out of the burst buffer into a directory
// (`#BB_LUA stage_out source=ssp/ destination=/home/me/ckpt`); the directory is then a
// DirectorySnapshotStore, and the next job stages it back in
// (`#BB_LUA stage_in source=/home/me/ckpt destination=ssp/`) or restores from it directly.
// autotune-bb copies objects in key order, so `latest` is staged out after the parts it names.
//
// Sharing: every server rank and rank 0 must reach the same store (the same directories: one
// node, or tiers on storage all nodes share); each rank opens its own TierStore on them (several
// processes may use one store at once).  One job writes under a prefix at a time.
//
// Old snapshots: after put("latest", id), every snapshot under the prefix other than `id` and
// the `keep` - 1 newest complete snapshots before it is removed (keep = 0: none is), so a burst
// buffer sized for `keep` + 1 checkpoints never fills up.  A failure to remove is logged, not
// thrown: the new checkpoint is already committed.
//
// Thread safety: as autotune::TierStore, every call may be made from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autotune/tier.hpp"
#include "ssp/snapshot.hpp"

namespace ssp {

struct TierSnapshotOptions {
  // Objects are stored as "<prefix>/<name>": 1..150 characters, a valid tier key (letters,
  // digits, '.', '_', '-' and '/' between components).
  std::string prefix = "ssp";
  // Complete snapshots kept when `latest` moves on (counting the new one); 0 keeps all.
  int keep = 2;
};

class TierSnapshotStore : public SnapshotStore {
 public:
  // Over a store that outlives this object.  Throws Error(invalid_argument) for a bad prefix or
  // keep < 0.
  explicit TierSnapshotStore(autotune::TierStore &store, TierSnapshotOptions options = {});
  // Over a store it owns.
  explicit TierSnapshotStore(autotune::TierStore &&store, TierSnapshotOptions options = {});

  // The burst buffer of Slurm job `job` (0: $AUTOTUNE_BB_JOB, else $SLURM_JOB_ID), opened as its
  // owner (see autotune::open_job_buffer; `conf_path` empty: the default autotune.conf).
  // Throws Error(not_found) when the job has no buffer, Error(permission) when this process is
  // not its owner, Error(invalid_argument) outside a job.
  static std::unique_ptr<TierSnapshotStore> open_job_buffer(TierSnapshotOptions options = {},
                                                            std::uint32_t job = 0,
                                                            const std::string &conf_path = "");

  // SnapshotStore.  get() and put() move the bytes once (no staging copy); errors are those of
  // autotune::TierStore (not_found, no_space, corrupt, io, permission) with the object's name.
  void put(const std::string &name, std::string_view bytes) override;
  std::string get(const std::string &name) const override;
  std::vector<std::string> list() const override;
  void remove(const std::string &name) override;

  // Where object `name` is: its size, checksum and pieces per tier.  Error(not_found) if absent.
  autotune::ObjectInfo stat(const std::string &name) const;
  // Removes the objects of every snapshot other than the one `latest` names and the `keep` - 1
  // newest complete snapshots before it; returns how many objects were removed.
  std::size_t prune(int keep);

  autotune::TierStore &tier_store() const { return *store_; }
  const TierSnapshotOptions &options() const { return opt_; }
  // The tier key of object `name`.
  std::string key(const std::string &name) const;

 private:
  std::unique_ptr<autotune::TierStore> owned_;
  autotune::TierStore *store_;
  TierSnapshotOptions opt_;
};

}  // namespace ssp
