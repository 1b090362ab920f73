# The sanitizer runs of scripts/test (--sanitize, --tsan).  Sourced by scripts/test after
# scripts/lib.sh: uses $top, $AUTOTUNE_BUILD, step, say, unit_tests and the passed/failed counts.
# shellcheck shell=bash

# -g1: line tables only, all a sanitizer's stack trace needs (file:line), and a faster build than
# full debug information.
# UBSan's checks of values (overflow, shifts, division by zero, float-to-integer casts, bool and
# enum loads, missing returns, unreachable code, builtins): they add little to the build.  Its
# checks of pointers (null, alignment, bounds, object-size, pointer-overflow, vptr) cover what
# ASan largely covers too, and GCC's instrumentation of them takes 1.5-2.3 times as long to
# compile (engine/gp.cc: 61 s against 30 s; policy/class_extra.cc: 19 s against 13 s); they run
# under the fuzzers (scripts/fuzz: clang, all of -fsanitize=undefined), on every parser of input.
UBSAN_CHECKS="shift,integer-divide-by-zero,unreachable,vla-bound,return,signed-integer-overflow,float-cast-overflow,bool,enum,builtin"
ASAN_FLAGS="-fsanitize=address,$UBSAN_CHECKS -fno-omit-frame-pointer -fno-sanitize-recover=$UBSAN_CHECKS -g1 -O1"
TSAN_FLAGS="-fsanitize=thread -g1 -O1"

# sanitized_build DIR FLAGS [TARGET...]: configure DIR (once) with FLAGS as CFLAGS and CXXFLAGS and
# build TARGETs (default all).  No --enable-werror: GCC's sanitizer instrumentation at -O1 brings
# warnings (-Wmaybe-uninitialized, -Wstringop-overflow) the normal build does not have, and that
# build already holds the code to -Werror.  To change FLAGS, remove DIR.
sanitized_build() {
  local dir=$1 flags=$2; shift 2
  [ -x "$top/configure" ] || (cd "$top" && step autoreconf -fi) || return 1
  mkdir -p "$dir" || return 1
  if [ ! -f "$dir/Makefile" ]; then
    (cd "$dir" && step "$top/configure" --prefix="$dir/inst" --with-slurm-user=root \
      CFLAGS="$flags" CXXFLAGS="$flags" LDFLAGS="${flags%% *}" >"$dir/configure.out" 2>&1) \
      || { tail -n 20 "$dir/configure.out" >&2; return 1; }
  fi
  step make -C "$dir" -j"$(nproc)" "$@" >"$dir/make.out" 2>&1 || { tail -n 40 "$dir/make.out" >&2; return 1; }
}

# reports PHASE: every sanitizer report written since the last call (one file per process,
# log_path) is shown and counted as a failure, then kept in $reports/PHASE/.
reports() {
  local phase=$1 f n=0
  mkdir -p "$reports/$phase"
  for f in "$reports"/*.[0-9]*; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    echo "---- sanitizer report ($phase): $f" >&2
    head -n 80 "$f" >&2
    mv "$f" "$reports/$phase/"
  done
  if [ "$n" != 0 ]; then
    say "$phase: $n sanitizer reports (kept in $reports/$phase/)"
    failed=$((failed + n))
  else
    say "$phase: no sanitizer report"
  fi
}

# A timed step: "NAME: N s" on stderr.
timed() {
  local name=$1 t0=$SECONDS rc; shift
  "$@"; rc=$?
  say "$name: $((SECONDS - t0)) s"
  return $rc
}

run_asan() {
  local b=$AUTOTUNE_BUILD-asan out summary p f
  reports=$b/sanitizer-reports
  rm -rf "$reports"; mkdir -p "$reports"
  say "AddressSanitizer + UBSan build in $b ($ASAN_FLAGS)"
  # Of the programs not installed, only those the MPI tests run are built (and, by make check,
  # the unit tests): the benchmarks and the MLP examples never run sanitized, and compiling them
  # under ASan costs CI time.
  unit_make_vars=("noinst_PROGRAMS=examples/logreg examples/logreg_allreduce examples/mf tests/mpi/ssp_check tests/mpi/allreduce_hosts tests/unit/store_fill")
  timed "asan build" sanitized_build "$b" "$ASAN_FLAGS" all "${unit_make_vars[@]}" || { failed=$((failed + 1)); say "sanitized build failed"; return; }
  # The libssp that tests/mpi/ssp.test builds an application against, installed into this
  # build's own prefix (libssp, its headers and ssp.pc only: no plugin, no program).
  timed "asan install of libssp into $b/inst" step make -C "$b" install-libLTLIBRARIES \
    install-sspincludeHEADERS install-sspautotuneHEADERS install-pkgconfigDATA >"$b/install.out" 2>&1 \
    || { tail -n 20 "$b/install.out" >&2; failed=$((failed + 1)); return; }
  # Reports go to files (log_path) so that none is lost in a test that expects its program to fail.
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:print_stacktrace=1:log_path=$reports/asan"
  export LSAN_OPTIONS="suppressions=$top/tests/sanitize/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
  export AUTOTUNE_SANITIZE_FLAGS=$ASAN_FLAGS

  say "unit tests under ASan + UBSan (make check in $b)"
  # But for the tests of the build system itself (configure's messages, the plugins' exported
  # symbols, the libraries' links), which run no sanitized code.
  local tests
  tests=$(printf 'print-tests:\n\t@echo $(TESTS)\n' | make -s -C "$b" -f Makefile -f - print-tests)
  tests=$(printf '%s\n' $tests | grep -vE '/(configure_errors|plugin_abi|link_deps)\.sh$' | tr '\n' ' ')
  unit_make_vars+=("TESTS=$tests")
  timed "asan make check" unit_tests "$b"
  reports "make-check"

  say "MPI tests with the sanitized programs (tests/sanitize/run-mpi $b)"
  # Debian's Open MPI has no frame pointers: the slow unwinder takes the stacks of what it
  # allocates down to MPI_Init, where tests/sanitize/lsan.supp can match them.
  ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
  out=$b/mpi.out
  timed "asan MPI tests" "$top/tests/sanitize/run-mpi" "$b" | tee "$out"
  summary=$(tail -n 1 "$out")
  case "$summary" in
    PASS=*) p=${summary#PASS=}; p=${p%% *}; f=${summary##*FAIL=} ;;
    *) p=0; f=1 ;;
  esac
  passed=$((passed + p)); failed=$((failed + f))
  reports "mpi"
}

run_tsan() {
  local b=$AUTOTUNE_BUILD-tsan t
  reports=$b/sanitizer-reports
  rm -rf "$reports"; mkdir -p "$reports"
  say "ThreadSanitizer build in $b ($TSAN_FLAGS)"
  local progs="tests/unit/ssp_test tests/unit/select_thread_test tests/unit/store_stress"
  # shellcheck disable=SC2086
  timed "tsan build" sanitized_build "$b" "$TSAN_FLAGS" $progs || { failed=$((failed + 1)); say "sanitized build failed"; return; }
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$top/tests/sanitize/tsan.supp:log_path=$reports/tsan"
  for t in tests/unit/ssp_test tests/unit/select_thread_test tests/unit/store_concurrency.sh; do
    local log=$b/${t##*/}.out t0=$SECONDS rc
    say "$t under ThreadSanitizer"
    case $t in
      *.sh) (cd "$b" && top_builddir=. top_srcdir=$top sh "$top/$t") >"$log" 2>&1 ;;
      *) (cd "$b" && "./$t") >"$log" 2>&1 ;;
    esac
    rc=$?
    say "$t: $((SECONDS - t0)) s"
    if [ $rc = 0 ]; then
      echo "PASS: $t" >&2; passed=$((passed + 1))
    else
      echo "FAIL: $t (exit status $rc)" >&2; tail -n 30 "$log" >&2; failed=$((failed + 1))
    fi
  done
  reports "tsan"
}
