// Demotion: moving the pieces of the coldest objects (least recently read or written, by their
// record's mtime) off the fastest tier to the next slower tier with room for each piece, until the
// wanted bytes are free there.  Each move copies the piece (checking it against its checksum),
// writes a new record that keeps the object's access time, and commits it like a put
// (commit_record, store_write.cc); a failed move leaves the object as it was.  Runs with the store
// lock held: from put when it wants more of the fastest tier, and from TierStore::demote.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier/pmem_map.hpp"
#include "tier/record.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::FileLock;
using tierfs::join;

bool TierStore::Impl::demote_one(const ObjectRecord &victim, std::int64_t accessed, Scan &s) {
  const size_t from = 0;
  ObjectRecord moved = victim;
  moved.id = new_id();
  std::vector<std::string> created;
  auto rollback = [&] {
    for (const auto &f : created) ::unlink(f.c_str());
  };
  try {
    for (auto &p : moved.pieces) {
      if (p.tier != tiers[from].spec.name) continue;
      // The next slower tier with room for the whole piece.
      const auto room = rooms(s);
      size_t to = tiers.size();
      for (size_t j = from + 1; j < tiers.size() && to == tiers.size(); ++j)
        if ((tiers[j].spec.kind == TierKind::pmem ? round_page(p.length) : p.length) <=
            room[j].free)
          to = j;
      if (to == tiers.size()) {
        rollback();
        return false;
      }
      Tier &src = tiers[from];
      Tier &dst = tiers[to];
      // Copy through a bounded buffer, checking the bytes against the piece's checksum.
      PieceRecord np = p;
      np.tier = dst.spec.name;
      np.extents.clear();
      np.file.clear();
      if (dst.spec.kind == TierKind::pmem) {
        auto gaps = pmem_gaps(s, to);
        np.extents = alloc_pmem(gaps, p.length);
      } else {
        np.file = moved.id + "." + dst.spec.name;
        created.push_back(join(dst.data_dir, np.file));
      }
      std::vector<unsigned char> buf;
      std::vector<ConstBytes> seg;
      if (src.map) {  // straight from the mapping; the checksum of what was written tells
        std::uint64_t left = p.length;
        for (const auto &e : p.extents) {
          if (e.off + e.len > src.map->size())
            throw Error(Errc::corrupt,
                        "object " + shown(victim.key) + ": an extent lies outside the pool");
          const std::uint64_t n = std::min(left, e.len);
          seg.push_back({src.map->data() + e.off, static_cast<std::size_t>(n)});
          left -= n;
        }
      } else {
        buf.resize(static_cast<std::size_t>(p.length));
        read_piece(src, p, buf.data(), victim.key);
        seg.push_back({buf.data(), buf.size()});
      }
      np.hash = write_piece(dst, np, seg, 0);
      if (np.hash != p.hash)
        throw Error(Errc::corrupt, "object " + shown(victim.key) + ": checksum mismatch in bytes " +
                                       std::to_string(p.offset) + ".." +
                                       std::to_string(p.offset + p.length) + " on tier '" +
                                       src.spec.name + "' (found while demoting it)");
      if (dst.spec.kind == TierKind::disk) tierfs::fsync_dir(dst.data_dir);
      // Account the new piece so that the next piece's room is right.
      ObjectRecord acct;
      acct.pieces.push_back(np);
      s.reserved.push_back(acct);
      p = np;
    }
    hook("demote-written");
    const std::string tmp = join(pending_dir, moved.id + ".rec");
    {
      Fd fd = tierfs::open_file(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
      const std::string text = encode_record(moved);
      tierfs::write_all(fd.get(), text.data(), text.size(), tmp);
      // The moved object stays as cold as it was.
      struct timespec ts[2];
      ts[0].tv_sec = static_cast<time_t>(accessed / 1000000000);
      ts[0].tv_nsec = static_cast<long>(accessed % 1000000000);
      ts[1] = ts[0];
      ::futimens(fd.get(), ts);
      tierfs::fsync_fd(fd.get(), tmp);
    }
    bool committed = false;
    try {
      commit_record(moved, tmp, committed);
    } catch (...) {
      if (!committed) ::unlink(tmp.c_str());
      throw;
    }
    created.clear();
  } catch (...) {
    rollback();
    throw;
  }
  log(LogLevel::verbose,
      "demoted " + shown(victim.key) + " off tier '" + tiers[from].spec.name + "'");
  return true;
}

std::uint64_t TierStore::Impl::demote_locked(Scan &s, std::uint64_t want,
                                             const std::string &skip_key) {
  // Nothing can be moved off or onto a lost pool (rooms() gives it no free space).
  if (tiers.size() < 2 || tiers[0].lost) return 0;
  std::uint64_t freed = 0;
  auto free0 = [&] { return rooms(s)[0].free; };
  std::uint64_t f = free0();
  if (f >= want) return 0;
  // Coldest first.
  std::vector<size_t> order(s.records.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (s.accessed[a] != s.accessed[b]) return s.accessed[a] < s.accessed[b];
    return s.records[a].key < s.records[b].key;
  });
  for (size_t i : order) {
    if (f >= want) break;
    const ObjectRecord &r = s.records[i];
    if (r.key == skip_key) continue;
    bool on0 = false;
    for (const auto &p : r.pieces) on0 = on0 || p.tier == tiers[0].spec.name;
    if (!on0) continue;
    if (!demote_one(r, s.accessed[i], s)) continue;
    s = scan(true);
    const std::uint64_t nf = free0();
    freed += nf > f ? nf - f : 0;
    f = nf;
    // Records were re-read: restart from the new order.
    return freed + demote_locked(s, want, skip_key);
  }
  return freed;
}

std::uint64_t TierStore::demote(std::uint64_t bytes) {
  Impl &m = *impl_;
  Fd lfd = m.open_lock();
  FileLock lk(lfd.get(), FileLock::exclusive, m.lock_path);
  Impl::Scan s = m.scan(true);
  const std::uint64_t f = m.rooms(s)[0].free;
  if (f >= bytes) return 0;
  for (bool g : m.pools_gone())
    if (g) return 0;  // a pool deleted under the open store takes no piece
  return m.demote_locked(s, bytes, "");
}

}  // namespace autotune
