#!/bin/sh
# configure must stop with a message that says what to do when the Slurm source tree is missing
# or is not the installed version.
set -u
src=$(cd "${top_srcdir:-.}" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

expect() {  # expect DESC REGEX CONFIGURE-ARGS...
  desc=$1; re=$2; shift 2
  mkdir -p "$tmp/b" && cd "$tmp/b" || exit 1
  # One cache of the checks before the Slurm source's (which is not cached) for every run.
  if "$src/configure" -q --cache-file="$tmp/config.cache" "$@" >"$tmp/out" 2>&1; then
    echo "FAIL: $desc: configure succeeded"; fail=1
  elif grep -Eq "$re" "$tmp/out"; then
    echo "ok: $desc: $(grep -E "$re" "$tmp/out" | head -n1)"
  else
    echo "FAIL: $desc: message does not match '$re':"; tail -n 5 "$tmp/out"; fail=1
  fi
  cd / && rm -rf "$tmp/b"
}

expect "missing source tree" "no Slurm source tree at '/nonexistent'" --with-slurm-src=/nonexistent
expect "missing source tree says what to do" "Run scripts/setup" --with-slurm-src=/nonexistent

# A tree that looks like Slurm but has another version.
mkdir -p "$tmp/fake/src/slurmctld" "$tmp/fake/src/common"
touch "$tmp/fake/src/slurmctld/slurmctld.h" "$tmp/fake/src/common/select.h"
printf '  Name:\tslurm\n  Version:\t21.08.1\n' > "$tmp/fake/META"
expect "version mismatch" "is version '21\.08\.1' but the installed Slurm is" --with-slurm-src="$tmp/fake"
exit $fail
