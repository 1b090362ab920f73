// libssp: a staleness-bounded (SSP) parameter server for MPI programs.
//
//   #include <ssp/ssp.hpp>         // everything below
//   mpicxx app.cc $(pkg-config --cflags --libs ssp)
//
//   consistency.hpp  BSP / SSP(s) / ASP policy and vector clocks
//   options.hpp      Context options (staleness, servers, logical servers)
//   context.hpp      ssp::Context: roles, tables, clock(), barrier(), run(), checkpoint/restore
//   table.hpp        ssp::Table<T>: get / inc / pull_all
//   job.hpp          logical executors and micro-tasks for Context::run()
//   snapshot.hpp     SnapshotStore (checkpoint storage seam), its directory implementation,
//                    verify_snapshot()
//   tier_store.hpp   TierSnapshotStore: checkpoints on slurm-autotune's tier store (pmem + disk,
//                    a Slurm job's burst buffer)
//   profile.hpp      AUTOTUNE_PROFILE_* and the result file read by slurm-autotune's tuner
//   error.hpp        ssp::Error / ssp::Errc
//
// Example: see context.hpp; the examples/ folder of slurm-autotune has full training programs.
#pragma once

#include "ssp/consistency.hpp"
#include "ssp/context.hpp"
#include "ssp/error.hpp"
#include "ssp/job.hpp"
#include "ssp/options.hpp"
#include "ssp/profile.hpp"
#include "ssp/snapshot.hpp"
#include "ssp/table.hpp"
#include "ssp/tier_store.hpp"
