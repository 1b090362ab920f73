# AT_EXAMPLES_ARCH
# ----------------
# Compiler flags for the dense-model example and benchmark code (examples/mlp_model.cc,
# bench/gemm_rate.cc): -march=native when the compiler takes it.  These programs are never
# installed (noinst_PROGRAMS): they run on the machine that built them, where Eigen's products on
# that CPU's widest vectors (AVX2 + FMA here) are about twice as fast as on the x86-64 baseline
# (SSE2).  --disable-native-examples keeps the baseline.  Substitutes EXAMPLES_ARCH_CXXFLAGS,
# with -Wno-uninitialized (GCC 12 warns about its own AVX-512 intrinsics once inlined into Eigen);
# the examples include Eigen as system headers (configure.ac: EIGEN_SYSTEM_CPPFLAGS), since its
# AVX-512 code has unused variables that -Werror would reject.
AC_DEFUN([AT_EXAMPLES_ARCH], [
  AC_ARG_ENABLE([native-examples],
    [AS_HELP_STRING([--disable-native-examples],
      [compile the dense example models and benchmarks for the x86-64 baseline instead of this machine's CPU (-march=native)])],
    [], [enable_native_examples=yes])
  EXAMPLES_ARCH_CXXFLAGS=
  AS_IF([test "x$enable_native_examples" != xno], [
    AC_MSG_CHECKING([whether $CXX accepts -march=native])
    at_save_CXXFLAGS=$CXXFLAGS
    CXXFLAGS="$CXXFLAGS -march=native"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[]], [[return 0;]])],
      [EXAMPLES_ARCH_CXXFLAGS="-march=native -Wno-uninitialized -Wno-maybe-uninitialized"; at_native=yes], [at_native=no])
    CXXFLAGS=$at_save_CXXFLAGS
    AC_MSG_RESULT([$at_native])
  ])
  AC_SUBST([EXAMPLES_ARCH_CXXFLAGS])
])
