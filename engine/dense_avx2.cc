// dense.hpp's products, compiled for AVX2 and FMA (engine/local.mk: DENSE_AVX2_CXXFLAGS) and
// called only where the CPU has both (dense.cc).  Eigen's templates are instantiated here in the
// namespace autotune_eigen_avx2: were they in Eigen's own, the linker would keep one copy of each
// template function for the whole program, and baseline code could end up calling a copy built
// for AVX2 (or the other way round, with Eigen's alignment of its own allocations differing
// between the two).  What the compiler still emits here for sharing (a standard library inline
// function, a helper of its own) must hold no AVX instruction: tests/unit/dense_symbols.sh.
#define Eigen autotune_eigen_avx2
#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "dense_kernels.hpp"
#include "dense_loops.hpp"

namespace autotune::dense_avx2 {
namespace {

namespace E = autotune_eigen_avx2;
using Map = E::Map<E::MatrixXd, 0, E::OuterStride<>>;
using ConstMap = E::Map<const E::MatrixXd, 0, E::OuterStride<>>;

}  // namespace

void product_abt(long m, long n, long k, const double *A, long lda, const double *B, long ldb,
                 double *C, long ldc, double alpha, bool accumulate) {
  const ConstMap a(A, m, k, E::OuterStride<>(lda)), b(B, n, k, E::OuterStride<>(ldb));
  Map c(C, m, n, E::OuterStride<>(ldc));
  if (accumulate)
    c.noalias() += alpha * (a * b.transpose());
  else
    c.noalias() = alpha * (a * b.transpose());
}

void lower_times_bt(long n, long c, const double *L, long ldl, const double *B, long ldb, double *V,
                    long ldv) {
  const ConstMap l(L, n, n, E::OuterStride<>(ldl)), b(B, c, n, E::OuterStride<>(ldb));
  Map v(V, n, c, E::OuterStride<>(ldv));
  v.noalias() = l.triangularView<E::Lower>() * b.transpose();
}

void subtract_vtv(long k, long s, const double *V, long ldv, double *C, long ldc) {
  const ConstMap v(V, k, s, E::OuterStride<>(ldv));
  Map c(C, s, s, E::OuterStride<>(ldc));
  c.noalias() -= v.transpose() * v;
}

void add_ata_lower(long k, long n, const double *A, long lda, double *C, long ldc) {
  const ConstMap a(A, k, n, E::OuterStride<>(lda));
  Map c(C, n, n, E::OuterStride<>(ldc));
  c.selfadjointView<E::Lower>().rankUpdate(a.transpose());
}

bool cholesky_lower(long n, double *A, long lda) {
  Map a(A, n, n, E::OuterStride<>(lda));
  E::LLT<E::Ref<E::MatrixXd, 0, E::OuterStride<>>, E::Lower> llt(a);
  return llt.info() == E::Success;
}

void lower_inverse(long n, const double *L, long ldl, double *inv, long ldi) {
  const ConstMap l(L, n, n, E::OuterStride<>(ldl));
  Map i(inv, n, n, E::OuterStride<>(ldi));
  dense_loops::lower_inverse(l, i);
}

void matern52_from_products(long m, long n, double *K, long ldk, const double *na, const double *nb,
                            double sf2, void (*exp)(double *, std::size_t)) {
  Map k(K, m, n, E::OuterStride<>(ldk));
  const E::Map<const E::VectorXd> a(na, m), b(nb, n);
  dense_loops::matern52<E::ArrayXd>(k, a, b, sf2, exp);
}

}  // namespace autotune::dense_avx2
