// PmemMap (internal): one owning object around libpmem2's mapping sequence
//   pmem2_config_new -> pmem2_source_from_fd -> pmem2_config_set_required_store_granularity ->
//   pmem2_map_new -> (pmem2_get_memcpy_fn / pmem2_get_persist_fn) -> pmem2_map_delete
// (PMDK src/examples/libpmem2/basic/basic.c).  The file descriptor, source, configuration and
// mapping are released in reverse order by the destructor; a failure at any step releases what the
// earlier steps built and throws autotune::Error with libpmem2's own message.
//
// Granularity: the finest store granularity the mapping supports is requested first (BYTE:
// DAX with eADR; then CACHE_LINE: DAX, flushes with clwb/clflushopt; then PAGE: any file, flushes
// with msync).  libpmem2's test variable PMEM2_FORCE_GRANULARITY=byte|cache_line makes a plain
// file report the finer kinds, which exercises their flush paths without persistent memory.
//
// Thread safety: copy_in/copy_out/persist/drain on disjoint ranges may run from several threads
// at once (libpmem2's functions are reentrant); the object itself must not be moved meanwhile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <libpmem2.h>

#include "autotune/tier.hpp"
#include "tier/fs.hpp"

namespace autotune {

class PmemMap {
 public:
  // Map the whole of the regular file `path` (which must exist, size > 0) read-write, shared.
  explicit PmemMap(const std::string &path);
  ~PmemMap();
  PmemMap(const PmemMap &) = delete;
  PmemMap &operator=(const PmemMap &) = delete;

  unsigned char *data() const noexcept { return base_; }
  std::size_t size() const noexcept { return size_; }
  PmemGranularity granularity() const noexcept { return granularity_; }
  const std::string &path() const noexcept { return path_; }

  // Copy `n` bytes from `src` to data()+off.  Stores are made durable by a later persist()
  // (page granularity: nothing is flushed here) or drain() (cache-line/byte granularity: the
  // copy flushes as it goes, or uses non-temporal stores).  Preconditions: off + n <= size().
  void copy_in(std::uint64_t off, const void *src, std::size_t n) const noexcept;
  // After copy_in of data()+off .. +n: page granularity flushes the range (msync); finer
  // granularity has nothing left to flush (copy_in flushed as it went).
  void persist_copied(std::uint64_t off, std::size_t n) const noexcept;
  // Make data()+off .. +n durable whatever wrote it (flush + fence).
  void persist(std::uint64_t off, std::size_t n) const noexcept;
  // Wait for the flushes started by copy_in (a fence; a no-op for page granularity).  Call once
  // after the last copy_in/persist_copied of an object.
  void drain() const noexcept;
  void copy_out(void *dst, std::uint64_t off, std::size_t n) const noexcept;

 private:
  std::string path_;
  tierfs::Fd fd_;
  struct pmem2_map *map_ = nullptr;
  unsigned char *base_ = nullptr;
  std::size_t size_ = 0;
  PmemGranularity granularity_ = PmemGranularity::page;
  unsigned copy_flags_ = 0;
  pmem2_memcpy_fn memcpy_fn_ = nullptr;
  pmem2_persist_fn persist_fn_ = nullptr;
  pmem2_drain_fn drain_fn_ = nullptr;
};

}  // namespace autotune
