// logreg_allreduce: the same logistic regression as logreg, data-parallel with MPI_Allreduce
// (bulk-synchronous: every rank computes the gradient of its own mini-batch, the gradients are
// summed, every rank applies the same step).  This is what MPI users write without a parameter
// server; the benchmarks compare libssp against it.  Each sample moves the model by lr/batch times
// its gradient, as in logreg, so the same --lr and --batch mean the same step.
//
//   mpirun -np 4 build/examples/logreg_allreduce --epochs 3
#include "classifier.hpp"

int main(int argc, char **argv) {
  return examples::allreduce_main(examples::logreg_program("logreg_allreduce"), argc, argv);
}
