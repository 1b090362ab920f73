#!/bin/sh
# configure must stop with a message that says what to do when the Slurm source tree is missing
# or is not the installed version.
set -u
src=$(cd "${top_srcdir:-.}" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

expect() {  # expect DESC REGEXES CONFIGURE-ARGS...: REGEXES one per line, each must match
  desc=$1; res=$2; shift 2
  mkdir -p "$tmp/b" && cd "$tmp/b" || exit 1
  # One cache of the checks before the Slurm source's (which is not cached) for every run.
  if "$src/configure" -q --cache-file="$tmp/config.cache" "$@" >"$tmp/out" 2>&1; then
    echo "FAIL: $desc: configure succeeded"; fail=1
  else
    printf '%s\n' "$res" | while IFS= read -r re; do
      if grep -Eq "$re" "$tmp/out"; then
        echo "ok: $desc: $(grep -E "$re" "$tmp/out" | head -n1)"
      else
        echo "FAIL: $desc: message does not match '$re':"; tail -n 5 "$tmp/out"; exit 1
      fi
    done || fail=1
  fi
  cd / && rm -rf "$tmp/b"
}

# The message names the missing tree and says what to do.
expect "missing source tree" "no Slurm source tree at '/nonexistent'
Run scripts/setup" --with-slurm-src=/nonexistent

# A tree that looks like Slurm but has another version.
mkdir -p "$tmp/fake/src/slurmctld" "$tmp/fake/src/common"
touch "$tmp/fake/src/slurmctld/slurmctld.h" "$tmp/fake/src/common/select.h"
printf '  Name:\tslurm\n  Version:\t21.08.1\n' > "$tmp/fake/META"
expect "version mismatch" "is version '21\.08\.1' but the installed Slurm is" --with-slurm-src="$tmp/fake"
exit $fail
