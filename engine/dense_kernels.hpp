// The raw interface of engine/dense_avx2.cc (dense.hpp says why it exists): column-major
// matrices as pointer, sizes and leading dimension, and no Eigen type, since that file's Eigen
// lives in a namespace of its own.  Each function is the dense.hpp function of the same name.
#ifndef AUTOTUNE_DENSE_KERNELS_HPP
#define AUTOTUNE_DENSE_KERNELS_HPP

#include <cstddef>

namespace autotune::dense_avx2 {

void product_abt(long m, long n, long k, const double *A, long lda, const double *B, long ldb,
                 double *C, long ldc, double alpha, bool accumulate);
void lower_times_bt(long n, long c, const double *L, long ldl, const double *B, long ldb, double *V,
                    long ldv);
void subtract_vtv(long k, long s, const double *V, long ldv, double *C, long ldc);
void add_ata_lower(long k, long n, const double *A, long lda, double *C, long ldc);
bool cholesky_lower(long n, double *A, long lda);
void lower_inverse(long n, const double *L, long ldl, double *inv, long ldi);
// exp: exp_in_place (vector_math.hpp), passed in so that this interface names no other header.
void matern52_from_products(long m, long n, double *K, long ldk, const double *na, const double *nb,
                            double sf2, void (*exp)(double *, std::size_t));

}  // namespace autotune::dense_avx2

#endif
