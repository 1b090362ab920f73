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
    } else {
      recycle(std::move(*bufs_[i]));
    }
  }
  reqs_.resize(j);
  bufs_.resize(j);
}

void Transport::drain() {
  if (!reqs_.empty())
    check(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
  for (auto &b : bufs_) recycle(std::move(*b));
  reqs_.clear();
  bufs_.clear();
}

std::string Transport::buffer(std::size_t bytes) {
  std::string b;
  if (bytes >= kPoolMin) {
    // the smallest pooled buffer that is large enough
    std::size_t best = pool_.size();
    for (std::size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].capacity() >= bytes &&
          (best == pool_.size() || pool_[i].capacity() < pool_[best].capacity()))
        best = i;
    if (best < pool_.size()) {
      b = std::move(pool_[best]);
      pool_[best] = std::move(pool_.back());
      pool_.pop_back();
      pool_bytes_ -= b.capacity();
      b.clear();
      return b;
    }
  }
  b.reserve(bytes);
  return b;
}

std::string Transport::receive_buffer(std::size_t n) {
  if (n >= kPoolMin) {
    // A pooled buffer already holding n bytes or more is cut to n, which writes nothing (growing
    // a string fills it with zeros first: a pass over the message before MPI writes it).
    std::size_t best = pool_.size();
    for (std::size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].size() >= n && (best == pool_.size() || pool_[i].size() < pool_[best].size()))
        best = i;
    if (best < pool_.size()) {
      std::string b = std::move(pool_[best]);
      pool_[best] = std::move(pool_.back());
      pool_.pop_back();
      pool_bytes_ -= b.capacity();
      b.resize(n);
      return b;
    }
  }
  std::string b = buffer(n);
  b.resize(n);
  return b;
}

void Transport::recycle(std::string &&buf) {
  const std::size_t cap = buf.capacity();
  if (cap < kPoolMin || cap > kPoolBytes) return;
  // Full: the smallest buffer kept gives way to a larger one.
  while (pool_.size() >= kPoolBuffers || pool_bytes_ + cap > kPoolBytes) {
    auto it = std::min_element(pool_.begin(), pool_.end(), [](const auto &a, const auto &b) {
      return a.capacity() < b.capacity();
    });
    if (it == pool_.end() || it->capacity() >= cap) return;
    pool_bytes_ -= it->capacity();
    *it = std::move(pool_.back());
    pool_.pop_back();
  }
  pool_bytes_ += cap;
  pool_.push_back(std::move(buf));
}

bool Transport::poll(Message &out) { return try_recv_from(MPI_ANY_SOURCE, MPI_ANY_TAG, out); }

Message Transport::recv_from(int source, int tag) {
  unsigned idle = 0;
  Message m;
  while (!try_recv_from(source, tag, m)) {
    if (!reqs_.empty() && (idle & 15) == 0) progress();
    backoff(idle);
  }
  return m;
}

bool Transport::try_recv_from(int source, int tag, Message &out) {
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(source, tag, comm_, &flag, &st), "MPI_Iprobe");
  if (!flag) return false;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  // The message probed (source and tag may be wildcards).
  out.source = st.MPI_SOURCE;
  out.tag = st.MPI_TAG;
  recycle(std::move(out.data));
  out.data = receive_buffer(static_cast<std::size_t>(n));
  check(MPI_Recv(out.data.data(), n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE),
        "MPI_Recv");
  return true;
}

void Transport::backoff(unsigned &idle) const {
  ++idle;
  if (idle_us_ <= 0 || idle < 32) return;
  const long us = std::min<long>(idle_us_, 2L << std::min<unsigned>((idle - 32) / 8, 16));
  timespec ts{0, us * 1000L};
  nanosleep(&ts, nullptr);
}

}  // namespace ssp
