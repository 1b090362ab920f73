// Logical servers: a table's rows cut into `logical` contiguous shards, mapped round-robin onto
// `servers` server ranks (shard l lives on server l mod servers).  The shard boundaries depend
// only on (rows, logical), never on the number of servers, so a snapshot taken with S servers is
// restored on S' servers by moving whole shards.
//
//   ShardMap m(785, 16, 2);   m.shard_of(100) == 2;  m.server_of_shard(2) == 0
//
// Preconditions: rows >= 1, logical >= 1, servers >= 1.  Shard l covers
// [l*rows/L, (l+1)*rows/L) with L = min(logical, rows), so no shard is empty.
// Thread safety: immutable.
#pragma once

#include <cstdint>
#include <vector>

namespace ssp {

class ShardMap {
 public:
  ShardMap() = default;
  ShardMap(std::int64_t rows, int logical, int servers);

  int shards() const { return shards_; }
  int servers() const { return servers_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t shard_begin(int l) const;
  std::int64_t shard_end(int l) const { return shard_begin(l + 1); }
  int shard_of(std::int64_t row) const;
  int server_of_shard(int l) const { return l % servers_; }
  int server_of(std::int64_t row) const { return server_of_shard(shard_of(row)); }
  std::vector<int> shards_of_server(int server) const;

  // [first, first+count) cut at shard boundaries: (shard, first, count) pieces in row order.
  struct Piece {
    int shard;
    std::int64_t first;
    std::int64_t count;
  };
  std::vector<Piece> split(std::int64_t first, std::int64_t count) const;

 private:
  std::int64_t rows_ = 0;
  int shards_ = 0;
  int servers_ = 1;
};

}  // namespace ssp
