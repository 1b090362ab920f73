// Point-to-point messaging of a Context over its private communicator (internal).
//
// Messages are byte strings.  Sends are non-blocking (MPI_Isend); the buffer is kept until the
// send completes.  Receives poll with MPI_Iprobe and back off with short sleeps (up to
// `idle_sleep_us`) instead of spinning, so that ranks waiting for a message leave the cores to
// ranks that compute (ranks are often oversubscribed on small nodes).
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
  // Frees the buffers of completed sends.
  void progress();
  // Waits for every pending send.
  void drain();
  // Sleeps a little longer each time nothing arrived (call with idle = 0 after a message).
  void backoff(unsigned &idle) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int idle_us_ = 100;
  std::vector<MPI_Request> reqs_;
  std::vector<std::unique_ptr<std::string>> bufs_;
};

}  // namespace ssp
