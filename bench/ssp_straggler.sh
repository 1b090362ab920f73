#!/usr/bin/env bash
# bench/ssp_straggler.sh — libssp against the MPI_Allreduce baseline on logistic regression
# (Fashion-MNIST), run side by side, repeated, medians and ratios printed.
#
# Variants (same data, epochs, batch size and learning rate; each sample moves the model by
# lr/batch times its gradient in all three):
#   SSP(2)     examples/logreg --staleness 2     (1 server rank, the others workers)
#   BSP        examples/logreg --staleness 0
#   allreduce  examples/logreg_allreduce         (every rank computes; MPI_Allreduce per step)
# Scenarios:
#   straggler  the last rank's batches take FACTOR (2) times as long (an injected sleep)
#   none       no injected delay
# Each repeat runs the six (scenario, variant) pairs back to back; ratios are taken within a
# repeat (same load from anything else on the machine) and their median is reported.
# Figures per run (from the programs' "final:" line): time to reach TARGET test accuracy (model
# snapshots every 0.1 s of training, evaluated on all 10000 test images after the run, so the
# evaluation does not slow training), samples/s, final test accuracy.
#
# usage: bench/ssp_straggler.sh   (no arguments)
# Environment: NP (ranks, 4), AR_NP (ranks of the allreduce baseline, NP), REPEATS (3),
# EPOCHS (4), LR (0.01), BATCH (32), TARGET (0.80), FACTOR (2), LAUNCH (mpirun | srun: srun
# --mpi=pmix -N NP on a running local cluster, after eval "$(scripts/cluster env)"),
# AUTOTUNE_BUILD (the build directory, default build/).
# The ranks are oversubscribed on a 2-core machine: mpirun gets --oversubscribe and
# mpi_yield_when_idle=1 for every variant.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
no_arguments "$@"
B=$AUTOTUNE_BUILD
NP=${NP:-4}; AR_NP=${AR_NP:-$NP}; REPEATS=${REPEATS:-3}; EPOCHS=${EPOCHS:-4}; LR=${LR:-0.01}
BATCH=${BATCH:-32}; TARGET=${TARGET:-0.80}; FACTOR=${FACTOR:-2}; LAUNCH=${LAUNCH:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for p in "$B/examples/logreg" "$B/examples/logreg_allreduce"; do
  [ -x "$p" ] || { echo "ssp_straggler: missing $p (run scripts/build)" >&2; exit 1; }
done
out=$(mktemp -d /tmp/ssp-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT

launch() {  # launch NP PROGRAM ARGS...
  local np=$1; shift
  if [ "$LAUNCH" = srun ]; then
    # The cluster's nodes share this machine's cores: let waiting ranks yield (as mpirun
    # --oversubscribe does), or a busy-polling MPI_Allreduce starves the ranks that compute.
    OMPI_MCA_mpi_yield_when_idle=1 timeout 600 srun --mpi=pmix -N "$np" -n "$np" "$@"
  else
    (unset SLURM_JOBID SLURM_JOB_ID; timeout 600 mpirun --oversubscribe --mca btl self,vader,tcp \
       --mca mpi_yield_when_idle 1 -np "$np" "$@")
  fi
}
common="--epochs $EPOCHS --lr $LR --batch $BATCH --target-acc $TARGET --eval-interval 0.1"
run() {  # run SCENARIO VARIANT REPEAT
  local sc=$1 v=$2 i=$3 strag=""
  if [ "$sc" = straggler ]; then
    local r=$((NP - 1)); [ "$v" = allreduce ] && r=$((AR_NP - 1))
    strag="--straggler-rank $r --straggler-factor $FACTOR"
  fi
  local line
  # shellcheck disable=SC2086
  case $v in
    ssp) line=$(launch "$NP" "$B/examples/logreg" $common --staleness 2 $strag 2>/dev/null | grep '^final:') ;;
    bsp) line=$(launch "$NP" "$B/examples/logreg" $common --staleness 0 $strag 2>/dev/null | grep '^final:') ;;
    allreduce) line=$(launch "$AR_NP" "$B/examples/logreg_allreduce" $common $strag 2>/dev/null | grep '^final:') ;;
  esac
  echo "$line" >> "$out/$sc.$v"
  printf '  %-9s %-9s run %d: %s\n' "$sc" "$v" "$i" \
    "$(echo "$line" | tr ' ' '\n' | grep -E '^(time_to_target_s|samples_per_s|test_acc|tasks_per_worker)=' | tr '\n' ' ')"
}
median() {  # median FILE FIELD
  tr ' ' '\n' < "$1" | sed -n "s/^$2=//p" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "ssp_straggler: NP=$NP (allreduce $AR_NP) REPEATS=$REPEATS EPOCHS=$EPOCHS LR=$LR BATCH=$BATCH TARGET=$TARGET FACTOR=$FACTOR LAUNCH=$LAUNCH on $(nproc) cores"
for i in $(seq "$REPEATS"); do
  for sc in straggler none; do
    for v in ssp bsp allreduce; do run "$sc" "$v" "$i"; done
  done
done
echo
printf '%-10s %-10s %18s %14s %10s\n' scenario variant time_to_target_s samples_per_s test_acc
for sc in straggler none; do
  for v in ssp bsp allreduce; do
    printf '%-10s %-10s %18s %14s %10s\n' "$sc" "$v" "$(median "$out/$sc.$v" time_to_target_s)" \
      "$(median "$out/$sc.$v" samples_per_s)" "$(median "$out/$sc.$v" test_acc)"
  done
done
# Per-repeat ratios: the three variants of a repeat run back to back, under the same load from
# whatever else shares the machine; the median of those ratios is what is reported.
nth() {  # nth FILE FIELD N: FIELD of the N-th run
  sed -n "${3}p" "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
ratios() {  # ratios SC_A VAR_A SC_B VAR_B FIELD: "median [min, max]" of A_i / B_i
  local i a b
  for i in $(seq "$REPEATS"); do
    a=$(nth "$out/$1.$2" "$5" "$i"); b=$(nth "$out/$3.$4" "$5" "$i")
    awk -v a="$a" -v b="$b" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f\n", a / b }'
  done | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "n/a (target not reached)"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f  [%.2f .. %.2f over %d repeats]", m, v[1], v[NR], NR }'
}
diffs() {  # diffs: median of 100 * (SSP - BSP) final test accuracy, no straggler
  local i a b
  for i in $(seq "$REPEATS"); do
    a=$(nth "$out/none.ssp" test_acc "$i"); b=$(nth "$out/none.bsp" test_acc "$i")
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f\n", 100 * (a - b) }'
  done | sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%+.2f points  [%+.2f .. %+.2f]", m, v[1], v[NR] }'
}
echo
echo "ratios (median of the per-repeat ratios; a run that did not reach the target is left out):"
echo "  straggler, time to ${TARGET} accuracy:  SSP(2)/BSP       = $(ratios straggler ssp straggler bsp time_to_target_s)   (goal <= 0.7)"
echo "  straggler, time to ${TARGET} accuracy:  SSP(2)/allreduce = $(ratios straggler ssp straggler allreduce time_to_target_s)   (goal <= 0.7)"
echo "  no straggler, samples/s:           SSP(2)/allreduce = $(ratios none ssp none allreduce samples_per_s)   (goal >= 0.8)"
echo "  no straggler, final test accuracy: SSP(2) - BSP     = $(diffs)   (goal within 0.5 points)"
