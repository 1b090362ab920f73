// ssp::Coordinator, rank 0's driver of the micro-task scheduler (see coordinator.hpp): owns the
// Scheduler, the running job and the deferred micro-task requests.  Thread safety: none; the
// Context's thread only.
#include "coordinator.hpp"

#include <algorithm>
#include <string>

#include "protocol.hpp"
#include "ssp/error.hpp"

namespace ssp {

Coordinator::Coordinator(Transport &tx, const Server &server, const Profiler &profiler, int rank,
                         int servers, int workers)
    : tx_(tx),
      server_(server),
      profiler_(profiler),
      rank_(rank),
      servers_(servers),
      workers_(workers),
      last_ckpt_(kNone) {}

void Coordinator::begin(const Job &job, const SchedulerSpec &spec) {
  const bool resume = sched_ && sched_->work_left() && sched_->spec().executors == spec.executors &&
                      sched_->spec().units == spec.units && sched_->spec().epochs == spec.epochs;
  if (resume) {
    SchedulerSpec s = spec;
    sched_->rebase(workers_, server_.vc().max());
    sched_->retune(s);
  } else {
    sched_ = std::make_unique<Scheduler>(workers_, spec);
    last_ckpt_ = server_.vc().max();
  }
  job_ = &job;
  suspended_ = false;
  task_reqs_.clear();
  update_pause();
}

void Coordinator::update_pause() {
  if (!sched_ || !job_) return;
  std::int64_t p = -1;
  if (job_->checkpoint_every > 0 && job_->checkpoint_store) {
    const std::int64_t every = job_->checkpoint_every;
    const std::int64_t from = std::max(last_ckpt_, server_.vc().max());
    p = (from / every + 1) * every;  // the next multiple after the last checkpoint
  }
  if (job_->stop_at_clock >= 0 && (p < 0 || job_->stop_at_clock < p)) p = job_->stop_at_clock;
  // AUTOTUNE_PROFILE_ONLY: suspend at the end of the measured clocks; run() then exits.
  const std::int64_t stop = profiler_.stop_clock();
  if (stop >= 0 && (p < 0 || stop < p)) p = stop;
  sched_->set_pause(p);
}

void Coordinator::send_decision(int worker, std::uint8_t d, const Grant *g, std::int64_t ck) {
  Writer w;
  w.put<std::uint8_t>(kTaskReply);
  w.put<std::int64_t>(server_.vc().min());
  w.put<std::uint8_t>(d);
  if (d == kGrant) {
    w.put<std::int64_t>(g->task_id);
    w.put<std::int32_t>(g->executor);
    w.put<std::int32_t>(g->epoch);
    w.put<std::uint64_t>(g->begin);
    w.put<std::uint64_t>(g->end);
    w.put<std::uint64_t>(g->shard_begin);
    w.put<std::uint64_t>(g->shard_end);
    w.put_string(sched_->state_of(g->executor));
  } else if (d == kCheckpoint) {
    w.put<std::int64_t>(ck);
  }
  tx_.send(servers_ + worker, kTagReply, w.take());
}

void Coordinator::schedule() {
  bool all_paused = true;
  for (std::size_t k = task_reqs_.size(); k > 0; --k) {
    auto [worker, c] = task_reqs_.front();
    task_reqs_.pop_front();
    Grant g{};
    switch (sched_->decide(worker, c, &g)) {
      case Decision::grant:
        send_decision(worker, kGrant, &g);
        break;
      case Decision::clock:
        send_decision(worker, kClock);
        break;
      case Decision::done:
        send_decision(worker, kDone);
        break;
      case Decision::pause:
        task_reqs_.push_back({worker, c});
        break;
      case Decision::wait:
        all_paused = false;
        task_reqs_.push_back({worker, c});
        break;
    }
  }
  // Every worker waits at the pause clock and nothing is in flight: checkpoint or suspend.
  if (all_paused && static_cast<int>(task_reqs_.size()) == workers_ && sched_->in_flight() == 0 &&
      sched_->pause() >= 0) {
    const std::int64_t p = sched_->pause();
    const bool ckpt_due = job_->checkpoint_every > 0 && job_->checkpoint_store &&
                          p % job_->checkpoint_every == 0 && last_ckpt_ != p;
    if (ckpt_due) {
      const std::int64_t seq = -(++run_ckpt_seq_);  // phases use positive numbers
      for (auto &[worker, c] : task_reqs_) send_decision(worker, kCheckpoint, nullptr, seq);
    } else {
      for (auto &[worker, c] : task_reqs_) send_decision(worker, kStop);
      suspended_ = true;
    }
    task_reqs_.clear();
  }
}

void Coordinator::on_task_request(int src, Reader &r) {
  if (rank_ != 0 || !sched_ || !job_)
    throw Error(Errc::internal, "ssp: micro-task request outside run()");
  const int worker = src - servers_;
  const auto c = r.get<std::int64_t>();
  if (r.get<std::uint8_t>()) {
    const auto id = r.get<std::int64_t>();
    const auto secs = r.get<double>();
    sched_->complete(worker, id, secs, r.get_string());
  }
  task_reqs_.push_back({worker, c});
  schedule();
}

const Scheduler *Coordinator::job_to_snapshot(bool in_run) const {
  const bool with_job = sched_ && (in_run || (sched_->work_left() && sched_->in_flight() == 0));
  return with_job ? sched_.get() : nullptr;
}

void Coordinator::checkpoint_written(std::int64_t clock) {
  last_ckpt_ = clock;
  update_pause();
}

void Coordinator::report(RunResult *res) const {
  res->tasks_per_worker.assign(sched_->tasks_by_worker().begin(), sched_->tasks_by_worker().end());
  res->units_per_worker.assign(sched_->units_by_worker().begin(), sched_->units_by_worker().end());
  std::uint64_t n = 0;
  for (auto k : sched_->tasks_by_worker()) n += k;
  res->task_s_mean = n ? sched_->task_s_sum() / static_cast<double>(n) : 0;
  res->task_s_max = sched_->task_s_max();
  res->task_units = sched_->sizer().next_units();
}

}  // namespace ssp
