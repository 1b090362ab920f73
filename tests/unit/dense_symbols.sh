#!/bin/sh
# engine/dense_avx2.cc is compiled for AVX2 and FMA, the rest of the engine for the x86-64
# baseline (engine/include/autotune/dense.hpp).  Every symbol it defines for the linker must be
# its own: its functions (autotune::dense_avx2::) and Eigen's templates in its own namespace
# (autotune_eigen_avx2).  Were it to define a shared one (an Eigen or standard library template
# instantiated in the usual namespace, an inline function of an engine header), the linker could
# keep its AVX2 copy for the whole program, which then fails with an illegal instruction on a CPU
# without AVX2.  Skipped (77) when configure built the baseline only.
set -u
b=${top_builddir:-.}
if ! grep -q '^#define HAVE_DENSE_AVX2 1' "$b/autotune_config.h"; then
  echo "skip: configured without the AVX2 products (configure: dense products ..... baseline)"
  exit 77
fi
a=$b/engine/.libs/libautotune_engine.a
[ -f "$a" ] || { echo "FAIL: $a not built"; exit 1; }
# nm -A: "archive:member: value type name"; the member of dense_avx2.cc only.
syms=$(nm -A -C --defined-only "$a" 2>/dev/null | grep 'dense_avx2\.o:' | cut -d' ' -f2-)
[ -n "$syms" ] || { echo "FAIL: $a has no object of engine/dense_avx2.cc"; exit 1; }
own=$(printf '%s\n' "$syms" | grep -c '^T autotune::dense_avx2::')
# Global and weak symbols (upper-case type letters, and u for unique globals) that are neither
# its own functions nor in its Eigen namespace; the personality routine's reference is the same
# in every C++ object.
foreign=$(printf '%s\n' "$syms" | awk '$1 ~ /^[A-Zu]$/ { $1 = ""; print }' | sed 's/^ //' |
  grep -v '^autotune::dense_avx2::' | grep -v 'autotune_eigen_avx2::' |
  grep -v '^DW\.ref\.__gxx_personality_v0$')
if [ -n "$foreign" ]; then
  echo "FAIL: engine/dense_avx2.cc defines symbols other code may share:"
  printf '%s\n' "$foreign" | head -n 20 | sed 's/^/    /'
  exit 1
fi
echo "ok: engine/dense_avx2.cc defines $own functions of its own and no symbol another object may share"
