#include "autotune_config.h"

#include "autotune/vector_math.hpp"

#include <Eigen/Core>
#include <cmath>
#include <vector>

#include "cpu_variants.hpp"

#if HAVE_LIBMVEC_X86_64
#include <immintrin.h>
// glibc's vector ABI names (libmvec, "x86_64 Vector Function ABI"): b = SSE, 2 lanes;
// d = AVX2, 4 lanes.  erfc is in libmvec since glibc 2.35.
extern "C" __m128d _ZGVbN2v_exp(__m128d);
extern "C" __m256d _ZGVdN4v_exp(__m256d);
extern "C" __m128d _ZGVbN2v_erfc(__m128d);
extern "C" __m256d _ZGVdN4v_erfc(__m256d);
extern "C" __m128d _ZGVbN2v_log(__m128d);
extern "C" __m256d _ZGVdN4v_log(__m256d);
extern "C" __m128d _ZGVbN2v_cos(__m128d);
extern "C" __m256d _ZGVdN4v_cos(__m256d);
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
void log_scalar(double *x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::log(x[i]);
}
void cos_scalar(double *x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::cos(x[i]);
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
  ArrayFn exp, erfc, log, cos;
  const char *name;
};

// The variants this build and CPU have, fastest first.
std::vector<Variant> available() {
  std::vector<Variant> v;
#if HAVE_LIBMVEC_X86_64
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    v.push_back({avx2<_ZGVdN4v_exp, exp_scalar>, avx2<_ZGVdN4v_erfc, erfc_scalar>,
                 avx2<_ZGVdN4v_log, log_scalar>, avx2<_ZGVdN4v_cos, cos_scalar>, "avx2"});
  v.push_back({sse<_ZGVbN2v_exp, exp_scalar>, sse<_ZGVbN2v_erfc, erfc_scalar>,
               sse<_ZGVbN2v_log, log_scalar>, sse<_ZGVbN2v_cos, cos_scalar>, "sse"});
#endif
  v.push_back({exp_scalar, erfc_scalar, log_scalar, cos_scalar, "scalar"});
  return v;
}

using Chosen = CpuVariants<Variant, available>;
Variant &current() { return Chosen::current(); }

}  // namespace

void exp_in_place(double *x, std::size_t n) { current().exp(x, n); }

void erfc_in_place(double *x, std::size_t n) { current().erfc(x, n); }

void log_in_place(double *x, std::size_t n) { current().log(x, n); }

void cos_in_place(double *x, std::size_t n) { current().cos(x, n); }

void fill_normal(Rng &rng, double *z, std::size_t n) {
  // Box-Muller as Rng::normal(): u1 and u2 of draw i are the generator's values 2i and 2i + 1.
  constexpr std::size_t kBlock = 256;
  double u1[kBlock], u2[kBlock];
  while (n > 0) {
    const std::size_t m = n < kBlock ? n : kBlock;
    for (std::size_t i = 0; i < m; ++i) {
      u1[i] = 1.0 - rng.uniform();
      u2[i] = 6.283185307179586 * rng.uniform();
    }
    log_in_place(u1, m);
    cos_in_place(u2, m);
    // Packets of square roots: IEEE square roots are exact, so the same values as one by one.
    using Block = Eigen::Map<Eigen::ArrayXd>;
    const auto len = static_cast<Eigen::Index>(m);
    Block(z, len) = (-2.0 * Block(u1, len)).sqrt() * Block(u2, len);
    z += m;
    n -= m;
  }
}

const char *vector_math_variant() { return current().name; }

bool use_vector_math_variant(const char *name) {
  return Chosen::use(name);
}

}  // namespace autotune
