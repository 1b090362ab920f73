# AT_FUZZING
# ----------
# --enable-fuzzing builds the libFuzzer targets tests/fuzz/fuzz_*.cc (noinst programs, one per
# parser of user or admin input; scripts/fuzz runs them).  It needs clang: configure with
# CXX=clang++ and compile everything with CXXFLAGS='-fsanitize=fuzzer-no-link,address,undefined'
# (tests/sanitize/lib.sh does both for build-asan/, which scripts/fuzz and scripts/test --sanitize
# share); the targets themselves are linked with -fsanitize=fuzzer, which
# brings libFuzzer's main().  Off by default: an ordinary build has no fuzz targets.
#
# Substitutes: FUZZ_LDFLAGS.  Conditional: FUZZING.
AC_DEFUN([AT_FUZZING], [
  AC_REQUIRE([AC_PROG_CXX])
  AC_ARG_ENABLE([fuzzing],
    [AS_HELP_STRING([--enable-fuzzing],
                    [build the libFuzzer targets in tests/fuzz (needs CXX=clang++; see scripts/fuzz)])],
    [], [enable_fuzzing=no])
  FUZZ_LDFLAGS=
  AS_IF([test "x$enable_fuzzing" = xyes], [
    AC_MSG_CHECKING([whether $CXX links a libFuzzer target (-fsanitize=fuzzer)])
    at_save_LDFLAGS=$LDFLAGS
    LDFLAGS="$LDFLAGS -fsanitize=fuzzer"
    AC_LINK_IFELSE([AC_LANG_SOURCE([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *, std::size_t) { return 0; }
]])],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--enable-fuzzing: $CXX cannot link with -fsanitize=fuzzer.
    Configure with CXX=clang++ (Debian 12: packages clang and libclang-rt-14-dev, see scripts/setup),
    or run scripts/fuzz, which does.])])
    LDFLAGS=$at_save_LDFLAGS
    FUZZ_LDFLAGS=-fsanitize=fuzzer
  ])
  AC_SUBST([FUZZ_LDFLAGS])
  AM_CONDITIONAL([FUZZING], [test "x$enable_fuzzing" = xyes])
])
