// exp, erfc, log and cos over arrays, vectorized.  The Matérn kernel's exp(-sqrt5 r) is most of
// the arithmetic of a proposal step (a kernel entry per candidate and trial, and per pair of
// trials in every likelihood evaluation of a fit), expected improvement needs an erfc and an exp
// per candidate, and a warm start's weights some 35,000 normal draws, each a log and a cos.
// Eigen's exp for doubles is not vectorized on baseline x86-64 (SSE2); glibc's vector math library
// (libmvec) has SSE and AVX2 variants of each, and the AVX2 one is chosen at run time where the
// CPU has AVX2 and FMA.  Without libmvec (another architecture or C library) these are std::exp,
// std::erfc, std::log and std::cos in a loop.  Every variant is within 4 ulp of them.
//
// Thread safety: each of these may run in any number of threads at once (fill_normal with an
// Rng of each thread's own).
#ifndef AUTOTUNE_VECTOR_MATH_HPP
#define AUTOTUNE_VECTOR_MATH_HPP

#include <cstddef>

#include "autotune/rng.hpp"

namespace autotune {

// x[i] = exp(x[i]) for i < n.
void exp_in_place(double *x, std::size_t n);

// x[i] = erfc(x[i]) for i < n.
void erfc_in_place(double *x, std::size_t n);

// x[i] = log(x[i]), x[i] = cos(x[i]) for i < n.
void log_in_place(double *x, std::size_t n);
void cos_in_place(double *x, std::size_t n);

// z[i] for i < n: standard normals, the draws of n calls of rng.normal() (Box-Muller, the same
// uniforms in the same order) with its log and cos vectorized, so within a few ulp of them; rng
// is left where those calls leave it.  RGPE's weights (history.hpp) draw some 35,000 a step.
void fill_normal(Rng &rng, double *z, std::size_t n);

// The variant all of them run: "avx2", "sse" or "scalar".  The fastest this CPU and C library
// have is chosen at the first call.
const char *vector_math_variant();

// Makes all of them run the named variant from now on (for benchmarks and tests, which compare
// the variants in one process).  Returns false, changing nothing, for a variant this build or CPU
// does not have.  Not to be called while another thread runs any of them.
bool use_vector_math_variant(const char *name);

}  // namespace autotune

#endif
