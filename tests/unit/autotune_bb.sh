#!/bin/sh
# autotune-bb on real tiers (a pmem tier in /dev/shm, a disk tier in a temporary directory):
# a table of bad inputs, each refused with one line and a non-zero status and nothing created;
# then, as root, a buffer owned by an unprivileged user: mode 0700, a file that user cannot read
# is not staged in whatever root may read, stage-in / get / stage-out round trip, teardown.
# As root (as CI runs `make check`) everything runs.  As any other user the checks that need
# root (creating buffers: chown to the job's user, the --uid/--gid requests) are skipped: the
# others still run, and if they pass the test exits 77, which automake reports as SKIP.
set -u
b=${top_builddir:-.}
bb=$(cd "$b" && pwd)/tools/autotune-bb
fail=0
tmp=$(mktemp -d /tmp/autotune-bb-test.XXXXXX)
shm=$(mktemp -d /dev/shm/autotune-bb-test.XXXXXX)
trap 'rm -rf "$tmp" "$shm"' EXIT
chmod 0755 "$tmp" "$shm"
conf=$tmp/autotune.conf
cat > "$conf" <<EOF
StateDir=$tmp/state
Tier=pmem Kind=pmem Path=$shm/pmem Capacity=64M Bandwidth=3G/s
Tier=disk Kind=disk Path=$tmp/disk Capacity=256M Bandwidth=1G/s
EOF
chmod 0644 "$conf"

ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; shift; for l in "$@"; do echo "    $l"; done; fail=1; }

# expect STATUS MESSAGE ARGS...: autotune-bb exits STATUS and prints exactly one line, MESSAGE.
expect() {
  want_rc=$1 want=$2; shift 2
  out=$("$bb" --conf "$conf" "$@" 2>&1); rc=$?
  lines=$(printf '%s\n' "$out" | wc -l)
  if [ "$rc" = "$want_rc" ] && [ "$out" = "$want" ] && [ "$lines" = 1 ]; then ok "$*"
  else bad "autotune-bb $*" "status $rc (want $want_rc)" "got:  $out" "want: $want"; fi
}

expect 2 "autotune-bb: no command given (see --help)"
expect 2 "autotune-bb: unknown command 'mkbuf'; allowed: create, destroy, stage-in, stage-out, pools, status, summary, put, get, ls, check, rm" mkbuf
expect 2 "autotune-bb: create: unknown option '--size' (see --help)" create --size 1G
expect 2 "autotune-bb: create: --job needs a value" create --job
expect 2 "autotune-bb: stage-in: expected 2 arguments, got 1 (see --help)" stage-in --job 3 /etc/hosts
if [ "$(id -u)" = 0 ]; then
  expect 1 "autotune-bb: --capacity: '2X' has an unknown unit 'X'; allowed: a number with an optional unit K, M, G or T (e.g. 512M, 2G)" \
    create --job 3 --uid 0 --gid 0 --capacity 2X
  expect 1 "autotune-bb: --tier: 'ssd' is not a tier of $conf; configured: pmem, disk" \
    create --job 3 --uid 0 --gid 0 --capacity 8M --tier ssd=4M
  expect 1 "autotune-bb: --capacity: the tier shares (16M) are larger than the buffer's capacity 8M" \
    create --job 3 --uid 0 --gid 0 --capacity 8M --pmem 16M
  expect 1 "autotune-bb: tier 'pmem': 128M requested, 64M of 64M left" \
    create --job 3 --uid 0 --gid 0 --capacity 128M --pmem 128M
  expect 1 "autotune-bb: --placement: 'fastest' is not a placement policy; allowed: auto, bandwidth-proportional, fill-fastest" \
    create --job 3 --uid 0 --gid 0 --capacity 8M --placement fastest
  expect 1 "autotune-bb: --job: '0' is out of range; allowed: a whole number from 1 to 4294967294" \
    create --job 0 --uid 0 --gid 0 --capacity 8M
  [ -z "$(ls "$tmp/state/bb" 2>/dev/null | grep job)" ] && ok "no buffer was created by the bad requests" \
    || bad "bad requests left a buffer" "$(ls "$tmp/state/bb")"
fi
expect 1 "autotune-bb: job 41 has no burst buffer" stage-in --job 41 /etc/hosts in
expect 1 "autotune-bb: stage-in KEY: 'a/../x' has an empty, '.' or '..' component; allowed: 1-200 characters from A-Z a-z 0-9 . _ - and '/' between non-empty components other than '.' and '..', not starting with '.'" \
  stage-in --job 41 /etc/hosts a/../x
expect 1 "autotune-bb: stage-in SOURCE: 'in.dat' is not an absolute path" stage-in --job 41 in.dat in

if [ "$(id -u)" != 0 ]; then
  [ "$fail" = 0 ] || exit 1
  echo "SKIP: not root: the bad create requests and the buffer of an unprivileged user (chown to the job's user) were not checked; the other checks passed"
  exit 77
fi

user=nobody
uid=$(id -u $user) gid=$(id -g $user)
out=$("$bb" --conf "$conf" create --job 42 --uid "$uid" --gid "$gid" --capacity 32M --pmem 8M 2>&1) \
  && ok "create: $out" || bad "create" "$out"
for d in "$shm/pmem/job.42" "$tmp/disk/job.42"; do
  got=$(stat -c '%u:%g %a' "$d" 2>&1)
  [ "$got" = "$uid:$gid 700" ] && ok "$d is $user's, mode 0700" || bad "$d owner and mode" "got $got"
done
head -c 3000000 /dev/urandom > "$tmp/in.dat"; chmod 0644 "$tmp/in.dat"
cp "$tmp/in.dat" "$tmp/secret.dat"; chmod 0600 "$tmp/secret.dat"   # root can read it, nobody cannot
expect 1 "autotune-bb: stage-in SOURCE: cannot read '$tmp/secret.dat' as uid $uid (the job's user): Permission denied" \
  stage-in --job 42 "$tmp/secret.dat" secret
out=$("$bb" --conf "$conf" stage-in --job 42 "$tmp/in.dat" data/in.dat 2>&1) && ok "$out" || bad "stage-in" "$out"
( cd /tmp && runuser -u $user -- env AUTOTUNE_BB_JOB=42 "$bb" --conf "$conf" get data/in.dat - ) | cmp -s - "$tmp/in.dat" \
  && ok "the job's user reads the staged-in object back" || bad "get as $user"
files=$(find "$shm/pmem/job.42" "$tmp/disk/job.42" ! -user $user | head -n 3)
[ -z "$files" ] && ok "every file of the buffer is $user's" || bad "files not owned by $user" "$files"
mkdir "$tmp/out" && chown "$uid:$gid" "$tmp/out"
out=$("$bb" --conf "$conf" stage-out --job 42 data/in.dat "$tmp/out/result.dat" 2>&1) && ok "$out" || bad "stage-out" "$out"
cmp -s "$tmp/out/result.dat" "$tmp/in.dat" && ok "staged-out bytes are the staged-in bytes" || bad "stage-out content"
got=$(stat -c '%u %a' "$tmp/out/result.dat")
[ "$got" = "$uid 600" ] && ok "the staged-out file is $user's, mode 0600" || bad "stage-out owner/mode" "got $got"
expect 1 "autotune-bb: stage-out DEST: cannot write '$tmp/result.dat' as uid $uid: Permission denied" \
  stage-out --job 42 data/in.dat "$tmp/result.dat"
[ ! -e "$tmp/result.dat" ] && ok "nothing written where the job's user may not write" || bad "root's rights were used"
expect 1 "autotune-bb: stage-out KEY: no object 'nope' in the buffer of job 42" stage-out --job 42 nope "$tmp/out/x"
# A directory (e.g. a libssp checkpoint) staged in under a key prefix and out again, in key order.
mkdir -p "$tmp/ck/sub" && head -c 2000000 /dev/urandom > "$tmp/ck/c000000000010.table-w.shard-0"
echo c000000000010 > "$tmp/ck/latest"; echo nested > "$tmp/ck/sub/x"; chmod -R a+rX "$tmp/ck"
out=$("$bb" --conf "$conf" stage-in --job 42 "$tmp/ck" ckpt/ 2>&1) && ok "$out" || bad "stage-in of a directory" "$out"
got=$(cd /tmp && runuser -u $user -- env AUTOTUNE_BB_JOB=42 "$bb" --conf "$conf" ls ckpt/ | cut -f1,2 | tr '\t\n' ' /')
[ "$got" = "ckpt/c000000000010.table-w.shard-0 2000000/ckpt/latest 14/ckpt/sub/x 7/" ] \
  && ok "every file under the directory is an object under ckpt/" || bad "objects staged in" "got $got"
out=$("$bb" --conf "$conf" stage-out --job 42 ckpt/ "$tmp/out/ck" 2>&1) && ok "$out" || bad "stage-out of a prefix" "$out"
diff -r "$tmp/ck" "$tmp/out/ck" >/dev/null && ok "the staged-out directory holds the same files" || bad "stage-out of a prefix: content" "$(diff -r "$tmp/ck" "$tmp/out/ck" 2>&1 | head -3)"
got=$(stat -c '%u %a' "$tmp/out/ck" "$tmp/out/ck/sub" "$tmp/out/ck/latest" | tr '\n' ' ')
[ "$got" = "$uid 700 $uid 700 $uid 600 " ] && ok "staged-out directories are $user's, mode 0700, files 0600" || bad "stage-out owner/mode" "got $got"
expect 1 "autotune-bb: stage-in SOURCE: '$tmp/ck' is a directory; stage a directory into a KEY ending in '/'" \
  stage-in --job 42 "$tmp/ck" ckpt2
expect 1 "autotune-bb: stage-in SOURCE: '$tmp/in.dat' is not a directory (the KEY 'x/' ends in '/')" \
  stage-in --job 42 "$tmp/in.dat" x/
ln -s /etc/passwd "$tmp/ck/link"
expect 1 "autotune-bb: stage-in SOURCE: '$tmp/ck/link' is not a regular file or a directory (symbolic links are not followed)" \
  stage-in --job 42 "$tmp/ck" ckpt3/
expect 1 "autotune-bb: stage-out KEY: no object under 'none/' in the buffer of job 42" stage-out --job 42 none/ "$tmp/out/none"
expect 1 "autotune-bb: stage-out DEST: cannot create the directory '$tmp/ck2' as uid $uid: Permission denied" \
  stage-out --job 42 ckpt/ "$tmp/ck2"
# The pmem pool deleted under the buffer: ls and check name what is missing; stage-out copies the
# rest, lists the lost objects in DEST.incomplete and fails; once they are removed, a stage-out
# succeeds and removes the old report.
rm -f "$shm/pmem/job.42/pool"
as_job() { (cd /tmp && runuser -u $user -- env AUTOTUNE_BB_JOB=42 "$bb" --conf "$conf" "$@"); }
listing=$(as_job ls ckpt/ 2>/dev/null)
missing=$(printf '%s\n' "$listing" | awk -F'\t' '$NF == "missing" { print $1 }')
[ -n "$missing" ] && ok "ls says which objects lost bytes with the pool: $(echo $missing)" || bad "ls after the pool was deleted" "$listing"
[ ! -e "$shm/pmem/job.42/pool" ] && ok "no empty pool is made under them" || bad "a pool was made again"
as_job check ckpt/ > "$tmp/check.out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "	missing	pmem	object '[^']*': missing (pool missing)" "$tmp/check.out" \
  && ok "check exits 1 naming the missing objects" || bad "check (rc=$rc)" "$(cat "$tmp/check.out")"
out=$("$bb" --conf "$conf" stage-out --job 42 ckpt/ "$tmp/out/ck3" 2>&1); rc=$?
[ $rc = 1 ] && printf '%s' "$out" | grep -q "incomplete: .* not staged out, lost from the buffer: .*; see $tmp/out/ck3.incomplete\$" \
  && ok "stage-out fails naming the lost objects" || bad "stage-out with lost objects (rc=$rc)" "$out"
good=1
for k in $missing; do
  grep -q "^object '$k': missing (pool missing)" "$tmp/out/ck3.incomplete" 2>/dev/null || good=0
  [ ! -e "$tmp/out/ck3/${k#ckpt/}" ] || good=0
done
for k in $(printf '%s\n' "$listing" | awk -F'\t' '$NF == "ok" { print $1 }'); do
  cmp -s "$tmp/ck/${k#ckpt/}" "$tmp/out/ck3/${k#ckpt/}" || good=0
done
[ $good = 1 ] && ok "the objects still whole are staged out, the lost ones listed in ck3.incomplete" \
  || bad "stage-out of the rest" "$(ls -R "$tmp/out/ck3" 2>&1; cat "$tmp/out/ck3.incomplete" 2>&1)"
for k in $missing; do as_job rm "$k" >/dev/null 2>&1; done
out=$(as_job put "$tmp/in.dat" ckpt/new 2>&1) || bad "put after the pool was deleted" "$out"
out=$("$bb" --conf "$conf" stage-out --job 42 ckpt/ "$tmp/out/ck3" 2>&1) && [ ! -e "$tmp/out/ck3.incomplete" ] \
  && cmp -s "$tmp/in.dat" "$tmp/out/ck3/new" \
  && ok "with the lost objects removed, stage-out succeeds and removes the old report" || bad "stage-out after rm" "$out"
out=$("$bb" --conf "$conf" destroy --job 42 2>&1) && ok "$out" || bad "destroy" "$out"
[ ! -e "$shm/pmem/job.42" ] && [ ! -e "$tmp/disk/job.42" ] && [ ! -e "$tmp/state/bb/job.42" ] \
  && ok "the buffer is gone after destroy" || bad "destroy left files"
exit $fail
