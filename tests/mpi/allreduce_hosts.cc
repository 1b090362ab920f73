// MPI smoke program: every rank contributes its rank to an MPI_Allreduce and reports the Slurm
// node it runs on.  Rank 0 prints "ranks=N sum=S nodes=n1,n2,..." and exits non-zero when the
// sum is not N(N-1)/2, so a test can check both the result and the placement.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long mine = rank, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  char node[64] = {0};
  const char *n = std::getenv("SLURMD_NODENAME");
  std::snprintf(node, sizeof node, "%s", n ? n : "?");
  std::vector<char> all(static_cast<size_t>(size) * sizeof node);
  MPI_Gather(node, sizeof node, MPI_CHAR, all.data(), sizeof node, MPI_CHAR, 0, MPI_COMM_WORLD);

  int rc = 0;
  if (rank == 0) {
    std::set<std::string> nodes;
    for (int r = 0; r < size; ++r) nodes.insert(&all[static_cast<size_t>(r) * sizeof node]);
    std::string list;
    for (const auto &s : nodes) list += (list.empty() ? "" : ",") + s;
    const long want = static_cast<long>(size) * (size - 1) / 2;
    std::printf("ranks=%d sum=%ld nodes=%s\n", size, sum, list.c_str());
    if (sum != want) {
      std::printf("error: allreduce gave %ld, expected %ld\n", sum, want);
      rc = 1;
    }
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
