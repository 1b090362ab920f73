// The bytes of one piece of an object, on either kind of tier, hashed with XXH3-64 as they pass:
// write_piece copies a piece from the caller's segments into its pmem extents (then persists and
// drains) or into its disk file (starting write-back as it goes, then fsync), and feeds the
// tier's measured bandwidth; read_piece copies a piece out and throws a TierFault naming the key,
// tier and byte range when the piece is missing (piece_fault: its pool or file gone, its extents
// past the pool's end) or damaged (short, or its checksum does not match the record).  run_tasks
// runs the transfers of one object's pieces, in parallel or one after the other.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
// The state on the stack needs the struct definition (same library version as the header).
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
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
using tierfs::join;

namespace {

constexpr std::uint64_t kFlushStep = 8ull << 20;  // disk: write-back started every 8 MiB

// Calls fn(ptr, n) for the bytes [off, off+len) of the concatenation of `segs`, in order, in
// chunks of at most kChunk that never straddle two segments.
template <typename Fn>
void for_each_chunk(const std::vector<ConstBytes> &segs, std::uint64_t off, std::uint64_t len,
                    Fn &&fn) {
  std::uint64_t base = 0;
  for (const ConstBytes &s : segs) {
    if (len == 0) break;
    const std::uint64_t end = base + s.size;
    if (off < end) {
      std::uint64_t at = off - base;
      while (at < s.size && len > 0) {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>({kChunk, s.size - at, len}));
        fn(static_cast<const unsigned char *>(s.data) + at, n);
        at += n;
        off += n;
        len -= n;
      }
    }
    base = end;
  }
}

}  // namespace

void run_tasks(std::vector<std::function<void()>> &tasks, bool parallel) {
  std::vector<std::exception_ptr> errs(tasks.size());
  auto guarded = [&](size_t i) {
    try {
      tasks[i]();
    } catch (...) {
      errs[i] = std::current_exception();
    }
  };
  if (parallel && tasks.size() > 1) {
    std::vector<std::thread> threads;
    for (size_t i = 1; i < tasks.size(); ++i) threads.emplace_back(guarded, i);
    guarded(0);
    for (auto &t : threads) t.join();
  } else {
    for (size_t i = 0; i < tasks.size(); ++i) {
      guarded(i);
      if (errs[i]) break;
    }
  }
  for (auto &e : errs)
    if (e) std::rethrow_exception(e);
}

std::uint64_t TierStore::Impl::write_piece(Tier &t, const PieceRecord &p,
                                           const std::vector<ConstBytes> &segs,
                                           std::uint64_t seg_offset,
                                           const std::function<void()> &copied) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  const auto t0 = std::chrono::steady_clock::now();
  if (t.spec.kind == TierKind::pmem) {
    size_t ext = 0;
    std::uint64_t in_ext = 0;
    for_each_chunk(segs, seg_offset, p.length, [&](const unsigned char *src, std::size_t n) {
      XXH3_64bits_update(&st, src, n);
      while (n > 0) {
        const std::size_t k =
            static_cast<std::size_t>(std::min<std::uint64_t>(n, p.extents[ext].len - in_ext));
        t.map->copy_in(p.extents[ext].off + in_ext, src, k);
        src += k;
        n -= k;
        in_ext += k;
        if (in_ext == p.extents[ext].len) {
          ++ext;
          in_ext = 0;
        }
      }
    });
    std::uint64_t left = p.length;
    for (const auto &e : p.extents) {
      const std::uint64_t n = std::min(left, e.len);
      t.map->persist_copied(e.off, static_cast<std::size_t>(n));
      left -= n;
    }
    t.map->drain();
  } else {
    const std::string path = join(t.data_dir, p.file);
    Fd fd = tierfs::open_file(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    // Start the write-back of each written stretch at once (sync_file_range), so that the
    // device works while the rest is copied and fsync has little left to wait for.
    std::uint64_t at = 0, flushed = 0;
    for_each_chunk(segs, seg_offset, p.length, [&](const unsigned char *src, std::size_t n) {
      XXH3_64bits_update(&st, src, n);
      tierfs::pwrite_all(fd.get(), src, n, at, path);
      at += n;
      if (at - flushed >= kFlushStep) {
        ::sync_file_range(fd.get(), static_cast<off_t>(flushed), static_cast<off_t>(at - flushed),
                          SYNC_FILE_RANGE_WRITE);
        flushed = at;
      }
    });
    if (copied) copied();
    tierfs::fsync_fd(fd.get(), path);
  }
  const double secs = seconds_since(t0);
  if (log_enabled())
    log(LogLevel::debug, "tier '" + t.spec.name + "': wrote " + std::to_string(p.length) +
                             " bytes in " + std::to_string(secs) + " s");
  learn(t, p.length, secs);
  return XXH3_64bits_digest(&st);
}

namespace {

std::string where(const TierSpec &t, const PieceRecord &p) {
  return "bytes " + std::to_string(p.offset) + ".." + std::to_string(p.offset + p.length) +
         " were on tier '" + t.name + "' (" + tier_kind_name(t.kind) + ")";
}

TierFault damaged(const TierSpec &t, const std::string &key, const std::string &what) {
  return TierFault(TierFault::Kind::damaged, key, t.name, t.kind,
                   "object " + shown(key) + ": damaged: " + what);
}

TierFault checksum_mismatch(const TierSpec &t, const PieceRecord &p, const std::string &key) {
  return damaged(t, key,
                 "checksum mismatch in bytes " + std::to_string(p.offset) + ".." +
                     std::to_string(p.offset + p.length) + " on tier '" + t.name + "' (" +
                     tier_kind_name(t.kind) + ")");
}

}  // namespace

std::optional<TierFault> TierStore::Impl::piece_fault(const Tier &t, const PieceRecord &p,
                                                      const std::string &key) const {
  const auto missing = [&](TierFault::Kind k, const std::string &why) {
    return TierFault(k, key, t.spec.name, t.spec.kind,
                     "object " + shown(key) + ": missing (" + tier_fault_name(k) +
                         "): " + where(t.spec, p) + why);
  };
  if (t.spec.kind == TierKind::pmem) {
    if (t.lost || !t.map)
      return missing(TierFault::Kind::pool_missing, ", whose pool " + t.pool + " is gone");
    for (const auto &e : p.extents)
      if (e.off + e.len > t.map->size())
        return missing(TierFault::Kind::piece_missing,
                       ", at pool offsets past the end of its pool " + t.pool + " (" +
                           std::to_string(t.map->size()) + " bytes)");
    return std::nullopt;
  }
  const std::string path = join(t.data_dir, p.file);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return missing(TierFault::Kind::piece_missing, " in " + path + ", which is gone");
    return std::nullopt;  // reading it will say what the system refuses
  }
  if (static_cast<std::uint64_t>(st.st_size) < p.length)
    return damaged(t.spec, key,
                   "its piece on tier '" + t.spec.name + "' (" + tier_kind_name(t.spec.kind) +
                       "), " + path + ", is " + std::to_string(st.st_size) + " bytes, not " +
                       std::to_string(p.length));
  return std::nullopt;
}

void TierStore::Impl::read_piece(Tier &t, const PieceRecord &p, unsigned char *dst,
                                 const std::string &key) {
  if (auto f = piece_fault(t, p, key)) throw *f;
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  if (t.spec.kind == TierKind::pmem) {
    std::uint64_t left = p.length;
    for (const auto &e : p.extents) {
      for (std::uint64_t at = 0; at < e.len && left > 0;) {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>({kChunk, e.len - at, left}));
        t.map->copy_out(dst, e.off + at, n);
        XXH3_64bits_update(&st, dst, n);
        dst += n;
        at += n;
        left -= n;
      }
    }
  } else {
    const std::string path = join(t.data_dir, p.file);
    Fd fd;
    try {
      fd = tierfs::open_file(path, O_RDONLY);
    } catch (const Error &e) {
      if (e.code() != Errc::not_found) throw;
      if (auto f = piece_fault(t, p, key)) throw *f;  // deleted since the check
      throw;
    }
    ::posix_fadvise(fd.get(), 0, static_cast<off_t>(p.length), POSIX_FADV_SEQUENTIAL);
    for (std::uint64_t at = 0; at < p.length;) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(4 * kChunk, p.length - at));
      try {
        tierfs::pread_all(fd.get(), dst, n, at, path);
      } catch (const Error &e) {
        if (e.code() != Errc::corrupt) throw;  // shorter than the record says
        throw damaged(t.spec, key, e.what());
      }
      XXH3_64bits_update(&st, dst, n);
      dst += n;
      at += n;
    }
  }
  if (XXH3_64bits_digest(&st) != p.hash) throw checksum_mismatch(t.spec, p, key);
}

}  // namespace autotune
