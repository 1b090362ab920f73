// Jobs of logical executors and micro-tasks, run by ssp::Context::run().
//
// The work of a job is `units` work units (e.g. training samples), split into `executors`
// logical executors (contiguous, near-equal shards: executor e owns units
// [e*units/E, (e+1)*units/E)), more of them than worker ranks.  Every epoch, each executor's
// shard is processed once, in micro-tasks: ranges of units cut at hand-out time to the size the
// library measured to take about `task_ms` milliseconds.  Workers pull micro-tasks from a
// scheduler on rank 0, so a fast worker runs more of them than a slow one.  The micro-tasks of one
// executor run one after the other (never two at once), each seeing the executor's state as the
// previous one left it, whichever worker ran it (after Litz: Qiao et al., "Litz: Elastic
// Framework for High-Performance Distributed Machine Learning", USENIX ATC 2018).
//
// Clocks: every clock, the scheduler hands out `tasks_per_clock` micro-tasks; a worker that asks
// for work when its clock's micro-tasks are all taken calls clock() and moves on.  Each worker
// therefore clocks once per global clock and the consistency policy bounds how far apart they are.
//
//   ssp::Job job;
//   job.executors = 4 * ctx.workers();
//   job.units = train.size();
//   job.epochs = 5;
//   ctx.run(job, [&](ssp::Task &t) {
//     for (auto i = t.begin; i < t.end; i += batch) { /* w.get_rows(...); w.inc_rows(...); */ }
//   });
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace ssp {

class SnapshotStore;

struct Task {
  std::int64_t id = 0;      // unique within the job
  int executor = 0;         // the logical executor whose work this is
  int epoch = 0;            // 0-based
  std::uint64_t begin = 0;  // global unit indices [begin, end), inside the executor's shard
  std::uint64_t end = 0;
  std::uint64_t shard_begin = 0;  // the executor's shard [shard_begin, shard_end)
  std::uint64_t shard_end = 0;
  std::int64_t clock = 0;  // the worker's clock while it runs
  // The executor's state: bytes the application keeps across its micro-tasks (cursor, RNG,
  // per-shard variables...).  Empty at the start of a job.  Shipped with every micro-task, so keep
  // it small (kilobytes).
  std::string state;

  // The state as a trivially copyable T (`init` when the state is still empty).
  template <class T>
  T state_as(const T &init = T{}) const {
    static_assert(std::is_trivially_copyable<T>::value, "state_as needs a trivially copyable type");
    if (state.size() != sizeof(T)) return init;
    T v;
    std::memcpy(&v, state.data(), sizeof(T));
    return v;
  }
  template <class T>
  void set_state(const T &v) {
    static_assert(std::is_trivially_copyable<T>::value,
                  "set_state needs a trivially copyable type");
    state.assign(reinterpret_cast<const char *>(&v), sizeof(T));
  }
};

using TaskFn = std::function<void(Task &)>;

struct Job {
  int executors = 0;                     // logical executors, >= 1 (several per worker is best)
  std::uint64_t units = 0;               // total work units, >= executors
  int epochs = 1;                        // >= 1
  int tasks_per_clock = 0;               // micro-tasks per clock; 0 = one per worker
  double task_ms = 50;                   // target duration of a micro-task, 1 .. 900 ms
  std::uint64_t initial_task_units = 0;  // size of the first micro-tasks; 0 = min(64, max)
  std::uint64_t max_task_units = 0;      // upper bound on a micro-task's units; 0 = none
  std::uint64_t samples_per_unit = 1;    // for throughput reports
  // Called on each worker right after each of its clocks (e.g. to evaluate the model).
  std::function<void(std::int64_t clock)> after_clock;
  // Consistent checkpoints while running: every `checkpoint_every` clocks the scheduler stops
  // handing out micro-tasks, waits for the ones in flight, the workers flush, and the servers and
  // rank 0 copy the four parts into the store; then the job goes on.  0 = none.
  SnapshotStore *checkpoint_store = nullptr;
  int checkpoint_every = 0;
  // Suspend the job when every worker reaches this clock (after the checkpoint of that clock, if
  // any): run() returns with finished == false and a later run() of the same job resumes it.
  // -1 = run to the end.
  std::int64_t stop_at_clock = -1;
};

struct RunResult {
  bool finished = false;   // false when suspended by stop_at_clock or profiling
  std::int64_t clock = 0;  // this rank's clock at the end (workers)
  double seconds = 0;      // wall time of run() on this rank
  // Micro-tasks and units run by each worker (index = worker index), the same on every rank.
  std::vector<std::uint64_t> tasks_per_worker;
  std::vector<std::uint64_t> units_per_worker;
  std::uint64_t checkpoints = 0;  // checkpoints written during this run
  double task_s_mean = 0;         // measured micro-task durations (every worker, this run)
  double task_s_max = 0;
  std::uint64_t task_units = 0;  // the size the scheduler would give the next micro-task
};

}  // namespace ssp
