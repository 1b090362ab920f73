// Point-to-point messaging of a Context over its private communicator (internal).
//
// Messages are byte strings.  Sends are non-blocking (MPI_Isend); the buffer is kept until the
// send completes.  Receives poll with MPI_Iprobe and back off with short sleeps (up to
// `idle_sleep_us`) instead of spinning, so that ranks waiting for a message leave the cores to
// ranks that compute (ranks are often oversubscribed on small nodes).
//
// Large buffers are reused: the buffers of completed sends and the receive buffers handed back
// with recycle() are kept (at most kPoolBuffers of them, kPoolBytes in all) and given out again
// by buffer() and to large receives.  A dense table's flushes and replies are megabytes each,
// every clock; fresh allocations of that size are new pages that the kernel faults in and
// zeroes every time.
//
// Tags: kTagRequest (worker -> server, server -> rank 0), kTagReply (server -> worker, answers
// in the order the requests were made per server), kTagControl (rank 0 -> any, unsolicited).
// MPI keeps the order of messages between one pair of ranks on one communicator, which the
// protocol relies on: a worker's increments reach a server before its next clock or barrier.
//
// Thread safety: none (the Context's thread only).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace ssp {

inline constexpr int kTagRequest = 7301;
inline constexpr int kTagReply = 7302;
inline constexpr int kTagControl = 7303;

struct Message {
  int source = -1;
  int tag = -1;
  std::string data;
};

class Transport {
 public:
  Transport() = default;
  Transport(MPI_Comm comm, int idle_sleep_us) : comm_(comm), idle_us_(idle_sleep_us) {}
  void send(int dest, int tag, std::string &&bytes);
  // A message from anyone, if one is waiting.
  bool poll(Message &out);
  // Waits for the next message from `source` with `tag`.
  Message recv_from(int source, int tag);
  // The next message from `source` with `tag` (MPI_ANY_SOURCE, MPI_ANY_TAG allowed), if one has
  // arrived (never waits); out's old buffer goes back to the pool.
  bool try_recv_from(int source, int tag, Message &out);
  // Frees the buffers of completed sends.
  void progress();
  // Waits for every pending send.
  void drain();
  // Sleeps a little longer each time nothing arrived (call with idle = 0 after a message).
  void backoff(unsigned &idle) const;
  // An empty buffer with room for `bytes` (from the pool when one is large enough).
  std::string buffer(std::size_t bytes);
  // Hands a buffer no longer needed (e.g. a received message's) back to the pool.
  void recycle(std::string &&buf);

  // Buffers smaller than kPoolMin are not kept.
  static constexpr std::size_t kPoolMin = std::size_t{64} << 10;
  static constexpr std::size_t kPoolBuffers = 4;
  static constexpr std::size_t kPoolBytes = std::size_t{256} << 20;

 private:
  // A buffer of n bytes for a receive (contents unspecified until received into).
  std::string receive_buffer(std::size_t n);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int idle_us_ = 100;
  std::vector<MPI_Request> reqs_;
  std::vector<std::unique_ptr<std::string>> bufs_;
  std::vector<std::string> pool_;
  std::size_t pool_bytes_ = 0;
};

}  // namespace ssp
