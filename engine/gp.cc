#include "autotune/gp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "autotune/dense.hpp"
#include "autotune/error.hpp"
#include "autotune/rng.hpp"
#include "autotune/vector_math.hpp"
#include "dense_loops.hpp"

namespace autotune {
namespace {

using dense_loops::kSqrt5;
constexpr double kLog2Pi = 1.8378770664093453;
constexpr double kJitter = 1e-9;

// Squared distances between the rows of X over the columns of each group, for every pair i > j:
// a (P x G) matrix, P = n(n-1)/2, pairs in the order (1,0), (2,0), ..., (n-1,0), (2,1), ...
// The fit evaluates the likelihood dozens of times on the same X, so these are computed once and
// every evaluation works on contiguous vectors of length P.  The pairs of one j are contiguous,
// so each column adds one vectorized segment per j.
Eigen::MatrixXd pair_distances(const Eigen::MatrixXd &X, const std::vector<int> &groups, int G) {
  const Eigen::Index n = X.rows();
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(n * (n - 1) / 2, G);
  Eigen::Index p = 0;
  for (Eigen::Index j = 0; j + 1 < n; p += n - j - 1, ++j)
    for (Eigen::Index c = 0; c < X.cols(); ++c)
      d.col(groups[static_cast<std::size_t>(c)]).segment(p, n - j - 1).array() +=
          (X.col(c).tail(n - j - 1).array() - X(j, c)).square();
  return d;
}

// Inputs of warped columns are first mapped to [kWarpEps, 1 - kWarpEps], where the Kumaraswamy
// CDF and its derivatives are finite.
constexpr double kWarpEps = 1e-6;

// X with the warped columns of h replaced by their Kumaraswamy CDF; with da and db, also the
// derivative of each warped column with respect to its log a and log b (n x W).  Inputs are
// resource levels with few distinct values per column (a candidate set of thousands has a
// dozen node counts), so the CDF is computed once per distinct value (an open-addressing table
// of the values seen) and copied to the rows that share it.
Eigen::MatrixXd warp_inputs(const Eigen::MatrixXd &X, const GpHyper &h, Eigen::MatrixXd *da,
                            Eigen::MatrixXd *db) {
  Eigen::MatrixXd W = X;
  const Eigen::Index K = static_cast<Eigen::Index>(h.warp_columns.size()), n = X.rows();
  if (da) da->resize(n, K);
  if (db) db->resize(n, K);
  if (K == 0 || n == 0) return W;
  int bits = 6;
  while ((1 << bits) < 2 * n) ++bits;
  const std::size_t cap = std::size_t{1} << bits;
  std::vector<double> keys(cap);
  std::vector<int> slot(cap);
  std::vector<double> vw, va, vb;
  for (Eigen::Index k = 0; k < K; ++k) {
    const Eigen::Index c = h.warp_columns[static_cast<size_t>(k)];
    const double a = std::exp(h.log_warp_a[k]), b = std::exp(h.log_warp_b[k]);
    std::fill(slot.begin(), slot.end(), -1);
    vw.clear();
    va.clear();
    vb.clear();
    for (Eigen::Index r = 0; r < n; ++r) {
      const double x0 = X(r, c);
      std::uint64_t u64;
      std::memcpy(&u64, &x0, sizeof u64);
      std::size_t i = static_cast<std::size_t>((u64 * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
      while (slot[i] >= 0 && keys[i] != x0) i = (i + 1) & (cap - 1);
      if (slot[i] < 0) {
        // u = x^a, v = 1 - u, w = 1 - v^b, by exp and log (cheaper than pow).
        const double x = kWarpEps + (1 - 2 * kWarpEps) * std::min(1.0, std::max(0.0, x0));
        const double lx = std::log(x), u = std::exp(a * lx), lv = std::log1p(-u);
        const double vbb = std::exp(b * lv);
        keys[i] = x0;
        slot[i] = static_cast<int>(vw.size());
        vw.push_back(1 - vbb);
        va.push_back(a * b * vbb / (1 - u) * u * lx);
        vb.push_back(-b * vbb * lv);
      }
      const std::size_t v = static_cast<std::size_t>(slot[i]);
      W(r, c) = vw[v];
      if (da) (*da)(r, k) = va[v];
      if (db) (*db)(r, k) = vb[v];
    }
  }
  return W;
}

void check_warp(const GpHyper &h, Eigen::Index D) {
  const size_t K = h.warp_columns.size();
  if (static_cast<size_t>(h.log_warp_a.size()) != K || static_cast<size_t>(h.log_warp_b.size()) != K)
    throw_invalid("GP: the warping needs two concentrations per warped column");
  for (size_t k = 0; k < K; ++k)
    if (h.warp_columns[k] < 0 || h.warp_columns[k] >= D ||
        (k > 0 && h.warp_columns[k] <= h.warp_columns[k - 1]))
      throw_invalid("GP: warped columns must be distinct input columns in ascending order");
}

// The distinct rows of A over the columns `cols`: ids[i] is the index of row i's values among
// them, and the returned matrix holds them (one row each, in order of first appearance).  An
// open-addressing table of the values seen, as warp_inputs() does: a candidate set of thousands
// has a dozen values of each feature.
Eigen::MatrixXd distinct_rows(const Eigen::MatrixXd &A, const std::vector<Eigen::Index> &cols,
                              std::vector<int> *ids) {
  const Eigen::Index m = A.rows(), C = static_cast<Eigen::Index>(cols.size());
  int bits = 6;
  while ((Eigen::Index{1} << bits) < 2 * m) ++bits;
  const std::size_t cap = std::size_t{1} << bits;
  std::vector<int> slot(cap, -1);
  std::vector<Eigen::Index> first;  // the first row of each distinct value
  ids->resize(static_cast<std::size_t>(m));
  for (Eigen::Index i = 0; i < m; ++i) {
    std::uint64_t h = 0;
    for (Eigen::Index c : cols) {
      const double v = A(i, c) == 0.0 ? 0.0 : A(i, c);  // -0 and 0 alike
      std::uint64_t u;
      std::memcpy(&u, &v, sizeof u);
      h = (h ^ u) * 0x9E3779B97F4A7C15ULL;
    }
    std::size_t s = static_cast<std::size_t>(h >> (64 - bits));
    for (;; s = (s + 1) & (cap - 1)) {
      if (slot[s] < 0) {
        slot[s] = static_cast<int>(first.size());
        first.push_back(i);
        break;
      }
      const Eigen::Index r = first[static_cast<std::size_t>(slot[s])];
      bool same = true;
      for (Eigen::Index c : cols) same = same && A(r, c) == A(i, c);
      if (same) break;
    }
    (*ids)[static_cast<std::size_t>(i)] = slot[s];
  }
  Eigen::MatrixXd U(static_cast<Eigen::Index>(first.size()), C);
  for (std::size_t v = 0; v < first.size(); ++v)
    for (Eigen::Index c = 0; c < C; ++c) U(static_cast<Eigen::Index>(v), c) = A(first[v], cols[static_cast<std::size_t>(c)]);
  return U;
}

int group_count(const std::vector<int> &groups) {
  int G = 0;
  for (int g : groups) G = std::max(G, g + 1);
  return G;
}

// The products (x_i - 1/2).(x_j - 1/2) of a linear kernel term, per pair (pair_distances()
// order) and on the diagonal; they do not depend on theta.
struct LinearTerm {
  Eigen::ArrayXd pairs, diag;
};

// Where each hyperparameter is in theta: (log l_1..l_G, log sigma_f^2, log sigma_n^2, log a and
// log b of the K warped columns, log s_lin with a linear term, log w_1..w_G with additive terms,
// then their log length scales when there is an ARD term too; without one the additive terms use
// the first G).
struct Layout {
  int G = 0;
  Eigen::Index K = 0;
  bool linear = false, ard = true, additive = false;
  Eigen::Index lin() const { return G + 2 + 2 * K; }
  Eigen::Index weights() const { return lin() + (linear ? 1 : 0); }
  Eigen::Index additive_scales() const { return ard ? weights() + G : 0; }
  Eigen::Index size() const { return weights() + (additive ? G : 0) + (additive && ard ? G : 0); }
};

Layout layout_of(const GpHyper &h) {
  Layout l;
  l.G = static_cast<int>(h.log_lengthscale.size());
  l.K = static_cast<Eigen::Index>(h.warp_columns.size());
  l.linear = h.linear();
  l.ard = h.ard;
  l.additive = h.additive();
  return l;
}

// The Matern-5/2 correlation M(r) = (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r), from r and
// e = exp(-sqrt5 r).
inline Eigen::ArrayXd matern_of(const Eigen::ArrayXd &r, const Eigen::ArrayXd &e) {
  return (1.0 + kSqrt5 * r + (5.0 / 3.0) * r.square()) * e;
}

// log p(y | X, theta) and its gradient from the pair distances (pair_distances()), theta laid out
// as `L` says (the warping's entries are not read, and their gradient is left at 0).  Returns
// -infinity when K is not positive definite.  With pair_weight, also PW (P x G) with
// d log p / d d_{g,p} = -1/2 PW(p, g), for the warping's gradient.  With lin, K also has the
// linear term s_lin times its products.
double lml_from_pairs(const Eigen::MatrixXd &d, const Eigen::VectorXd &y, const Eigen::VectorXd &t,
                      const Layout &L, Eigen::VectorXd *gradient, Eigen::MatrixXd *pair_weight = nullptr,
                      const LinearTerm *lin = nullptr) {
  const int G = L.G;
  const Eigen::Index n = y.size(), P = d.rows();
  const double sf2 = std::exp(t[G]), sn2 = std::exp(t[G + 1]);
  const double s_lin = L.linear ? std::exp(t[L.lin()]) : 0.0;
  // Per pair: the Matern terms' sum kf; for the ARD term r, exp(-sqrt5 r); for each additive
  // term its r and exp (columns of ra, ea).
  Eigen::ArrayXd kf = Eigen::ArrayXd::Zero(P), r, e;
  Eigen::VectorXd inv_l2, inv_la2;
  Eigen::ArrayXd wa;
  Eigen::ArrayXXd ra, ea;
  if (L.ard) {
    inv_l2 = (-2.0 * t.head(G).array()).exp().matrix();
    r = (d * inv_l2).array().max(0.0).sqrt();
    e = -kSqrt5 * r;
    exp_in_place(e.data(), static_cast<std::size_t>(e.size()));
    kf = sf2 * matern_of(r, e);
  }
  double prior_f = L.ard ? sf2 : 0.0;  // k(x, x) of the Matern terms
  if (L.additive) {
    wa = t.segment(L.weights(), G).array().exp();
    inv_la2 = (-2.0 * t.segment(L.additive_scales(), G).array()).exp().matrix();
    ra.resize(P, G);
    ea.resize(P, G);
    for (int g = 0; g < G; ++g) {
      ra.col(g) = (d.col(g).array() * inv_la2[g]).max(0.0).sqrt();
      ea.col(g) = -kSqrt5 * ra.col(g);
      exp_in_place(ea.col(g).data(), static_cast<std::size_t>(P));
      kf += (sf2 * wa[g]) * matern_of(ra.col(g), ea.col(g));
    }
    prior_f += sf2 * wa.sum();
  }
  Eigen::MatrixXd K(n, n);
  Eigen::Index p = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    K(j, j) = prior_f + sn2 + kJitter + (lin ? s_lin * lin->diag[j] : 0.0);
    for (Eigen::Index i = j + 1; i < n; ++i, ++p) K(i, j) = kf[p] + (lin ? s_lin * lin->pairs[p] : 0.0);
  }
  if (!cholesky_lower(K)) return -std::numeric_limits<double>::infinity();  // in place: K becomes L
  Eigen::VectorXd alpha = y;
  K.triangularView<Eigen::Lower>().solveInPlace(alpha);
  K.transpose().triangularView<Eigen::Upper>().solveInPlace(alpha);
  const double lml = -0.5 * y.dot(alpha) - 0.5 * static_cast<double>(n) * kLog2Pi -
                     K.diagonal().array().log().sum();
  if (gradient) {
    // dLML/dtheta = 1/2 tr(W dK/dtheta), W = alpha alpha^T - K^-1   (GPML eq. 5.9), with
    // dk/dlog l_g = sigma_f^2 (5/3) (1 + sqrt5 r) exp(-sqrt5 r) d_g / l_g^2 (an additive term:
    // the same times w_g, with its own r), dk/dlog w_g = sigma_f^2 w_g M(r_g),
    // dk/dlog sigma_f^2 = k, dK/dlog sigma_n^2 = sigma_n^2 I.  W is symmetric: each pair counts
    // twice.
    Eigen::MatrixXd Linv(n, n);
    lower_inverse(K, Linv);
    // K^-1 = L^-T L^-1; only its lower triangle is read below.
    Eigen::MatrixXd Kinv = Eigen::MatrixXd::Zero(n, n);
    add_ata_lower(Linv, Kinv);
    Eigen::ArrayXd w(P);
    p = 0;
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = j + 1; i < n; ++i, ++p) w[p] = alpha[i] * alpha[j] - Kinv(i, j);
    const Eigen::ArrayXd wd = alpha.array().square() - Kinv.diagonal().array();
    const double wdiag = wd.sum();
    gradient->setZero(L.size());
    if (L.linear && lin) (*gradient)[L.lin()] = s_lin * ((w * lin->pairs).sum() + 0.5 * (wd * lin->diag).sum());
    if (pair_weight) pair_weight->setZero(P, G);
    if (L.ard) {
      const Eigen::ArrayXd wc = w * (sf2 * (5.0 / 3.0) * (1.0 + kSqrt5 * r) * e);
      gradient->head(G) = (d.transpose() * wc.matrix()).cwiseProduct(inv_l2);
      if (pair_weight)
        for (int g = 0; g < G; ++g) pair_weight->col(g).array() += wc * inv_l2[g];
    }
    if (L.additive) {
      const Eigen::Index a = L.additive_scales(), wo = L.weights();
      for (int g = 0; g < G; ++g) {
        const double s = sf2 * wa[g];
        const Eigen::ArrayXd wc = w * (s * (5.0 / 3.0) * (1.0 + kSqrt5 * ra.col(g)) * ea.col(g));
        (*gradient)[a + g] = (d.col(g).array() * wc).sum() * inv_la2[g];
        if (pair_weight) pair_weight->col(g).array() += wc * inv_la2[g];
        (*gradient)[wo + g] = s * ((w * matern_of(ra.col(g), ea.col(g))).sum() + 0.5 * wdiag);
      }
    }
    (*gradient)[G] = (w * kf).sum() + 0.5 * wdiag * prior_f;
    (*gradient)[G + 1] = 0.5 * sn2 * wdiag;
  }
  return lml;
}

double log_prior(const LogNormalPrior &p, double log_h, double *grad) {
  const double z = (log_h - p.mu) / p.sd;
  if (grad) *grad = -z / p.sd;
  return -0.5 * z * z;
}

// Projected L-BFGS within box bounds (Nocedal & Wright, "Numerical Optimization", Alg. 7.5, with
// variables at an active bound frozen for the step and an Armijo backtracking line search).
// Minimizes f; returns the best point found, its value in *fbest and its gradient in *gbest.
// A caller that knows f and its gradient at x (within the bounds) passes them as *fbest and
// *gbest with `known`, which saves an evaluation.
using Objective = std::function<double(const Eigen::VectorXd &, Eigen::VectorXd *)>;

Eigen::VectorXd minimize_box(const Objective &f, Eigen::VectorXd x, const Eigen::VectorXd &lo,
                             const Eigen::VectorXd &hi, int max_iterations, double *fbest,
                             Eigen::VectorXd *gbest, bool known = false) {
  const int m = 6;
  const Eigen::Index p = x.size();
  Eigen::VectorXd g(p);
  double fx;
  if (known) {
    fx = *fbest;
    g = *gbest;
  } else {
    x = x.cwiseMax(lo).cwiseMin(hi);
    fx = f(x, &g);
  }
  if (!std::isfinite(fx)) {
    *fbest = fx;
    *gbest = g;
    return x;
  }
  std::vector<Eigen::VectorXd> S, Y;
  std::vector<double> rho;
  for (int it = 0; it < max_iterations; ++it) {
    // Free variables: not at a bound with the gradient pushing outward.
    Eigen::VectorXd mask = Eigen::VectorXd::Ones(p);
    for (Eigen::Index i = 0; i < p; ++i)
      if ((x[i] <= lo[i] && g[i] > 0) || (x[i] >= hi[i] && g[i] < 0)) mask[i] = 0;
    Eigen::VectorXd pg = g.cwiseProduct(mask);
    if (pg.lpNorm<Eigen::Infinity>() < 1e-3) break;
    // Two-loop recursion on the free variables.
    Eigen::VectorXd q = pg;
    std::vector<double> a(S.size());
    for (int k = static_cast<int>(S.size()) - 1; k >= 0; --k) {
      a[k] = rho[k] * S[k].cwiseProduct(mask).dot(q);
      q -= a[k] * Y[k].cwiseProduct(mask);
    }
    if (!S.empty()) {
      const Eigen::VectorXd &s = S.back(), &y = Y.back();
      const double yy = y.cwiseProduct(mask).squaredNorm();
      if (yy > 0) q *= std::max(1e-8, s.cwiseProduct(mask).dot(y.cwiseProduct(mask)) / yy);
    } else {
      q /= std::max(1.0, pg.norm());
    }
    for (size_t k = 0; k < S.size(); ++k) {
      const double b = rho[k] * Y[k].cwiseProduct(mask).dot(q);
      q += S[k].cwiseProduct(mask) * (a[k] - b);
    }
    Eigen::VectorXd d = -q.cwiseProduct(mask);
    if (d.dot(pg) >= 0) d = -pg / std::max(1.0, pg.norm());
    // Armijo backtracking on the projected path.
    double t = 1.0, fn = 0;
    Eigen::VectorXd xn, gn(p);
    bool accepted = false;
    for (int ls = 0; ls < 25; ++ls, t *= 0.5) {
      xn = (x + t * d).cwiseMax(lo).cwiseMin(hi);
      fn = f(xn, &gn);
      if (std::isfinite(fn) && fn <= fx + 1e-4 * g.dot(xn - x)) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    const Eigen::VectorXd s = xn - x, y = gn - g;
    const double sy = s.dot(y);
    if (sy > 1e-12) {
      S.push_back(s);
      Y.push_back(y);
      rho.push_back(1.0 / sy);
      if (static_cast<int>(S.size()) > m) {
        S.erase(S.begin());
        Y.erase(Y.begin());
        rho.erase(rho.begin());
      }
    }
    const double df = fx - fn;
    x = xn;
    g = gn;
    fx = fn;
    if (df < 1e-5 * (1.0 + std::fabs(fx))) break;
  }
  *fbest = fx;
  *gbest = g;
  return x;
}

Eigen::VectorXd pack(const GpHyper &h) {
  const Layout L = layout_of(h);
  const Eigen::Index G = L.G, K = L.K;
  Eigen::VectorXd t(L.size());
  t.head(G) = h.log_lengthscale;
  t[G] = h.log_signal_var;
  t[G + 1] = h.log_noise_var;
  t.segment(G + 2, K) = h.log_warp_a;
  t.segment(G + 2 + K, K) = h.log_warp_b;
  if (L.linear) t[L.lin()] = h.log_linear_var;
  if (L.additive) t.segment(L.weights(), G) = h.log_additive_weight;
  if (L.additive && L.ard) t.segment(L.additive_scales(), G) = h.log_additive_lengthscale;
  return t;
}

// The inverse of pack() for the layout L and the warped columns.
GpHyper unpack(const Eigen::VectorXd &t, const Layout &L, const std::vector<int> &warp_columns) {
  const Eigen::Index G = L.G, K = L.K;
  GpHyper h;
  h.log_lengthscale = t.head(G);
  h.log_signal_var = t[G];
  h.log_noise_var = t[G + 1];
  h.warp_columns = warp_columns;
  h.log_warp_a = t.segment(G + 2, K);
  h.log_warp_b = t.segment(G + 2 + K, K);
  if (L.linear) h.log_linear_var = t[L.lin()];
  h.ard = L.ard;
  if (L.additive) h.log_additive_weight = t.segment(L.weights(), G);
  if (L.additive && L.ard) h.log_additive_lengthscale = t.segment(L.additive_scales(), G);
  return h;
}

// The linear term's products (x_i - 1/2).(x_j - 1/2) per pair (pair_distances() order) and on
// the diagonal.
LinearTerm linear_products(const Eigen::MatrixXd &X) {
  const Eigen::MatrixXd C = X.array() - 0.5;
  const Eigen::Index n = X.rows();
  LinearTerm l;
  l.pairs.resize(n * (n - 1) / 2);
  l.diag = C.rowwise().squaredNorm().array();
  Eigen::Index p = 0;
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = j + 1; i < n; ++i, ++p) l.pairs[p] = C.row(i).dot(C.row(j));
  return l;
}

// log p(y | X, theta) and its gradient with respect to theta = pack(h) laid out as L says, with
// the warped columns (their concentrations are read from t).  A fit passes what does not depend
// on theta: `unwarped`, the pair distances of X when nothing is warped, and `products`, the
// linear term's products (computed here when null).
double lml_theta(const Eigen::MatrixXd &X, const Eigen::VectorXd &y, const std::vector<int> &groups,
                 const Layout &L, const std::vector<int> &warp_columns, const Eigen::VectorXd &t,
                 const Eigen::MatrixXd *unwarped, const LinearTerm *products, Eigen::VectorXd *gradient) {
  const Eigen::Index K = L.K, n = X.rows();
  const int G = L.G;
  LinearTerm own;
  if (L.linear && !products) products = &(own = linear_products(X));
  const LinearTerm *lin = L.linear ? products : nullptr;
  Eigen::MatrixXd pw;
  Eigen::MatrixXd da, db, W;
  double lml;
  if (K == 0) {
    Eigen::MatrixXd computed;
    const Eigen::MatrixXd &D = unwarped ? *unwarped : (computed = pair_distances(X, groups, G));
    lml = lml_from_pairs(D, y, t, L, gradient, nullptr, lin);
  } else {
    W = warp_inputs(X, unpack(t, L, warp_columns), gradient ? &da : nullptr, gradient ? &db : nullptr);
    lml = lml_from_pairs(pair_distances(W, groups, G), y, t, L, gradient, gradient ? &pw : nullptr, lin);
  }
  if (!gradient || !std::isfinite(lml)) return lml;
  Eigen::ArrayXd pdw_buf(n);
  for (Eigen::Index k = 0; k < K; ++k) {
    const Eigen::Index c = warp_columns[static_cast<size_t>(k)];
    const int g = groups[static_cast<size_t>(c)];
    // d d_{g,p} / d theta = 2 (w_i - w_j) (w'_i - w'_j) for the pair p = (i, j); the pairs of
    // one j are a contiguous segment.
    double sa = 0, sb = 0;
    Eigen::Index p = 0;
    for (Eigen::Index j = 0; j + 1 < n; p += n - j - 1, ++j) {
      const Eigen::Index m = n - j - 1;
      auto pdw = pdw_buf.head(m);
      pdw = pw.col(g).segment(p, m).array() * (W.col(c).tail(m).array() - W(j, c));
      sa += (pdw * (da.col(k).tail(m).array() - da(j, k))).sum();
      sb += (pdw * (db.col(k).tail(m).array() - db(j, k))).sum();
    }
    (*gradient)[G + 2 + k] = -sa;
    (*gradient)[G + 2 + K + k] = -sb;
  }
  return lml;
}

LogNormalPrior linear_prior(const GpFitOptions &o, Eigen::Index D) {
  LogNormalPrior p = o.linear_var;
  if (std::isnan(p.mu)) p.mu = std::log(12.0 / static_cast<double>(std::max<Eigen::Index>(1, D)));
  return p;
}

LogNormalPrior lengthscale_prior(const GpFitOptions &o, int G) {
  LogNormalPrior p = o.lengthscale;
  if (std::isnan(p.mu)) p.mu = std::sqrt(2.0) + 0.5 * std::log(std::max(1, G));
  return p;
}

// The priors of theta's first G entries (the ARD term's length scales, or the additive terms'
// without one) and of the additive terms' length scales and weights.
LogNormalPrior head_prior(const GpFitOptions &o, int G) {
  return lengthscale_prior(o, o.kernel == GpKernel::additive ? 1 : G);
}
LogNormalPrior additive_weight_prior(const GpFitOptions &o, int G) {
  LogNormalPrior p = o.additive_weight;
  if (std::isnan(p.mu)) p.mu = -std::log(std::max(1, G));
  return p;
}

void check_kernel(const GpHyper &h) {
  const Eigen::Index G = h.log_lengthscale.size();
  if (!h.ard && !h.additive()) throw_invalid("GP: the kernel needs the ARD term or additive terms");
  if (h.additive() && h.log_additive_weight.size() != G)
    throw_invalid("GP: the additive terms need one weight per length scale");
  if (h.log_additive_lengthscale.size() != (h.additive() && h.ard ? G : 0))
    throw_invalid("GP: the additive terms need their own length scales beside an ARD term, and "
                  "none without one");
}

void check_shapes(const Eigen::MatrixXd &X, const Eigen::VectorXd &y,
                  const std::vector<int> &groups) {
  if (X.rows() != y.size())
    throw_invalid("GP: X has " + std::to_string(X.rows()) + " rows, y " + std::to_string(y.size()));
  if (static_cast<size_t>(X.cols()) != groups.size())
    throw_invalid("GP: groups do not match the columns of X");
  if (X.rows() == 0) throw_invalid("GP: no data");
}

}  // namespace

GpHyper prior_median(const GpFitOptions &o, int G, Eigen::Index columns) {
  GpHyper h;
  h.log_lengthscale = Eigen::VectorXd::Constant(G, head_prior(o, G).mu);
  h.ard = o.kernel != GpKernel::additive;
  if (o.kernel != GpKernel::ard)
    h.log_additive_weight = Eigen::VectorXd::Constant(G, additive_weight_prior(o, G).mu);
  if (o.kernel == GpKernel::ard_additive)
    h.log_additive_lengthscale = Eigen::VectorXd::Constant(G, lengthscale_prior(o, 1).mu);
  h.log_signal_var = o.signal_var.mu;
  h.log_noise_var = o.noise_var.mu;
  h.warp_columns = o.warp_columns;
  std::sort(h.warp_columns.begin(), h.warp_columns.end());
  h.warp_columns.erase(std::unique(h.warp_columns.begin(), h.warp_columns.end()),
                       h.warp_columns.end());
  const Eigen::Index K = static_cast<Eigen::Index>(h.warp_columns.size());
  h.log_warp_a = Eigen::VectorXd::Constant(K, o.warp.mu);
  h.log_warp_b = Eigen::VectorXd::Constant(K, o.warp.mu);
  if (o.linear) h.log_linear_var = linear_prior(o, columns < 0 ? G : columns).mu;
  return h;
}

double GaussianProcess::log_marginal_likelihood(const Eigen::MatrixXd &X, const Eigen::VectorXd &y,
                                                const std::vector<int> &groups, const GpHyper &h,
                                                Eigen::VectorXd *gradient) {
  check_shapes(X, y, groups);
  const int G = static_cast<int>(h.log_lengthscale.size());
  if (G < group_count(groups)) throw_invalid("GP: fewer length scales than feature groups");
  check_warp(h, X.cols());
  check_kernel(h);
  return lml_theta(X, y, groups, layout_of(h), h.warp_columns, pack(h), nullptr, nullptr, gradient);
}

GaussianProcess::GaussianProcess(Eigen::MatrixXd X, Eigen::VectorXd y, std::vector<int> groups,
                                 GpHyper hyper)
    : X_(std::move(X)), y_(std::move(y)), groups_(std::move(groups)), hyper_(std::move(hyper)) {
  check_shapes(X_, y_, groups_);
  if (hyper_.log_lengthscale.size() < group_count(groups_))
    throw_invalid("GP: fewer length scales than feature groups");
  check_warp(hyper_, X_.cols());
  check_kernel(hyper_);
  const Eigen::Index n = X_.rows();
  Xw_ = warp(X_);
  Eigen::MatrixXd K = kernel(X_, Xw_, X_, Xw_);
  const double sn2 = noise_var();
  double jitter = kJitter;
  for (int attempt = 0;; ++attempt) {
    Eigen::MatrixXd Kn = K;
    Kn.diagonal().array() += sn2 + jitter;
    if (cholesky_lower(Kn)) {
      L_ = Kn.triangularView<Eigen::Lower>();
      alpha_ = L_.triangularView<Eigen::Lower>().solve(y_);
      L_.transpose().triangularView<Eigen::Upper>().solveInPlace(alpha_);
      break;
    }
    if (attempt == 6) throw Error(Errc::internal, "GP: the kernel matrix is not positive definite");
    jitter *= 100;
  }
  beta_ = L_.triangularView<Eigen::Lower>().solve(y_);
  Linv_.resize(n, n);
  lower_inverse(L_, Linv_);
  lml_ = -0.5 * y_.dot(alpha_) - 0.5 * n * kLog2Pi - L_.diagonal().array().log().sum();
}

GaussianProcess GaussianProcess::fit(Eigen::MatrixXd X, Eigen::VectorXd y, std::vector<int> groups,
                                     const GpFitOptions &o) {
  check_shapes(X, y, groups);
  const int G = group_count(groups);
  const LogNormalPrior lp = head_prior(o, G), alp = lengthscale_prior(o, 1);
  const LogNormalPrior wp = additive_weight_prior(o, G);
  const GpHyper median = prior_median(o, G, X.cols());
  check_warp(median, X.cols());
  const std::vector<int> &warped = median.warp_columns;
  const Layout lay = layout_of(median);
  const Eigen::Index K = lay.K;
  const bool linear = lay.linear;
  const LogNormalPrior lin_prior = linear_prior(o, X.cols());
  const Eigen::Index P = lay.size();
  // The additive terms' entries of theta: weights, then length scales (with an ARD term).
  const Eigen::Index wo = lay.weights(), ao = lay.additive && lay.ard ? lay.additive_scales() : P;
  const Eigen::Index wn = lay.additive ? G : 0;
  Eigen::VectorXd lo(P), hi(P);
  for (int g = 0; g < G; ++g) {
    lo[g] = std::log(lp.min);
    hi[g] = std::log(lp.max);
  }
  lo[G] = std::log(o.signal_var.min);
  hi[G] = std::log(o.signal_var.max);
  lo[G + 1] = std::log(o.noise_var.min);
  hi[G + 1] = std::log(o.noise_var.max);
  lo.segment(G + 2, 2 * K).setConstant(std::log(o.warp.min));
  hi.segment(G + 2, 2 * K).setConstant(std::log(o.warp.max));
  if (linear) {
    lo[lay.lin()] = std::log(lin_prior.min);
    hi[lay.lin()] = std::log(lin_prior.max);
  }
  lo.segment(wo, wn).setConstant(std::log(wp.min));
  hi.segment(wo, wn).setConstant(std::log(wp.max));
  lo.segment(ao, P - ao).setConstant(std::log(alp.min));
  hi.segment(ao, P - ao).setConstant(std::log(alp.max));

  const Eigen::Index n = X.rows();
  Rng rng(o.seed, static_cast<std::uint64_t>(n));
  // The data the hyperparameters are fitted on: all of it, or a seeded subset.
  Eigen::MatrixXd Xf;
  Eigen::VectorXd yf;
  const bool subset = o.max_fit_points > 0 && n > o.max_fit_points;
  if (subset) {
    std::vector<Eigen::Index> idx(static_cast<size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = i;
    for (int i = 0; i < o.max_fit_points; ++i)
      std::swap(idx[static_cast<size_t>(i)],
                idx[static_cast<size_t>(i) + rng.below(static_cast<std::uint64_t>(n - i))]);
    idx.resize(static_cast<size_t>(o.max_fit_points));
    std::sort(idx.begin(), idx.end());
    Xf.resize(o.max_fit_points, X.cols());
    yf.resize(o.max_fit_points);
    for (int i = 0; i < o.max_fit_points; ++i) {
      Xf.row(i) = X.row(idx[static_cast<size_t>(i)]);
      yf[i] = y[idx[static_cast<size_t>(i)]];
    }
  }
  const Eigen::MatrixXd &Xfit = subset ? Xf : X;
  const Eigen::VectorXd &yfit = subset ? yf : y;
  // Without warping the pairwise distances do not depend on theta: computed once.
  Eigen::MatrixXd D;
  if (K == 0) D = pair_distances(Xfit, groups, G);
  LinearTerm products;
  if (linear) products = linear_products(Xfit);
  const Objective neg_log_post = [&](const Eigen::VectorXd &t, Eigen::VectorXd *grad) {
    Eigen::VectorXd gr;
    const double lml = lml_theta(Xfit, yfit, groups, lay, warped, t, K == 0 ? &D : nullptr,
                                 linear ? &products : nullptr, &gr);
    if (!std::isfinite(lml)) return std::numeric_limits<double>::infinity();
    double lp_sum = 0, dg = 0;
    for (int g = 0; g < G; ++g) {
      lp_sum += log_prior(lp, t[g], &dg);
      gr[g] += dg;
    }
    lp_sum += log_prior(o.signal_var, t[G], &dg);
    gr[G] += dg;
    lp_sum += log_prior(o.noise_var, t[G + 1], &dg);
    gr[G + 1] += dg;
    for (Eigen::Index k = G + 2; k < G + 2 + 2 * K; ++k) {
      lp_sum += log_prior(o.warp, t[k], &dg);
      gr[k] += dg;
    }
    if (linear) {
      lp_sum += log_prior(lin_prior, t[lay.lin()], &dg);
      gr[lay.lin()] += dg;
    }
    for (Eigen::Index k = wo; k < wo + wn; ++k) {
      lp_sum += log_prior(wp, t[k], &dg);
      gr[k] += dg;
    }
    for (Eigen::Index k = ao; k < P; ++k) {
      lp_sum += log_prior(alp, t[k], &dg);
      gr[k] += dg;
    }
    if (grad) *grad = -gr;
    return -(lml + lp_sum);
  };

  Eigen::VectorXd best_t, best_g;
  double best_f = std::numeric_limits<double>::infinity();
  // Every start gets a few iterations (which moves it into its basin); the best one is then
  // optimized to convergence.
  for (int s = 0; s < std::max(1, o.starts); ++s) {
    if (s == 0 && o.first_start &&
        (o.first_start->warp_columns != warped || o.first_start->linear() != linear ||
         o.first_start->kernel() != o.kernel))
      throw_invalid("GP: the first start has another warping, linear term or kernel");
    Eigen::VectorXd t0 = pack(s == 0 && o.first_start ? *o.first_start : median);
    if (t0.size() != P) throw_invalid("GP: the first start has the wrong number of length scales");
    if (s > 0) {
      for (int g = 0; g < G; ++g) t0[g] = lp.mu + lp.sd * rng.normal();
      t0[G] = o.signal_var.mu + o.signal_var.sd * rng.normal();
      t0[G + 1] = o.noise_var.mu + o.noise_var.sd * rng.normal();
      for (Eigen::Index k = G + 2; k < G + 2 + 2 * K; ++k) t0[k] = o.warp.mu + o.warp.sd * rng.normal();
      if (linear) t0[lay.lin()] = lin_prior.mu + lin_prior.sd * rng.normal();
      for (Eigen::Index k = wo; k < wo + wn; ++k) t0[k] = wp.mu + wp.sd * rng.normal();
      for (Eigen::Index k = ao; k < P; ++k) t0[k] = alp.mu + alp.sd * rng.normal();
    }
    double f = 0;
    Eigen::VectorXd g;
    Eigen::VectorXd t = minimize_box(neg_log_post, t0, lo, hi, o.probe_iterations, &f, &g);
    if (f < best_f) {
      best_f = f;
      best_t = t;
      best_g = g;
    }
  }
  if (o.max_iterations > o.probe_iterations && std::isfinite(best_f)) {
    // Continues from the best start, whose value and gradient are known.
    double f = best_f;
    Eigen::VectorXd g = best_g;
    Eigen::VectorXd t =
        minimize_box(neg_log_post, best_t, lo, hi, o.max_iterations - o.probe_iterations, &f, &g, true);
    if (f <= best_f) best_t = t;
  }
  return GaussianProcess(std::move(X), std::move(y), std::move(groups), unpack(best_t, lay, warped));
}

double GaussianProcess::signal_var() const { return std::exp(hyper_.log_signal_var); }
double GaussianProcess::noise_var() const { return std::exp(hyper_.log_noise_var); }

void GaussianProcess::leave_one_out(Eigen::VectorXd *mean, Eigen::VectorXd *var) const {
  const Eigen::VectorXd alpha = Linv_.transpose() * beta_;
  const Eigen::VectorXd kinv_diag = Linv_.array().square().colwise().sum().transpose();
  *mean = y_.array() - alpha.array() / kinv_diag.array();
  *var = kinv_diag.cwiseInverse();
}

Eigen::MatrixXd GaussianProcess::warp(const Eigen::MatrixXd &X) const {
  return warp_inputs(X, hyper_, nullptr, nullptr);
}

Eigen::MatrixXd GaussianProcess::kernel(const Eigen::MatrixXd &A, const Eigen::MatrixXd &B) const {
  return kernel(A, warp(A), B, warp(B));
}

Eigen::MatrixXd GaussianProcess::kernel(const Eigen::MatrixXd &A, const Eigen::MatrixXd &Aw,
                                        const Eigen::MatrixXd &B, const Eigen::MatrixXd &Bw) const {
  Eigen::MatrixXd K = matern(Aw, Bw);
  if (hyper_.linear())
    product_abt((A.array() - 0.5).matrix(), (B.array() - 0.5).matrix(), K, std::exp(hyper_.log_linear_var),
                true);
  return K;
}

Eigen::VectorXd GaussianProcess::prior_variance(const Eigen::MatrixXd &A) const {
  double f = hyper_.ard ? 1.0 : 0.0;
  if (hyper_.additive()) f += hyper_.log_additive_weight.array().exp().sum();
  Eigen::VectorXd v = Eigen::VectorXd::Constant(A.rows(), f * signal_var());
  if (hyper_.linear()) v += std::exp(hyper_.log_linear_var) * (A.array() - 0.5).matrix().rowwise().squaredNorm();
  return v;
}

Eigen::MatrixXd GaussianProcess::matern(const Eigen::MatrixXd &A, const Eigen::MatrixXd &B) const {
  const double sf2 = signal_var();
  Eigen::MatrixXd K(A.rows(), B.rows());
  if (hyper_.ard) {
    // Scale the columns by 1/l, then r^2 = |a|^2 + |b|^2 - 2 a.b (one GEMM), then the Matérn
    // function in place: this runs over every candidate, so it avoids large temporaries.
    Eigen::RowVectorXd inv_l(A.cols());
    for (Eigen::Index c = 0; c < A.cols(); ++c)
      inv_l[c] = std::exp(-hyper_.log_lengthscale[groups_[c]]);
    const Eigen::MatrixXd As = A.array().rowwise() * inv_l.array();
    const Eigen::MatrixXd Bs = B.array().rowwise() * inv_l.array();
    const Eigen::VectorXd na = As.rowwise().squaredNorm();
    const Eigen::VectorXd nb = Bs.rowwise().squaredNorm();
    product_abt(As, Bs, K);
    matern52_from_products(K, na, nb, sf2);
  } else {
    K.setZero();
  }
  if (!hyper_.additive()) return K;
  // One term per feature group: r_g = |a_g - b_g| / l_g over the group's columns (one numeric
  // column, or a categorical feature's one-hot columns).
  const Eigen::VectorXd &la = hyper_.ard ? hyper_.log_additive_lengthscale : hyper_.log_lengthscale;
  const Eigen::Index G = la.size();
  std::vector<std::vector<Eigen::Index>> columns(static_cast<std::size_t>(G));
  for (Eigen::Index c = 0; c < A.cols(); ++c) columns[static_cast<std::size_t>(groups_[c])].push_back(c);
  // A term depends on the group's values alone, and the rows of A (candidates) have few distinct
  // ones: the term is evaluated once per distinct value of A's group and copied to its rows.
  std::vector<int> ids;
  for (Eigen::Index g = 0; g < G; ++g) {
    const auto &cols = columns[static_cast<std::size_t>(g)];
    const double inv_l = std::exp(-la[g]), s = sf2 * std::exp(hyper_.log_additive_weight[g]);
    if (cols.empty()) {  // a length scale without columns: r = 0, as in the fit
      K.array() += s;
      continue;
    }
    const Eigen::MatrixXd U = distinct_rows(A, cols, &ids);
    const Eigen::Index V = U.rows();
    Eigen::ArrayXd r2(V), rv(V), ev(V), term(V);
    for (Eigen::Index j = 0; j < K.cols(); ++j) {
      r2.setZero();
      for (std::size_t c = 0; c < cols.size(); ++c)
        r2 += (U.col(static_cast<Eigen::Index>(c)).array() - B(j, cols[c])).square();
      rv = r2.sqrt() * inv_l;
      ev = -kSqrt5 * rv;
      exp_in_place(ev.data(), static_cast<std::size_t>(V));
      term = s * (1.0 + kSqrt5 * rv + (5.0 / 3.0) * rv.square()) * ev;
      double *col = K.col(j).data();
      for (std::size_t i = 0; i < ids.size(); ++i) col[i] += term[ids[i]];
    }
  }
  return K;
}

void GaussianProcess::predict(const Eigen::MatrixXd &Xs, Eigen::VectorXd *mean,
                              Eigen::VectorXd *var) const {
  // k(Xs, X) is (m x n): its columns are long, which the kernel evaluates fastest.
  const Eigen::MatrixXd Kt = kernel(Xs, warp(Xs), X_, Xw_);
  if (mean) *mean = Kt * alpha_;
  if (var) {
    Eigen::MatrixXd V(Linv_.rows(), Kt.rows());
    lower_times_bt(Linv_, Kt, V);
    *var = (prior_variance(Xs).array() - V.colwise().squaredNorm().transpose().array()).max(0.0).matrix();
  }
}

void GaussianProcess::predict_one(const Eigen::Ref<const Eigen::RowVectorXd> &x, double *mean,
                                  double *var) const {
  const Eigen::MatrixXd xm = x;
  const Eigen::VectorXd k = kernel(X_, Xw_, xm, warp(xm)).col(0);  // (n)
  if (mean) *mean = k.dot(alpha_);
  if (var) {
    const Eigen::VectorXd v = Linv_.triangularView<Eigen::Lower>() * k;
    *var = std::max(prior_variance(xm)[0] - v.squaredNorm(), 0.0);
  }
}

CandidatePosterior::CandidatePosterior(const GaussianProcess &gp, const Eigen::MatrixXd &Xc,
                                       bool fantasies)
    : gp_(gp), Xc_(Xc), Xw_(gp.warp(Xc)), prior_(gp.prior_variance(Xc)) {
  const Eigen::Index n = gp.inputs().rows(), m = Xc.rows();
  rows_ = n;
  beta_ = gp.beta();
  mean_.resize(m);
  var_.resize(m);
  if (fantasies) V_.resize(n, m);
  // Blocks of candidates, so the kernel block and its product with L^-1 stay in cache.
  constexpr Eigen::Index kBlock = 256;
  Eigen::MatrixXd Vb;
  for (Eigen::Index s = 0; s < m; s += kBlock) {
    const Eigen::Index c = std::min(kBlock, m - s);
    const Eigen::MatrixXd Kt =
        gp.kernel(Xc_.middleRows(s, c), Xw_.middleRows(s, c), gp.inputs(), gp.warped_inputs());  // (c x n)
    Vb.resize(n, c);
    lower_times_bt(gp.chol_inverse(), Kt, Vb);  // (n x c)
    mean_.segment(s, c).noalias() = Vb.transpose() * beta_;
    var_.segment(s, c) =
        (prior_.segment(s, c).array() - Vb.colwise().squaredNorm().transpose().array()).max(0.0).matrix();
    if (fantasies) V_.middleCols(s, c) = Vb;
  }
}

void CandidatePosterior::condition(Eigen::Index j, double y) {
  if (V_.cols() != Xw_.rows())
    throw Error(Errc::internal, "CandidatePosterior: built without fantasies");
  const Eigen::VectorXd kc = gp_.kernel(Xc_, Xw_, Xc_.row(j), Xw_.row(j)).col(0);  // (m)
  const Eigen::VectorXd l = V_.topRows(rows_).col(j);
  const double d2 = prior_[j] + gp_.noise_var() - l.squaredNorm();
  const double d = std::sqrt(std::max(d2, 1e-12));
  Eigen::VectorXd vnew = (kc - V_.topRows(rows_).transpose() * l) / d;
  const double m = prior_mean_.size() > 0 ? prior_mean_[j] : 0.0;
  const double b = (y - m - l.dot(beta_.head(rows_))) / d;
  if (V_.rows() == rows_) {
    V_.conservativeResize(rows_ + 4, Eigen::NoChange);
    beta_.conservativeResize(rows_ + 4);
  }
  V_.row(rows_) = vnew.transpose();
  beta_[rows_] = b;
  ++rows_;
  mean_ += vnew * b;
  var_ = (var_.array() - vnew.array().square()).max(0.0).matrix();
}

void CandidatePosterior::add_prior_mean(const Eigen::VectorXd &m) {
  if (m.size() != mean_.size() || prior_mean_.size() > 0 || rows_ != gp_.inputs().rows())
    throw Error(Errc::internal, "CandidatePosterior::add_prior_mean: once, before condition(), " +
                                    std::to_string(mean_.size()) + " values");
  prior_mean_ = m;
  mean_ += m;
}

Eigen::MatrixXd CandidatePosterior::covariance(const std::vector<Eigen::Index> &idx) const {
  const Eigen::Index s = static_cast<Eigen::Index>(idx.size()), d = Xc_.cols();
  Eigen::MatrixXd Xs(s, d), Xsw(s, Xw_.cols());
  for (Eigen::Index r = 0; r < s; ++r) {
    const Eigen::Index j = idx[static_cast<std::size_t>(r)];
    if (j < 0 || j >= Xc_.rows())
      throw Error(Errc::invalid_argument,
                  "CandidatePosterior::covariance: no candidate " + std::to_string(j));
    Xs.row(r) = Xc_.row(j);
    Xsw.row(r) = Xw_.row(j);
  }
  Eigen::MatrixXd C = gp_.kernel(Xs, Xsw, Xs, Xsw);  // (s x s)
  Eigen::MatrixXd Vs(rows_, s);
  if (V_.cols() == Xw_.rows()) {
    for (Eigen::Index r = 0; r < s; ++r)
      Vs.col(r) = V_.topRows(rows_).col(idx[static_cast<std::size_t>(r)]);
  } else {
    const Eigen::MatrixXd Kt = gp_.kernel(Xs, Xsw, gp_.inputs(), gp_.warped_inputs());  // (s x n)
    lower_times_bt(gp_.chol_inverse(), Kt, Vs);
  }
  subtract_vtv(Vs, C);
  return C;
}

}  // namespace autotune
