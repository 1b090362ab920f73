// ssp::Checkpointer: consistent snapshots of a Context (the four parts of Litz's design: tables'
// shards, scheduler, executors' queues and states; see README.md) and restore.
//
// Owns: the store of the checkpoint in progress (the collective checkpoint()'s, or the job's
// during run()), rank 0's bookkeeping of the checkpoints in progress (which servers wrote their
// shards, the sums of the parts written, the kind of barrier), the count of checkpoints written,
// and the job shape of a restored snapshot, which the next run() must repeat.
//
// Protocol: once every worker arrived at a checkpoint barrier, each server writes the shards it
// holds and reports their sums to rank 0 (kShardsDone); rank 0, once every server is done, writes
// the scheduler and executors (when a job is to be kept), the manifest listing every part, then
// `latest`, and acknowledges the barrier to the workers.  It reads and fills the Server's shards
// and the Coordinator's scheduler; the table shapes belong to the Context, which remaps them on
// restore.  Thread safety: none; the Context's thread only.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codec.hpp"
#include "coordinator.hpp"
#include "manifest.hpp"
#include "server.hpp"
#include "ssp/consistency.hpp"
#include "ssp/context.hpp"
#include "ssp/snapshot.hpp"
#include "tables.hpp"
#include "transport.hpp"

namespace ssp {

// A snapshot's id: "c" and the 12-digit clock.
std::string snapshot_id(std::int64_t clock);

class Checkpointer {
 public:
  Checkpointer(Transport &tx, MPI_Comm comm, const Tables &tables, Server &server,
               Coordinator &coord, const ConsistencyPolicy &policy, int rank, int servers,
               int workers);

  // Servers: the store of the collective checkpoint() being served (null after it).
  void set_store(SnapshotStore *store) { store_ = store; }
  // Servers: the job's store during run(), for its checkpoints (null after it).
  void set_run_store(SnapshotStore *store) { run_store_ = store; }
  // Checkpoints written by this rank (rank 0 writes them all).
  std::uint64_t written() const { return checkpoints_; }

  // Servers: every worker arrived at checkpoint barrier (kind, seq) (kCkptRun or kCkptEnd).
  void on_barrier(std::uint8_t kind, std::int64_t seq);
  // Rank 0: kShardsDone from another server (`r` after the message type).
  void on_shards_done(Reader &r);

  // Collective: loads the newest snapshot of `store` (see Context::restore).  `remap(id, L)`
  // maps table `id` onto L logical servers over this run's servers, its shards zeroed and its
  // cache dropped, before the shards are loaded.  An error anywhere is thrown on every rank.
  SnapshotInfo restore(const SnapshotStore &store, const std::function<void(int, int)> &remap);
  // run(): Error(invalid_argument) when a restored job's shape differs from `spec`; otherwise
  // the restored shape is forgotten.
  void check_resumed_job(const SchedulerSpec &spec);

 private:
  std::vector<PartSum> write_shards(const std::string &id);
  void put_part(std::vector<PartSum> &sums, std::string name, PartKind kind,
                const std::string &payload);
  void write_manifest(const std::string &id, std::int64_t ckpt_clock, const Scheduler *sched,
                      std::vector<PartSum> sums);
  void maybe_finish(std::int64_t seq);

  Transport &tx_;
  MPI_Comm comm_;
  const Tables &tables_;
  Server &server_;
  Coordinator &coord_;
  const ConsistencyPolicy &policy_;
  const int rank_, servers_, workers_;

  SnapshotStore *store_ = nullptr;      // of the checkpoint in progress
  SnapshotStore *run_store_ = nullptr;  // the running job's
  std::uint64_t checkpoints_ = 0;
  // rank 0, per checkpoint seq in progress
  std::map<std::int64_t, int> shards_done_;                 // servers done
  std::map<std::int64_t, std::vector<PartSum>> ckpt_sums_;  // parts written
  std::set<std::int64_t> own_shards_done_;
  std::map<std::int64_t, std::uint8_t> ckpt_kind_;
  // every rank: the restored job's shape, until the next run()
  bool restored_job_ = false;
  std::uint64_t r_units_ = 0;
  int r_executors_ = 0, r_epochs_ = 0;
};

}  // namespace ssp
