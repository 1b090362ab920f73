// tier_bench: put and get bandwidth of the tier store, per placement policy (ff fill-fastest,
// bp bandwidth-proportional, auto the default), for objects of 4 MiB to 1 GiB, side by side with
//   the baseline  a plain file written with write(2) + fsync(2) on the disk tier's file system
//                 (and read back with read(2), cold), what a user has without the store;
//   the limit     a bare memcpy into a libpmem2 mapping on the pmem tier's file system.
// Each policy gets a store of its own (pmem tier: --pmem-capacity in --pmem-dir; disk tier in
// --disk-dir), bandwidths measured by the store.  Before every get, the disk pieces and the
// baseline file are dropped from the page cache (POSIX_FADV_DONTNEED), so disk reads come from
// the device.  Every figure is the median of --reps runs (bp/ff, auto/ff: the median of the
// ratios of back-to-back runs); every object is removed after its run and all files are deleted
// at the end.  The runs of the baseline and of the three policies take turns.
//
// usage: tier_bench [--pmem-dir DIR] [--disk-dir DIR] [--pmem-capacity SIZE] [--sizes LIST]
//                   [--reps N]
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "autotune/units.hpp"
#include "tier/fs.hpp"
#include "tier/pmem_map.hpp"

using namespace autotune;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double mibps(std::uint64_t bytes, double secs) { return static_cast<double>(bytes) / MiB / secs; }

void drop_cache(const std::string &path) {
  tierfs::Fd fd = tierfs::open_if_exists(path, O_RDONLY);
  if (fd) ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
}

void drop_dir_cache(const std::string &dir) {
  for (const auto &n : tierfs::list_dir(dir)) drop_cache(dir + "/" + n);
}

struct Options {
  std::string pmem_dir = "/dev/shm";
  std::string disk_dir = "/var/tmp";
  std::uint64_t pmem_capacity = 256 * MiB;
  std::vector<std::uint64_t> sizes = {4 * MiB,   16 * MiB,  64 * MiB,  128 * MiB,
                                       256 * MiB, 512 * MiB, 1024 * MiB};
  int reps = 9;
};

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw_invalid(a + " needs a value");
      return argv[++i];
    };
    if (a == "--pmem-dir")
      o.pmem_dir = value();
    else if (a == "--disk-dir")
      o.disk_dir = value();
    else if (a == "--pmem-capacity")
      o.pmem_capacity = parse_size(a, value(), 'B');
    else if (a == "--reps")
      o.reps = static_cast<int>(parse_int(a, value(), 1, 100));
    else if (a == "--sizes") {
      o.sizes.clear();
      std::string v = value();
      size_t p = 0;
      while (p <= v.size()) {
        size_t q = v.find(',', p);
        if (q == std::string::npos) q = v.size();
        o.sizes.push_back(parse_size(a, v.substr(p, q - p), 'B'));
        p = q + 1;
      }
    } else if (a == "-h" || a == "--help") {
      std::puts(
          "usage: tier_bench [--pmem-dir DIR] [--disk-dir DIR] [--pmem-capacity SIZE] "
          "[--sizes 64M,128M,...] [--reps N]");
      std::exit(0);
    } else {
      throw_invalid("unknown option '" + a + "'");
    }
  }
  return o;
}

struct Run {
  double put = 0, get = 0;
  std::uint64_t on_pmem = 0, on_disk = 0;
};

}  // namespace

int main(int argc, char **argv) {
  Options o;
  std::string root_pmem, root_disk;
  try {
    o = parse(argc, argv);
    char a[] = "/autotune-bench-XXXXXX";
    root_pmem = o.pmem_dir + a;
    root_disk = o.disk_dir + a;
    if (!::mkdtemp(root_pmem.data()) || !::mkdtemp(root_disk.data()))
      throw_io("mkdtemp in " + o.pmem_dir + " / " + o.disk_dir, errno);
    const std::uint64_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());

    std::string cmd;
    for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
    struct utsname un;
    ::uname(&un);
    std::printf("# %s\n# %s %s, %ld CPUs, pmem tier: %s (capacity %s), disk tier: %s\n",
                cmd.c_str(), un.sysname, un.release, ::sysconf(_SC_NPROCESSORS_ONLN),
                o.pmem_dir.c_str(), format_size(o.pmem_capacity).c_str(), o.disk_dir.c_str());

    // The source: not all zeros, not compressible by anyone.
    std::vector<unsigned char> src(max_size), dst(max_size);
    std::uint64_t x = 88172645463325252ull;
    for (std::size_t i = 0; i + 8 <= src.size(); i += 8) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::memcpy(&src[i], &x, 8);
    }
    std::fill(dst.begin(), dst.end(), 1);  // fault the pages in once

    struct Store {
      PlacementPolicy p;
      std::unique_ptr<TierStore> s;
      std::string data;
    };
    std::vector<Store> stores;
    constexpr int kPolicies = 3;
    const PlacementPolicy policies[kPolicies] = {
        PlacementPolicy::fill_fastest, PlacementPolicy::bandwidth_proportional, PlacementPolicy::automatic};
    const char *const tags[kPolicies] = {"ff", "bp", "auto"};
    for (int k = 0; k < kPolicies; ++k) {
      const PlacementPolicy p = policies[k];
      const std::string name = tags[k];
      TierStoreOptions so;
      so.tiers = {{"pmem", TierKind::pmem, root_pmem + "/" + name, o.pmem_capacity, 0},
                  {"disk", TierKind::disk, root_disk + "/" + name, max_size + 64 * MiB, 0}};
      so.placement = p;
      so.demotion = false;
      Store st{p, std::make_unique<TierStore>(so), root_disk + "/" + name + "/data"};
      // Warm up: touch the pool's pages and let the measured bandwidths settle.
      for (int i = 0; i < 3; ++i) {
        st.s->put("warmup", src.data(),
                  std::min<std::uint64_t>(o.pmem_capacity + 64 * MiB, max_size));
        st.s->remove("warmup");
      }
      stores.push_back(std::move(st));
    }
    for (const auto &u : stores[1].s->usage())
      std::printf("# %-4s %-40s measured %.0f MiB/s\n", u.name.c_str(), u.media.c_str(),
                  u.bandwidth / MiB);
    std::printf(
        "# MiB/s, median of %d runs; bp/ff, auto/ff = median of paired put-time ratios (>1: "
        "faster than ff); get reads the disk pieces cold\n",
        o.reps);
    std::printf("%8s | %11s %11s | %8s %8s %8s %6s %7s | %8s %8s %8s %8s | %13s %13s %13s\n",
                "object", "write+fsync", "memcpy-lim", "put ff", "put bp", "put auto", "bp/ff",
                "auto/ff", "read", "get ff", "get bp", "get auto", "ff pmem+disk", "bp pmem+disk",
                "auto pm+disk");

    for (std::uint64_t size : o.sizes) {
      // Limit: bare memcpy into a libpmem2 mapping (pages faulted in beforehand).
      std::vector<double> lim;
      {
        const std::string f = root_pmem + "/limit.bin";
        {
          tierfs::Fd fd = tierfs::open_file(f, O_RDWR | O_CREAT | O_TRUNC, 0600);
          if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) throw_io(f, errno);
        }
        {
          PmemMap m(f);
          std::memset(m.data(), 0, size);
          for (int r = 0; r < o.reps; ++r) {
            const auto t0 = Clock::now();
            std::memcpy(m.data(), src.data(), size);
            lim.push_back(since(t0));
          }
        }
        ::unlink(f.c_str());
      }
      // The baseline and the three policies take turns, so that a slow spell of the disk (a VM's
      // disk, other programs) hits all three alike.
      std::vector<double> bw, br, put[kPolicies], get[kPolicies];
      Run res[kPolicies];
      const std::string plain = root_disk + "/plain.bin";
      for (int r = 0; r < o.reps; ++r) {
        // Baseline: write + fsync of a plain file, then a cold read.
        auto t0 = Clock::now();
        {
          tierfs::Fd fd = tierfs::open_file(plain, O_WRONLY | O_CREAT | O_TRUNC, 0600);
          tierfs::write_all(fd.get(), src.data(), size, plain);
          tierfs::fsync_fd(fd.get(), plain);
        }
        bw.push_back(since(t0));
        drop_cache(plain);
        t0 = Clock::now();
        {
          tierfs::Fd fd = tierfs::open_file(plain, O_RDONLY);
          tierfs::pread_all(fd.get(), dst.data(), size, 0, plain);
        }
        br.push_back(since(t0));
        ::unlink(plain.c_str());
        for (int k = 0; k < kPolicies; ++k) {
          const int i = (k + r) % kPolicies;
          Store &st = stores[static_cast<size_t>(i)];
          t0 = Clock::now();
          const ObjectInfo info = st.s->put("object", src.data(), size);
          put[i].push_back(since(t0));
          res[i].on_pmem = info.bytes_on("pmem");
          res[i].on_disk = info.bytes_on("disk");
          drop_dir_cache(st.data);
          t0 = Clock::now();
          st.s->get_into("object", dst.data(), size);
          get[i].push_back(since(t0));
          if (std::memcmp(dst.data(), src.data(), size) != 0)
            throw Error(Errc::internal, "get returned other bytes");
          st.s->remove("object");
        }
      }
      for (int i = 0; i < kPolicies; ++i) {
        res[i].put = median(put[i]);
        res[i].get = median(get[i]);
      }
      // bp/ff: the median of the ratios of runs taken back to back (a pair shares the disk's
      // mood of the moment, which swings far more than the difference being measured).
      std::vector<double> ratio[kPolicies];
      for (int i = 1; i < kPolicies; ++i)
        for (size_t r = 0; r < put[0].size(); ++r) ratio[i].push_back(put[0][r] / put[i][r]);
      auto placed = [&](int i) {
        char b[32];
        std::snprintf(b, sizeof b, "%.0f+%.0f", static_cast<double>(res[i].on_pmem) / MiB,
                      static_cast<double>(res[i].on_disk) / MiB);
        return std::string(b);
      };
      std::printf(
          "%8s | %11.0f %11.0f | %8.0f %8.0f %8.0f %6.2f %7.2f | %8.0f %8.0f %8.0f %8.0f | %13s "
          "%13s %13s\n",
          format_size(size).c_str(), mibps(size, median(bw)), mibps(size, median(lim)),
          mibps(size, res[0].put), mibps(size, res[1].put), mibps(size, res[2].put),
          median(ratio[1]), median(ratio[2]), mibps(size, median(br)), mibps(size, res[0].get),
          mibps(size, res[1].get), mibps(size, res[2].get), placed(0).c_str(), placed(1).c_str(),
          placed(2).c_str());
      std::fflush(stdout);
    }
    for (const auto &u : stores[1].s->usage())
      std::printf("# after the runs, bp store's %s bandwidth estimate: %.0f MiB/s\n",
                  u.name.c_str(), u.bandwidth / MiB);
    stores.clear();
    tierfs::remove_tree(root_pmem);
    tierfs::remove_tree(root_disk);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tier_bench: %s\n", e.what());
    if (!root_pmem.empty()) tierfs::remove_tree(root_pmem);
    if (!root_disk.empty()) tierfs::remove_tree(root_disk);
    return 1;
  }
  return 0;
}
