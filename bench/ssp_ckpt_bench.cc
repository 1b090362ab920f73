// ssp_ckpt_bench: a libssp checkpoint (Context::checkpoint of one float table) through the tier
// store (ssp::TierSnapshotStore: a pmem tier and a disk tier, one store per placement policy)
// against the same checkpoint into a plain directory on the local disk
// (ssp::DirectorySnapshotStore: one file per part, write + fsync + rename), the baseline a user
// has.
//
// Per model size, a fresh Context holds the table (filled with random values by the first worker)
// on the server ranks; each repeat runs every variant back to back, in an order that rotates from
// repeat to repeat, and times Context::checkpoint from a barrier before it to a barrier after it
// (every part written and synced, the manifest and `latest` committed).  The snapshot is removed
// after each timed checkpoint (not timed).  Reported per size and variant: the median time, the
// model bytes per second, where the tier store put the bytes, and the median (and range) of the
// per-repeat ratios of the baseline's time to the variant's (> 1: faster than the directory).
//
//   mpirun --oversubscribe -np 3 build/bench/ssp_ckpt_bench --servers 2 --sizes 16M,64M,256M
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../examples/common.hpp"
#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/units.hpp"
#include "ssp/ssp.hpp"
#include "ssp/tier_store.hpp"

namespace {

struct Variant {
  std::string name;
  std::unique_ptr<ssp::SnapshotStore> store;
  ssp::TierSnapshotStore *tier = nullptr;  // null for the directory
  std::vector<double> seconds;
  std::map<std::string, std::uint64_t> split;  // tier -> bytes of the snapshot (last repeat)
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

std::string mib(std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(b) / (1 << 20));
  return buf;
}

}  // namespace

int main(int argc, char **argv) {
  examples::Flags fl(
      "ssp_ckpt_bench",
      "ssp_ckpt_bench [options]\n\nA libssp checkpoint through the tier store (pmem + disk) "
      "against the same checkpoint into a\nplain directory (one file per part, write + fsync). "
      "Run it under mpirun with at least --servers + 1 ranks.");
  fl.add("sizes", "LIST", "16M,64M,256M", "model sizes (one float table each), comma-separated");
  fl.add("repeats", "N", "5", "repeats of every variant");
  fl.add("servers", "N", "1", "parameter-server ranks (they write the table's shards)");
  fl.add("logical-servers", "N", "16", "shards of the table (one snapshot part each)");
  fl.add("cols", "N", "1024", "floats per table row");
  fl.add("pmem-dir", "DIR", "/dev/shm", "where the pmem tiers go (a directory is made inside)");
  fl.add("pmem-capacity", "SIZE", "512M", "capacity of each store's pmem tier");
  fl.add("disk-dir", "DIR", "/var/tmp",
         "where the disk tiers and the plain directory go (a directory is made inside)");
  fl.add("disk-capacity", "SIZE", "4G", "capacity of each store's disk tier");
  fl.add("placements", "LIST", "bandwidth-proportional,fill-fastest",
         "the tier store's placement policies to measure (one store each)");
  fl.parse(argc, argv);
  std::vector<std::uint64_t> sizes;
  for (const auto &s : split_list(fl.str("sizes"))) {
    try {
      sizes.push_back(autotune::parse_size("--sizes", s, 'B'));
    } catch (const autotune::Error &e) {
      fl.fail(e.what());
    }
  }
  if (sizes.empty()) fl.fail("--sizes: empty; allowed: sizes such as 16M,64M");
  const int repeats = static_cast<int>(fl.integer("repeats", 1, 1000));
  const int servers = static_cast<int>(fl.integer("servers", 1, 1024));
  const int logical = static_cast<int>(fl.integer("logical-servers", 1, 65536));
  const long cols = fl.integer("cols", 1, 1 << 20);
  std::uint64_t pcap = 0, dcap = 0;
  std::vector<autotune::PlacementPolicy> placements;
  try {
    pcap = autotune::parse_size("--pmem-capacity", fl.str("pmem-capacity"), 'B');
    dcap = autotune::parse_size("--disk-capacity", fl.str("disk-capacity"), 'B');
    for (const auto &p : split_list(fl.str("placements")))
      placements.push_back(autotune::parse_placement("--placements", p));
  } catch (const autotune::Error &e) {
    fl.fail(e.what());
  }
  const std::string pmem_root = fl.str("pmem-dir"), disk_root = fl.str("disk-dir");

  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  autotune::set_stderr_log_sink("ssp_ckpt_bench", autotune::LogLevel::error);
  // Rank 0 makes the directories and tells the others.
  char names[2][512] = {{0}, {0}};
  if (rank == 0) {
    std::string p = pmem_root + "/ssp-ckpt-bench.XXXXXX", d = disk_root + "/ssp-ckpt-bench.XXXXXX";
    if (!::mkdtemp(p.data()) || !::mkdtemp(d.data())) {
      std::fprintf(stderr, "ssp_ckpt_bench: cannot make a directory in %s or %s\n",
                   pmem_root.c_str(), disk_root.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::snprintf(names[0], sizeof names[0], "%s", p.c_str());
    std::snprintf(names[1], sizeof names[1], "%s", d.c_str());
  }
  MPI_Bcast(names, sizeof names, MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::string pdir = names[0], ddir = names[1];

  try {
    // The stores: opened by rank 0 first (which lays them out and measures the tiers), then by
    // the others.
    std::vector<Variant> vs;
    auto open_all = [&] {
      vs.clear();
      Variant d;
      d.name = "directory";
      d.store = std::make_unique<ssp::DirectorySnapshotStore>(ddir + "/plain");
      vs.push_back(std::move(d));
      for (auto p : placements) {
        const std::string tag = p == autotune::PlacementPolicy::fill_fastest ? "ff" : "bp";
        autotune::TierStoreOptions o;
        o.tiers = {{"pmem", autotune::TierKind::pmem, pdir + "/" + tag, pcap, 0},
                   {"disk", autotune::TierKind::disk, ddir + "/" + tag, dcap, 0}};
        o.placement = p;
        Variant v;
        v.name = std::string("tier ") + autotune::placement_name(p);
        auto t = std::make_unique<ssp::TierSnapshotStore>(autotune::TierStore(o),
                                                          ssp::TierSnapshotOptions{"ckpt", 0});
        v.tier = t.get();
        v.store = std::move(t);
        vs.push_back(std::move(v));
      }
    };
    if (rank == 0) open_all();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) open_all();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("ssp_ckpt_bench: %d ranks (%d servers), %d shards per table, %d repeats\n", size,
                  servers, logical, repeats);
      for (const auto &u : vs[1].tier->tier_store().usage())
        std::printf("# tier %-4s %-6s %s, %s MiB, measured %.0f MiB/s\n", u.name.c_str(),
                    u.path.c_str(), u.media.c_str(), mib(u.capacity).c_str(),
                    u.bandwidth / (1 << 20));
      std::printf("# directory %s/plain (write + fsync + rename per part)\n", ddir.c_str());
      std::printf("%8s  %-30s %9s %9s  %-22s %s\n", "model", "variant", "time s", "MiB/s",
                  "pmem+disk MiB", "directory/variant (median [range])");
      std::fflush(stdout);
    }
    for (const std::uint64_t bytes : sizes) {
      const long rows = std::max<long>(logical, static_cast<long>(bytes / (4 * cols)));
      ssp::Options o;
      o.servers = servers;
      o.logical_servers = logical;
      o.profile = false;
      ssp::Context ctx(MPI_COMM_WORLD, o);
      auto t = ctx.table<float>("model", rows, cols);
      if (ctx.worker_index() == 0) {  // random values, so that nothing is trivially compressible
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1, 1);
        const long chunk = std::max<long>(1, (4 << 20) / (4 * cols));
        std::vector<float> d(static_cast<std::size_t>(chunk * cols));
        for (long r = 0; r < rows; r += chunk) {
          const long n = std::min(chunk, rows - r);
          for (long i = 0; i < n * cols; ++i) d[static_cast<std::size_t>(i)] = u(rng);
          t.inc_rows(r, n, d.data());
        }
      }
      ctx.barrier();
      for (auto &v : vs) {
        v.seconds.clear();
        v.split.clear();
      }
      for (int r = 0; r < repeats; ++r) {
        for (std::size_t k = 0; k < vs.size(); ++k) {
          Variant &v = vs[(k + static_cast<std::size_t>(r)) % vs.size()];
          MPI_Barrier(MPI_COMM_WORLD);
          const double t0 = MPI_Wtime();
          ctx.checkpoint(*v.store);
          MPI_Barrier(MPI_COMM_WORLD);
          const double t1 = MPI_Wtime();
          if (rank == 0) {
            v.seconds.push_back(t1 - t0);
            if (v.tier) {
              v.split.clear();
              for (const auto &n : v.store->list())
                for (const auto &p : v.tier->stat(n).pieces) v.split[p.tier] += p.length;
            }
            for (const auto &n : v.store->list()) v.store->remove(n);
          }
          MPI_Barrier(MPI_COMM_WORLD);
        }
      }
      if (rank == 0) {
        const double model = static_cast<double>(rows) * cols * 4;
        const std::string label = autotune::format_size(static_cast<std::uint64_t>(model));
        for (std::size_t k = 0; k < vs.size(); ++k) {
          const Variant &v = vs[k];
          const double med = median(v.seconds);
          std::string where = "-", ratio = "-";
          if (v.tier) {
            auto on = [&](const char *tier) {
              auto it = v.split.find(tier);
              return it == v.split.end() ? std::uint64_t{0} : it->second;
            };
            where = mib(on("pmem")) + "+" + mib(on("disk"));
            std::vector<double> q;
            for (int r = 0; r < repeats; ++r)
              q.push_back(vs[0].seconds[static_cast<std::size_t>(r)] /
                          v.seconds[static_cast<std::size_t>(r)]);
            char b[96];
            std::snprintf(b, sizeof b, "%.2f [%.2f .. %.2f]", median(q),
                          *std::min_element(q.begin(), q.end()),
                          *std::max_element(q.begin(), q.end()));
            ratio = b;
          }
          std::printf("%8s  %-30s %9.3f %9.0f  %-22s %s\n", label.c_str(), v.name.c_str(), med,
                      model / med / (1 << 20), where.c_str(), ratio.c_str());
        }
        std::fflush(stdout);
      }
    }
  } catch (const std::exception &e) {  // the other ranks would wait forever
    std::fprintf(stderr, "ssp_ckpt_bench: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::remove_all(pdir, ec);
    std::filesystem::remove_all(ddir, ec);
  }
  MPI_Finalize();
  return 0;
}
