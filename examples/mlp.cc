// mlp: a dense multi-layer perceptron (784-1024-1024-10, 1.9 M parameters, 7.5 MB) on
// Fashion-MNIST with libssp, the dense counterpart of logreg: the whole model is read and its
// gradient added every mini-batch, so the parameter exchange is heavy (see examples/mlp_model.hpp
// for the model and classifier.hpp for the training loop, shared with logreg).
//
//   mpirun -np 3 build/examples/mlp --staleness 2 --train-samples 12000
//   mpirun -np 3 build/examples/mlp --staleness 0                  # BSP
//   mpirun -np 3 build/examples/mlp --straggler-rank 2 --straggler-factor 2
#include "mlp_model.hpp"

int main(int argc, char **argv) {
  return examples::ssp_main(examples::mlp_program("mlp"), argc, argv);
}
