# AT_CHECK_LIBMVEC
# ----------------
# glibc's vector math library on x86-64 (libmvec: exp, erfc, log and cos on SSE and AVX2
# registers; erfc since glibc 2.35), used by engine/vector_math.cc for the Gaussian process
# kernel, expected improvement and the warm start's normal draws.  Optional: without it the
# engine uses std::exp, std::erfc, std::log and std::cos.  Defines
# HAVE_LIBMVEC_X86_64 and substitutes MVEC_LIBS.
AC_DEFUN([AT_CHECK_LIBMVEC], [
  MVEC_LIBS=
  AC_MSG_CHECKING([for libmvec's SSE and AVX2 exp, erfc, log and cos on x86-64])
  at_save_LIBS=$LIBS
  LIBS="-lmvec $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#if !defined __x86_64__
#error not x86-64
#endif
#include <immintrin.h>
extern "C" __m128d _ZGVbN2v_exp(__m128d);
extern "C" __m256d _ZGVdN4v_exp(__m256d);
extern "C" __m128d _ZGVbN2v_erfc(__m128d);
extern "C" __m256d _ZGVdN4v_erfc(__m256d);
extern "C" __m128d _ZGVbN2v_log(__m128d);
extern "C" __m256d _ZGVdN4v_log(__m256d);
extern "C" __m128d _ZGVbN2v_cos(__m128d);
extern "C" __m256d _ZGVdN4v_cos(__m256d);
__attribute__((target("avx2,fma"))) double four(double x) {
  double out[4];
  _mm256_storeu_pd(out, _mm256_add_pd(_ZGVdN4v_exp(_mm256_set1_pd(x)), _ZGVdN4v_erfc(_mm256_set1_pd(x))));
  _mm256_storeu_pd(out, _mm256_add_pd(_mm256_loadu_pd(out), _mm256_add_pd(_ZGVdN4v_log(_mm256_set1_pd(x)), _ZGVdN4v_cos(_mm256_set1_pd(x)))));
  return out[0];
}]], [[
  double out[2];
  _mm_storeu_pd(out, _mm_add_pd(_ZGVbN2v_exp(_mm_set1_pd(0.5)), _ZGVbN2v_erfc(_mm_set1_pd(0.5))));
  _mm_storeu_pd(out, _mm_add_pd(_mm_loadu_pd(out), _mm_add_pd(_ZGVbN2v_log(_mm_set1_pd(0.5)), _ZGVbN2v_cos(_mm_set1_pd(0.5)))));
  return out[0] > 0 && four(0.5) > 0 ? 0 : 1;]])],
    [at_have_libmvec=yes], [at_have_libmvec=no])
  LIBS=$at_save_LIBS
  AC_MSG_RESULT([$at_have_libmvec])
  AS_IF([test "x$at_have_libmvec" = xyes], [
    MVEC_LIBS=-lmvec
    AC_DEFINE([HAVE_LIBMVEC_X86_64], [1], [Define to 1 if glibc's libmvec has exp, erfc, log and cos for SSE and AVX2.])
  ])
  AC_SUBST([MVEC_LIBS])
])
