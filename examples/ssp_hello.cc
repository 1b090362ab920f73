// ssp_hello: the smallest libssp program, built the way an MPI programmer builds one:
//
//   mpicxx -std=c++17 ssp_hello.cc $(pkg-config --cflags --libs ssp) -o ssp_hello
//   mpirun -np 4 ./ssp_hello
//
// Every worker adds 1 to its own row for 10 clocks under SSP(2); after the barrier every rank
// reads the table and rank 0 checks the sums.
#include <ssp/ssp.hpp>

#include <cstdio>

int main() {
  ssp::Options o;
  o.staleness = 2;
  o.servers = 1;
  ssp::Context ctx(MPI_COMM_WORLD, o);  // initializes MPI, and finalizes it at the end
  auto w = ctx.table<double>("w", ctx.workers(), 4);
  if (ctx.is_worker()) {
    for (int c = 0; c < 10; ++c) {
      auto row = w.get(ctx.worker_index());  // own writes included
      w.inc(ctx.worker_index(), 0, 1.0);
      ctx.clock();
    }
  }
  auto all = w.pull_all();  // every rank
  int bad = 0;
  for (int r = 0; r < ctx.workers(); ++r) bad += all[static_cast<std::size_t>(r * 4)] != 10.0;
  if (ctx.rank() == 0)
    std::printf("ssp_hello: %d workers, %d servers, %s: %s\n", ctx.workers(), ctx.servers(),
                ctx.policy().name().c_str(), bad ? "WRONG SUMS" : "sums ok");
  return bad ? 1 : 0;
}
