// The wire protocol between the parts of a Context on different ranks (internal): message types
// with their layouts, barrier kinds and the scheduler's answers to a worker.  Every message is a
// byte string (codec.hpp) starting with its MsgType; transport.hpp says which tag carries what.
//
// Owner: nobody; constants only.  Thread safety: immutable.
#pragma once

#include <cstdint>
#include <limits>

namespace ssp {

// "Not fetched yet" in a worker's cache stamps.
inline constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();

enum MsgType : std::uint8_t {
  kFlush = 1,      // w->s  i64 clock_after (-1: none), blocks {i32 table, u32 runs, runs} .. i32 -1
  kGet = 2,        // w->s  i64 need, i32 table, u32 runs, {i64 first, i64 count}
  kGetReply = 3,   // s->w  i64 min, i32 table, u32 runs, {i64 first, i64 count, data}
  kWait = 4,       // w->s  i64 need
  kWaitReply = 5,  // s->w  i64 min
  kBarrier = 6,    // w->s  u8 kind, i64 seq
  kBarrierAck = 7,   // s->w  i64 min, u8 kind, i64 seq
  kTaskReq = 8,      // w->0  i64 clock, u8 has_done, [i64 task, f64 seconds, str state]
  kTaskReply = 9,    // 0->w  i64 min, u8 decision, [grant | i64 checkpoint clock]
  kShardsDone = 10,  // s->0  i64 seq, the sums of the parts written (manifest.hpp)
  kProfileStop = 11,  // 0->*  (control tag)
  kGetFresh = 12,     // w->s  as kGet; answered at once: kGetReply when need <= min, else kNotYet
  kNotYet = 13        // s->w  i64 min
};

// What a barrier is for: a plain one (barrier(), end of run()), a checkpoint inside run() or the
// collective checkpoint().
enum BarrierKind : std::uint8_t { kPlain = 0, kCkptRun = 1, kCkptEnd = 2 };
// Rank 0's answer to a micro-task request.
enum WireDecision : std::uint8_t { kGrant = 1, kClock = 2, kCheckpoint = 3, kDone = 4, kStop = 5 };

}  // namespace ssp
