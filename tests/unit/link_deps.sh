#!/bin/sh
# What each built library loads (ldd: its whole dependency closure): libpmem2 comes only with the
# tier store (autotune-bb, libssp), MPI only with libssp; the Slurm plugins, loaded into
# slurmctld, slurmd and every client, load neither (nor libssp).
set -u
b=${top_builddir:-.}
fail=0
deps() { ldd "$1" 2>&1 | awk '{print $1}'; }
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
fi
exit $fail
