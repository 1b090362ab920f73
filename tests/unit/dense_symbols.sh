#!/bin/sh
# engine/dense_avx2.cc is compiled for AVX2 and FMA, the rest of the engine for the x86-64
# baseline (engine/include/autotune/dense.hpp).  A function it defines that other objects may
# share (a weak symbol: an Eigen or standard library template instantiated in the usual
# namespace, an inline function of a header) can be the one copy the linker keeps for the whole
# program, which then fails with an illegal instruction on a CPU without AVX.  So every code
# symbol it defines for the linker must be its own (autotune::dense_avx2::, or Eigen's templates
# in its own namespace, autotune_eigen_avx2), or hold no VEX-encoded instruction (the AVX
# encoding: a baseline CPU runs it).  Data (type information, guard variables) holds no code.
# Skipped (77) when configure built the baseline only.
set -u
b=${top_builddir:-.}
if ! grep -q '^#define HAVE_DENSE_AVX2 1' "$b/autotune_config.h"; then
  echo "skip: configured without the AVX2 products (configure: dense products ..... baseline)"
  exit 77
fi
a=$b/engine/.libs/libautotune_engine.a
[ -f "$a" ] || { echo "FAIL: $a not built"; exit 1; }
member=$(ar t "$a" | grep 'dense_avx2\.o$' | head -n 1)
[ -n "$member" ] || { echo "FAIL: $a has no object of engine/dense_avx2.cc"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
ar p "$a" "$member" > "$tmp/o.o"
own=$(nm -C --defined-only "$tmp/o.o" | grep -c ' T autotune::dense_avx2::')
[ "$own" -gt 0 ] || { echo "FAIL: $member defines none of its functions"; exit 1; }
# Global and weak code symbols (T, W), mangled, that are neither its own nor in its namespace.
nm --defined-only "$tmp/o.o" | awk '$2 == "T" || $2 == "W" { print $3 }' > "$tmp/code"
fail=0 shared=0
while read -r sym; do
  name=$(echo "$sym" | c++filt)
  case "$name" in autotune::dense_avx2::*|*autotune_eigen_avx2::*) continue ;; esac
  shared=$((shared + 1))
  vex=$(objdump -d --no-show-raw-insn --disassemble="$sym" "$tmp/o.o" |
    grep -E '^ +[0-9a-f]+:[[:space:]]+v[a-z]' | head -n 1)
  if [ -n "$vex" ]; then
    echo "FAIL: $member shares $name, compiled with AVX:$vex"
    fail=1
  fi
done < "$tmp/code"
[ $fail -eq 0 ] || exit 1
echo "ok: $member defines $own functions of its own; $shared shared code symbols, none with an AVX instruction"
