# Shared by the scripts here and in bench/: paths, messages, usage.  Source it, do not run it.
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
# The shell of configure, of the Makefiles' recipes and of libtool (a shell script run for every
# object and link): $CONFIG_SHELL, else dash where there is one, else configure's own choice.
# Under dash, configure took 22 s against 30 under bash here, and libtool's compile of an empty
# file 0.17 CPU seconds against 0.38.  configure_cmd: the command that runs configure so.
if [ -z "${CONFIG_SHELL:-}" ] && [ -x /bin/dash ]; then export CONFIG_SHELL=/bin/dash; fi
# shellcheck disable=SC2034  # used by the scripts that source this file
configure_cmd=(${CONFIG_SHELL:+"$CONFIG_SHELL"} "$top/configure")
# Print the running script's usage, for -h and --help: its leading comment block (the lines after
# the shebang up to the first line that is not a comment), without the "# ".
usage_from_header() {
  awk 'NR == 1 && /^#!/ { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}
# For a script that takes no arguments (its environment sets it up): -h or --help prints its
# usage and exits; any other argument is an error.  Call it as: no_arguments "$@"
no_arguments() {
  [ $# -eq 0 ] && return 0
  case "$1" in
    -h|--help) usage_from_header; exit 0 ;;
    -*) die "unknown option '$1' (allowed: -h, --help; the environment variables in --help set up the rest)" ;;
    *) die "unexpected argument '$1' (allowed: -h, --help; the environment variables in --help set up the rest)" ;;
  esac
}
