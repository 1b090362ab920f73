// The bandwidth and latency of each tier whose TierSpec::bandwidth is 0 (measured): a probe at
// the first open (one timed durable write, and the cost of a one-page piece), remembered in
// <meta>/bandwidth ("<tier> <bytes per second> <seconds per piece>" lines) and refined from the
// throughput of large pieces written later (learn: an exponential moving average, saved again
// when it moved by more than 20%).  Placement reads them through rooms() (store_space.cc).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier/pmem_map.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::join;

namespace {

constexpr std::uint64_t kProbeBytes = 16ull << 20;  // bandwidth probe
constexpr std::uint64_t kLearnMin = 4ull << 20;     // pieces that refine a measured bandwidth
constexpr double kLearnWeight = 0.3;

// Bytes per second of a durable write of `bytes` that took `seconds`, less the tier's cost per
// piece (`latency`), which is taken off at most half the time: a disk's flushes vary, and a
// page's two (file and directory) can outlast a big write's one, which without the bound made
// the disk look faster than any memory.
double throughput(std::uint64_t bytes, double seconds, double latency) {
  return static_cast<double>(bytes) / std::max(seconds - latency, std::max(seconds / 2, 1e-9));
}

}  // namespace

void TierStore::Impl::load_bandwidths() {
  // "<tier> <bytes per second> <seconds per piece>" lines.
  std::map<std::string, std::pair<double, double>> cached;
  if (Fd fd = tierfs::open_if_exists(bw_path, O_RDONLY)) {
    std::istringstream in(tierfs::read_small_file(fd.get(), bw_path));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string name;
      double v = 0, l = 0;
      if (f >> name >> v >> l && v > 0 && std::isfinite(v) && l >= 0 && l < 10)
        cached[name] = {v, l};
    }
  }
  bool probed = false;
  for (auto &t : tiers) {
    if (!t.measured) continue;
    auto it = cached.find(t.spec.name);
    if (it != cached.end()) {
      t.bandwidth = it->second.first;
      t.latency = it->second.second;
    } else if (t.lost) {
      t.bandwidth = 1;     // nothing is placed there; its directory may be gone
      t.measured = false;  // not remembered: the next pool is probed
    } else {
      probe(t);
      probed = true;
    }
  }
  if (probed) save_bandwidths();
}

// Bandwidth: the throughput() of one timed durable write of kProbeBytes (after a first pass that
// takes the page faults), less the latency: the best of three durable writes of one page.
void TierStore::Impl::probe(Tier &t) {
  const std::uint64_t n = std::min<std::uint64_t>(kProbeBytes, t.spec.capacity / 4);
  std::vector<unsigned char> buf(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(i * 131 + 7);
  const std::string path = join(t.spec.path, ".probe." + std::to_string(::getpid()));
  double secs = 0, lat = 1e9;
  try {
    Fd fd = tierfs::open_file(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (t.spec.kind == TierKind::pmem) {
      if (::ftruncate(fd.get(), static_cast<off_t>(n)) != 0) throw_io(path, errno);
      PmemMap m(path);
      m.copy_in(0, buf.data(), buf.size());  // first touch: page faults, not the medium
      m.persist_copied(0, buf.size());
      m.drain();
      const auto t0 = std::chrono::steady_clock::now();
      for (std::uint64_t off = 0; off < n; off += kChunk)
        m.copy_in(off, buf.data() + off,
                  static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, n - off)));
      m.persist_copied(0, buf.size());
      m.drain();
      secs = seconds_since(t0);
      for (int i = 0; i < 3; ++i) {
        const auto t1 = std::chrono::steady_clock::now();
        m.copy_in(0, buf.data(), kTierPage);
        m.persist_copied(0, kTierPage);
        m.drain();
        lat = std::min(lat, seconds_since(t1));
      }
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      tierfs::write_all(fd.get(), buf.data(), buf.size(), path);
      tierfs::fsync_fd(fd.get(), path);
      secs = seconds_since(t0);
      // What a disk piece costs whatever its size: create, write, fsync, fsync the directory.
      for (int i = 0; i < 3; ++i) {
        const std::string f = path + "." + std::to_string(i);
        const auto t1 = std::chrono::steady_clock::now();
        {
          Fd pf = tierfs::open_file(f, O_WRONLY | O_CREAT | O_EXCL, 0600);
          tierfs::write_all(pf.get(), buf.data(), kTierPage, f);
          tierfs::fsync_fd(pf.get(), f);
        }
        tierfs::fsync_dir(t.spec.path);
        lat = std::min(lat, seconds_since(t1));
        ::unlink(f.c_str());
      }
    }
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  ::unlink(path.c_str());
  t.latency = lat;
  t.bandwidth = throughput(n, secs, lat);
  log(LogLevel::verbose, "tier '" + t.spec.name + "': measured " +
                             std::to_string(static_cast<std::uint64_t>(t.bandwidth) >> 20) +
                             " MiB/s and " + std::to_string(static_cast<long>(lat * 1e6)) +
                             " us per piece");
}

void TierStore::Impl::save_bandwidths() {
  std::lock_guard<std::mutex> saving(save_mu);
  std::string s;
  {
    std::lock_guard<std::mutex> g(mu);
    for (const auto &t : tiers)
      if (t.measured)
        s += t.spec.name + " " + std::to_string(static_cast<std::uint64_t>(t.bandwidth)) + " " +
             std::to_string(t.latency) + "\n";
  }
  try {
    tierfs::write_file_atomic(bw_path, s, 0600);
  } catch (const Error &e) {
    log(LogLevel::info, std::string("cannot remember measured bandwidths: ") + e.what());
  }
}

void TierStore::Impl::learn(Tier &t, std::uint64_t bytes, double seconds) {
  if (!t.measured || bytes < kLearnMin || seconds <= 0) return;
  const double obs = throughput(bytes, seconds, t.latency);
  bool save = false;
  {
    std::lock_guard<std::mutex> g(mu);
    const double before = t.bandwidth;
    t.bandwidth = (1 - kLearnWeight) * t.bandwidth + kLearnWeight * obs;
    save = std::fabs(t.bandwidth - before) > 0.2 * before;
  }
  if (save) save_bandwidths();
}

}  // namespace autotune
