# AT_DENSE_AVX2
# -------------
# The engine's dense products (engine/dense.hpp) compiled a second time for AVX2 and FMA
# (engine/dense_avx2.cc), chosen at run time where the CPU has both; the rest of the engine stays
# on the x86-64 baseline, so one build runs on every x86-64 CPU.  Needs x86-64 and a compiler that
# takes -mavx2 -mfma; otherwise only the baseline is built.  --disable-dense-avx2 builds only the
# baseline.  Defines HAVE_DENSE_AVX2, the conditional DENSE_AVX2, and substitutes
# DENSE_AVX2_CXXFLAGS.
AC_DEFUN([AT_DENSE_AVX2], [
  AC_ARG_ENABLE([dense-avx2],
    [AS_HELP_STRING([--disable-dense-avx2],
      [build the engine's dense products for the x86-64 baseline only (default: also for AVX2 and FMA, chosen at run time by the CPU)])],
    [], [enable_dense_avx2=yes])
  DENSE_AVX2_CXXFLAGS=
  at_dense_avx2=no
  AS_IF([test "x$enable_dense_avx2" != xno], [
    AC_MSG_CHECKING([whether $CXX builds x86-64 code for AVX2 and FMA (-mavx2 -mfma)])
    at_save_CXXFLAGS=$CXXFLAGS
    CXXFLAGS="$CXXFLAGS -mavx2 -mfma"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#if !defined __x86_64__ || !defined __AVX2__ || !defined __FMA__
#error not x86-64 with AVX2 and FMA
#endif
#include <immintrin.h>
__m256d f(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }]], [[return 0;]])],
      [at_dense_avx2=yes; DENSE_AVX2_CXXFLAGS="-mavx2 -mfma"], [at_dense_avx2=no])
    CXXFLAGS=$at_save_CXXFLAGS
    AC_MSG_RESULT([$at_dense_avx2])
  ])
  AS_IF([test "x$at_dense_avx2" = xyes], [
    AC_DEFINE([HAVE_DENSE_AVX2], [1], [Define to 1 to build the engine's dense products for AVX2 and FMA as well.])
  ])
  AM_CONDITIONAL([DENSE_AVX2], [test "x$at_dense_avx2" = xyes])
  AC_SUBST([DENSE_AVX2_CXXFLAGS])
])
