// ssp::Server, the parameter-server side of a Context (see server.hpp): owns this rank's shards,
// the workers' vector clock, the deferred reads and waits and the barrier arrivals.
// Thread safety: none; the Context's thread only.
#include "server.hpp"

#include <algorithm>
#include <string>

#include "protocol.hpp"
#include "ssp/error.hpp"

namespace ssp {

Server::Server(Transport &tx, const Tables &tables, int rank, int servers, int workers)
    : tx_(tx),
      tables_(tables),
      rank_(rank),
      servers_(servers),
      workers_(workers),
      vc_(workers, 0) {}

void Server::add_table() {
  shards_.emplace_back();
  alloc_shards(static_cast<int>(shards_.size()) - 1);
}

void Server::remap_table(int id) { alloc_shards(id); }

void Server::alloc_shards(int id) {
  const TableShape &t = tables_[static_cast<std::size_t>(id)];
  Shards &sh = shards_[static_cast<std::size_t>(id)];
  sh.clear();
  if (rank_ >= servers_) return;
  for (int l : t.map.shards_of_server(rank_))
    sh[l].assign(static_cast<std::size_t>(t.map.shard_end(l) - t.map.shard_begin(l)) * t.rb, 0);
}

void Server::resume_at(std::int64_t clock) { vc_ = VectorClock(workers_, clock); }

bool Server::on_flush(int src, Reader &r) {
  const auto clock_after = r.get<std::int64_t>();
  for (;;) {
    const auto id = r.get<std::int32_t>();
    if (id < 0) break;
    const TableShape &t = table_at(tables_, id);
    Shards &sh = shards_[static_cast<std::size_t>(id)];
    const auto n = r.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto a = r.get<std::int64_t>();
      const auto cnt = r.get<std::int64_t>();
      const int l = t.map.shard_of(a);
      auto it = sh.find(l);
      if (it == sh.end() || a + cnt > t.map.shard_end(l))
        throw Error(Errc::internal, "ssp: increments for rows this server does not own");
      const char *p = r.skip(static_cast<std::size_t>(cnt) * t.rb);
      add_elems(t.kind, &it->second[static_cast<std::size_t>(a - t.map.shard_begin(l)) * t.rb], p,
                static_cast<std::size_t>(cnt * t.cols));
    }
  }
  if (clock_after >= 0 && vc_.advance(src - servers_, clock_after)) on_min_raised();
  return clock_after >= 0;
}

void Server::answer_get(int src, const std::string &data) {
  Reader r(data, "get");
  r.get<std::uint8_t>();
  r.get<std::int64_t>();
  const auto id = r.get<std::int32_t>();
  const TableShape &t = table_at(tables_, id);
  const Shards &sh = shards_[static_cast<std::size_t>(id)];
  const auto n = r.get<std::uint32_t>();
  Writer w;
  {  // the reply's size is known: one allocation, no copies as it grows
    Reader q = r;
    std::size_t bytes = 1 + 8 + 4 + 4;
    for (std::uint32_t i = 0; i < n; ++i) {
      q.get<std::int64_t>();
      bytes += 16 + static_cast<std::size_t>(q.get<std::int64_t>()) * t.rb;
    }
    w.buffer() = tx_.buffer(std::min<std::size_t>(bytes, std::size_t{1} << 30));
  }
  w.put<std::uint8_t>(kGetReply);
  w.put<std::int64_t>(vc_.min());
  w.put<std::int32_t>(id);
  w.put<std::uint32_t>(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto a = r.get<std::int64_t>();
    const auto cnt = r.get<std::int64_t>();
    const int l = t.map.shard_of(a);
    auto it = sh.find(l);
    if (it == sh.end() || a + cnt > t.map.shard_end(l))
      throw Error(Errc::internal, "ssp: read of rows this server does not own");
    w.put<std::int64_t>(a);
    w.put<std::int64_t>(cnt);
    w.put_bytes(&it->second[static_cast<std::size_t>(a - t.map.shard_begin(l)) * t.rb],
                static_cast<std::size_t>(cnt) * t.rb);
  }
  reply(src, w);
}

void Server::on_get(Message &m, Reader &r) {
  const auto need = r.get<std::int64_t>();
  if (need <= vc_.min())
    answer_get(m.source, m.data);
  else
    deferred_gets_.push_back(std::move(m));
}

void Server::on_get_fresh(const Message &m, Reader &r) {
  if (r.get<std::int64_t>() <= vc_.min()) {
    answer_get(m.source, m.data);
    return;
  }
  Writer w;
  w.put<std::uint8_t>(kNotYet);
  w.put<std::int64_t>(vc_.min());
  reply(m.source, w);
}

void Server::on_wait(int src, Reader &r) {
  const auto need = r.get<std::int64_t>();
  if (need <= vc_.min()) {
    Writer w;
    w.put<std::uint8_t>(kWaitReply);
    w.put<std::int64_t>(vc_.min());
    reply(src, w);
  } else {
    deferred_waits_.push_back({src, need});
  }
}

void Server::on_min_raised() {
  for (std::size_t k = deferred_gets_.size(); k > 0; --k) {
    Message m = std::move(deferred_gets_.front());
    deferred_gets_.pop_front();
    Reader r(m.data, "get");
    r.get<std::uint8_t>();
    if (r.get<std::int64_t>() <= vc_.min())
      answer_get(m.source, m.data);
    else
      deferred_gets_.push_back(std::move(m));
  }
  for (std::size_t k = deferred_waits_.size(); k > 0; --k) {
    auto d = deferred_waits_.front();
    deferred_waits_.pop_front();
    if (d.second <= vc_.min()) {
      Writer w;
      w.put<std::uint8_t>(kWaitReply);
      w.put<std::int64_t>(vc_.min());
      reply(d.first, w);
    } else {
      deferred_waits_.push_back(d);
    }
  }
}

bool Server::on_barrier(Reader &r, std::uint8_t *kind, std::int64_t *seq) {
  *kind = r.get<std::uint8_t>();
  *seq = r.get<std::int64_t>();
  if (++arrivals_[{*kind, *seq}] < workers_) return false;
  arrivals_.erase({*kind, *seq});
  return true;
}

void Server::ack_workers(std::uint8_t kind, std::int64_t seq) {
  for (int w = 0; w < workers_; ++w) {
    Writer a;
    a.put<std::uint8_t>(kBarrierAck);
    a.put<std::int64_t>(vc_.min());
    a.put<std::uint8_t>(kind);
    a.put<std::int64_t>(seq);
    reply(servers_ + w, a);
  }
}

}  // namespace ssp
