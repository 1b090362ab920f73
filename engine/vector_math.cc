#include "autotune_config.h"

#include "autotune/vector_math.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#if HAVE_LIBMVEC_X86_64
#include <immintrin.h>
// glibc's vector ABI names (libmvec, "x86_64 Vector Function ABI"): b = SSE, 2 lanes;
// d = AVX2, 4 lanes.  erfc is in libmvec since glibc 2.35.
extern "C" __m128d _ZGVbN2v_exp(__m128d);
extern "C" __m256d _ZGVdN4v_exp(__m256d);
extern "C" __m128d _ZGVbN2v_erfc(__m128d);
extern "C" __m256d _ZGVdN4v_erfc(__m256d);
#endif

namespace autotune {
namespace {

using ArrayFn = void (*)(double *, std::size_t);

void exp_scalar(double *x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}
void erfc_scalar(double *x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::erfc(x[i]);
}

#if HAVE_LIBMVEC_X86_64
template <__m128d (*F)(__m128d), ArrayFn Tail>
void sse(double *x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(x + i, F(_mm_loadu_pd(x + i)));
  Tail(x + i, n - i);
}

template <__m256d (*F)(__m256d), ArrayFn Tail>
__attribute__((target("avx2,fma"))) void avx2(double *x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(x + i, F(_mm256_loadu_pd(x + i)));
  Tail(x + i, n - i);
}
#endif

struct Variant {
  ArrayFn exp, erfc;
  const char *name;
};

// The variants this build and CPU have, fastest first.
std::vector<Variant> available() {
  std::vector<Variant> v;
#if HAVE_LIBMVEC_X86_64
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    v.push_back({avx2<_ZGVdN4v_exp, exp_scalar>, avx2<_ZGVdN4v_erfc, erfc_scalar>, "avx2"});
  v.push_back({sse<_ZGVbN2v_exp, exp_scalar>, sse<_ZGVbN2v_erfc, erfc_scalar>, "sse"});
#endif
  v.push_back({exp_scalar, erfc_scalar, "scalar"});
  return v;
}

Variant &current() {
  static Variant v = available().front();
  return v;
}

}  // namespace

void exp_in_place(double *x, std::size_t n) { current().exp(x, n); }

void erfc_in_place(double *x, std::size_t n) { current().erfc(x, n); }

const char *vector_math_variant() { return current().name; }

bool use_vector_math_variant(const char *name) {
  for (const Variant &v : available())
    if (std::strcmp(v.name, name) == 0) {
      current() = v;
      return true;
    }
  return false;
}

}  // namespace autotune
