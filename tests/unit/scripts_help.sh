#!/bin/sh
# The scripts of scripts/ and bench/ (every executable one that is not a compiled benchmark), as a
# user first runs them: --help (and -h) prints the usage on stdout and exits 0; an unknown option
# is refused with one line on stderr that names it, a non-zero exit and nothing on stdout.  Neither
# may start anything: the commands that would (Slurm's daemons and clients, MPI, make, autoreconf,
# apt) are stubs here that record being run, AUTOTUNE_RUN and AUTOTUNE_BUILD point at directories
# that must not appear, and each run gets 20 seconds.
set -u
src=$(cd "${top_srcdir:-.}" && pwd)
fail=0
tmp=$(mktemp -d /tmp/scripts-help-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
for c in sbatch srun salloc squeue scontrol scancel sinfo sacct sacctmgr sdiag slurmctld slurmd \
         slurmdbd slurmrestd munged mungekey mpirun mpiexec make autoreconf apt-get dpkg-query nice \
         mariadbd mysqld mysql_install_db clang++; do
  printf '#!/bin/sh\necho %s >> "%s/called"\nexit 1\n' "$c" "$tmp" > "$tmp/bin/$c"
  chmod +x "$tmp/bin/$c"
done
PATH=$tmp/bin:$PATH
AUTOTUNE_RUN=$tmp/run AUTOTUNE_BUILD=$tmp/build
export PATH AUTOTUNE_RUN AUTOTUNE_BUILD
unset AUTOTUNE_PREFIX

# started WHAT: FAIL if the last run started a stubbed command or made a run or build directory.
started() {
  if [ -s "$tmp/called" ]; then
    echo "FAIL: $1 ran $(sort -u "$tmp/called" | tr '\n' ' ')"; fail=1
  fi
  [ -e "$tmp/run" ] && { echo "FAIL: $1 made its run directory (\$AUTOTUNE_RUN)"; fail=1; }
  [ -e "$tmp/build" ] && { echo "FAIL: $1 made its build directory (\$AUTOTUNE_BUILD)"; fail=1; }
  rm -rf "$tmp/called" "$tmp/run" "$tmp/build"
}

n=0
for s in "$src"/scripts/* "$src"/bench/*; do
  [ -f "$s" ] && [ -x "$s" ] || continue
  # Scripts only: a compiled benchmark (or libtool's wrapper of one, in a build in the tree) is not.
  [ "$(head -c 2 "$s")" = '#!' ] || continue
  head -n 5 "$s" | grep -q 'wrapper script' && continue
  rel=${s#"$src"/}; name=${rel##*/}
  n=$((n + 1))

  timeout 20 "$s" --help >"$tmp/help" 2>"$tmp/err"; rc=$?
  if [ "$rc" != 0 ]; then
    echo "FAIL: $rel --help: exit status $rc"; sed 's/^/    /' "$tmp/err" | head -n 5; fail=1
  elif ! grep -Eiq "^(usage|$rel|$name)" "$tmp/help"; then
    echo "FAIL: $rel --help: no line starts with 'usage' or the script's name on stdout"; fail=1
  else
    echo "ok: $rel --help ($(wc -l < "$tmp/help") lines)"
  fi
  started "$rel --help"

  timeout 20 "$s" -h >"$tmp/out" 2>"$tmp/err"; rc=$?
  if [ "$rc" != 0 ] || ! cmp -s "$tmp/help" "$tmp/out"; then
    echo "FAIL: $rel -h: exit status $rc, or not what --help prints"; fail=1
  else
    echo "ok: $rel -h"
  fi
  started "$rel -h"

  timeout 20 "$s" --bogus-option >"$tmp/out" 2>"$tmp/err"; rc=$?
  if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
    echo "FAIL: $rel --bogus-option: exit status $rc"; fail=1
  elif [ "$(wc -l < "$tmp/err")" != 1 ] || ! grep -q -e "'--bogus-option'" -e ': --bogus-option' "$tmp/err"; then
    echo "FAIL: $rel --bogus-option: not one line on stderr naming the option:"; sed 's/^/    /' "$tmp/err" | head -n 5; fail=1
  elif [ -s "$tmp/out" ]; then
    echo "FAIL: $rel --bogus-option: wrote to stdout"; fail=1
  else
    echo "ok: $rel --bogus-option refused: $(cat "$tmp/err")"
  fi
  started "$rel --bogus-option"
done
[ "$n" -gt 0 ] && [ -x "$src/scripts/build" ] ||
  { echo "FAIL: $n scripts found under $src/scripts and $src/bench (scripts/build among them?)"; fail=1; }
exit $fail
