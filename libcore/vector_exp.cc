#include "autotune_config.h"

#include "autotune/vector_exp.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#if HAVE_LIBMVEC_X86_64
#include <immintrin.h>
// glibc's vector ABI names (libmvec, "x86_64 Vector Function ABI"): b = SSE, 2 lanes;
// d = AVX2, 4 lanes.
extern "C" __m128d _ZGVbN2v_exp(__m128d);
extern "C" __m256d _ZGVdN4v_exp(__m256d);
#endif

namespace autotune {
namespace {

void exp_scalar(double *x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

#if HAVE_LIBMVEC_X86_64
void exp_sse(double *x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(x + i, _ZGVbN2v_exp(_mm_loadu_pd(x + i)));
  exp_scalar(x + i, n - i);
}

__attribute__((target("avx2,fma"))) void exp_avx2(double *x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(x + i, _ZGVdN4v_exp(_mm256_loadu_pd(x + i)));
  exp_scalar(x + i, n - i);
}
#endif

using ExpFn = void (*)(double *, std::size_t);

struct Variant {
  ExpFn fn;
  const char *name;
};

// The variants this build and CPU have, fastest first.
std::vector<Variant> available() {
  std::vector<Variant> v;
#if HAVE_LIBMVEC_X86_64
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) v.push_back({exp_avx2, "avx2"});
  v.push_back({exp_sse, "sse"});
#endif
  v.push_back({exp_scalar, "scalar"});
  return v;
}

Variant &current() {
  static Variant v = available().front();
  return v;
}

}  // namespace

void exp_in_place(double *x, std::size_t n) { current().fn(x, n); }

const char *exp_variant() { return current().name; }

bool use_exp_variant(const char *name) {
  for (const Variant &v : available())
    if (std::strcmp(v.name, name) == 0) {
      current() = v;
      return true;
    }
  return false;
}

}  // namespace autotune
