# Shared by the scripts in this folder: paths, messages.  Source it, do not run it.
# shellcheck shell=bash
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Where scripts/build configures, builds and installs (a VPATH build; the tree stays clean).
AUTOTUNE_BUILD=${AUTOTUNE_BUILD:-$top/build}
AUTOTUNE_PREFIX=${AUTOTUNE_PREFIX:-$AUTOTUNE_BUILD/inst}
# The local cluster's run directory: generated config, state, logs, pid files.
AUTOTUNE_RUN=${AUTOTUNE_RUN:-$top/.run}
export AUTOTUNE_BUILD AUTOTUNE_PREFIX AUTOTUNE_RUN

_prog=$(basename "$0")
say() { printf '[%s] %s\n' "$_prog" "$*" >&2; }
die() { printf '[%s] error: %s\n' "$_prog" "$*" >&2; exit 1; }
# Print a command, then run it (the demo and test scripts show every step they take).
step() { printf '[%s] $ %s\n' "$_prog" "$*" >&2; "$@"; }
