// ssp::Profiler: the profiling hook of a Context (AUTOTUNE_RESULT, AUTOTUNE_PROFILE_BATCHES,
// _WARMUP and _ONLY; the result format is documented in include/ssp/profile.hpp).
//
// Owns: the profiling environment (read and validated by the Context constructor), this rank's
// measured window (the warm-up clock where it opens, the clock where it closes when
// AUTOTUNE_PROFILE_BATCHES is set, and the wall, CPU, sample and clock readings at both ends), the
// rank's samples counter, and whether rank 0 asked this server to stop (profile-only mode).
// It never reads the other parts' state: the worker and the Context tell it their clocks
// (RankClock); it only sends and receives the profile-only stop message and, on rank 0, gathers
// every rank's record and writes the result file.
//
// Thread safety: none; the Context's thread only.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "profile.hpp"
#include "ssp/consistency.hpp"
#include "ssp/context.hpp"
#include "ssp/options.hpp"
#include "transport.hpp"

namespace ssp {

// A rank's clock as the profiler reads it: a worker's own clock (slowest == fastest), or on a
// server the slowest and the fastest worker's clocks (its vector clock's min and max).  A server's
// window opens when the fastest worker reaches the warm-up clock and closes when the slowest
// reaches the end clock.
struct RankClock {
  std::int64_t slowest = 0, fastest = 0;
};

class Profiler {
 public:
  // `enabled` is Options::profile; `env` is read_profile_env()'s answer (defaults when disabled).
  Profiler(Transport &tx, MPI_Comm comm, int rank, int size, int servers, Role role, bool enabled,
           std::string app, const ConsistencyPolicy &policy, const ProfileEnv &env);

  // Samples processed by this rank (run() and Context::count_samples()).
  void add_samples(std::uint64_t n) { samples_ += n; }
  // Every rank starts (again) at clock `base`: at construction and after a restore.
  void rebase(std::int64_t base);
  // A worker moved to `clock`.  In profile-only mode, once the window closed outside run(), it
  // waits for rank 0's stop and ends the process.
  void worker_clock(std::int64_t clock, bool in_run);
  // A server's vector clock moved.  In profile-only mode rank 0 (when no job is running) tells
  // every rank to stop and ends the process; another server ends it once stopped and closed.
  void server_clock(RankClock now, bool job_running);
  // A server received rank 0's stop (profile-only mode).
  void stop_requested(RankClock now, bool job_running);
  // Profile-only mode: the clock where run() suspends its job to end the process; else -1.
  std::int64_t stop_clock() const { return enabled_ && env_.only ? end_clock_ : -1; }
  bool profile_only() const { return enabled_ && env_.only; }
  // Collective: the final result (Options::profile only), gathered to rank 0.
  void finish(RankClock now) {
    if (enabled_) write_result(false, now);
  }
  // Collective: profile-only mode is done: writes the result, finalizes MPI, exit(0).
  [[noreturn]] void exit(RankClock now);

 private:
  void begin(std::int64_t clock);
  void end(std::int64_t clock);
  RankRecord my_record(RankClock now);
  void write_result(bool profile_only, RankClock now);

  Transport &tx_;
  MPI_Comm comm_;
  int rank_, size_, servers_;
  Role role_;
  bool enabled_;
  std::string app_;
  ConsistencyPolicy policy_;
  ProfileEnv env_;

  std::uint64_t samples_ = 0;
  bool stop_pending_ = false;
  std::int64_t warm_clock_ = 0, end_clock_ = -1;
  bool started_ = false, ended_ = false;
  double t0_ = 0, cpu0_ = 0, t1_ = 0, cpu1_ = 0;
  std::uint64_t s0_ = 0, s1_ = 0;
  std::int64_t c0_ = 0, c1_ = 0;
};

}  // namespace ssp
