#!/bin/sh
# autotune replay and the autotune dispatcher, as a user runs them: every bad input must give
# exactly one line on stderr that says what is wrong, and a non-zero exit; good input exits 0.
set -u
b=${top_builddir:-.}
at="$b/tools/autotune"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

good="$tmp/good.csv"
cat >"$good" <<'CSV'
app,nodes,family,time_s,cost,ok
a,1,x,100,1.0,1
a,2,x,60,1.2,1
a,4,x,50,2.0,1
a,8,x,48,3.8,1
a,1,y,,,0
a,2,y,40,1.1,1
b,1,x,10,3,1
b,2,y,4,2,1
b,4,y,3,2.5,1
CSV
printf 'app,nodes,time_s,cost,ok\n' >"$tmp/empty.csv"
: >"$tmp/nothing.csv"
printf 'app,nodes,time_s,cost,ok\na,1,fast,1,1\n' >"$tmp/nonnum.csv"
printf 'app,nodes,time_s,cost,ok\na,1,5,1,1\nb,1,,,0\nb,2,7200,3,0\n' >"$tmp/nook.csv"

# expect_fail DESC REGEX ARGS...: non-zero exit, one stderr line matching REGEX, no stdout.
expect_fail() {
  desc=$1; re=$2; shift 2
  "$at" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" = 0 ]; then
    echo "FAIL: $desc: exit status 0"; fail=1
  elif [ "$lines" != 1 ]; then
    echo "FAIL: $desc: $lines lines on stderr:"; cat "$tmp/err"; fail=1
  elif ! grep -Eq "$re" "$tmp/err"; then
    echo "FAIL: $desc: '$(cat "$tmp/err")' does not match '$re'"; fail=1
  elif [ -s "$tmp/out" ]; then
    echo "FAIL: $desc: wrote to stdout"; fail=1
  else
    echo "ok: $desc (exit $rc): $(cat "$tmp/err")"
  fi
}

r="replay --group app"
# shellcheck disable=SC2086
{
expect_fail "missing column" "^autotune replay: --group: no column 'workload' in .*good.csv; columns: app, nodes, family, time_s, cost, ok$" \
  replay --table "$good" --group workload
expect_fail "missing feature column" "^autotune replay: --features: no column 'size' in .*good.csv" \
  $r --table "$good" --features nodes,size
expect_fail "missing measurement column" "^autotune replay: ok column: no column 'okay' in .*good.csv" \
  $r --table "$good" --ok-column okay
expect_fail "non-numeric value" "^autotune replay: .*nonnum.csv:2: time_s: 'fast' is not a number$" \
  $r --table "$tmp/nonnum.csv"
expect_fail "empty table" "^autotune replay: .*empty.csv: the table has no data rows$" \
  $r --table "$tmp/empty.csv"
expect_fail "empty file" "^autotune replay: .*nothing.csv: the table is empty \(no header line\)$" \
  $r --table "$tmp/nothing.csv"
expect_fail "problem where nothing is ok" "^autotune replay: .*nook.csv: problem 'b' \(app\): no row has ok=1, so there is no optimum to compare with$" \
  $r --table "$tmp/nook.csv"
expect_fail "gamma above 1" "^autotune replay: --gamma: '1.5' is out of range; allowed: a number from 0 to 1$" \
  $r --table "$good" --gamma 1.5
expect_fail "gamma below 0" "^autotune replay: --gamma: '-0.1' is out of range" \
  $r --table "$good" --gamma=-0.1
expect_fail "gamma not a number" "^autotune replay: --gamma: 'cheap' is not a number" \
  $r --table "$good" --gamma cheap
expect_fail "unknown exploration" "^autotune replay: --explore: 'thomson' is not an exploration; allowed: auto, none, spacefill, random, local, thompson, hedge$" \
  $r --table "$good" --explore thomson
expect_fail "exploration share above 1" "^autotune replay: --explore-share: '1.5' is out of range" \
  $r --table "$good" --explore thompson --explore-share 1.5
expect_fail "unknown strategy" "^autotune replay: --strategy: unknown strategy 'anneal'; allowed: bo, random, exhaustive$" \
  $r --table "$good" --strategy bo,anneal
expect_fail "bad linear trend" "^autotune replay: --linear-trend: 'maybe' is not allowed; allowed: auto, yes, no \(or true, false, 1, 0, on, off\)$" \
  $r --table "$good" --linear-trend maybe
expect_fail "bad failures' edge" "^autotune replay: --failure-edge: 'sometimes' is not a boolean; allowed: yes, no, true, false, 1, 0, on, off$" \
  $r --table "$good" --failure-edge sometimes
expect_fail "bad history top rule" "^autotune replay: --history-top-must-run: 'maybe' is not a boolean; allowed: yes, no, true, false, 1, 0, on, off$" \
  $r --table "$good" --history-others --history-top-must-run maybe
for k in 0.5 65 x; do
  expect_fail "bad feasibility power $k" "^autotune replay: --feasibility-power: '$k' is (out of range|not a number); allowed: a number from 1 to 64, or auto$" \
    $r --table "$good" --feasibility-power "$k"
done
for k in 0 -0.1 1.5 x; do
  expect_fail "bad cheap design share $k" "^autotune replay: --cheap-design: '$k' (is out of range|is not a number|must be above 0 and at most 1)" \
    $r --table "$good" --cheap-design "$k"
done
for k in 0 51 1.5 x; do
  expect_fail "bad failure model iterations $k" "^autotune replay: --feasibility-iterations: '$k' is (out of range|not a whole number); allowed: a whole number from 1 to 50, or auto$" \
    $r --table "$good" --feasibility-iterations "$k"
done
for k in -1 11 x; do
  expect_fail "bad bowl mean $k" "^autotune replay: --bowl-mean: '$k' is (out of range|not a number); allowed: a number from 0 to 10$" \
    $r --table "$good" --bowl-mean "$k"
done
expect_fail "bad run-time columns" "^autotune replay: --run-time-model: the run-time columns: nodes, cpus \(or cpus-per-node\) and mem \(or mem-per-node\) must all be given; or auto, or off$" \
  $r --table "$good" --run-time-model nodes=nodes
expect_fail "bad run-time key" "^autotune replay: --run-time-model: the run-time columns: 'disks=d' is not KEY=COLUMN; the keys: nodes, cpus or cpus-per-node, mem or mem-per-node; or auto, or off$" \
  $r --table "$good" --run-time-model nodes=nodes,disks=d
expect_fail "run-time column not a feature" "^autotune replay: --run-time-model: problem 'a': 'typo' is not a numeric feature \(give it in --features or --derive\)$" \
  $r --table "$good" --run-time-model nodes=nodes,cpus=typo,mem=nodes
expect_fail "bad run-time margin" "^autotune replay: --run-time-margin: '3' is out of range; allowed: a number from -2 to 2$" \
  $r --table "$good" --run-time-margin 3
expect_fail "bad run-time particles" "^autotune replay: --run-time-particles: '10' is out of range; allowed: a whole number from 64 to 100000$" \
  $r --table "$good" --run-time-particles 10
expect_fail "bad time model" "^autotune replay: --time-model: 'maybe' is not allowed; allowed: auto, better, yes, no \(or true, false, 1, 0, on, off\)$" \
  $r --table "$good" --time-model maybe
expect_fail "bad time linear trend" "^autotune replay: --time-linear-trend: 'maybe' is not allowed; allowed: auto, yes, no \(or true, false, 1, 0, on, off\)$" \
  $r --table "$good" --time-linear-trend maybe
expect_fail "bad history time model" "^autotune replay: --history-time-model: 'often' is not allowed; allowed: auto, yes, no \(or true, false, 1, 0, on, off\)$" \
  $r --table "$good" --history-others --history-time-model often
expect_fail "the warm start's time bases have no 'better'" "^autotune replay: --history-time-model: 'better' is not allowed; allowed: auto, yes, no \(or true, false, 1, 0, on, off\)$" \
  $r --table "$good" --history-others --history-time-model better
expect_fail "bad initial design" "^autotune replay: --initial: 'some' is not a whole number; allowed: a whole number from 1 to 1000, or auto$" \
  $r --table "$good" --initial some
expect_fail "unknown kernel" "^autotune replay: --kernel: 'sum' is not a kernel; allowed: ard, additive, ard\+additive$" \
  $r --table "$good" --kernel sum
expect_fail "missing file" "^autotune replay: $tmp/missing.csv: no such file$" \
  $r --table "$tmp/missing.csv"
expect_fail "no --table" "^autotune replay: --table FILE is required \(see --help\)$" replay --gamma 1
expect_fail "unknown option" "^autotune replay: unknown option '--gama'; see \`autotune replay --help'$" \
  $r --table "$good" --gama 1
expect_fail "zero budget" "^autotune replay: --budget: '0' is out of range" $r --table "$good" --budget 0
expect_fail "bad derived feature" "^autotune replay: .*family: 'x' is not a number \(a factor of --derive z\)$" \
  $r --table "$good" --derive z=nodes*family
expect_fail "unknown command" "^autotune: unknown command 'replai'; commands: status, show, report, export, forget, workflow, admin, replay, ingest, annotate \(see \`autotune --help'\)$" replai
}

# Good input: exit 0, a row per problem and strategy and the overall comparison.
if "$at" $r --table "$good" --gamma 1 --seeds 3 --budget 6 >"$tmp/out" 2>"$tmp/err" &&
   grep -q '^a ' "$tmp/out" && grep -q '^b ' "$tmp/out" && grep -q '^all (6 runs) ' "$tmp/out" &&
   grep -q '^median trials to within 10%: bo ' "$tmp/out" && [ ! -s "$tmp/err" ]; then
  echo "ok: a good table replays"
else
  echo "FAIL: a good table:"; cat "$tmp/out" "$tmp/err"; fail=1
fi
for k in additive ard+additive; do
  if "$at" $r --table "$good" --gamma 1 --seeds 2 --budget 6 --kernel "$k" >"$tmp/out" 2>"$tmp/err" &&
     grep -q '^all (4 runs) ' "$tmp/out" && [ ! -s "$tmp/err" ]; then
    echo "ok: --kernel $k"
  else
    echo "FAIL: --kernel $k:"; cat "$tmp/out" "$tmp/err"; fail=1
  fi
done
if "$at" $r --table "$good" --seeds 2 --budget 4 --json >"$tmp/out" 2>&1 &&
   grep -q '"to10_median"' "$tmp/out" && grep -q '"overall"' "$tmp/out"; then
  echo "ok: --json"
else
  echo "FAIL: --json:"; cat "$tmp/out"; fail=1
fi
# The share of the trials that failed: exhaustive search tries every configuration, so it is the
# table's -- a's 1 of 6, b's 0 of 3, both 2 of 18 -- in the text's failed column and in --json.
if "$at" $r --table "$good" --strategy exhaustive --seeds 2 --budget 10 >"$tmp/out" 2>"$tmp/err" &&
   grep -Eq '^a +exhaustive( +[^ ]+){7} +16\.7% ' "$tmp/out" &&
   grep -Eq '^b +exhaustive( +[^ ]+){7} +0\.0% ' "$tmp/out" &&
   grep -Eq '^all \(4 runs\) +exhaustive( +[^ ]+){7} +11\.1% ' "$tmp/out" &&
   "$at" $r --table "$good" --strategy exhaustive --seeds 2 --budget 10 --json >"$tmp/out2" 2>&1 &&
   tr -d ' \n' <"$tmp/out2" | grep -q '"overall":{"exhaustive":{.*"failed_share":0\.111111'; then
  echo "ok: the share of failed trials"
else
  echo "FAIL: the share of failed trials:"; cat "$tmp/out" "$tmp/err" "$tmp/out2"; fail=1
fi
# Thompson sampling and hedge replay, and a replay is the same every time (seeded draws).
for mode in thompson hedge; do
  if "$at" $r --table "$good" --seeds 3 --budget 6 --explore $mode --explore-share 1 --json \
       >"$tmp/out1" 2>&1 &&
     "$at" $r --table "$good" --seeds 3 --budget 6 --explore $mode --explore-share 1 --json \
       >"$tmp/out2" 2>&1 && grep -q '"to10_median"' "$tmp/out1" &&
     [ "$(grep -v step_ms "$tmp/out1")" = "$(grep -v step_ms "$tmp/out2")" ]; then
    echo "ok: --explore $mode replays the same twice"
  else
    echo "FAIL: --explore $mode:"; cat "$tmp/out1" "$tmp/out2"; fail=1
  fi
done
# The default exploration and linear term (auto) follow --gamma: Thompson sampling on every
# proposal at 0.5 (also with a history), expected improvement alone at 0.75 and 1 and at 0.25
# with a history; the linear term at 0.1, 0.5 and 0.75, but not at 0.25 or 1 (at 0.1 with
# expected improvement alone, also with a history); the history's time bases at 0.5, not at 1.
for case in "0.5||--explore thompson --explore-share 1 --linear-trend yes" \
            "0.1||--explore none --linear-trend yes" \
            "0.1|--history-others|--explore none --linear-trend yes" \
            "0.75||--explore none --linear-trend yes" "1||--explore none --linear-trend no" \
            "0.5|--history-others|--explore thompson --explore-share 1 --linear-trend yes" \
            "0.25|--history-others|--explore none --linear-trend no" \
            "0.5|--history-others|--history-time-model yes" "1|--history-others|--history-time-model no"; do
  g=${case%%|*} rest=${case#*|}
  hist=${rest%%|*} explicit=${rest#*|}
  # shellcheck disable=SC2086
  if "$at" $r --table "$good" --seeds 3 --budget 8 --gamma "$g" $hist --json >"$tmp/out1" 2>&1 &&
     "$at" $r --table "$good" --seeds 3 --budget 8 --gamma "$g" $hist $explicit --json >"$tmp/out2" 2>&1 &&
     grep -q '"to10_median"' "$tmp/out1" &&
     [ "$(grep -v step_ms "$tmp/out1")" = "$(grep -v step_ms "$tmp/out2")" ]; then
    echo "ok: the default exploration at --gamma $g $hist is $explicit"
  else
    echo "FAIL: the default exploration at --gamma $g $hist is not $explicit:"; cat "$tmp/out1" "$tmp/out2"; fail=1
  fi
done
# default_is DESC "COMMON" "SAME" "OTHER": on the cliff table below, replay with COMMON gives the
# search of COMMON SAME (the default's explicit setting) and not that of COMMON OTHER, so that a
# default that ignored what it should follow fails.
default_is() {
  for k in d:"" s:"$3" o:"$4"; do
    # shellcheck disable=SC2086
    "$at" $r --table "$tmp/cliff.csv" --seeds 3 --budget 10 $2 ${k#*:} --json 2>&1 | grep -v step_ms >"$tmp/${k%%:*}"
  done
  if grep -q '"to10_median"' "$tmp/d" && cmp -s "$tmp/d" "$tmp/s" && ! cmp -s "$tmp/d" "$tmp/o"; then
    echo "ok: $1: the default is $3, not $4"
  else
    echo "FAIL: $1: the default is not $3, or $4 changes nothing:"; cat "$tmp/d" "$tmp/s" "$tmp/o"; fail=1
  fi
}
# The power 4 of the probability of running from 0.75 to below 1, and the time model's linear
# term above 0.75 and below 1, on a table where they change the search: two workloads over 16
# node counts x 3 memory sizes, small allocations failing.
awk 'BEGIN { print "app,nodes,family,time_s,cost,ok"; split("1 2 4", m, " "); split("x y z", f, " ")
  for (a = 0; a < 2; a++) for (n = 1; n <= 16; n++) for (k = 1; k <= 3; k++) {
    t = 1000 / n + 20 * n + (a ? 30 * k : 10 * (4 - k)); app = a ? "b" : "a"
    if (n * m[k] >= 6 + 2 * a) printf "%s,%d,%s,%.1f,%.4f,1\n", app, n, f[k], t, 0.1 * m[k] * n * t / 3600
    else printf "%s,%d,%s,,,0\n", app, n, f[k] } }' >"$tmp/cliff.csv"
for case in "0.9|--feasibility-power 4 --time-linear-trend yes|--time-linear-trend no" \
            "0.75|--feasibility-power 4|--feasibility-power 1" \
            "1|--time-linear-trend no|--time-linear-trend yes" \
            "0.5|--time-linear-trend yes|--time-linear-trend no"; do
  g=${case%%|*} rest=${case#*|}
  default_is "at --gamma $g" "--gamma $g" "${rest%%|*}" "${rest#*|}"
done
# At gamma 1, with a categorical feature (the family), the initial design is drawn from the
# tenth of the configurations of the lowest cost per second and the run times are modelled at
# every step; at 0.9 neither.
default_is "at --gamma 1 with a categorical feature" "--gamma 1" \
  "--cheap-design 0.1 --time-model yes" "--cheap-design 1 --time-model better"
default_is "at --gamma 0.9 with a categorical feature" "--gamma 0.9" \
  "--cheap-design 1" "--cheap-design 0.1"
# With a categorical feature, cold, from gamma 0.5 to below 0.75: EI weighted by the chance of
# running to the fourth power (not Thompson sampling at 0.5, not the power 1 above it); over the
# numeric feature alone, local search on 0.4 of the proposals at 0.5 and the power 1 at 0.6; with
# a history, the power 1 too.
default_is "at --gamma 0.5 with a categorical feature" "--gamma 0.5" \
  "--explore none --feasibility-power 4" "--explore thompson --explore-share 1"
default_is "at --gamma 0.6 with a categorical feature" "--gamma 0.6" \
  "--feasibility-power 4" "--feasibility-power 1"
default_is "at --gamma 0.5 over a numeric feature" "--gamma 0.5 --features nodes" \
  "--explore local --explore-share 0.4" "--explore thompson --explore-share 1"
# Cold over numeric features: Thompson sampling from gamma 0.25 to below 0.4, elsewhere local
# search on 0.4 of the proposals (not EI alone); with a history, EI alone at gamma 1.
default_is "at --gamma 0.3 over a numeric feature" "--gamma 0.3 --features nodes" \
  "--explore thompson --explore-share 1" "--explore local --explore-share 0.4"
default_is "at --gamma 1 over a numeric feature" "--gamma 1 --features nodes" \
  "--explore local --explore-share 0.4" "--explore none"
default_is "at --gamma 1 over a numeric feature with a history" "--gamma 1 --features nodes --history-others" \
  "--explore none" "--explore local --explore-share 0.4"
default_is "at --gamma 0.6 over a numeric feature" "--gamma 0.6 --features nodes" \
  "--feasibility-power 1" "--feasibility-power 4"
default_is "at --gamma 0.6 with a categorical feature and a history" "--gamma 0.6 --history-others" \
  "--feasibility-power 1" "--feasibility-power 4"
# The failures' edge is on by default, and changes the search where small allocations fail.
default_is "at --gamma 1 over a numeric feature, the failures' edge" "--gamma 1 --features nodes" \
  "--failure-edge yes" "--failure-edge no"
# Where the design is among the cheapest rates the failure model's fit runs 15 iterations, else 5.
default_is "at --gamma 1 with a categorical feature, the failure model's fit" "--gamma 1" \
  "--feasibility-iterations 15" "--feasibility-iterations 5"
default_is "at --gamma 1 with --cheap-design 1, the failure model's fit" "--gamma 1 --cheap-design 1" \
  "--feasibility-iterations 5" "--feasibility-iterations 15"
# At gamma 1 the run times' model's proposals weigh the probability of running to the power 8,
# the scores' to the power 1: with --time-model yes the default is the power 8, with no, 1
# (with expected improvement: the table's family is categorical, where gamma 1 would take
# Thompson sampling, whose draw the power does not weigh; and with the design over the whole
# space, after which the power changes the score model's proposals on this table).
default_is "at --gamma 1 with --time-model yes" "--gamma 1 --time-model yes --explore none --cheap-design 1" \
  "--feasibility-power 8" "--feasibility-power 1"
default_is "at --gamma 1 with --time-model no" "--gamma 1 --time-model no --explore none --cheap-design 1" \
  "--feasibility-power 1" "--feasibility-power 8"
# --trace says how each trial was proposed: the initial design of 3 (given: at gamma 1 with a
# categorical feature the default design among the cheapest rates has 4), then the model (EI or, at
# gamma 1 with a categorical feature, Thompson sampling: explore), whose steps are marked "(time)"
# where the time model made them (--time-model yes, on a's priced rows) and never with
# --time-model no; random search's trials are "random".
if "$at" $r --table "$good" --gamma 1 --seeds 1 --budget 6 --strategy bo,random --trace --time-model yes --initial 3 \
     >"$tmp/out" 2>"$tmp/err" &&
   [ "$(sed -n '/^a bo seed 1/,/^[^ ]/p' "$tmp/out" | grep -Ec '^ +[1-3] design +nodes=')" = 3 ] &&
   [ "$(sed -n '/^a bo seed 1/,/^[^ ]/p' "$tmp/out" | grep -Ec '^ +[4-6] (model|explore) \(time\) +nodes=')" = 3 ] &&
   sed -n '/^a random seed 1/,/^[^ ]/p' "$tmp/out" | grep -Eq '^ +1 random +nodes=' &&
   "$at" $r --table "$good" --gamma 1 --seeds 1 --budget 6 --trace --time-model no --initial 3 >"$tmp/out2" 2>&1 &&
   [ "$(grep -Ec '^ +[4-6] (model|explore) +nodes=' "$tmp/out2")" = 3 ] && ! grep -q '(time)' "$tmp/out2"; then
  echo "ok: --trace marks the design, the model's proposals and the time model's"
else
  echo "FAIL: --trace:"; cat "$tmp/out" "$tmp/err" "$tmp/out2"; fail=1
fi
# The initial design's size: by default 2 trials over numeric features at gamma <= 0.5 without a
# history (the third is the model's), 3 at gamma 1 or with --initial 3.
design_of() {  # design_of ARGS...: how many of problem b's trials were the design's
  "$at" $r --table "$good" --features nodes --seeds 1 --budget 3 --trace "$@" 2>&1 |
    sed -n '/^b bo seed 1/,/^[^ ]/p' | grep -Ec '^ +[1-3] design +nodes='
}
if [ "$(design_of --gamma 0.5)" = 2 ] && [ "$(design_of --gamma 0.5 --initial auto)" = 2 ] &&
   [ "$(design_of --gamma 0.5 --initial 3)" = 3 ] && [ "$(design_of --gamma 1)" = 3 ]; then
  echo "ok: the initial design is 2 trials at gamma 0.5, 3 at gamma 1 or with --initial 3"
else
  echo "FAIL: the initial design's size: $(design_of --gamma 0.5) $(design_of --gamma 0.5 --initial 3) $(design_of --gamma 1)"
  fail=1
fi
for args in "--help" "replay --help" "help replay"; do
  # shellcheck disable=SC2086
  if "$at" $args >"$tmp/out" 2>&1 && grep -qi '^usage: autotune' "$tmp/out"; then
    echo "ok: autotune $args"
  else
    echo "FAIL: autotune $args"; cat "$tmp/out"; fail=1
  fi
done
"$at" >/dev/null 2>&1; rc=$?
if [ "$rc" = 2 ]; then echo "ok: no command exits 2"; else echo "FAIL: no command exits $rc"; fail=1; fi
# The run time's form: on by default where the columns have their usual names (a node count,
# vCPUs and GiB per node of VM types), with a margin of 0.2; the same search as the columns
# named, and not the search without it.  Workloads of its form: 8 node counts x 3 VM sizes x 3
# memory ratios; failures below a third of a 200 GiB data set.
awk 'BEGIN { print "app,nodes,vcpus_per_node,mem_gib_per_node,time_s,cost,ok"
  split("2 4 6 8 12 16 24 32", ns, " ")
  for (a = 0; a < 2; a++) for (i = 1; i <= 8; i++) for (v = 2; v <= 8; v *= 2) for (g = 2; g <= 8; g *= 2) {
    n = ns[i]; c = n * v; m = c * g; d = 200 * (1 + a)
    t = 60 + 2e5 / c ^ 0.9 + 3 * n; if (m < d) t *= 2.5 * sqrt(d / m); if (g < 3) t *= 1 + 0.1 * (3 - g)
    app = a ? "b" : "a"
    if (m >= d / 3) printf "%s,%d,%d,%d,%.1f,%.4f,1\n", app, n, v, g * v, t, n * (0.05 * v + 0.01 * g * v) * t / 3600
    else printf "%s,%d,%d,%d,,,0\n", app, n, v, g * v } }' >"$tmp/form.csv"
mv "$tmp/cliff.csv" "$tmp/cliff.kept"; cp "$tmp/form.csv" "$tmp/cliff.csv"
default_is "the run time's form" "--gamma 1 --features nodes,vcpus_per_node,mem_gib_per_node" \
  "--run-time-model nodes=nodes,cpus-per-node=vcpus_per_node,mem-per-node=mem_gib_per_node --run-time-margin 0.1" \
  "--run-time-model off"
default_is "the run time's form's margin" "--gamma 1 --features nodes,vcpus_per_node,mem_gib_per_node" \
  "--run-time-margin 0.1" "--run-time-margin -1"
mv "$tmp/cliff.kept" "$tmp/cliff.csv"
exit $fail
