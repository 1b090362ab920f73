// A dense multi-layer perceptron for the examples: dim - hidden... - 10, ReLU between the layers,
// softmax cross-entropy, computed over a mini-batch at a time with Eigen matrix products.
//
// Parameters: one float vector, layer after layer: the weights W_l (in_l x out_l, row-major) then
// the biases b_l (out_l).  It is held as a table of `cols` (1024) wide rows, the last one padded
// with zeros (the padding's gradient is always zero).  784-1024-1024-10 has 1,863,690 parameters
// (7.5 MB).  Initialization: PyTorch's nn.Linear default, W and b uniform in +-1/sqrt(in_l).
//
// Per mini-batch of B samples (X: B x dim, pixels / 255):
//   forward   H_l = relu(H_{l-1} W_l + b_l), Z = H_{L-1} W_L + b_L, P = softmax(Z)
//   backward  D_L = scale (P - onehot(y)); gW_l = H_{l-1}^T D_l; gb_l = colsum(D_l);
//             D_{l-1} = (D_l W_l^T) .* (H_{l-1} > 0)
// about 2 B (3 n_params - dim * hidden_1) floating-point operations (no gradient of the input).
// Thread safety: an Mlp keeps per-batch scratch matrices; use one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "classifier.hpp"

namespace examples {

class Mlp : public Classifier {
 public:
  // sizes: dim, hidden..., classes (at least 2 entries, each >= 1).
  explicit Mlp(std::vector<int> sizes);
  ~Mlp() override;
  std::int64_t rows() const override;
  std::int64_t cols() const override { return kCols; }
  void init(float *w, std::uint64_t seed) const override;
  double gradient(const Images &d, const std::uint32_t *idx, int n, const float *w, float scale,
                  float *grad) override;
  double accuracy(const Images &d, const float *w, int limit) override;
  std::size_t params() const { return params_; }
  // Floating-point operations of gradient() on a batch of n.
  double gradient_flops(int n) const;
  const std::vector<int> &sizes() const { return sizes_; }

  static constexpr std::int64_t kCols = 1024;

 private:
  struct Scratch;
  std::vector<int> sizes_;
  std::vector<std::size_t> w_off_, b_off_;
  std::size_t params_ = 0;
  std::unique_ptr<Scratch> s_;
};

// The mlp programs: --hidden (default 1024,1024).
ClassifierProgram mlp_program(const std::string &name);

}  // namespace examples
