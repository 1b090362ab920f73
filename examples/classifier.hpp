// Training an image classifier on Fashion-MNIST by mini-batch SGD, the two ways the examples
// compare: on a libssp parameter server (ssp_main: SSP(s), BSP or ASP, micro-tasks, stragglers,
// checkpoints) and data-parallel with MPI_Allreduce (allreduce_main: every rank computes the
// gradient of its own mini-batch, the gradients are summed, every rank applies the same step).
// A program supplies the model (a Classifier) and its name; logreg, logreg_allreduce, mlp and
// mlp_allreduce are each a main() of a few lines over these.
//
// In both drivers each sample moves the model by lr/batch times its gradient (the mean loss of a
// mini-batch, as PyTorch's cross_entropy + SGD), so the same --lr and --batch mean the same step.
// Both print model snapshots' test accuracy (taken every --eval-interval seconds of training,
// evaluated after training) and one "final:" line with the figures the benchmarks read.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common.hpp"

namespace examples {

// A model whose parameters are one float vector of rows() x cols() (the libssp table's shape,
// row-major).  Thread safety: none needed (one per process).
class Classifier {
 public:
  virtual ~Classifier() = default;
  virtual std::int64_t rows() const = 0;
  virtual std::int64_t cols() const = 0;
  // The initial parameters (rows() * cols() floats, zero on entry), the same for a seed.
  virtual void init(float *w, std::uint64_t seed) const = 0;
  // grad (same shape) = scale times the sum over samples idx[0..n) of d of the loss gradient at
  // w (overwritten: the scaling folded into the computation saves two passes over a large
  // model); returns the summed cross-entropy loss.
  virtual double gradient(const Images &d, const std::uint32_t *idx, int n, const float *w,
                          float scale, float *grad) = 0;
  // Accuracy of w on the first `limit` samples of d.
  virtual double accuracy(const Images &d, const float *w, int limit) = 0;
};

// What a program tells the drivers.
struct ClassifierProgram {
  std::string name;      // "mlp": messages start "mlp: "
  std::string summary;   // first paragraph of --help
  std::string epochs = "5", lr = "0.01", task_ms = "5", eval_interval = "0.5",
              eval_samples = "10000";
  // The model's own flags, added after the common ones.
  std::function<void(Flags &)> add_flags;
  // Called after the flags are parsed (before MPI starts: fail through f.fail()) with the
  // number of pixels of an image.
  std::function<std::unique_ptr<Classifier>(const Flags &f, int dim)> make;
};

// The libssp program: run it with at least 2 ranks (the first --servers ranks are parameter
// servers).  Returns main()'s exit status.
int ssp_main(const ClassifierProgram &p, int argc, char **argv);
// The MPI_Allreduce program (any number of ranks).
int allreduce_main(const ClassifierProgram &p, int argc, char **argv);

// Multinomial logistic regression ((dim + 1) x 10 parameters, zero at the start).
ClassifierProgram logreg_program(const std::string &name);

}  // namespace examples
