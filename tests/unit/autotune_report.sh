#!/bin/sh
# autotune-report, the reporting contract's helper for shell scripts: the report it writes, and a
# table of bad arguments, each refused with one line naming the option, status 2, nothing written.
set -u
b=${top_builddir:-.}
rep=$(cd "$b" && pwd)/report/autotune-report
fail=0
tmp=$(mktemp -d /tmp/autotune-report-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export AUTOTUNE_RESULT=$tmp/result.json SLURM_PROCID=1 SLURMD_NODENAME=n2
unset SLURM_CPUS_PER_TASK SLURM_MEM_PER_CPU SLURM_MEM_PER_NODE

check() {  # check WHAT EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected [$2], got [$3]"; fail=1; else echo "ok: $1"; fi
}

out=$("$rep" --samples 640 --seconds 2.5 --batches 10 2>&1); rc=$?
check "a report: status" 0 "$rc"
check "a report: quiet" "" "$out"
got=$(cut -d: -f1-8 "$tmp/result.json.rank.1")
check "a report: the rank's file" '{"format":"autotune-rank/1","rank":1,"role":"worker","node":"n2","samples":640,"wall_s":2.5,"batches":10,"peak_rss_mb"' "$got"
"$rep" --samples=1 --seconds=1 >/dev/null 2>&1; check "--name=value: status" 0 "$?"
rm -f "$tmp"/result.json.rank.1

# Each line: expected message | arguments
while IFS='|' read -r msg args; do
  [ -z "$msg" ] && continue
  # shellcheck disable=SC2086
  out=$("$rep" $args 2>&1); rc=$?
  check "$args: status" 2 "$rc"
  check "$args: message" "autotune-report: $msg; see \`autotune-report --help'" "$out"
done <<'TABLE'
--samples N is required|--seconds 1
--seconds S is required|--samples 1
--samples: '--5' is not a number|--samples --5 --seconds 1
--samples: 'abc' is not a number|--samples abc --seconds 1
--samples: 'nan' is not a number|--samples nan --seconds 1
--seconds: 'inf' is not a number|--samples 1 --seconds inf
--seconds: '0x10' is not a number|--samples 1 --seconds 0x10
--samples: '-5' is below 0|--samples -5 --seconds 1
--seconds: '0' is not above 0|--samples 5 --seconds 0
--seconds: '-1' is not above 0|--samples 5 --seconds -1
--batches: '1.5' is not a whole number from 0 to 1e12|--samples 5 --seconds 1 --batches 1.5
--seconds needs a value|--samples 5 --seconds
unknown argument '--speed'|--speed 5
unknown argument 'extra'|--samples 5 --seconds 1 extra
TABLE
check "bad arguments write nothing" "" "$(ls "$tmp")"

out=$(SLURM_PROCID=x "$rep" --samples 1 --seconds 1 2>&1); rc=$?
check "bad SLURM_PROCID: status" 2 "$rc"
check "bad SLURM_PROCID: message" "autotune-report: at_report: SLURM_PROCID: is not a whole number from 0 to 10000000" "$out"
out=$(AUTOTUNE_RESULT= "$rep" --samples 1 --seconds 1 2>&1); rc=$?
check "outside autotune-run: status" 0 "$rc"
check "outside autotune-run: message" "autotune-report: AUTOTUNE_RESULT is unset (not run by autotune-run): nothing reported" "$out"
out=$(AUTOTUNE_RESULT=/nonexistent/r.json "$rep" --samples 1 --seconds 1 2>&1); rc=$?
check "unwritable: status" 1 "$rc"
"$rep" --help | grep -q "^usage: autotune-report --samples N --seconds S"; check "--help" 0 "$?"
exit $fail
