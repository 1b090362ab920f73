// ssp::Profiler, the profiling hook of a Context (see profiling.hpp): owns the profiling
// environment, this rank's measured window and samples counter, and writes the result file on
// rank 0.  Thread safety: none; the Context's thread only.
#include "profiling.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "autotune/log.hpp"
#include "protocol.hpp"

namespace ssp {

Profiler::Profiler(Transport &tx, MPI_Comm comm, int rank, int size, int servers, Role role,
                   bool enabled, std::string app, const ConsistencyPolicy &policy,
                   const ProfileEnv &env)
    : tx_(tx),
      comm_(comm),
      rank_(rank),
      size_(size),
      servers_(servers),
      role_(role),
      enabled_(enabled),
      app_(std::move(app)),
      policy_(policy),
      env_(env) {}

void Profiler::begin(std::int64_t clock) {
  started_ = true;
  t0_ = wall_now_s();
  cpu0_ = process_cpu_s();
  s0_ = samples_;
  c0_ = clock;
}

void Profiler::end(std::int64_t clock) {
  ended_ = true;
  t1_ = wall_now_s();
  cpu1_ = process_cpu_s();
  s1_ = samples_;
  c1_ = clock;
}

void Profiler::rebase(std::int64_t base) {
  warm_clock_ = base + env_.warmup;
  end_clock_ = env_.batches > 0 ? warm_clock_ + env_.batches : -1;
  started_ = ended_ = false;
  if (role_ == Role::worker && env_.warmup == 0) begin(base);  // the worker is at `base`
}

void Profiler::worker_clock(std::int64_t clock, bool in_run) {
  if (!enabled_) return;
  if (!started_ && clock >= warm_clock_) begin(clock);
  if (started_ && !ended_ && end_clock_ >= 0 && clock >= end_clock_) {
    end(clock);
    if (env_.only && !in_run) {
      tx_.recv_from(0, kTagControl);
      exit(RankClock{clock, clock});
    }
  }
}

void Profiler::server_clock(RankClock now, bool job_running) {
  if (!enabled_ || role_ != Role::server) return;
  if (!started_ && now.fastest >= warm_clock_) begin(now.fastest);
  if (started_ && !ended_ && end_clock_ >= 0 && now.slowest >= end_clock_) {
    end(now.slowest);
    if (env_.only && rank_ == 0 && !job_running) {
      for (int r = 1; r < size_; ++r) tx_.send(r, kTagControl, std::string(1, char(kProfileStop)));
      exit(now);
    }
  }
  if (stop_pending_ && end_clock_ >= 0 && now.slowest >= end_clock_) exit(now);
}

void Profiler::stop_requested(RankClock now, bool job_running) {
  stop_pending_ = true;
  server_clock(now, job_running);
}

RankRecord Profiler::my_record(RankClock now) {
  if (started_ && !ended_) end(now.slowest);
  RankRecord r;
  r.rank = rank_;
  r.role = role_ == Role::worker ? 1 : 0;
  const std::string n = node_name();
  std::snprintf(r.node, sizeof r.node, "%s", n.c_str());
  if (started_) {
    r.wall_s = t1_ - t0_;
    r.cpu_s = cpu1_ - cpu0_;
    r.samples = s1_ - s0_;
    r.clocks = c1_ - c0_;
  }
  r.peak_rss_mb = peak_rss_mb();
  r.cpus_allocated = cpus_allocated();
  r.mem_limit_mb = mem_limit_mb(r.cpus_allocated);
  return r;
}

// Collective: gathers every rank's record; rank 0 writes AUTOTUNE_RESULT.
void Profiler::write_result(bool profile_only, RankClock now) {
  RankRecord mine = my_record(now);
  std::vector<RankRecord> all(static_cast<std::size_t>(size_));
  MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, comm_);
  if (rank_ != 0 || env_.result_path.empty()) return;
  ResultHeader h;
  h.app = app_;
  if (h.app.empty()) {
    char buf[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    h.app = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "app";
    h.app = h.app.substr(h.app.find_last_of('/') + 1);
  }
  h.ranks = size_;
  h.workers = size_ - servers_;
  h.servers = servers_;
  h.consistency = policy_.name();
  h.staleness = policy_.model() == ConsistencyPolicy::Model::asp ? -1 : policy_.staleness();
  h.warmup_clocks = env_.warmup;
  h.profile_only = profile_only;
  try {
    write_file_atomic(env_.result_path, result_text(h, all));
  } catch (const std::exception &e) {
    autotune::log(autotune::LogLevel::error, std::string("ssp: ") + e.what());
  }
}

void Profiler::exit(RankClock now) {
  tx_.drain();
  write_result(true, now);
  autotune::log(autotune::LogLevel::info,
                "ssp: profiling done (AUTOTUNE_PROFILE_ONLY): exiting with status 0");
  std::fflush(nullptr);
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
  std::exit(0);
}

}  // namespace ssp
