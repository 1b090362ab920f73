# Shared by the scripts in this folder: paths, messages.  Source it, do not run it.
# shellcheck shell=bash
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Where scripts/build configures, builds and installs (a VPATH build; the tree stays clean).
AUTOTUNE_BUILD=${AUTOTUNE_BUILD:-$top/build}
AUTOTUNE_PREFIX=${AUTOTUNE_PREFIX:-$AUTOTUNE_BUILD/inst}
# The local cluster's run directory: generated config, state, logs, pid files.
AUTOTUNE_RUN=${AUTOTUNE_RUN:-$top/.run}
export AUTOTUNE_BUILD AUTOTUNE_PREFIX AUTOTUNE_RUN
# munged is the machine's, shared by every local cluster: whoever stops it (job_ends.test) first
# takes this lock exclusively; a cluster's run beside others (scripts/test's second cluster, CI's
# demo) holds it shared.
AUTOTUNE_MUNGE_LOCK=${AUTOTUNE_MUNGE_LOCK:-/run/lock/autotune-munge.lock}
export AUTOTUNE_MUNGE_LOCK
# hold_munge_lock: a process of its own holds the lock shared until killed (its pid in
# $munge_holder); the caller's children (daemons among them) never inherit the lock.
hold_munge_lock() {
  flock -s "$AUTOTUNE_MUNGE_LOCK" true      # returns once no one holds it exclusively
  ( exec 9>>"$AUTOTUNE_MUNGE_LOCK" && flock -s 9 && exec sleep infinity ) &
  munge_holder=$!
}

_prog=$(basename "$0")
say() { printf '[%s] %s\n' "$_prog" "$*" >&2; }
die() { printf '[%s] error: %s\n' "$_prog" "$*" >&2; exit 1; }
# Print a command, then run it (the demo and test scripts show every step they take).
step() { printf '[%s] $ %s\n' "$_prog" "$*" >&2; "$@"; }
