#include "shard_map.hpp"

#include <algorithm>
#include <string>

#include "ssp/error.hpp"

namespace ssp {

ShardMap::ShardMap(std::int64_t rows, int logical, int servers)
    : rows_(rows),
      shards_(static_cast<int>(std::min<std::int64_t>(logical, rows))),
      servers_(servers) {
  if (rows < 1 || logical < 1 || servers < 1)
    throw Error(Errc::internal, "shard map: rows, logical servers and servers must be >= 1");
}

std::int64_t ShardMap::shard_begin(int l) const {
  return static_cast<std::int64_t>((static_cast<__int128>(l) * rows_) / shards_);
}

int ShardMap::shard_of(std::int64_t row) const {
  // The largest l with shard_begin(l) <= row.
  int l = static_cast<int>((static_cast<__int128>(row) * shards_) / rows_);
  while (l > 0 && shard_begin(l) > row) --l;
  while (l + 1 < shards_ && shard_begin(l + 1) <= row) ++l;
  return l;
}

std::vector<int> ShardMap::shards_of_server(int server) const {
  std::vector<int> out;
  for (int l = server; l < shards_; l += servers_) out.push_back(l);
  return out;
}

std::vector<ShardMap::Piece> ShardMap::split(std::int64_t first, std::int64_t count) const {
  std::vector<Piece> out;
  std::int64_t r = first;
  const std::int64_t end = first + count;
  while (r < end) {
    const int l = shard_of(r);
    const std::int64_t e = std::min(end, shard_end(l));
    out.push_back({l, r, e - r});
    r = e;
  }
  return out;
}

}  // namespace ssp
