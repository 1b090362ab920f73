// gemm_rate: this machine's single-core GEMM rate (Eigen, float, the flags the examples' dense
// model is built with) on the matrix products of one mini-batch of examples/mlp, against the rate
// of the model's whole gradient computation (Mlp::gradient: the same products plus bias, ReLU,
// softmax and gathering the batch) on the same batch.  Both run back to back, alternating, and
// the medians over the rounds are printed with their ratio.
//
//   build/bench/gemm_rate [--batch 32] [--hidden 1024,1024] [--rounds 7] [--seconds 0.5]
#include <Eigen/Dense>
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "../examples/common.hpp"
#include "../examples/mlp_model.hpp"

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
}  // namespace

int main(int argc, char **argv) {
  examples::Flags f("gemm_rate",
                    "gemm_rate [options]\n\nSingle-core GEMM rate on examples/mlp's shapes "
                    "against its gradient computation.");
  f.add("batch", "N", "32", "mini-batch size");
  f.add("hidden", "N,N...", "1024,1024", "hidden layer widths");
  f.add("rounds", "N", "7", "alternating rounds of both measurements");
  f.add("seconds", "S", "0.5", "duration of one measurement");
  f.parse(argc, argv);
  const int B = static_cast<int>(f.integer("batch", 1, 100000));
  const int rounds = static_cast<int>(f.integer("rounds", 1, 1000));
  const double secs = f.real("seconds", 0.01, 100);
  auto mk = examples::mlp_program("mlp").make;
  std::unique_ptr<examples::Classifier> c = mk(f, 784);
  auto &mlp = static_cast<examples::Mlp &>(*c);
  const std::vector<int> &sz = mlp.sizes();

  // Random images and the model's parameters.
  examples::Images d;
  d.n = 4096;
  d.dim = sz[0];
  std::mt19937_64 rng(1);
  d.x.resize(static_cast<std::size_t>(d.n) * d.dim);
  d.y.resize(static_cast<std::size_t>(d.n));
  for (auto &v : d.x) v = static_cast<std::uint8_t>(rng() % 256);
  for (auto &v : d.y) v = static_cast<std::uint8_t>(rng() % 10);
  std::vector<float> w(static_cast<std::size_t>(mlp.rows() * mlp.cols()), 0.0f),
      g(w.size(), 0.0f);
  mlp.init(w.data(), 1);
  std::vector<std::uint32_t> idx(static_cast<std::size_t>(d.n));
  for (int i = 0; i < d.n; ++i) idx[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(i);

  // The products of one batch, as Mlp::gradient does them: forward X W, weight gradients
  // X^T D, input gradients D W^T (not for the first layer).
  const std::size_t L = sz.size() - 1;
  std::vector<Mat> W(L), A(L + 1), D(L), gW(L), dA(L);
  A[0] = Mat::Random(B, sz[0]);
  for (std::size_t l = 0; l < L; ++l) {
    W[l] = Mat::Random(sz[l], sz[l + 1]);
    gW[l] = Mat::Zero(sz[l], sz[l + 1]);
    A[l + 1] = Mat(B, sz[l + 1]);
    D[l] = Mat::Random(B, sz[l + 1]);
    dA[l] = Mat(B, sz[l]);
  }
  auto gemms = [&] {
    for (std::size_t l = 0; l < L; ++l) A[l + 1].noalias() = A[l] * W[l];
    for (std::size_t l = L; l-- > 0;) {
      gW[l].noalias() = A[l].transpose() * D[l];
      if (l > 0) dA[l].noalias() = D[l] * W[l].transpose();
    }
  };
  const double flops = mlp.gradient_flops(B);
  int pos = 0;
  auto grad = [&] {
    if (pos + B > d.n) pos = 0;
    mlp.gradient(d, &idx[static_cast<std::size_t>(pos)], B, w.data(), -0.01f, g.data());
    pos += B;
  };
  auto rate = [&](auto &&fn) {
    fn();  // warm
    int n = 0;
    const double a = examples::now_s();
    double t = 0;
    do {
      fn();
      ++n;
      t = examples::now_s() - a;
    } while (t < secs);
    return flops * n / t / 1e9;
  };
  std::vector<double> rg, rm, ratio;
  std::printf("gemm_rate: batch %d, %s, %zu parameters, %.1f MFLOP per gradient\n", B,
              f.str("hidden").c_str(), mlp.params(), flops / 1e6);
  for (int r = 0; r < rounds; ++r) {
    const double a = rate(gemms), b = rate(grad);
    rg.push_back(a);
    rm.push_back(b);
    ratio.push_back(b / a);
    std::printf("  round %d: GEMM %.2f GFLOP/s, gradient %.2f GFLOP/s (%.0f%%)\n", r + 1, a, b,
                100 * b / a);
  }
  std::printf("final: gemm_gflops=%.2f gradient_gflops=%.2f gradient_over_gemm=%.3f "
              "gradient_ms=%.2f\n",
              median(rg), median(rm), median(ratio), flops / (median(rm) * 1e9) * 1e3);
  return 0;
}
