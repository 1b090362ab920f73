#!/bin/sh
# The store under real concurrency and real crashes:
#  1. 200 processes record measurements for the same class at once, plus 50 that record the same
#     jobs again: exactly 200 trials, each with its one measurement (nothing lost, nothing doubled).
#  2. 150 times, a writer is killed with SIGKILL at a random point of a write loop (each writer
#     must still be running when killed): afterwards the store passes SQLite's integrity check, is
#     not empty, and each writer's trials are exactly the ones it reported done, each with its
#     measurement, plus at most the one it was writing when killed.
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
# Writer i records jobs i*100000, i*100000+1, ... and prints each job once its trial is done.  A
# writer runs until killed, so any status but SIGKILL's (128+9) means it failed on its own.  The
# last writer is killed only once it has finished a trial, so the store cannot end up empty.
writers=150
for i in $(seq 1 $writers); do
  "$prog" loop "$db" $((i * 100000)) >"$tmp/done.$i" 2>"$tmp/err.$i" &
  pid=$!
  if [ "$i" = "$writers" ]; then
    n=0
    while [ ! -s "$tmp/done.$i" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n + 1)); done
  else
    # a random delay of 0-49 ms
    sleep "0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 50 ))" 2>/dev/null || sleep 0.01
  fi
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null; st=$?
  if [ "$st" != 137 ]; then
    echo "FAIL: killed writer $i ended with status $st, not by SIGKILL: $(cat "$tmp/err.$i")"; fail=1
  fi
done
if out=$("$prog" check "$db" -); then
  echo "ok: $writers writers killed mid-write: integrity ok, $out, every finished trial has its measurement"
else
  echo "FAIL: after killed writers: $out"; fail=1
fi
# Each writer's trials in the store are exactly the jobs it reported done, plus at most one more:
# the trial it was writing when killed (done if the kill came after the commit, else running).
for i in $(seq 1 $writers); do echo "$i $(wc -l <"$tmp/done.$i")"; done >"$tmp/reported"
"$prog" list "$db" >"$tmp/list" || { echo "FAIL: cannot list the trials"; fail=1; }
if ! awk -v writers=$writers '
  NR == FNR { reported[$1] = $2; total += $2; next }
  { w = int($1 / 100000); off = $1 - w * 100000; n[w]++; if (off > last[w]) last[w] = off
    if ($2 == "running") { running[w]++; running_off[w] = off } else if ($2 != "done") bad = bad " job " $1 ":" $2 }
  END {
    if (total < 1) { print "FAIL: no writer reported a finished trial"; exit 1 }
    for (w = 1; w <= writers; w++) {
      cnt = n[w] + 0; run = running[w] + 0; done = cnt - run; rep = reported[w] + 0
      if (cnt > 0 && last[w] != cnt - 1) { print "FAIL: writer " w ": jobs not contiguous (" cnt " trials, last offset " last[w] ")"; err = 1 }
      if (run > 1 || (run == 1 && running_off[w] != cnt - 1)) { print "FAIL: writer " w ": " run " running trials, not only its last"; err = 1 }
      if (!(done == rep || (done == rep + 1 && run == 0))) { print "FAIL: writer " w ": reported " rep " trials done, store has " done " done and " run " running"; err = 1 }
      stored += done
    }
    if (bad != "") { print "FAIL: unexpected trial states:" bad; err = 1 }
    if (err) exit 1
    print "ok: the " total " trials the writers reported done are all in the store (" stored " done in all), none lost or doubled"
  }' "$tmp/reported" "$tmp/list"; then
  fail=1
fi
exit $fail
