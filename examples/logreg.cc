// logreg: multinomial logistic regression on Fashion-MNIST with libssp (the project's demo
// workload).  The model (785 x 10 floats: 784 pixel weights and a bias per class) lives on the
// parameter servers; the 60000 training images are the work units of a libssp job, split into
// logical executors and run as micro-tasks of mini-batch SGD steps.  The first worker evaluates
// the test accuracy as it goes; rank 0 prints the final accuracy on all 10000 test images.
//
//   mpirun -np 4 build/examples/logreg --epochs 3 --staleness 2
//   srun --mpi=pmix -n 4 build/examples/logreg --staleness 0        # BSP
//   mpirun -np 4 build/examples/logreg --straggler-rank 3 --straggler-factor 2
//
// Checkpoints (examples/checkpoint.hpp) go to a directory, the job's burst buffer or a tier store
// (pmem + disk), and a run resumes from the newest one on any number of ranks:
//   T=pmem:/dev/shm/me/ckpt:256M,disk:/var/tmp/me/ckpt:1G
//   mpirun -np 4 examples/logreg --checkpoint-tiers $T --checkpoint-every 25 --stop-at-clock 50
//   mpirun -np 2 examples/logreg --checkpoint-tiers $T --restore        # in build/
#include <mpi.h>
#include "classifier.hpp"

int main(int argc, char **argv) {
  return examples::ssp_main(examples::logreg_program("logreg"), argc, argv);
}
