// Options of an ssp::Context.  Every field is validated by the Context constructor on every rank
// (Error(invalid_argument) naming the field, the value and what is allowed).
//
//   ssp::Options o;
//   o.staleness = 2;          // SSP(2); 0 = BSP; ssp::kAsync = ASP
//   o.servers = 1;            // parameter-server ranks; -1 = $AUTOTUNE_PS, else 1
//   ssp::Context ctx(MPI_COMM_WORLD, o);
#pragma once

#include <cstddef>
#include <string>

#include "ssp/consistency.hpp"

namespace ssp {

struct Options {
  // 0 = BSP, s >= 1 = SSP(s), kAsync = ASP.  Negative values are rejected.
  int staleness = 0;
  // Number of parameter-server ranks (the first `servers` ranks of the communicator); the other
  // ranks are workers.  -1: the AUTOTUNE_PS environment variable when set, else 1.
  // Allowed: 1 .. size-1 (at least one worker).
  int servers = -1;
  // Logical servers: each table is cut into this many row shards (contiguous row ranges), mapped
  // round-robin onto the server ranks.  More shards than server ranks lets a snapshot be restored
  // on another number of servers by moving shards, never re-partitioning rows.  A table with
  // fewer rows uses one shard per row.  Allowed: servers .. 65536.
  int logical_servers = 16;
  // A worker sends its buffered increments early (before clock()) once they exceed this many
  // bytes.  Allowed: 1 KiB .. 1 GiB.
  std::size_t flush_bytes = std::size_t{4} << 20;
  // A table a worker reads whole is read fresh within the clock: once the servers' minimum clock
  // has caught up with the worker's, the next read asks for the rows again (a request answered
  // at once, repeated at most every millisecond until then) and later reads use them.  The
  // staleness bound is unchanged; reads are as fresh as every worker's last clock instead of as
  // the clock the worker started from (about one clock fresher when the workers keep pace, so
  // that SSP's dense models train as BSP's do).  Costs one more transfer of the table per clock.
  // false: a table is fetched once per clock.
  bool fresh_reads = true;
  // Longest sleep (microseconds) between polls while a rank waits for a message; waiting ranks
  // sleep instead of spinning so that oversubscribed nodes keep their cores for computing.
  // 0 spins.  Allowed: 0 .. 100000.
  int idle_sleep_us = 100;
  // The application's name in the profiling result ("app"); empty: the program's name.
  std::string app;
  // Honour AUTOTUNE_PROFILE_BATCHES / AUTOTUNE_PROFILE_ONLY / AUTOTUNE_RESULT (see profile.hpp).
  bool profile = true;
  // Clocks skipped before profiling starts; -1: $AUTOTUNE_PROFILE_WARMUP when set, else 2.
  int profile_warmup = -1;
};

}  // namespace ssp
