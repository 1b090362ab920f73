// Checkpoint flags shared by the example programs: where libssp's snapshots go (a directory, the
// job's burst buffer, or a tier store on directories given by flags or by autotune.conf Tier=
// lines), how often, whether to resume from the newest one, and where to stop.  The flags are
// validated before MPI starts (one line from rank 0, exit status 2 on every rank); opening the
// store is collective and fails the same way on every rank.
//
//   --checkpoint-dir DIR          a directory every server rank sees (DirectorySnapshotStore)
//   --checkpoint-bb               this Slurm job's burst buffer (#BB_LUA buffer ...)
//   --checkpoint-tiers SPEC       a tier store on KIND:PATH:SIZE[:BANDWIDTH][,...]
//   --checkpoint-tier-conf FILE   a tier store on the Tier= lines of FILE (autotune.conf syntax)
//   --checkpoint-prefix KEY       key prefix in a tier store (default ssp)
//   --checkpoint-keep N           complete snapshots kept in a tier store (default 2; 0: all)
//   --checkpoint-every N          clocks between checkpoints (0: none)
//   --restore                     resume from the newest checkpoint of the store
//   --stop-at-clock N             suspend the job at clock N (after the checkpoint due then)
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "ssp/snapshot.hpp"

namespace examples {

struct CheckpointFlags {
  enum class Where { none, dir, bb, tiers, tier_conf };
  Where where = Where::none;
  std::string dir;        // --checkpoint-dir
  std::string tier_text;  // --checkpoint-tiers as autotune.conf Tier= lines
  std::string tier_file;  // --checkpoint-tier-conf (or "--checkpoint-tiers", for messages)
  std::string prefix = "ssp";
  int keep = 2;
  int every = 0;
  bool restore = false;
  std::int64_t stop_at = -1;
  bool any_store() const { return where != Where::none; }
};

// Adds the flags above to `f`.
void add_checkpoint_flags(Flags &f);
// Validates them (before MPI_Init): a bad one fails through f.fail().
CheckpointFlags checkpoint_flags(const Flags &f);

// Opens the store the flags name (nullptr for none).  Collective over `comm`: rank 0 opens it
// first (laying out a new tier store once), then the other ranks.  On an error every rank throws
// the same ssp::Error, the first failing rank's.
std::unique_ptr<ssp::SnapshotStore> open_checkpoint_store(const CheckpointFlags &c, MPI_Comm comm);
// One line saying where checkpoints go, e.g. "tier store ssp/ on pmem 1G + disk 8G".
std::string describe_store(const CheckpointFlags &c, const ssp::SnapshotStore *s);

// CRC-32 of a table's contents in hex (to show that a restored model is the saved one).
std::string digest(const void *data, std::size_t bytes);

}  // namespace examples
