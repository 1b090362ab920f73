#include "tier/pmem_map.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>

#include "autotune/error.hpp"
#include "autotune/log.hpp"

namespace autotune {
namespace {

[[noreturn]] void throw_pmem2(const std::string &what, int rc) {
  const char *msg = pmem2_errormsg();
  // libpmem2 returns -errno for system errors and its own codes from -100000 down.
  const int e = (rc < 0 && rc > -100000) ? -rc : 0;
  const std::string text = what + ": " +
                           (msg && *msg ? msg
                            : e         ? std::strerror(e)
                                        : "libpmem2 error");
  if (e == ENOSPC) throw Error(Errc::no_space, text);
  if (e == EACCES || e == EPERM) throw Error(Errc::permission, text);
  if (e == ENOTSUP || e == EOPNOTSUPP) throw Error(Errc::unsupported, text);
  throw Error(Errc::io, text);
}

// Owners of the two intermediate libpmem2 objects (the sequence keeps them until the mapping is
// deleted, as basic.c does).
struct ConfigOwner {
  pmem2_config *p = nullptr;
  ~ConfigOwner() {
    if (p) pmem2_config_delete(&p);
  }
};
struct SourceOwner {
  pmem2_source *p = nullptr;
  ~SourceOwner() {
    if (p) pmem2_source_delete(&p);
  }
};

}  // namespace

const char *pmem_granularity_name(PmemGranularity g) noexcept {
  switch (g) {
    case PmemGranularity::byte:
      return "byte";
    case PmemGranularity::cache_line:
      return "cache-line";
    case PmemGranularity::page:
      return "page";
  }
  return "?";
}

PmemMap::PmemMap(const std::string &path) : path_(path) {
  fd_ = tierfs::open_file(path, O_RDWR);
  struct stat st;
  if (::fstat(fd_.get(), &st) != 0) throw_io(path, errno);
  if (!S_ISREG(st.st_mode) || st.st_size <= 0)
    throw_invalid(path + ": a pmem tier's pool must be a non-empty regular file");

  SourceOwner src;
  if (int rc = pmem2_source_from_fd(&src.p, fd_.get()))
    throw_pmem2(path + ": pmem2_source_from_fd", rc);

  // The finest granularity first; PMEM2_E_GRANULARITY_NOT_SUPPORTED moves on to the next.
  static const pmem2_granularity order[] = {PMEM2_GRANULARITY_BYTE, PMEM2_GRANULARITY_CACHE_LINE,
                                            PMEM2_GRANULARITY_PAGE};
  int last_rc = 0;
  for (pmem2_granularity want : order) {
    ConfigOwner cfg;
    if (int rc = pmem2_config_new(&cfg.p)) throw_pmem2(path + ": pmem2_config_new", rc);
    if (int rc = pmem2_config_set_required_store_granularity(cfg.p, want))
      throw_pmem2(path + ": pmem2_config_set_required_store_granularity", rc);
    const int rc = pmem2_map_new(&map_, cfg.p, src.p);
    if (rc == 0) break;
    map_ = nullptr;
    last_rc = rc;
    if (rc != PMEM2_E_GRANULARITY_NOT_SUPPORTED) throw_pmem2(path + ": pmem2_map_new", rc);
  }
  if (!map_) throw_pmem2(path + ": pmem2_map_new", last_rc);

  base_ = static_cast<unsigned char *>(pmem2_map_get_address(map_));
  size_ = pmem2_map_get_size(map_);
  switch (pmem2_map_get_store_granularity(map_)) {
    case PMEM2_GRANULARITY_BYTE:
      granularity_ = PmemGranularity::byte;
      break;
    case PMEM2_GRANULARITY_CACHE_LINE:
      granularity_ = PmemGranularity::cache_line;
      break;
    default:
      granularity_ = PmemGranularity::page;
      break;
  }
  memcpy_fn_ = pmem2_get_memcpy_fn(map_);
  persist_fn_ = pmem2_get_persist_fn(map_);
  drain_fn_ = pmem2_get_drain_fn(map_);
  // Page granularity: plain copies, one msync per range at the end (persist()).  Finer
  // granularity: the copy flushes (or streams) each piece; one fence at the end (drain()).
  copy_flags_ = granularity_ == PmemGranularity::page ? PMEM2_F_MEM_NOFLUSH : PMEM2_F_MEM_NODRAIN;
  log(LogLevel::debug, path + ": mapped " + std::to_string(size_) + " bytes with " +
                           pmem_granularity_name(granularity_) + " granularity");
}

PmemMap::~PmemMap() {
  if (map_) pmem2_map_delete(&map_);
}

void PmemMap::copy_in(std::uint64_t off, const void *src, std::size_t n) const noexcept {
  memcpy_fn_(base_ + off, src, n, copy_flags_);
}

void PmemMap::persist_copied(std::uint64_t off, std::size_t n) const noexcept {
  if (n && granularity_ == PmemGranularity::page) persist_fn_(base_ + off, n);
}

void PmemMap::persist(std::uint64_t off, std::size_t n) const noexcept {
  if (n) persist_fn_(base_ + off, n);
}

void PmemMap::drain() const noexcept { drain_fn_(); }

void PmemMap::copy_out(void *dst, std::uint64_t off, std::size_t n) const noexcept {
  std::memcpy(dst, base_ + off, n);
}

}  // namespace autotune
