# Helpers for the integration and MPI tests: TAP output and Slurm job handling.
# Source it; the runner (tests/run-integration) has already pointed SLURM_CONF at the cluster.
# shellcheck shell=bash
set -u
_n=0
_failed=0
top=${top:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
AUTOTUNE_BUILD=${AUTOTUNE_BUILD:-$top/build}
[ -n "${SLURM_CONF:-}" ] || { echo "Bail out! SLURM_CONF is not set: run through scripts/test or tests/run-integration"; exit 1; }
# A backstop against hangs: every job and step of a test ends within 10 minutes, and a step
# whose task dies takes the others with it.
export SBATCH_TIMELIMIT=10 SALLOC_TIMELIMIT=10 SLURM_TIMELIMIT=10 SLURM_KILL_BAD_EXIT=1
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/autotune-test.XXXXXX")
chmod 0755 "$SCRATCH"
trap 'rm -rf "$SCRATCH"' EXIT

ok() { _n=$((_n + 1)); echo "ok $_n - $1"; }
not_ok() {
  _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $1"
  shift; [ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/#   /'
  return 0
}
# check DESC CMD...: passes when CMD exits 0
check() { local d=$1; shift; if "$@" >"$SCRATCH/check.out" 2>&1; then ok "$d"; else not_ok "$d" "command: $*" "$(tail -n 20 "$SCRATCH/check.out")"; fi; }
# expect_eq DESC ACTUAL EXPECTED
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $3" "actual:   $2"; fi; }
# expect_match DESC TEXT REGEX (extended regex)
expect_match() { if printf '%s' "$2" | grep -Eq -- "$3"; then ok "$1"; else not_ok "$1" "expected to match: $3" "actual: $2"; fi; }
expect_no_match() { if printf '%s' "$2" | grep -Eq -- "$3"; then not_ok "$1" "must not match: $3" "actual: $2"; else ok "$1"; fi; }
done_testing() { echo "1..$_n"; [ $_failed = 0 ]; exit $?; }

# A field of `scontrol show job -o` (e.g. job_field 12 JobState).  Values with spaces are cut at
# the next " Key=".
job_field() {
  scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | awk -v k="$2" 'index($0, k "=") == 1 { sub(/^[^=]*=/, ""); print; exit }'
}
# The job's AdminComment (on a line of its own in `scontrol show job`), trailing blanks removed.
admin_comment() { scontrol show job "$1" 2>/dev/null | sed -n 's/^ *AdminComment=\(.*[^ ]\) *$/\1/p'; }

# wait_job ID [TIMEOUT_S]: wait until the job has ended; prints its final state.
wait_job() {
  local id=$1 t=${2:-60} i st
  for i in $(seq $((t * 5))); do
    st=$(job_field "$id" JobState)
    case "$st" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED) echo "$st"; return 0 ;; esac
    # A job slurmctld does not know (purged, lost with its state, or never submitted: an empty
    # array id gives "_1", "Job 0_1 not found") never ends: say so at once.
    if [ -z "$st" ] && scontrol show job "$id" 2>&1 | grep -qE "Invalid job id|^Job [0-9_]+ not found"; then echo GONE; return 1; fi
    sleep 0.2
  done
  echo "${st:-UNKNOWN}(timeout)"; return 1
}

# wait_until SECONDS CMD...: runs CMD every 0.2 s until it succeeds (returns 0) or SECONDS have
# passed (returns 1).  By the clock, not by a count of tries: on a loaded machine each try of
# a command that starts the CLI takes longer, and ingest lags, both at once.
wait_until() {
  local end=$((SECONDS + $1)); shift
  while :; do
    "$@" && return 0
    [ $SECONDS -ge "$end" ] && return 1
    sleep 0.2
  done
}

# A test that brings up a cluster of its own moves the installed setuid autotune's site files
# ($prefix/etc/{slurm,autotune}.conf, see scripts/cluster) to it: save_site_files before, and
# restore_site_files when it ends, so the tests after it find the shared cluster's again.
_site_etc=${AUTOTUNE_SYSCONFDIR:-${AUTOTUNE_PREFIX:-$AUTOTUNE_BUILD/inst}/etc}
save_site_files() { _site_saved=$(for f in slurm.conf autotune.conf; do printf '%s %s\n' "$f" "$(readlink "$_site_etc/$f" 2>/dev/null)"; done); }
restore_site_files() {
  local f t
  while read -r f t; do [ -n "$f" ] && [ -n "$t" ] && ln -sfn "$t" "$_site_etc/$f"; done <<<"${_site_saved:-}"
}

# ingest_diagnostics [JOBID...]: what a test whose trials were not recorded prints (as TAP
# comments): each job's state and AdminComment as slurmctld has them, what ingest has still to
# take (the spool, and what it set aside) and what it did (its log's lines on these jobs, then
# its last 30 lines), and slurmctld's log lines on these jobs and from prep/autotune.
ingest_diagnostics() {
  local sd j log
  sd=$(sed -n 's/^StateDir=//p' "$(dirname "$SLURM_CONF")/autotune.conf")
  {
    echo "at $(date +%T):"
    for j in "$@"; do
      echo "job $j: $(job_field "$j" JobState) submit=$(job_field "$j" SubmitTime) start=$(job_field "$j" StartTime)" \
        "end=$(job_field "$j" EndTime) restarts=$(job_field "$j" Restarts) nodes=$(job_field "$j" NodeList)"
      echo "  AdminComment=$(admin_comment "$j")"
    done
    squeue -a -t all -o "%i %j %T %r %S %e" 2>&1 | tail -n 12
    echo "spool: $(ls -A "$sd/spool" 2>&1 | tr '\n' ' ')"
    [ -d "$sd/spool/bad" ] && echo "spool/bad: $(ls -A "$sd/spool/bad" | tr '\n' ' ')"
    for j in "$@"; do grep -E "job $j[ :]" "$sd/ingest.log" 2>&1 | tail -n 8; done
    echo "ingest.log, last lines:"
    tail -n 30 "$sd/ingest.log" 2>&1
    # What slurmctld said of these jobs, and anything prep/autotune logged (an end it refused).
    log=$(sed -n 's/^SlurmctldLogFile=//p' "$SLURM_CONF")
    echo "slurmctld.log ($log):"
    for j in "$@"; do grep -E "JobId=$j[^0-9]" "$log" 2>&1 | tail -n 6; done
    grep -E "prep/autotune|autotune.*error" "$log" 2>&1 | tail -n 10
  } | sed 's/^/#   /'
}
