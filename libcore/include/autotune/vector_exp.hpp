// exp over an array, vectorized: the Matérn kernel's exp(-sqrt5 r) is most of the arithmetic of a
// proposal step (a kernel entry per candidate and trial, and per pair of trials in every
// likelihood evaluation of a fit).  Eigen's own exp for doubles is not vectorized on baseline
// x86-64 (SSE2); glibc's vector math library (libmvec) has an SSE variant and an AVX2 one, and
// the AVX2 one is chosen at run time where the CPU has it.  Without libmvec (another
// architecture or C library) this is std::exp in a loop.  Every variant is within 4 ulp.
#ifndef AUTOTUNE_VECTOR_EXP_HPP
#define AUTOTUNE_VECTOR_EXP_HPP

#include <cstddef>

namespace autotune {

// x[i] = exp(x[i]) for i < n.
void exp_in_place(double *x, std::size_t n);

// The variant exp_in_place runs: "avx2", "sse" or "scalar".  The fastest this CPU and C library
// have is chosen at the first call.
const char *exp_variant();

// Makes exp_in_place run the named variant from now on (for benchmarks and tests, which compare
// the variants in one process).  Returns false, changing nothing, for a variant this build or
// CPU does not have.  Not to be called while another thread runs exp_in_place.
bool use_exp_variant(const char *name);

}  // namespace autotune

#endif
