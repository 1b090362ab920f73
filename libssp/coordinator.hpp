// ssp::Coordinator: rank 0's driver of the micro-task scheduler of Context::run().
//
// Owns: the Scheduler (scheduler.hpp: the executors' queues and states, the micro-tasks in
// flight), kept between runs so that a job suspended by stop_at_clock or restored from a snapshot
// resumes at the next run(); the job being run; the workers' micro-task requests it deferred; the
// clock of the last checkpoint taken during a run; whether the run was suspended; and the
// numbering of the checkpoints it starts during runs.
//
// It answers workers' micro-task requests (grant, clock, done) and, once every worker waits at
// the pause clock with nothing in flight, tells them to checkpoint or to stop.  It reads the
// workers' clocks from the Server and the profile-only stop clock from the Profiler.  Only rank 0
// uses it (on other ranks it stays empty).  Thread safety: none; the Context's thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>

#include "codec.hpp"
#include "profiling.hpp"
#include "scheduler.hpp"
#include "server.hpp"
#include "ssp/job.hpp"
#include "transport.hpp"

namespace ssp {

class Coordinator {
 public:
  Coordinator(Transport &tx, const Server &server, const Profiler &profiler, int rank, int servers,
              int workers);

  // run() starts `job` (validated as `spec`): the suspended or restored job resumes when it has
  // the same shape and work left, else a new one starts.
  void begin(const Job &job, const SchedulerSpec &spec);
  // run() has ended on rank 0.
  void end() { job_ = nullptr; }
  bool running() const { return job_ != nullptr; }
  // The last run() was suspended (stop_at_clock, profile-only) rather than finished.
  bool suspended() const { return suspended_; }

  // kTaskReq from worker rank `src` (`r` after the message type): records the micro-task it
  // completed, if any, and answers it now or later.  Error(internal) outside run().
  void on_task_request(int src, Reader &r);

  // The scheduler to put into a snapshot taken now, or null: in a run's checkpoint (`in_run`)
  // the job's; between runs only a suspended job's with nothing in flight.
  const Scheduler *job_to_snapshot(bool in_run) const;
  // A checkpoint inside run() was written at `clock`: the next pause moves on.
  void checkpoint_written(std::int64_t clock);
  // restore(): the snapshot's suspended job (null: none), resumed at the next run().
  void restore_job(std::unique_ptr<Scheduler> sched) { sched_ = std::move(sched); }
  // Every worker restarts at `clock` (after a restore): no checkpoint is due there.
  void resume_at(std::int64_t clock) { last_ckpt_ = clock; }

  // After run(): micro-tasks and units per worker, micro-task durations and the next size.
  void report(RunResult *res) const;

 private:
  void update_pause();
  void send_decision(int worker, std::uint8_t d, const Grant *g = nullptr, std::int64_t ck = 0);
  void schedule();

  Transport &tx_;
  const Server &server_;
  const Profiler &profiler_;
  const int rank_, servers_, workers_;

  std::unique_ptr<Scheduler> sched_;
  const Job *job_ = nullptr;
  std::deque<std::pair<int, std::int64_t>> task_reqs_;  // deferred (worker, clock)
  std::int64_t last_ckpt_ = 0;
  bool suspended_ = false;
  std::int64_t run_ckpt_seq_ = 0;
};

}  // namespace ssp
