#!/bin/sh
# What each installed library and plugin links (docs/architecture.md, "Who links what"):
#  - libssp.so (MPI ranks): the tier store and common/ only: loads libpmem2 and MPI, not
#    libsqlite3; defines no function of the engine, the store, autotune.conf's other sections,
#    the policy or the C API.
#  - job_submit_autotune.so (slurmctld): no function of the model (engine/libautotune_engine:
#    Gaussian process, expected improvement, propose), of the tier store, or of the tools' JSON
#    files (store/libautotune_files: result files, exports).
#  - libautotune_report.so (any program's reporting helper): no MPI, libssp, SQLite or libpmem2;
#    exports only at_report*;
#  - select_autotune.so (slurmctld and every client): node speeds only: no function of the
#    engine, the policy, the submit API, the tier store or the tools' JSON files.
#  - prep_autotune.so (slurmctld, under its job write lock): writes a file and wakes a thread: no
#    function of the store, the engine, the search, autotune.conf's other sections, the policy or
#    the other C APIs, and does not load libsqlite3.
#  - no plugin loads libpmem2, MPI or libssp.
# A function "of" a library is a strong text symbol (T) defined by its archive; inline and template
# code (weak symbols) is shared and not counted.
set -u
b=${top_builddir:-.}
fail=0
deps() { ldd "$1" 2>&1 | awk '{print $1}'; }
# Strong text symbols of a convenience library's archive (mangled).
defined() { nm --defined-only "$b/$1" 2>/dev/null | awk '$2 == "T" {print $3}' | sort -u; }
# Text symbols of a shared object, whatever their visibility (its full symbol table).
has() { nm --defined-only "$1" 2>/dev/null | awk '$2 ~ /^[Tt]$/ {print $3}' | sort -u; }
# check SO LABEL ARCHIVE...: SO defines no strong function of any ARCHIVE.
check() {
  so=$1; label=$2; shift 2
  for a in "$@"; do
    [ -f "$b/$a" ] || { echo "FAIL: $b/$a not built"; fail=1; continue; }
    n=$(defined "$a" | comm -12 - "$tmp/so") 
    if [ -n "$n" ]; then
      echo "FAIL: $label links $(echo "$n" | wc -l) functions of $a, e.g.:"
      echo "$n" | head -n 5 | c++filt | sed 's/^/    /'
      fail=1
    else
      echo "ok: $label has no function of $a"
    fi
  done
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

for so in "$b"/plugins/*/.libs/*.so; do
  [ -f "$so" ] || { echo "FAIL: no plugin built under $b/plugins"; fail=1; continue; }
  bad=$(deps "$so" | grep -E '^lib(pmem2|pmem|xxhash|mpi|open-pal|ssp)[.-]' | tr '\n' ' ')
  if [ -n "$bad" ]; then echo "FAIL: $so loads $bad"; fail=1; else echo "ok: $(basename "$so") loads no libpmem2, MPI or libssp"; fi
done

so=$b/libssp/.libs/libssp.so
if [ ! -f "$so" ]; then echo "FAIL: $so not built"; fail=1
else
  for want in libpmem2 libmpi; do
    deps "$so" | grep -q "^$want\." && echo "ok: libssp.so loads $want" || { echo "FAIL: libssp.so does not load $want"; fail=1; }
  done
  if deps "$so" | grep -q '^libsqlite3\.'; then echo "FAIL: libssp.so loads libsqlite3"; fail=1
  else echo "ok: libssp.so does not load libsqlite3"; fi
  has "$so" > "$tmp/so"
  check "$so" libssp.so engine/.libs/libautotune_engine.a engine/.libs/libautotune_search.a \
    store/.libs/libautotune_store.a store/.libs/libautotune_files.a conf/.libs/libautotune_conf.a \
    policy/.libs/libautotune_policy.a capi/.libs/libautotune_capi.a capi/.libs/libautotune_submit.a capi/.libs/libautotune_select.a
  # ... and exports none of them either (the dynamic symbol table is what an MPI program sees).
  nm -D --defined-only "$so" | awk '{print $3}' | sort -u > "$tmp/so"
  check "$so" "libssp.so's exports" engine/.libs/libautotune_engine.a engine/.libs/libautotune_search.a \
    store/.libs/libautotune_store.a policy/.libs/libautotune_policy.a
fi

# libautotune_report.so (the reporting helper for any program): nothing but the C++ runtime, and
# only its C API exported.
so=$b/report/.libs/libautotune_report.so
if [ ! -f "$so" ]; then echo "FAIL: $so not built"; fail=1
else
  bad=$(deps "$so" | grep -E '^lib(pmem2|pmem|xxhash|mpi|open-pal|ssp|sqlite3|hwloc|z)[.-]' | tr '\n' ' ')
  if [ -n "$bad" ]; then echo "FAIL: libautotune_report.so loads $bad"; fail=1
  else echo "ok: libautotune_report.so loads no MPI, libssp, SQLite or libpmem2"; fi
  exports=$(nm -D --defined-only "$so" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
  if [ "$exports" = "at_report at_report_batches at_report_error " ]; then echo "ok: libautotune_report.so exports its C API only"
  else echo "FAIL: libautotune_report.so exports: $exports"; fail=1; fi
fi

so=$b/plugins/job_submit/.libs/job_submit_autotune.so
if [ -f "$so" ]; then
  has "$so" > "$tmp/so"
  check "$so" job_submit_autotune.so engine/.libs/libautotune_engine.a tier/.libs/libautotune_tier.a \
    capi/.libs/libautotune_select.a store/.libs/libautotune_files.a
fi
so=$b/plugins/select/.libs/select_autotune.so
if [ -f "$so" ]; then
  has "$so" > "$tmp/so"
  check "$so" select_autotune.so engine/.libs/libautotune_engine.a policy/.libs/libautotune_policy.a \
    capi/.libs/libautotune_submit.a tier/.libs/libautotune_tier.a store/.libs/libautotune_files.a
fi
so=$b/plugins/prep/.libs/prep_autotune.so
if [ -f "$so" ]; then
  # Inside slurmctld, under its job write lock: it writes a file and wakes a thread; no store.
  has "$so" > "$tmp/so"
  check "$so" prep_autotune.so engine/.libs/libautotune_engine.a engine/.libs/libautotune_search.a \
    policy/.libs/libautotune_policy.a store/.libs/libautotune_store.a store/.libs/libautotune_files.a \
    conf/.libs/libautotune_conf.a tier/.libs/libautotune_tier.a capi/.libs/libautotune_submit.a \
    capi/.libs/libautotune_select.a
  if ldd "$so" | grep -q 'libsqlite3'; then echo "FAIL: prep_autotune.so loads libsqlite3"; fail=1; fi
fi
exit $fail
