// Loops of dense.hpp written once for both of its variants: each is a template over the matrix
// types, instantiated by engine/dense.cc with Eigen's and by engine/dense_avx2.cc with that
// file's own (autotune_eigen_avx2), so the two instantiations are distinct functions compiled
// for their own CPUs.  No Eigen header is included here; the includer brings its own.
#ifndef AUTOTUNE_DENSE_LOOPS_HPP
#define AUTOTUNE_DENSE_LOOPS_HPP

#include <cstddef>

namespace autotune::dense_loops {

// sqrt(5), the Matern-5/2 kernel's constant (engine/gp.cc's too).
constexpr double kSqrt5 = 2.23606797749979;

// inv = L^-1 for L lower triangular (n x n), by forward substitution column by column (n^3/6
// multiply-adds; Eigen's blocked triangular solve is several times slower at these sizes).  Each
// step updates the rest of the column with a contiguous column of L (a vectorized axpy).
template <class ConstMatrix, class Matrix>
void lower_inverse(const ConstMatrix &L, Matrix &inv) {
  const auto n = L.rows();
  inv.setZero();
  for (decltype(L.rows()) j = 0; j < n; ++j) {
    inv(j, j) = 1.0;
    for (auto k = j; k < n; ++k) {
      inv(k, j) /= L(k, k);
      const auto rest = n - k - 1;
      if (rest > 0) inv.col(j).segment(k + 1, rest).noalias() -= L.col(k).segment(k + 1, rest) * inv(k, j);
    }
  }
}

// K(i, j) = sf2 M(r), r = sqrt(max(na_i + nb_j - 2 K(i, j), 0)), where K holds a_i . b_j and na,
// nb the squared norms: the Matern-5/2 M(r) = (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r), column by
// column (the columns are long: every candidate), with exp over arrays by `exp`.
template <class Array, class Matrix, class ConstVector>
void matern52(Matrix &K, const ConstVector &na, const ConstVector &nb, double sf2,
              void (*exp)(double *, std::size_t)) {
  Array r(K.rows()), e(K.rows());
  for (decltype(K.cols()) j = 0; j < K.cols(); ++j) {
    auto col = K.col(j).array();
    r = (na.array() + nb[j] - 2.0 * col).max(0.0).sqrt();
    e = -kSqrt5 * r;
    exp(e.data(), static_cast<std::size_t>(e.size()));
    col = sf2 * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r.square()) * e;
  }
}

}  // namespace autotune::dense_loops

#endif
