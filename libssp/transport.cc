#include "transport.hpp"

#include <time.h>

#include <algorithm>
#include <climits>

#include "ssp/error.hpp"

namespace ssp {

namespace {
void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(Errc::io, std::string("ssp: ") + what + ": " + msg);
  }
}
}  // namespace

void Transport::send(int dest, int tag, std::string &&bytes) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    throw Error(Errc::unsupported, "ssp: message of " + std::to_string(bytes.size()) +
                                       " bytes is larger than MPI's int count");
  auto buf = std::make_unique<std::string>(std::move(bytes));
  MPI_Request r;
  check(MPI_Isend(buf->data(), static_cast<int>(buf->size()), MPI_BYTE, dest, tag, comm_, &r),
        "MPI_Isend");
  reqs_.push_back(r);
  bufs_.push_back(std::move(buf));
  if (reqs_.size() > 64) progress();
}

void Transport::progress() {
  std::size_t j = 0;
  for (std::size_t i = 0; i < reqs_.size(); ++i) {
    int done = 0;
    check(MPI_Test(&reqs_[i], &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) {
      reqs_[j] = reqs_[i];
      bufs_[j] = std::move(bufs_[i]);
      ++j;
    }
  }
  reqs_.resize(j);
  bufs_.resize(j);
}

void Transport::drain() {
  if (!reqs_.empty())
    check(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
  reqs_.clear();
  bufs_.clear();
}

bool Transport::poll(Message &out) {
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &st), "MPI_Iprobe");
  if (!flag) return false;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  out.source = st.MPI_SOURCE;
  out.tag = st.MPI_TAG;
  out.data.resize(static_cast<std::size_t>(n));
  check(MPI_Recv(out.data.data(), n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE),
        "MPI_Recv");
  return true;
}

Message Transport::recv_from(int source, int tag) {
  unsigned idle = 0;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    check(MPI_Iprobe(source, tag, comm_, &flag, &st), "MPI_Iprobe");
    if (flag) {
      int n = 0;
      MPI_Get_count(&st, MPI_BYTE, &n);
      Message m;
      m.source = source;
      m.tag = tag;
      m.data.resize(static_cast<std::size_t>(n));
      check(MPI_Recv(m.data.data(), n, MPI_BYTE, source, tag, comm_, MPI_STATUS_IGNORE),
            "MPI_Recv");
      return m;
    }
    if (!reqs_.empty() && (idle & 15) == 0) progress();
    backoff(idle);
  }
}

void Transport::backoff(unsigned &idle) const {
  ++idle;
  if (idle_us_ <= 0 || idle < 32) return;
  const long us = std::min<long>(idle_us_, 2L << std::min<unsigned>((idle - 32) / 8, 16));
  timespec ts{0, us * 1000L};
  nanosleep(&ts, nullptr);
}

}  // namespace ssp
