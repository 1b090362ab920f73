#!/bin/sh
# autotune replay --workflow as a user runs it: every bad input gives exactly one line on stderr
# that names what is wrong, and a non-zero exit; good input prints the optimum and one row per
# strategy.
set -u
b=${top_builddir:-.}
at="$b/tools/autotune"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

cat >"$tmp/t.csv" <<'CSV'
app,nodes,time_s,cost,ok
a,1,100,1.0,1
a,2,60,1.2,1
a,4,40,1.6,1
b,1,10,0.1,1
b,2,6,0.12,1
b,4,4,0.16,1
c,1,50,0.5,1
c,2,30,0.6,1
c,4,20,0.8,1
CSV
cat >"$tmp/fj.json" <<'EOF2'
{"workflow": "fj", "gamma": 0.5, "budget": 6, "functions": [
  {"name": "s", "problem": "a"}, {"name": "x", "after": ["s"], "problem": "b"},
  {"name": "y", "after": ["s"], "problem": "c"}]}
EOF2
printf '{"workflow": "w", "functions": [{"name": "s", "problem": "zz"}]}' >"$tmp/unknown.json"
printf '{"workflow": "w", "functions": [{"name": "s", "after": ["t"], "problem": "a"}, {"name": "t", "after": ["s"], "problem": "b"}]}' >"$tmp/cycle.json"
printf '{"workflow": "w", "functions": [{"name": "s"}]}' >"$tmp/noproblem.json"

expect_fail() {
  desc=$1; re=$2; shift 2
  "$at" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" = 0 ]; then
    echo "FAIL: $desc: exit status 0"; fail=1
  elif [ "$lines" != 1 ]; then
    echo "FAIL: $desc: $lines lines on stderr:"; cat "$tmp/err"; fail=1
  elif ! grep -Eq -e "$re" "$tmp/err"; then
    echo "FAIL: $desc: '$(cat "$tmp/err")' does not match '$re'"; fail=1
  elif [ -s "$tmp/out" ]; then
    echo "FAIL: $desc: wrote to stdout"; fail=1
  fi
}

expect_fail "no table" "--table FILE is required" replay --workflow "$tmp/fj.json"
expect_fail "empty workflow list" "--workflow: '.*' has an empty file name" replay --workflow "$tmp/fj.json," --table "$tmp/t.csv" --group app
expect_fail "missing file" "nope.json: no such workflow file" replay --workflow "$tmp/nope.json" --table "$tmp/t.csv" --group app
expect_fail "unknown problem" "functions\[0\] 's': problem: 'zz' is not a problem of the table; known: a, b, c" replay --workflow "$tmp/unknown.json" --table "$tmp/t.csv" --group app
expect_fail "no problem" "functions\[0\] 's': problem: missing" replay --workflow "$tmp/noproblem.json" --table "$tmp/t.csv" --group app
expect_fail "cycle" "closes a cycle" replay --workflow "$tmp/cycle.json" --table "$tmp/t.csv" --group app
expect_fail "bad strategy" "--strategy: 'greedy' is not a workflow strategy; allowed: stage, function, flat, random" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --group app --strategy stage,greedy
expect_fail "bad gamma" "--gamma: '2' is out of range" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --group app --gamma 2
expect_fail "bad budget" "--budget: '0' is out of range" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --group app --budget 0
# The table's options are read as autotune replay reads them.
expect_fail "empty group" "^autotune replay: --group: empty column name$" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --group ""
expect_fail "empty feature" "^autotune replay: --features: 'nodes,' has an empty column name$" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --group app --features nodes,
expect_fail "bad derived feature" "^autotune replay: --derive z: 'app' is the group or a measurement column$" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --group app --derive z=nodes/app
expect_fail "unknown option" "unknown option '--bogus'" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --bogus 1

# Good input: the optimum (stage by stage for this fork-join), then the four strategies.
if ! "$at" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --group app --seeds 3 >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: good input: $(cat "$tmp/err")"; fail=1
else
  grep -q "^optimum: score .* stage by stage over 27 Pareto combinations" "$tmp/out" || { echo "FAIL: no optimum line:"; cat "$tmp/out"; fail=1; }
  for s in stage function flat random; do
    grep -q "^$s " "$tmp/out" || { echo "FAIL: no row for $s"; fail=1; }
  done
fi
# A ratio of columns as a feature (--derive NAME=A/B), as --help says.
awk -F, -v OFS=, 'NR == 1 { print $0, "mem_gib"; next } { print $0, 8 * $2 }' "$tmp/t.csv" >"$tmp/mem.csv"
if ! "$at" replay --workflow "$tmp/fj.json" --table "$tmp/mem.csv" --group app --seeds 2 --strategy stage \
    --features nodes --derive mem_per_node=mem_gib/nodes --json >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: --derive with a ratio: $(cat "$tmp/err")"; fail=1
elif ! python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert "mem_per_node=8" in j["workflows"][0]["optimum"]["choice"]["s"]' "$tmp/out"; then
  echo "FAIL: --derive with a ratio: no mem_per_node=8 in the optimum's choice:"; cat "$tmp/out"; fail=1
fi
if ! "$at" replay --workflow "$tmp/fj.json" --table "$tmp/t.csv" --group app --seeds 2 --strategy stage --json >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: --json: $(cat "$tmp/err")"; fail=1
elif ! python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); w=j["workflows"][0]; assert w["optimum"]["method"]=="stage by stage"; assert w["results"]["stage"]["searches"]==2' "$tmp/out"; then
  echo "FAIL: --json output:"; cat "$tmp/out"; fail=1
fi
exit $fail
