# The sanitizer runs of scripts/test (--sanitize, --tsan).  Sourced by scripts/test after
# scripts/lib.sh: uses $top, $AUTOTUNE_BUILD, step, configure_cmd, say, unit_tests,
# objects_with, at_O0, objects_at_O0, make_var, $unsanitized_tests and the passed/failed counts.
# shellcheck shell=bash

# -g1: line tables only, all a sanitizer's stack trace needs (file:line), and a faster build than
# full debug information.
#
# The ASan run and the fuzzers (scripts/fuzz) share one clang build, $AUTOTUNE_BUILD-asan: every
# object is compiled once with AddressSanitizer, all of UBSan and libFuzzer's coverage
# instrumentation (fuzzer-no-link: counters the unit tests never read); the fuzz targets alone
# link libFuzzer (configure --enable-fuzzing, FUZZ_LDFLAGS).  Two builds (GCC for the tests, clang
# for the fuzzers) compiled the libraries twice: about 8 CPU minutes of CI's 2 cores.
ASAN_CC="clang clang++"
ASAN_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1 -O1"
ASAN_LDFLAGS="-fsanitize=address,undefined"
# The unit tests' own objects: AddressSanitizer only.  UBSan checks the code under test, in the
# libraries, which keep ASAN_FLAGS; in a test's own object (its assertions, gtest's macros and
# templates) it doubled the compile time (history_test.cc at -O0: 6.3 s against 3.9 s) and
# libFuzzer's coverage counters there serve no fuzzer.
ASAN_TEST_FLAGS="-fsanitize=address -fno-omit-frame-pointer -g1 -O1"
# The code no fuzz target links or calls (the command-line programs, the policies, the plugins,
# the reporting library, libssp's MPI side, the examples, the engine's model, replay and workflow
# search; libautotune_search, which fuzz_options and fuzz_workflow call, keeps them): ASan and
# UBSan without libFuzzer's coverage counters, which there serve no fuzzer and cost compile time
# (tools/cmd_ingest.cc at -O0: 9.1 s against 5.7 s; engine/gp.cc at -O1: 44 s against 34 s).
ASAN_NOFUZZ_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1 -O1"
TSAN_CC="gcc g++"
TSAN_FLAGS="-fsanitize=thread -g1 -O1"
TSAN_LDFLAGS="-fsanitize=thread"
# The make -j of the sanitized builds and of their make check (AUTOTUNE_SANITIZE_JOBS; scripts/test's
# header).  CI runs them at a low priority beside its integration tests, which mostly wait on
# Slurm; there two jobs at nice 10 left the cores idle a fifth of the time (.ci/run: 4 at nice 19).
sanitize_jobs=${AUTOTUNE_SANITIZE_JOBS:-$(nproc)}
[[ "$sanitize_jobs" =~ ^[1-9][0-9]{0,2}$ ]] ||
  die "AUTOTUNE_SANITIZE_JOBS='$sanitize_jobs' is not allowed (allowed: a number of make jobs, 1-999)"
unit_jobs=$sanitize_jobs
# AUTOTUNE_SANITIZE_NICE=N (0-19, default 0): once configured, a sanitizer run lowers its own
# priority to nice N (renice), for its build, its tests and its fuzzing.  Its configure, one
# process, runs first at the caller's priority: at nice 19 beside CI's main build it took 520 s.
sanitize_nice=${AUTOTUNE_SANITIZE_NICE:-0}
[[ "$sanitize_nice" =~ ^([0-9]|1[0-9])$ ]] ||
  die "AUTOTUNE_SANITIZE_NICE='$sanitize_nice' is not allowed (allowed: a nice value, 0-19)"
# lower_priority: this run (and what it starts from now on) at nice $sanitize_nice.
lower_priority() {
  [ "$sanitize_nice" = 0 ] || renice -n "$sanitize_nice" -p "$BASHPID" >/dev/null
}

# sanitized_configure DIR "CC CXX" FLAGS LDFLAGS [ARG...]: configure DIR once, with FLAGS as CFLAGS
# and CXXFLAGS and the configure ARGs.  No --enable-werror: sanitizer instrumentation at -O1 brings
# warnings (GCC's -Wmaybe-uninitialized, -Wstringop-overflow; clang's about GCC's pragmas) the
# normal build does not have, and that build already holds the code to -Werror.  A DIR configured
# with other settings is refused: remove it to change them.
sanitized_configure() {
  local dir=$1 cc=${2%% *} cxx=${2##* } flags=$3 ldflags=$4; shift 4
  local want="CC=$cc CXX=$cxx FLAGS=$flags LDFLAGS=$ldflags $*"
  [ -x "$top/configure" ] || (cd "$top" && step autoreconf -fi) || return 1
  mkdir -p "$dir" || return 1
  if [ -f "$dir/Makefile" ]; then
    [ "$(cat "$dir/sanitize.settings" 2>/dev/null)" = "$want" ] && return 0
    say "$dir was configured with other settings than: $want; remove it (rm -rf $dir) and run again"
    return 1
  fi
  (cd "$dir" && step "${configure_cmd[@]}" --prefix="$dir/inst" --with-slurm-user=root "$@" \
    CC="$cc" CXX="$cxx" CFLAGS="$flags" CXXFLAGS="$flags" LDFLAGS="$ldflags" >"$dir/configure.out" 2>&1) \
    || { tail -n 20 "$dir/configure.out" >&2; return 1; }
  printf '%s\n' "$want" >"$dir/sanitize.settings"
}

# The shared ASan and fuzzing build, configured.
asan_configure() {
  sanitized_configure "$AUTOTUNE_BUILD-asan" "$ASAN_CC" "$ASAN_FLAGS" "$ASAN_LDFLAGS" --enable-fuzzing
}

# sanitized_build DIR [TARGET...]: build TARGETs (default all) in the configured DIR.
sanitized_build() {
  local dir=$1; shift
  step make -C "$dir" -j"$sanitize_jobs" "$@" >"$dir/make.out" 2>&1 || { tail -n 40 "$dir/make.out" >&2; return 1; }
}

# reports PHASE [DIR]: every sanitizer report written into DIR (default $reports; one file per
# process, log_path) since the last call is shown and counted as a failure, then kept in
# $reports/PHASE/.
reports() {
  local phase=$1 dir=${2:-$reports} f n=0
  mkdir -p "$reports/$phase"
  for f in "$dir"/*.[0-9]*; do
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
  say "AddressSanitizer + UBSan build in $b ($ASAN_CC: $ASAN_FLAGS)"
  # Of the programs not installed, only those the MPI tests run are built (and the unit tests):
  # the benchmarks, the MLP examples, logreg_allreduce (tests/mpi/ssp_examples.test's, left to
  # the plain run) and store_fill (the integration tests') never run sanitized, and compiling
  # them under ASan costs CI time.  Of those installed, the programs the unit tests run, but not
  # autotune-run (run_step_test compiles its code into the test) nor the Slurm plugins, which
  # run in slurmctld and slurmd, never here.
  local progs="examples/logreg examples/mf tests/mpi/ssp_check tests/mpi/allreduce_hosts"
  local installed=("bin_PROGRAMS=tools/autotune tools/autotune-bb report/autotune-report" "slurmplugin_LTLIBRARIES=")
  asan_configure || { failed=$((failed + 1)); say "sanitized configure failed"; return; }
  lower_priority
  # ... and of the libraries not installed, all but the MLP examples' (examples/libmlp.la).
  local libs
  # shellcheck disable=SC2046
  libs=$(printf '%s\n' $(make_var "$b" noinst_LTLIBRARIES) | grep -v '^examples/libmlp\.la$' | tr '\n' ' ')
  # At -O0 too: the libraries whose code the tests run little of per second (parsing, the store's
  # SQL, policies, the plugins and the C API); the numeric code the unit tests and the MPI tests
  # spend their time in (the engine's model and search, libssp, the examples, the tier store)
  # keeps -O1.  Of the ASan build's 540 CPU seconds of compile, those libraries took 180 at -O1.
  # Of those, the ones no fuzz target reaches (tests/fuzz/local.mk) without the coverage
  # counters (ASAN_NOFUZZ_FLAGS), at -O0 or at -O1.
  local o0_libs="common/%.lo conf/%.lo store/%.lo capi/%.lo engine/libautotune_engine_la-table.lo"
  local o0_nofuzz="tools/autotune%.o tools/tests_unit_%.o policy/%.lo plugins/%.lo report/%.lo"
  local o1_nofuzz="libssp/libssp_la-%.lo examples/%.o examples/%.lo tests/mpi/%.o"
  local e
  for e in replay workflow_replay workflow_search; do o0_nofuzz+=" engine/libautotune_engine_la-$e.lo"; done
  for e in acquisition gp history optimizer vector_math; do o1_nofuzz+=" engine/libautotune_engine_la-$e.lo"; done
  for e in config engine_conf objective space stopping strategy workflow; do o0_libs+=" engine/libautotune_search_la-$e.lo"; done
  # shellcheck disable=SC2207
  unit_make_vars=("noinst_PROGRAMS=$progs" "noinst_LTLIBRARIES=$libs" "${installed[@]}"
                  $(objects_with "$b" "$(at_O0 "$ASAN_TEST_FLAGS")" 'tests/unit/%.o' "$(at_O0 "$ASAN_FLAGS")" "$o0_libs" \
                      "$(at_O0 "$ASAN_NOFUZZ_FLAGS")" "$o0_nofuzz" "$ASAN_NOFUZZ_FLAGS" "$o1_nofuzz"))
  # With AUTOTUNE_SANITIZE_FUZZ (below) the fuzz targets are built here too, so that scripts/fuzz,
  # which runs beside make check in this build directory, has nothing left to build.  They join
  # noinst_PROGRAMS, which `all` builds, rather than being named beside it: `all` runs a make of
  # its own (all-am, after the config header), and the targets named beside it were built by the
  # first make at the same time, the libraries they share twice at once (a race that failed the
  # build: "mv: cannot stat 'engine/.deps/...Tpo'").
  # The unit tests' programs too, but those only the main build's tests run ($unsanitized_programs):
  # built with the rest, so that no core waits for the build's last link before make check
  # compiles them.
  local check_programs
  check_programs=$(printf '%s\n' $(make_var "$b" check_PROGRAMS) | grep -vxF "$(printf '%s\n' $unsanitized_programs)" | tr '\n' ' ')
  local build_vars=("${unit_make_vars[@]}")
  build_vars[0]="noinst_PROGRAMS=$progs $check_programs"
  [ -n "${AUTOTUNE_SANITIZE_FUZZ:-}" ] && build_vars[0]+=" $(make_var "$b" FUZZ_TARGETS)"
  timed "asan build" sanitized_build "$b" all "${build_vars[@]}" || { failed=$((failed + 1)); say "sanitized build failed"; return; }
  # The libssp that tests/mpi/ssp.test builds an application against, installed into this
  # build's own prefix (libssp, its headers and ssp.pc only: no plugin, no program).
  timed "asan install of libssp into $b/inst" step make -C "$b" install-libLTLIBRARIES \
    install-sspincludeHEADERS install-sspautotuneHEADERS install-pkgconfigDATA >"$b/install.out" 2>&1 \
    || { tail -n 20 "$b/install.out" >&2; failed=$((failed + 1)); return; }
  # Reports go to files (log_path) so that none is lost in a test that expects its program to fail.
  asan_options() {  # asan_options DIR: reports into DIR
    export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:print_stacktrace=1:log_path=$1/asan"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$1/ubsan"
  }
  asan_options "$reports"
  export LSAN_OPTIONS="suppressions=$top/tests/sanitize/lsan.supp:print_suppressions=0"
  # tests/sanitize/run-mpi compiles ssp.test's program with mpicxx: the same compiler and flags.
  export AUTOTUNE_SANITIZE_FLAGS=$ASAN_FLAGS CXX=${ASAN_CC##* }

  # The MPI tests run beside the unit tests: their programs are built and libssp installed, and
  # about half of their time is spent waiting (ranks starting, timeouts, srun), which the unit
  # tests fill.  Their reports go to a directory of their own.
  say "MPI tests with the sanitized programs (tests/sanitize/run-mpi $b), beside the unit tests"
  local mpi_reports=$reports/mpi-run mpi_pid
  mkdir -p "$mpi_reports"
  out=$b/mpi.out
  ( asan_options "$mpi_reports"
    timed "asan MPI tests" "$top/tests/sanitize/run-mpi" "$b" >"$out" 2>"$b/mpi.err" ) &
  mpi_pid=$!

  # AUTOTUNE_SANITIZE_FUZZ=SECONDS: scripts/fuzz SECONDS as well, beside the unit tests (its
  # targets were built above; libFuzzer's runs are bounded in time).
  local fuzz_pid=
  if [ -n "${AUTOTUNE_SANITIZE_FUZZ:-}" ]; then
    say "fuzzing (scripts/fuzz $AUTOTUNE_SANITIZE_FUZZ), beside the unit tests"
    timed "fuzzing" "$top/scripts/fuzz" "$AUTOTUNE_SANITIZE_FUZZ" >"$b/fuzz.out" 2>&1 &
    fuzz_pid=$!
  fi

  say "unit tests under ASan + UBSan (make check in $b)"
  # But for the tests of the build system itself (configure's messages, the plugins' exported
  # symbols, the libraries' links) and of the scripts' --help, which run no sanitized code, and
  # the store's between hundreds of processes (store_concurrency.sh: see scripts/test)
  # (scripts/test's $unsanitized_tests: with AUTOTUNE_TEST_UNIT=unsanitized, as in CI, the main
  # build's make check runs those only, and every other unit test runs here alone).
  local tests
  tests=$(make_var "$b" TESTS)
  tests=$(printf '%s\n' $tests | grep -vE "$unsanitized_tests" | tr '\n' ' ')
  if [ -n "${tests// /}" ]; then
    # ... nor the programs only those tests run (built above, with the rest).
    unit_make_vars+=("TESTS=$tests" "check_PROGRAMS=$check_programs")
    # engine_test's four statistical warm-start tests replay hundreds of searches each: 28 of its
    # 40 CPU seconds under ASan, in the propose() paths its other tests run once; less than the
    # main build's compile of engine_test (about 75 s), which CI no longer does.
    timed "asan make check" unit_tests "$b"
  else
    failed=$((failed + 1)); say "no unit tests found in $b/Makefile (TESTS)"
  fi
  reports "make-check"

  if [ -n "$fuzz_pid" ]; then
    wait "$fuzz_pid" || { failed=$((failed + 1)); say "fuzzing: findings or a failure (below)"; }
    cat "$b/fuzz.out"
  fi
  wait "$mpi_pid"
  say "MPI tests with the sanitized programs:"
  cat "$out"; cat "$b/mpi.err" >&2
  summary=$(tail -n 1 "$out")
  case "$summary" in
    PASS=*) p=${summary#PASS=}; p=${p%% *}; f=${summary##*FAIL=} ;;
    *) p=0; f=1 ;;
  esac
  passed=$((passed + p)); failed=$((failed + f))
  reports "mpi" "$mpi_reports"
}

run_tsan() {
  local b=$AUTOTUNE_BUILD-tsan t
  reports=$b/sanitizer-reports
  rm -rf "$reports"; mkdir -p "$reports"
  say "ThreadSanitizer build in $b ($TSAN_CC: $TSAN_FLAGS)"
  # Not store_concurrency.sh: its writers are processes of one thread each, which share only the
  # SQLite file (ThreadSanitizer sees no race between processes), and under TSan it took 73 s.
  local progs="tests/unit/ssp_test tests/unit/select_thread_test"
  # shellcheck disable=SC2086
  sanitized_configure "$b" "$TSAN_CC" "$TSAN_FLAGS" "$TSAN_LDFLAGS" || { failed=$((failed + 1)); say "sanitized configure failed"; return; }
  lower_priority
  # At -O0 but for libssp (ssp_test spends its 40 s there): the tests' own objects and the
  # libraries select_thread_test links (its threads share the select API's cache and the store;
  # ThreadSanitizer instruments every access at any level), where -O1 only costs compile time.
  timed "tsan build" sanitized_build "$b" $(objects_at_O0 "$b" "$TSAN_FLAGS" 'tests/unit/%.o common/%.lo conf/%.lo store/%.lo capi/%.lo engine/%.lo tier/%.lo') $progs || { failed=$((failed + 1)); say "sanitized build failed"; return; }
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$top/tests/sanitize/tsan.supp:log_path=$reports/tsan"
  for t in tests/unit/ssp_test tests/unit/select_thread_test; do
    local log=$b/${t##*/}.out t0=$SECONDS rc
    say "$t under ThreadSanitizer"
    (cd "$b" && "./$t") >"$log" 2>&1
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
