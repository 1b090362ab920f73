// ssp_ps_bench: get/inc throughput of libssp per server rank, side by side with a hand-written
// MPI request/response server doing the same traffic (the baseline).
//
// Each worker repeats: read a random block of --block rows of a rows x cols float table, add a
// delta to the same block, and every --clock-every blocks calls clock().  Reported: rows read and
// rows incremented per second per server rank, and the ratio to the baseline, in which every
// worker sends a small request to the block's server (MPI_Send), receives the block (MPI_Recv)
// and sends the increments (MPI_Send), and each server loops on MPI_Recv(MPI_ANY_SOURCE).
//
//   mpirun --oversubscribe -np 4 build/bench/ssp_ps_bench --servers 1
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../examples/common.hpp"
#include "ssp/ssp.hpp"

using examples::now_s;

namespace {

struct Figures {
  double seconds = 0;
  double rows_read = 0, rows_inc = 0;
};

// The baseline: plain MPI.  Servers are ranks [0, S); rows are split in S contiguous ranges.
Figures baseline(int S, long rows, int cols, int block, int iters) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int W = size - S;
  const long per = (rows + S - 1) / S;
  Figures f;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now_s();
  if (rank < S) {
    std::vector<float> mine(static_cast<std::size_t>(per) * cols, 0.0f);
    std::vector<float> buf(static_cast<std::size_t>(block) * cols);
    long req[2];
    int done = 0;
    while (done < W) {
      MPI_Status st;
      MPI_Recv(req, 2, MPI_LONG, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
      if (req[0] < 0) {
        ++done;
        continue;
      }
      const long lo = req[0] - rank * per;
      MPI_Send(&mine[static_cast<std::size_t>(lo) * cols], static_cast<int>(req[1] * cols),
               MPI_FLOAT, st.MPI_SOURCE, 2, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), static_cast<int>(req[1] * cols), MPI_FLOAT, st.MPI_SOURCE, 3,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (long i = 0; i < req[1] * cols; ++i)
        mine[static_cast<std::size_t>(lo * cols + i)] += buf[static_cast<std::size_t>(i)];
    }
  } else {
    std::mt19937_64 rng(static_cast<unsigned>(rank));
    std::vector<float> buf(static_cast<std::size_t>(block) * cols),
        d(static_cast<std::size_t>(block) * cols, 0.5f);
    for (int it = 0; it < iters; ++it) {
      const int s = static_cast<int>(rng() % static_cast<unsigned>(S));
      const long lo = s * per, hi = std::min(rows, lo + per);
      const long start =
          lo + static_cast<long>(rng() % static_cast<unsigned long>(std::max(1L, hi - lo - block)));
      long req[2] = {start, std::min<long>(block, hi - start)};
      MPI_Send(req, 2, MPI_LONG, s, 1, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), static_cast<int>(req[1] * cols), MPI_FLOAT, s, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(d.data(), static_cast<int>(req[1] * cols), MPI_FLOAT, s, 3, MPI_COMM_WORLD);
      f.rows_read += static_cast<double>(req[1]);
      f.rows_inc += static_cast<double>(req[1]);
    }
    for (int s = 0; s < S; ++s) {
      long req[2] = {-1, 0};
      MPI_Send(req, 2, MPI_LONG, s, 1, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  f.seconds = now_s() - t0;
  return f;
}

Figures with_ssp(ssp::Context &ctx, ssp::Table<float> &t, int block, int iters, int clock_every) {
  Figures f;
  ctx.barrier();
  const double t0 = now_s();
  if (ctx.is_worker()) {
    std::mt19937_64 rng(static_cast<unsigned>(ctx.rank()));
    std::vector<float> buf(static_cast<std::size_t>(block) * t.cols()), d(buf.size(), 0.5f);
    const long rows = t.rows();
    for (int it = 0; it < iters; ++it) {
      const long start = static_cast<long>(rng() % static_cast<unsigned long>(rows - block));
      t.get_rows(start, block, buf.data());
      t.inc_rows(start, block, d.data());
      f.rows_read += block;
      f.rows_inc += block;
      if ((it + 1) % clock_every == 0) ctx.clock();
    }
  }
  ctx.barrier();
  f.seconds = now_s() - t0;
  return f;
}

}  // namespace

int main(int argc, char **argv) {
  examples::Flags fl("ssp_ps_bench",
                     "ssp_ps_bench [options]\n\nGet/inc throughput per server rank: libssp against "
                     "a plain MPI request/response server.");
  fl.add("servers", "N", "1", "parameter-server ranks");
  fl.add("rows", "N", "100000", "table rows");
  fl.add("cols", "N", "16", "table columns (floats)");
  fl.add("block", "N", "64", "rows per get/inc");
  fl.add("iters", "N", "3000", "blocks per worker");
  fl.add("clock-every", "N", "10", "blocks between clock() calls");
  fl.add("staleness", "N|asp", "2", "0 = BSP, N = SSP(N), asp");
  fl.add("idle-sleep-us", "US", "100",
         "libssp's longest sleep while waiting for a message (0: spin)");
  fl.parse(argc, argv);
  const int S = static_cast<int>(fl.integer("servers", 1, 1024));
  const long rows = fl.integer("rows", 1024, 1L << 30);
  const int cols = static_cast<int>(fl.integer("cols", 1, 1 << 16));
  const int block = static_cast<int>(fl.integer("block", 1, 1 << 20));
  const int iters = static_cast<int>(fl.integer("iters", 1, 1 << 30));
  const int clock_every = static_cast<int>(fl.integer("clock-every", 1, 1 << 30));
  const int staleness = examples::parse_staleness(fl.str("staleness"));
  if (staleness < 0)
    fl.fail("--staleness: '" + fl.str("staleness") + "' is not allowed; allowed: 0.., or asp");
  const int idle_us = static_cast<int>(fl.integer("idle-sleep-us", 0, 100000));
  if (block >= rows) fl.fail("--block: must be smaller than --rows");
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (S >= size) {
    if (rank == 0)
      std::fprintf(stderr, "ssp_ps_bench: --servers: '%d' is out of range; allowed: 1 to %d\n", S,
                   size - 1);
    MPI_Finalize();
    return 2;
  }
  double agg[2][3];
  Figures b = baseline(S, rows, cols, block, iters);
  Figures s;
  {
    ssp::Options o;
    o.servers = S;
    o.staleness = staleness;
    o.profile = false;
    o.idle_sleep_us = idle_us;
    ssp::Context ctx(MPI_COMM_WORLD, o);
    auto t = ctx.table<float>("t", rows, cols);
    s = with_ssp(ctx, t, block, iters, clock_every);
  }
  double mine[2][3] = {{b.seconds, b.rows_read, b.rows_inc}, {s.seconds, s.rows_read, s.rows_inc}};
  MPI_Reduce(mine, agg, 6, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const double bs = b.seconds, ss = s.seconds;  // rank 0's wall time (all ranks end at a barrier)
    const double bget = agg[0][1] / bs / S, sget = agg[1][1] / ss / S;
    const double binc = agg[0][2] / bs / S, sinc = agg[1][2] / ss / S;
    const double mb = 4.0 * cols / 1e6;
    std::printf(
        "ssp_ps_bench: %d ranks (%d workers, %d servers), %ld x %d floats, blocks of %d rows, "
        "clock every %d blocks\n",
        size, size - S, S, rows, cols, block, clock_every);
    std::printf(
        "  plain MPI  : get %10.0f rows/s per server (%7.1f MB/s), inc %10.0f rows/s per server\n",
        bget, bget * mb, binc);
    std::printf(
        "  libssp     : get %10.0f rows/s per server (%7.1f MB/s), inc %10.0f rows/s per server\n",
        sget, sget * mb, sinc);
    std::printf("  ratio libssp/plain MPI: get %.2f, inc %.2f\n", sget / bget, sinc / binc);
  }
  MPI_Finalize();
  return 0;
}
