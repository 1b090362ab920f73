// mlp_allreduce: the same multi-layer perceptron as mlp, data-parallel with MPI_Allreduce (the
// 7.5 MB gradient summed every step).
//
//   mpirun -np 2 build/examples/mlp_allreduce --train-samples 12000
#include "mlp_model.hpp"

int main(int argc, char **argv) {
  return examples::allreduce_main(examples::mlp_program("mlp_allreduce"), argc, argv);
}
