#include "mlp_model.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace examples {

namespace {
using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapM = Eigen::Map<Mat>;
using CMapM = Eigen::Map<const Mat>;
using RowV = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using MapV = Eigen::Map<RowV>;
using CMapV = Eigen::Map<const RowV>;
}  // namespace

struct Mlp::Scratch {
  Mat x;               // B x dim
  std::vector<Mat> h;  // activations of each layer (B x out_l); the last holds P
  std::vector<Mat> d;  // their gradients
};

Mlp::Mlp(std::vector<int> sizes) : sizes_(std::move(sizes)), s_(std::make_unique<Scratch>()) {
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    w_off_.push_back(params_);
    params_ += static_cast<std::size_t>(sizes_[l]) * sizes_[l + 1];
    b_off_.push_back(params_);
    params_ += static_cast<std::size_t>(sizes_[l + 1]);
  }
}

Mlp::~Mlp() = default;

std::int64_t Mlp::rows() const {
  return static_cast<std::int64_t>((params_ + kCols - 1) / kCols);
}

void Mlp::init(float *w, std::uint64_t seed) const {
  std::mt19937_64 rng(seed * 7919 + 1);
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    const float a = 1.0f / std::sqrt(static_cast<float>(sizes_[l]));
    std::uniform_real_distribution<float> u(-a, a);
    const std::size_t end = b_off_[l] + static_cast<std::size_t>(sizes_[l + 1]);
    for (std::size_t i = w_off_[l]; i < end; ++i) w[i] = u(rng);
  }
}

double Mlp::gradient_flops(int n) const {
  double f = 0;
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    const double mn = static_cast<double>(sizes_[l]) * sizes_[l + 1];
    f += 2.0 * n * mn * (l == 0 ? 2 : 3);  // forward, weight gradient, input gradient (not X's)
  }
  return f;
}

namespace {
// Rows idx[0..n) of d as floats in [0, 1].
void gather(const Images &d, const std::uint32_t *idx, int n, Mat &x) {
  x.resize(n, d.dim);
  for (int b = 0; b < n; ++b) {
    const std::uint8_t *p = &d.x[static_cast<std::size_t>(idx[b]) * d.dim];
    float *o = x.row(b).data();
    for (int j = 0; j < d.dim; ++j) o[j] = p[j] * (1.0f / 255.0f);
  }
}
}  // namespace

double Mlp::gradient(const Images &d, const std::uint32_t *idx, int n, const float *w,
                     float scale, float *grad) {
  Scratch &s = *s_;
  const std::size_t L = sizes_.size() - 1;
  s.h.resize(L);
  s.d.resize(L);
  gather(d, idx, n, s.x);
  for (std::size_t l = 0; l < L; ++l) {
    const Mat &in = l == 0 ? s.x : s.h[l - 1];
    CMapM W(w + w_off_[l], sizes_[l], sizes_[l + 1]);
    CMapV b(w + b_off_[l], sizes_[l + 1]);
    s.h[l].resize(n, sizes_[l + 1]);
    s.h[l].noalias() = in * W;
    s.h[l].rowwise() += b;
    if (l + 1 < L) s.h[l] = s.h[l].cwiseMax(0.0f);
  }
  // Softmax and cross-entropy; D_L = P - onehot(y).
  double loss = 0;
  Mat &z = s.h[L - 1];
  for (int b = 0; b < n; ++b) {
    auto r = z.row(b);
    r.array() -= r.maxCoeff();
    r = r.array().exp().matrix();
    r /= r.sum();
    const int y = d.y[idx[b]];
    loss -= std::log(std::max(r(y), 1e-30f));
    r(y) -= 1.0f;
    r *= scale;
  }
  s.d[L - 1].swap(z);
  for (std::size_t l = L; l-- > 0;) {
    const Mat &in = l == 0 ? s.x : s.h[l - 1];
    const Mat &D = s.d[l];
    MapM gW(grad + w_off_[l], sizes_[l], sizes_[l + 1]);
    MapV gb(grad + b_off_[l], sizes_[l + 1]);
    gW.noalias() = in.transpose() * D;
    gb = D.colwise().sum();
    if (l == 0) break;
    CMapM W(w + w_off_[l], sizes_[l], sizes_[l + 1]);
    s.d[l - 1].resize(n, sizes_[l]);
    s.d[l - 1].noalias() = D * W.transpose();
    s.d[l - 1] = (s.h[l - 1].array() > 0.0f).select(s.d[l - 1], 0.0f);
  }
  s.h[L - 1].swap(s.d[L - 1]);  // keep the buffers for the next batch
  // The padding after the last bias (the table's last row) has no gradient.
  std::fill(grad + params_, grad + rows() * kCols, 0.0f);
  return loss;
}

double Mlp::accuracy(const Images &d, const float *w, int limit) {
  const int n = std::min(limit, d.n);
  constexpr int kChunk = 256;
  std::vector<std::uint32_t> idx(kChunk);
  Mat x, h, next;
  int right = 0;
  for (int a = 0; a < n; a += kChunk) {
    const int m = std::min(kChunk, n - a);
    for (int i = 0; i < m; ++i) idx[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(a + i);
    gather(d, idx.data(), m, x);
    const Mat *in = &x;
    for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
      CMapM W(w + w_off_[l], sizes_[l], sizes_[l + 1]);
      CMapV b(w + b_off_[l], sizes_[l + 1]);
      next.resize(m, sizes_[l + 1]);
      next.noalias() = *in * W;
      next.rowwise() += b;
      if (l + 2 < sizes_.size()) next = next.cwiseMax(0.0f);
      h.swap(next);
      in = &h;
    }
    for (int i = 0; i < m; ++i) {
      Eigen::Index best = 0;
      h.row(i).maxCoeff(&best);
      right += static_cast<int>(best) == d.y[static_cast<std::size_t>(a + i)];
    }
  }
  return n ? static_cast<double>(right) / n : 0;
}

ClassifierProgram mlp_program(const std::string &name) {
  ClassifierProgram p;
  p.name = name;
  p.summary =
      "A dense multi-layer perceptron (784-1024-1024-10 by default, ReLU, softmax) on "
      "Fashion-MNIST,\ncomputed with Eigen matrix products over the mini-batch.";
  p.epochs = "1";
  p.lr = "0.05";
  p.task_ms = "200";
  p.eval_interval = "1";
  p.eval_samples = "2000";
  p.add_flags = [](Flags &f) {
    f.add("hidden", "N,N...", "1024,1024", "hidden layer widths, comma-separated");
  };
  p.make = [](const Flags &f, int dim) -> std::unique_ptr<Classifier> {
    std::vector<int> sizes{dim};
    std::stringstream ss(f.str("hidden"));
    std::string item;
    while (std::getline(ss, item, ',')) {
      char *end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end || v < 1 || v > 65536)
        f.fail("--hidden: '" + f.str("hidden") +
               "' is not allowed; allowed: widths from 1 to 65536, comma-separated");
      sizes.push_back(static_cast<int>(v));
    }
    if (sizes.size() < 2 || sizes.size() > 9)
      f.fail("--hidden: '" + f.str("hidden") + "' is not allowed; allowed: 1 to 8 widths");
    sizes.push_back(kClasses);
    return std::make_unique<Mlp>(sizes);
  };
  return p;
}

}  // namespace examples
