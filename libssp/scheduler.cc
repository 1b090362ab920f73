#include "scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "codec.hpp"
#include "ssp/error.hpp"

namespace ssp {

TaskSizer::TaskSizer(double target_s, std::uint64_t min_units, std::uint64_t max_units,
                     std::uint64_t initial_units)
    : target_s_(target_s),
      min_units_(std::max<std::uint64_t>(1, min_units)),
      max_units_(max_units == 0 ? ~std::uint64_t{0} : max_units),
      initial_units_(std::clamp<std::uint64_t>(initial_units, min_units_, max_units_)) {}

std::uint64_t TaskSizer::next_units() const {
  if (measured_ == 0 || spu_ <= 0) return initial_units_;
  double want = target_s_ / spu_;
  const double cap = 4.0 * static_cast<double>(std::max<std::uint64_t>(last_, 1));
  want = std::min(want, cap);
  want = std::min(want, 1e18);
  auto n = static_cast<std::uint64_t>(std::llround(std::max(want, 1.0)));
  return std::clamp(n, min_units_, max_units_);
}

void TaskSizer::record(std::uint64_t units, double seconds) {
  if (units == 0 || !(seconds >= 0)) return;
  const double spu = seconds / static_cast<double>(units);
  spu_ = measured_ == 0 ? spu : 0.7 * spu_ + 0.3 * spu;
  ++measured_;
  last_ = std::max(last_, units);
}

std::string TaskSizer::encode() const {
  Writer w;
  w.put(target_s_);
  w.put(min_units_);
  w.put(max_units_);
  w.put(initial_units_);
  w.put(spu_);
  w.put(measured_);
  w.put(last_);
  return w.take();
}

TaskSizer TaskSizer::decode(const std::string &bytes) {
  Reader r(bytes, "task sizer");
  TaskSizer s;
  s.target_s_ = r.get<double>();
  s.min_units_ = r.get<std::uint64_t>();
  s.max_units_ = r.get<std::uint64_t>();
  s.initial_units_ = r.get<std::uint64_t>();
  s.spu_ = r.get<double>();
  s.measured_ = r.get<std::uint64_t>();
  s.last_ = r.get<std::uint64_t>();
  return s;
}

SchedulerSpec make_scheduler_spec(int executors, std::uint64_t units, int epochs,
                                  int tasks_per_clock, double task_ms, std::uint64_t initial_units,
                                  std::uint64_t max_units, int workers) {
  auto bad = [](const std::string &field, const std::string &value, const std::string &allowed) {
    throw Error(Errc::invalid_argument,
                "job: " + field + ": '" + value + "' is out of range; allowed: " + allowed);
  };
  if (executors < 1 || executors > 1000000)
    bad("executors", std::to_string(executors), "1 to 1000000 (several per worker is best)");
  if (units < static_cast<std::uint64_t>(executors))
    bad("units", std::to_string(units),
        "at least the number of executors (" + std::to_string(executors) + ")");
  if (epochs < 1 || epochs > 1000000) bad("epochs", std::to_string(epochs), "1 to 1000000");
  if (tasks_per_clock < 0 || tasks_per_clock > 1000000)
    bad("tasks_per_clock", std::to_string(tasks_per_clock), "0 (one per worker) to 1000000");
  if (!(task_ms >= 1 && task_ms <= 900))
    bad("task_ms", std::to_string(task_ms), "1 to 900 milliseconds");
  SchedulerSpec s;
  s.executors = executors;
  s.units = units;
  s.epochs = epochs;
  s.tasks_per_clock = tasks_per_clock == 0 ? workers : tasks_per_clock;
  s.task_s = task_ms / 1000.0;
  s.max_units = max_units;
  s.initial_units =
      initial_units != 0 ? initial_units : std::min<std::uint64_t>(64, max_units ? max_units : 64);
  return s;
}

Scheduler::Scheduler(int workers, const SchedulerSpec &spec)
    : spec_(spec),
      sizer_(spec.task_s, 1, spec.max_units, spec.initial_units),
      execs_(static_cast<std::size_t>(spec.executors)),
      tasks_by_worker_(static_cast<std::size_t>(workers)),
      units_by_worker_(static_cast<std::size_t>(workers)) {
  for (int e = 0; e < spec.executors; ++e) {
    const std::uint64_t b = shard_begin(e), en = shard_begin(e + 1);
    auto &ex = execs_[static_cast<std::size_t>(e)];
    for (int ep = 0; ep < spec.epochs; ++ep) ex.queue.push_back({ep, b, en});
    ex.left = (en - b) * static_cast<std::uint64_t>(spec.epochs);
    units_left_ += ex.left;
  }
}

std::uint64_t Scheduler::shard_begin(int e) const {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(e) * spec_.units) /
                                    static_cast<unsigned>(spec_.executors));
}

Decision Scheduler::decide(int worker, std::int64_t clock, Grant *out) {
  if (units_left_ == 0) return Decision::done;
  if (pause_ >= 0 && clock >= pause_) return Decision::pause;
  int &n = issued_[clock];
  if (n >= spec_.tasks_per_clock) return Decision::clock;
  int best = -1;
  for (int e = 0; e < executors(); ++e) {
    const auto &ex = execs_[static_cast<std::size_t>(e)];
    if (ex.busy || ex.left == 0) continue;
    if (best < 0 || ex.left > execs_[static_cast<std::size_t>(best)].left) best = e;
  }
  if (best < 0) return Decision::wait;
  auto &ex = execs_[static_cast<std::size_t>(best)];
  auto &r = ex.queue.front();
  const std::uint64_t units = std::min<std::uint64_t>(sizer_.next_units(), r.end - r.begin);
  out->task_id = next_id_++;
  out->executor = best;
  out->epoch = r.epoch;
  out->begin = r.begin;
  out->end = r.begin + units;
  out->shard_begin = shard_begin(best);
  out->shard_end = shard_begin(best + 1);
  r.begin += units;
  if (r.begin == r.end) ex.queue.pop_front();
  ex.left -= units;
  ex.busy = true;
  units_left_ -= units;
  ++n;
  flying_[out->task_id] = {best, worker, units};
  // Clocks far behind every possible requester are never asked about again.
  while (issued_.size() > 4096) issued_.erase(issued_.begin());
  return Decision::grant;
}

void Scheduler::complete(int worker, std::int64_t task_id, double seconds, std::string state) {
  auto it = flying_.find(task_id);
  if (it == flying_.end() || it->second.worker != worker)
    throw Error(Errc::internal, "scheduler: worker " + std::to_string(worker) +
                                    " completed micro-task " + std::to_string(task_id) +
                                    " it was not running");
  auto &ex = execs_[static_cast<std::size_t>(it->second.executor)];
  ex.busy = false;
  ex.state = std::move(state);
  sizer_.record(it->second.units, seconds);
  task_s_sum_ += seconds;
  task_s_max_ = std::max(task_s_max_, seconds);
  tasks_by_worker_[static_cast<std::size_t>(worker)] += 1;
  units_by_worker_[static_cast<std::size_t>(worker)] += it->second.units;
  flying_.erase(it);
}

void Scheduler::rebase(int workers, std::int64_t /*clock*/) {
  if (!flying_.empty()) throw Error(Errc::internal, "scheduler: rebase with micro-tasks in flight");
  tasks_by_worker_.assign(static_cast<std::size_t>(workers), 0);
  units_by_worker_.assign(static_cast<std::size_t>(workers), 0);
  issued_.clear();
  pause_ = -1;
  task_s_sum_ = task_s_max_ = 0;
}

void Scheduler::retune(const SchedulerSpec &spec) {
  spec_.tasks_per_clock = spec.tasks_per_clock;
  spec_.task_s = spec.task_s;
  spec_.max_units = spec.max_units;
  spec_.initial_units = spec.initial_units;
  sizer_.retarget(spec.task_s, spec.max_units);
}

std::string Scheduler::encode_scheduler() const {
  if (!flying_.empty())
    throw Error(Errc::internal, "scheduler: snapshot with micro-tasks in flight");
  Writer w;
  w.put<std::int32_t>(spec_.executors);
  w.put<std::uint64_t>(spec_.units);
  w.put<std::int32_t>(spec_.epochs);
  w.put<std::int64_t>(next_id_);
  w.put<std::uint64_t>(units_left_);
  w.put_string(sizer_.encode());
  return w.take();
}

std::string Scheduler::encode_queue(int e) const {
  const auto &ex = execs_.at(static_cast<std::size_t>(e));
  Writer w;
  w.put<std::uint64_t>(ex.queue.size());
  for (const auto &r : ex.queue) {
    w.put<std::int32_t>(r.epoch);
    w.put<std::uint64_t>(r.begin);
    w.put<std::uint64_t>(r.end);
  }
  return w.take();
}

Scheduler Scheduler::decode(int workers, const SchedulerSpec &spec, const std::string &scheduler,
                            const std::vector<std::string> &queues,
                            const std::vector<std::string> &states) {
  Reader r(scheduler, "snapshot scheduler part");
  const auto executors = r.get<std::int32_t>();
  const auto units = r.get<std::uint64_t>();
  const auto epochs = r.get<std::int32_t>();
  auto mismatch = [](const std::string &f, const std::string &saved, const std::string &now) {
    throw Error(Errc::invalid_argument, "job: " + f + ": the snapshot's job has " + saved +
                                            ", this job has " + now +
                                            " (a resumed job must keep its executors and units)");
  };
  if (executors != spec.executors)
    mismatch("executors", std::to_string(executors), std::to_string(spec.executors));
  if (units != spec.units) mismatch("units", std::to_string(units), std::to_string(spec.units));
  if (epochs != spec.epochs)
    mismatch("epochs", std::to_string(epochs), std::to_string(spec.epochs));
  Scheduler s;
  s.spec_ = spec;
  s.next_id_ = r.get<std::int64_t>();
  const auto left = r.get<std::uint64_t>();
  s.sizer_ = TaskSizer::decode(r.get_string());
  s.execs_.resize(static_cast<std::size_t>(executors));
  if (queues.size() != s.execs_.size() || states.size() != s.execs_.size())
    throw Error(Errc::corrupt, "snapshot: executor parts do not match the scheduler part");
  std::uint64_t total = 0;
  for (std::size_t e = 0; e < s.execs_.size(); ++e) {
    Reader q(queues[e], "snapshot executor queue");
    auto &ex = s.execs_[e];
    const auto n = q.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) {
      WorkRange wr;
      wr.epoch = q.get<std::int32_t>();
      wr.begin = q.get<std::uint64_t>();
      wr.end = q.get<std::uint64_t>();
      if (wr.end < wr.begin) throw Error(Errc::corrupt, "snapshot: executor queue range reversed");
      ex.left += wr.end - wr.begin;
      ex.queue.push_back(wr);
    }
    ex.state = states[e];
    total += ex.left;
  }
  if (total != left)
    throw Error(Errc::corrupt, "snapshot: executor queues hold " + std::to_string(total) +
                                   " units, the scheduler part says " + std::to_string(left));
  s.units_left_ = left;
  s.tasks_by_worker_.assign(static_cast<std::size_t>(workers), 0);
  s.units_by_worker_.assign(static_cast<std::size_t>(workers), 0);
  return s;
}

}  // namespace ssp
