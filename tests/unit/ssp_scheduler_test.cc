// Micro-task sizing and scheduling of libssp (no MPI): a simulated run with workers of different
// speeds, snapshots of the scheduler's parts, and validation of jobs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "scheduler.hpp"
#include "ssp/error.hpp"

namespace {

using ssp::Decision;
using ssp::Grant;
using ssp::Scheduler;
using ssp::SchedulerSpec;
using ssp::TaskSizer;

TEST(SspTaskSizer, StartsAtTheInitialSizeThenAimsAtTheTarget) {
  TaskSizer s(0.05, 1, 0, 10);
  EXPECT_EQ(s.next_units(), 10u);
  s.record(10, 0.001);  // 100 us per unit -> 500 units for 50 ms, capped at 4 x 10
  EXPECT_EQ(s.next_units(), 40u);
  s.record(40, 0.004);
  EXPECT_EQ(s.next_units(), 160u);
  for (int i = 0; i < 20; ++i) s.record(s.next_units(), 1e-4 * static_cast<double>(s.next_units()));
  EXPECT_EQ(s.next_units(), 500u);
  EXPECT_NEAR(s.seconds_per_unit(), 1e-4, 1e-9);
}

TEST(SspTaskSizer, FollowsASlowdownAndRespectsTheBounds) {
  TaskSizer s(0.05, 1, 300, 50);
  for (int i = 0; i < 10; ++i) s.record(100, 0.01);  // 100 us/unit -> 500, clamped to 300
  EXPECT_EQ(s.next_units(), 300u);
  for (int i = 0; i < 30; ++i) s.record(100, 0.1);  // 1 ms/unit -> 50
  EXPECT_EQ(s.next_units(), 50u);
  s.record(0, 1.0);  // ignored
  s.record(5, -1);   // ignored
  EXPECT_EQ(s.next_units(), 50u);
  const TaskSizer copy = TaskSizer::decode(s.encode());
  EXPECT_EQ(copy.next_units(), s.next_units());
  EXPECT_EQ(copy.measured(), s.measured());
}

SchedulerSpec spec(int executors, std::uint64_t units, int epochs, int per_clock,
                   std::uint64_t initial) {
  return ssp::make_scheduler_spec(executors, units, epochs, per_clock, 50, initial, 0, 2);
}

TEST(SspScheduler, GrantsUpToTasksPerClockThenTellsWorkersToClock) {
  Scheduler s(2, spec(4, 400, 1, 2, 10));
  Grant g{}, h{};
  ASSERT_EQ(s.decide(0, 0, &g), Decision::grant);
  ASSERT_EQ(s.decide(1, 0, &h), Decision::grant);
  EXPECT_NE(g.executor, h.executor);
  EXPECT_EQ(g.end - g.begin, 10u);
  EXPECT_EQ(s.decide(0, 0, &g), Decision::clock);  // clock 0 had its 2 micro-tasks
  EXPECT_EQ(s.in_flight(), 2u);
  EXPECT_EQ(s.decide(0, 1, &g), Decision::grant);
}

TEST(SspScheduler, AnExecutorRunsOneMicroTaskAtATimeAndKeepsItsState) {
  Scheduler s(2, spec(1, 100, 1, 10, 10));
  Grant g{}, h{};
  ASSERT_EQ(s.decide(0, 0, &g), Decision::grant);
  EXPECT_EQ(s.decide(1, 0, &h), Decision::wait);  // the only executor is busy
  s.complete(0, g.task_id, 0.01, "state-1");
  ASSERT_EQ(s.decide(1, 0, &h), Decision::grant);
  EXPECT_EQ(h.begin, g.end);
  EXPECT_EQ(s.state_of(0), "state-1");
  EXPECT_THROW(s.complete(0, h.task_id, 0.01, ""), ssp::Error);  // worker 1 runs it, not 0
}

TEST(SspScheduler, PauseDefersRequestsAtOrAfterThePauseClock) {
  Scheduler s(2, spec(4, 400, 1, 2, 10));
  s.set_pause(3);
  Grant g{};
  EXPECT_EQ(s.decide(0, 3, &g), Decision::pause);
  EXPECT_EQ(s.decide(0, 2, &g), Decision::grant);
}

// Simulates workers of different speeds pulling micro-tasks: the slow one runs fewer, every unit
// is handed out exactly once per epoch, and the job ends.
TEST(SspScheduler, FastWorkersTakeMoreMicroTasks) {
  const int W = 3;
  Scheduler s(W, spec(12, 6000, 2, W, 20));
  const double per_unit[W] = {1e-4, 1e-4, 3e-4};  // worker 2 is 3x slower
  double now[W] = {0, 0, 0};
  std::int64_t clock[W] = {0, 0, 0};
  std::map<std::uint64_t, int> seen;
  struct Running {
    bool on = false;
    Grant g{};
  } run[W];
  bool done[W] = {false, false, false};
  int guard = 0;
  while (!(done[0] && done[1] && done[2]) && ++guard < 100000) {
    int w = 0;  // the worker whose next event comes first
    for (int i = 1; i < W; ++i)
      if (!done[i] && (done[w] || now[i] < now[w])) w = i;
    if (run[w].on) {
      s.complete(w, run[w].g.task_id, 0, "");
      run[w].on = false;
    }
    Grant g{};
    switch (s.decide(w, clock[w], &g)) {
      case Decision::grant:
        for (auto u = g.begin; u < g.end; ++u) ++seen[u];
        run[w] = {true, g};
        now[w] += per_unit[w] * static_cast<double>(g.end - g.begin);
        break;
      case Decision::clock:
        ++clock[w];
        break;
      case Decision::done:
        done[w] = true;
        break;
      default:
        now[w] += 1e-4;
        break;  // wait: try again a little later
    }
  }
  ASSERT_TRUE(done[0] && done[1] && done[2]);
  EXPECT_EQ(seen.size(), 6000u);
  for (const auto &[u, n] : seen) ASSERT_EQ(n, 2) << "unit " << u;
  const auto &t = s.tasks_by_worker();
  EXPECT_LT(t[2], t[0]);
  EXPECT_LT(t[2], t[1]);
  EXPECT_EQ(s.units_by_worker()[0] + s.units_by_worker()[1] + s.units_by_worker()[2], 12000u);
}

TEST(SspScheduler, SnapshotPartsRestoreTheRemainingWorkOnAnotherWorkerCount) {
  Scheduler s(3, spec(4, 1000, 2, 3, 7));
  Grant g{};
  std::uint64_t granted = 0;
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(s.decide(0, i, &g), Decision::grant);
    granted += g.end - g.begin;
    s.complete(0, g.task_id, 0.001, "st" + std::to_string(g.executor));
  }
  std::vector<std::string> queues, states;
  for (int e = 0; e < s.executors(); ++e) {
    queues.push_back(s.encode_queue(e));
    states.push_back(s.encode_state(e));
  }
  Scheduler r = Scheduler::decode(5, spec(4, 1000, 2, 5, 7), s.encode_scheduler(), queues, states);
  EXPECT_EQ(r.units_left(), s.units_left());
  EXPECT_EQ(r.units_left(), 2000u - granted);
  for (int e = 0; e < 4; ++e) EXPECT_EQ(r.state_of(e), s.state_of(e));
  EXPECT_EQ(r.tasks_by_worker().size(), 5u);
  // A different job shape is refused with the field named.
  try {
    Scheduler::decode(5, spec(8, 1000, 2, 5, 7), s.encode_scheduler(), queues, states);
    FAIL() << "no error";
  } catch (const ssp::Error &e) {
    EXPECT_EQ(e.code(), ssp::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("executors"), std::string::npos) << e.what();
  }
  // A corrupt queue part is refused.
  queues[0].resize(3);
  EXPECT_THROW(Scheduler::decode(5, spec(4, 1000, 2, 5, 7), s.encode_scheduler(), queues, states),
               ssp::Error);
}

TEST(SspScheduler, JobValidationNamesTheField) {
  auto msg = [](auto f) {
    try {
      f();
    } catch (const ssp::Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([] { ssp::make_scheduler_spec(0, 10, 1, 0, 50, 0, 0, 2); }).find("executors: '0'"),
            std::string::npos);
  EXPECT_NE(msg([] { ssp::make_scheduler_spec(8, 4, 1, 0, 50, 0, 0, 2); }).find("units: '4'"),
            std::string::npos);
  EXPECT_NE(msg([] { ssp::make_scheduler_spec(2, 10, 0, 0, 50, 0, 0, 2); }).find("epochs: '0'"),
            std::string::npos);
  EXPECT_NE(msg([] { ssp::make_scheduler_spec(2, 10, 1, 0, 5000, 0, 0, 2); }).find("task_ms"),
            std::string::npos);
  EXPECT_EQ(ssp::make_scheduler_spec(2, 10, 1, 0, 50, 0, 0, 3).tasks_per_clock, 3);
}

}  // namespace
