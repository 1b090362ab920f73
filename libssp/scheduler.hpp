// The micro-task scheduler of Context::run() (pure logic, no MPI; rank 0 drives it).
//
// TaskSizer: how many units a micro-task gets.  It keeps an exponentially weighted mean of the
// measured seconds per unit over all completed micro-tasks and sizes the next one to take
// `target_s` on an average worker: clamp(target_s / mean, min_units, max_units), growing at most
// 4x per step (so a bad first guess does not jump to a huge task).  Before any measurement it
// hands out `initial_units`.
//
// Scheduler: the executors' queues (ranges of units still to process, epoch by epoch), the
// executors' states, the tasks in flight and the number of micro-tasks handed out per clock.
// A worker at clock c asks for work; decide() answers, in this order:
//   done   no unit is left to hand out (the job ends for this worker)
//   pause  c >= the pause clock (a checkpoint or a suspension is pending): defer the request
//   clock  clock c already had its tasks_per_clock micro-tasks: move to clock c+1
//   grant  a micro-task of the idle executor with the most work left
//   wait   every executor with work left is busy: defer the request until one completes
// Workers pull, so a fast worker takes more micro-tasks than a slow one.
//
// Thread safety: none (one thread on rank 0).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace ssp {

class TaskSizer {
 public:
  TaskSizer() = default;
  TaskSizer(double target_s, std::uint64_t min_units, std::uint64_t max_units,
            std::uint64_t initial_units);
  // Units for the next micro-task.
  std::uint64_t next_units() const;
  // Records that `units` took `seconds` (ignored when units == 0 or seconds < 0).
  void record(std::uint64_t units, double seconds);
  double seconds_per_unit() const { return spu_; }  // 0 before any measurement
  std::uint64_t measured() const { return measured_; }
  double target_s() const { return target_s_; }
  void retarget(double target_s, std::uint64_t max_units) {
    target_s_ = target_s;
    max_units_ = max_units == 0 ? ~std::uint64_t{0} : max_units;
  }

  std::string encode() const;
  static TaskSizer decode(const std::string &bytes);

 private:
  double target_s_ = 0.05;
  std::uint64_t min_units_ = 1;
  std::uint64_t max_units_ = ~std::uint64_t{0};
  std::uint64_t initial_units_ = 64;
  double spu_ = 0;              // EWMA seconds per unit
  std::uint64_t measured_ = 0;  // micro-tasks recorded
  std::uint64_t last_ = 0;      // units of the last micro-task recorded
};

struct WorkRange {
  std::int32_t epoch;
  std::uint64_t begin;  // global unit indices
  std::uint64_t end;
};

struct Grant {
  std::int64_t task_id;
  int executor;
  int epoch;
  std::uint64_t begin, end;
  std::uint64_t shard_begin, shard_end;
};

enum class Decision { grant, clock, pause, wait, done };

struct SchedulerSpec {
  int executors = 1;
  std::uint64_t units = 1;
  int epochs = 1;
  int tasks_per_clock = 1;
  double task_s = 0.05;
  std::uint64_t initial_units = 0;
  std::uint64_t max_units = 0;
};

class Scheduler {
 public:
  Scheduler() = default;
  Scheduler(int workers, const SchedulerSpec &spec);

  Decision decide(int worker, std::int64_t clock, Grant *out);
  // The micro-task `task_id` ran on `worker` for `seconds`, leaving executor state `state`.
  void complete(int worker, std::int64_t task_id, double seconds, std::string state);

  const std::string &state_of(int executor) const { return execs_.at(executor).state; }
  bool work_left() const { return units_left_ > 0; }
  std::size_t in_flight() const { return flying_.size(); }
  void set_pause(std::int64_t clock) { pause_ = clock; }
  std::int64_t pause() const { return pause_; }
  int executors() const { return static_cast<int>(execs_.size()); }
  const SchedulerSpec &spec() const { return spec_; }
  const TaskSizer &sizer() const { return sizer_; }
  std::uint64_t units_left() const { return units_left_; }
  const std::vector<std::uint64_t> &tasks_by_worker() const { return tasks_by_worker_; }
  const std::vector<std::uint64_t> &units_by_worker() const { return units_by_worker_; }
  std::uint64_t shard_begin(int e) const;
  // Durations of the micro-tasks completed since construction or the last rebase().
  double task_s_sum() const { return task_s_sum_; }
  double task_s_max() const { return task_s_max_; }

  // Worker count of a resumed job (e.g. after a restore on another number of ranks), and the
  // clock everyone resumes at; per-worker counters restart at 0.  Requires in_flight() == 0.
  void rebase(int workers, std::int64_t clock);
  // Takes the tunables of `spec` (tasks per clock, task duration and size bounds) for a resumed
  // job; the shape (executors, units, epochs) must be unchanged.
  void retune(const SchedulerSpec &spec);

  // The four-part snapshot's scheduler part and each executor's queue and state.
  std::string encode_scheduler() const;
  std::string encode_queue(int executor) const;
  const std::string &encode_state(int executor) const { return execs_.at(executor).state; }
  // Rebuilds a scheduler from its parts; `spec` must match what was saved (checked).
  static Scheduler decode(int workers, const SchedulerSpec &spec, const std::string &scheduler,
                          const std::vector<std::string> &queues,
                          const std::vector<std::string> &states);

 private:
  struct Exec {
    std::deque<WorkRange> queue;
    std::string state;
    bool busy = false;
    std::uint64_t left = 0;  // units in queue
  };
  struct Flying {
    int executor;
    int worker;
    std::uint64_t units;
  };
  SchedulerSpec spec_;
  TaskSizer sizer_;
  std::vector<Exec> execs_;
  std::map<std::int64_t, Flying> flying_;
  std::map<std::int64_t, int> issued_;  // clock -> micro-tasks handed out
  std::vector<std::uint64_t> tasks_by_worker_, units_by_worker_;
  std::uint64_t units_left_ = 0;
  std::int64_t next_id_ = 0;
  std::int64_t pause_ = -1;
  double task_s_sum_ = 0, task_s_max_ = 0;
};

// Validates the user-facing Job fields that the scheduler uses; Error(invalid_argument) naming
// the field.  `workers` is the number of worker ranks.
SchedulerSpec make_scheduler_spec(int executors, std::uint64_t units, int epochs,
                                  int tasks_per_clock, double task_ms, std::uint64_t initial_units,
                                  std::uint64_t max_units, int workers);

}  // namespace ssp
