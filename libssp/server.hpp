// ssp::Server: the parameter-server side of a Context.
//
// Owns: the vector clock of the workers' clocks; the logical shards of every table that this
// rank holds (per table: shard -> rows, row-major); the reads (kGet) and clock waits (kWait)
// deferred until the slowest worker is recent enough; the barrier arrivals counted so far; and the
// last collective phase completed on this rank (which ends Context::Impl's serve loop).
//
// It applies workers' increments, answers reads once its minimum clock satisfies the request, and
// acknowledges barriers.  The Context's dispatch hands it the messages (protocol.hpp) and decides
// what a complete barrier leads to: a plain one is acknowledged here, a checkpoint goes to the
// Checkpointer, which reads and fills the shards.  It reads the table shapes (tables.hpp), which
// the Context owns.  Thread safety: none; the Context's thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codec.hpp"
#include "ssp/consistency.hpp"
#include "tables.hpp"
#include "transport.hpp"

namespace ssp {

class Server {
 public:
  // A table's shards held here: logical shard -> its rows.
  using Shards = std::map<int, std::vector<char>>;

  // `rank` holds shards only when it is a server (rank < servers).
  Server(Transport &tx, const Tables &tables, int rank, int servers, int workers);

  // The table just appended to `tables`: this rank's shards of it, zeroed.
  void add_table();
  // Table `id` was remapped (restore): its shards are allocated again, zeroed.
  void remap_table(int id);
  const Shards &shards(int id) const { return shards_[static_cast<std::size_t>(id)]; }
  Shards &shards(int id) { return shards_[static_cast<std::size_t>(id)]; }

  const VectorClock &vc() const { return vc_; }
  // Every worker restarts at `clock` (after a restore).
  void resume_at(std::int64_t clock);

  // Message handlers: `r` is positioned after the message type.
  // kFlush: applies the increments; true when it carried a clock (the vector clock may have moved).
  bool on_flush(int src, Reader &r);
  // kGet: answers now, or defers `m` until the minimum clock is high enough.
  void on_get(Message &m, Reader &r);
  // kGetFresh: answers now, with the rows when the minimum clock is high enough, else kNotYet.
  void on_get_fresh(const Message &m, Reader &r);
  // kWait: answers now, or once the minimum clock is high enough.
  void on_wait(int src, Reader &r);
  // kBarrier: counts the arrival; true (with the barrier's kind and seq) when every worker is in.
  bool on_barrier(Reader &r, std::uint8_t *kind, std::int64_t *seq);

  // Acknowledges barrier (kind, seq) to every worker, with the minimum clock.
  void ack_workers(std::uint8_t kind, std::int64_t seq);
  void complete_phase(std::int64_t seq) { completed_phase_ = std::max(completed_phase_, seq); }
  std::int64_t completed_phase() const { return completed_phase_; }
  // Sends `w` to worker rank `dest` as a reply.
  void reply(int dest, Writer &w) { tx_.send(dest, kTagReply, w.take()); }

 private:
  void alloc_shards(int id);
  void answer_get(int src, const std::string &data);
  void on_min_raised();

  Transport &tx_;
  const Tables &tables_;
  const int rank_, servers_, workers_;

  VectorClock vc_;
  std::vector<Shards> shards_;  // per table
  std::deque<Message> deferred_gets_;
  std::deque<std::pair<int, std::int64_t>> deferred_waits_;  // (source, need)
  std::map<std::pair<int, std::int64_t>, int> arrivals_;     // (kind, seq) -> workers arrived
  std::int64_t completed_phase_ = 0;
};

}  // namespace ssp
