// The dense products and factorizations of a proposal step, on the widest vectors the CPU has.
// The Gaussian process's kernel matrices (the distances' cross term and the Matern function of
// every candidate against every trial), its posterior at the candidates (L^-1 times the kernel block), Thompson
// sampling's joint covariances, the likelihood's K^-1, the Cholesky factors and their inverses are most of a
// step's arithmetic besides exp (vector_math.hpp).  Eigen picks its vector width when it is
// compiled, and the engine is compiled for the x86-64 baseline (SSE2, two doubles per
// instruction, no FMA), so that one build runs on every x86-64 CPU.  Where the compiler can
// target AVX2 and FMA (configure: "dense products"), each of these also exists compiled for them
// (engine/dense_avx2.cc, with Eigen in a namespace of its own so that no code built for AVX2
// can stand in for baseline code), and is chosen at run time where the CPU has both; else the
// baseline runs.  The two variants compute the same products and differ only in rounding (the
// last bits, from FMA and the order of the sums).
//
// Shapes are the caller's to keep (checked only by the callers, at the engine's edges); every
// output is written, never resized.
//
// Thread safety: each of these may run in any number of threads at once.
#ifndef AUTOTUNE_DENSE_HPP
#define AUTOTUNE_DENSE_HPP

#include <Eigen/Core>

namespace autotune {

// C = alpha A B^T, or with accumulate C += alpha A B^T.  A (m x k), B (n x k), C (m x n).
void product_abt(const Eigen::Ref<const Eigen::MatrixXd> &A, const Eigen::Ref<const Eigen::MatrixXd> &B,
                 Eigen::Ref<Eigen::MatrixXd> C, double alpha = 1.0, bool accumulate = false);

// V = L B^T, L (n x n) lower triangular (its strict upper part is not read), B (c x n), V (n x c).
void lower_times_bt(const Eigen::Ref<const Eigen::MatrixXd> &L, const Eigen::Ref<const Eigen::MatrixXd> &B,
                    Eigen::Ref<Eigen::MatrixXd> V);

// C -= V^T V.  V (k x s), C (s x s), both triangles written.
void subtract_vtv(const Eigen::Ref<const Eigen::MatrixXd> &V, Eigen::Ref<Eigen::MatrixXd> C);

// The lower triangle of C += A^T A.  A (k x n), C (n x n); the strict upper part is not written.
void add_ata_lower(const Eigen::Ref<const Eigen::MatrixXd> &A, Eigen::Ref<Eigen::MatrixXd> C);

// inv = L^-1, L (n x n) lower triangular (its strict upper part is not read), inv (n x n; its
// strict upper part is set to 0).
void lower_inverse(const Eigen::Ref<const Eigen::MatrixXd> &L, Eigen::Ref<Eigen::MatrixXd> inv);

// The Matern-5/2 kernel from products: where K (m x n) holds a_i . b_j and na (m), nb (n) the
// squared norms |a_i|^2, |b_j|^2, K(i, j) becomes sf2 M(r), r = sqrt(max(na_i + nb_j - 2 K(i, j),
// 0)), M(r) = (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r), exp as exp_in_place (vector_math.hpp).
void matern52_from_products(Eigen::Ref<Eigen::MatrixXd> K, const Eigen::Ref<const Eigen::VectorXd> &na,
                            const Eigen::Ref<const Eigen::VectorXd> &nb, double sf2);

// In place, A (n x n) symmetric, only its lower triangle read: the lower triangle becomes L with
// A = L L^T (the strict upper part is left as it was).  False, with A's lower triangle
// undefined, when A is not positive definite.
bool cholesky_lower(Eigen::Ref<Eigen::MatrixXd> A);

// The variant all of them run: "avx2" (AVX2 and FMA) or "baseline".  The fastest this build and
// CPU have is chosen at the first call.
const char *dense_variant();

// Makes all of them run the named variant from now on (for benchmarks and tests, which compare
// the variants in one process).  Returns false, changing nothing, for a variant this build or CPU
// does not have.  Not to be called while another thread runs any of them.
bool use_dense_variant(const char *name);

}  // namespace autotune

#endif
