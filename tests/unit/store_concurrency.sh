#!/bin/sh
# The store under real concurrency and real crashes:
#  1. 200 processes record measurements for the same class at once, plus 50 that record the same
#     jobs again: exactly 200 trials, each with its one measurement (nothing lost, nothing doubled).
#  2. 150 times, a writer is killed with SIGKILL at a random point of a write loop: afterwards the
#     store passes SQLite's integrity check and every finished trial has its measurement.
set -u
b=${top_builddir:-.}
prog=$b/tests/unit/store_stress
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
db=$tmp/store.db
fail=0

"$prog" init "$db" || exit 1
pids=""
for i in $(seq 1 200); do "$prog" record "$db" "$i" & pids="$pids $!"; done
for i in $(seq 1 50); do "$prog" record "$db" "$((i * 4))" & pids="$pids $!"; done
errors=0
for p in $pids; do wait "$p" || errors=$((errors + 1)); done
[ "$errors" = 0 ] || { echo "FAIL: $errors writer processes failed"; fail=1; }
if out=$("$prog" check "$db" 200); then
  echo "ok: 250 concurrent writers (50 duplicates): $out, each with one measurement"
else
  echo "FAIL: after concurrent writers: $out"; fail=1
fi

rm -f "$db"*
"$prog" init "$db" || exit 1
for i in $(seq 1 150); do
  "$prog" loop "$db" $((i * 100000)) 2>/dev/null &
  pid=$!
  # a random delay of 0-49 ms
  sleep "0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 50 ))" 2>/dev/null || sleep 0.01
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
done
if out=$("$prog" check "$db" -); then
  echo "ok: 150 writers killed mid-write: integrity ok, $out, every finished trial has its measurement"
else
  echo "FAIL: after killed writers: $out"; fail=1
fi
exit $fail
