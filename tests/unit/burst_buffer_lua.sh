#!/bin/sh
# etc/burst_buffer.lua under Lua 5.1 (the interpreter Slurm's burst_buffer/lua embeds): it
# defines the eleven slurm_bb_* functions burst_buffer/lua requires (the list of
# src/plugins/burst_buffer/lua/burst_buffer_lua.c, req_fxns), and slurm_bb_job_process accepts
# good #BB_LUA directives and refuses each bad one with one line naming the line, the field and
# what is allowed; slurm_bb_data_out tries every stage_out directive and, when one fails, answers
# with the objects autotune-bb names as lost -- an error with burst_buffer.conf's
# Flags=TeardownFailure (so that Slurm tears the buffer down), a logged success without it (so
# that Slurm does not hold the job in stage-out).
set -u
lua=${LUA:-lua5.1}
src=${top_srcdir:-.}/etc/burst_buffer.lua
command -v "$lua" >/dev/null 2>&1 || { echo "FAIL: $lua not found (scripts/setup installs lua5.1)"; exit 1; }
tmp=$(mktemp -d /tmp/bb-lua-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

# A script with the given directive lines; prints the result of slurm_bb_job_process.
process() {
  { echo '#!/bin/bash'; echo '#SBATCH -N1'; printf '%s\n' "$@"; echo 'hostname'; echo '#BB_LUA ignored after the first command'; } > "$tmp/job.sh"
  "$lua" - "$src" "$tmp/job.sh" <<'EOF'
slurm = { SUCCESS = 0, ERROR = -1 }
for _, l in ipairs({ "log_error", "log_info", "log_verbose", "log_debug" }) do slurm[l] = function() end end
dofile(arg[1])
local rc, msg = slurm_bb_job_process(arg[2])
print(rc == slurm.SUCCESS and "accepted" or ("refused: " .. tostring(msg)))
EOF
}

check() {  # check WANT LINE...
  want=$1; shift
  got=$(process "$@")
  if [ "$got" = "$want" ]; then echo "ok: $*"; else echo "FAIL: $*"; echo "    got:  $got"; echo "    want: $want"; fail=1; fi
}

fns=$("$lua" - "$src" <<'EOF'
slurm = { SUCCESS = 0, ERROR = -1 }
dofile(arg[1])
local req = { "slurm_bb_job_process", "slurm_bb_pools", "slurm_bb_job_teardown", "slurm_bb_setup",
  "slurm_bb_data_in", "slurm_bb_real_size", "slurm_bb_paths", "slurm_bb_pre_run",
  "slurm_bb_post_run", "slurm_bb_data_out", "slurm_bb_get_status" }
local n = 0
for _, f in ipairs(req) do if type(_G[f]) == "function" then n = n + 1 else print("missing " .. f) end end
print(n)
EOF
)
[ "$fns" = 11 ] && echo "ok: all eleven slurm_bb_* functions are defined" || { echo "FAIL: $fns"; fail=1; }

L='#BB_LUA (script line 3)'
SIZE="allowed: a whole number with an optional unit K, M, G, T (or KiB, MiB, GiB, TiB), e.g. 4G"
KEY="allowed: 1-200 characters from A-Z a-z 0-9 . _ - and '/' between non-empty components other than '.' and '..', not starting with '.'"
DKEY="$KEY; a final '/' names every object under the key"
check accepted '#BB_LUA buffer capacity=4G pool=autotune'
check accepted '#BB_LUA buffer capacity=4GiB pool=autotune pmem=512M placement=fill-fastest' \
  '#BB_LUA stage_in source=/home/u/in.dat destination=in/data.bin' \
  '#BB_LUA stage_out source=out.dat destination=/home/u/out.dat'
# A directory of objects (e.g. a libssp checkpoint) staged in and out under a key prefix.
check accepted '#BB_LUA buffer capacity=4G pool=autotune' \
  '#BB_LUA stage_in source=/home/u/ckpt destination=ssp/' \
  '#BB_LUA stage_out source=run/ssp/ destination=/home/u/ckpt'
check "refused: $L buffer: capacity: '4X' is not a size; $SIZE" '#BB_LUA buffer capacity=4X pool=autotune'
check "refused: $L buffer: capacity: '4GB' is not a size; $SIZE" '#BB_LUA buffer capacity=4GB pool=autotune'
check "refused: $L buffer: capacity: '1.5G' is not a size; $SIZE" '#BB_LUA buffer capacity=1.5G pool=autotune'
check "refused: $L buffer: capacity: '100K' is below the minimum 1M" '#BB_LUA buffer capacity=100K pool=autotune'
check "refused: $L buffer: pmem: '8G' is larger than the capacity '4G'" '#BB_LUA buffer capacity=4G pool=autotune pmem=8G'
check "refused: $L buffer: pool=autotune is required with capacity=" '#BB_LUA buffer capacity=4G'
check "refused: $L buffer: capacity=SIZE is required" '#BB_LUA buffer pool=autotune'
check "refused: $L buffer: unknown field 'tier'; allowed: capacity, pool, pmem, placement" '#BB_LUA buffer capacity=4G pool=autotune tier=x'
check "refused: $L buffer: placement: 'fastest' is not a placement policy; allowed: auto, bandwidth-proportional, fill-fastest" \
  '#BB_LUA buffer capacity=4G pool=autotune placement=fastest'
check "refused: $L: unknown directive 'jobdw'; allowed: buffer, stage_in, stage_out" '#BB_LUA jobdw capacity=4G'
check "refused: $L: '#BB_LUAX buffer' is not a directive; write '#BB_LUA buffer|stage_in|stage_out ...'" '#BB_LUAX buffer'
check "refused: $L stage_in: 'source' is not key=value" '#BB_LUA stage_in source'
check "refused: #BB_LUA (script line 4) stage_in: source: 'in.dat' is not an absolute path" \
  '#BB_LUA buffer capacity=4G pool=autotune' '#BB_LUA stage_in source=in.dat destination=in'
check "refused: #BB_LUA (script line 4) stage_in: destination: '../../etc/passwd' is not a valid key; $DKEY" \
  '#BB_LUA buffer capacity=4G pool=autotune' '#BB_LUA stage_in source=/x destination=../../etc/passwd'
check "refused: #BB_LUA (script line 4) stage_out: source: '/abs' is not a valid key; $DKEY" \
  '#BB_LUA buffer capacity=4G pool=autotune' '#BB_LUA stage_out source=/abs destination=/home/u/o'
check "refused: #BB_LUA (script line 4) stage_out: source: 'ssp//' is not a valid key; $DKEY" \
  '#BB_LUA buffer capacity=4G pool=autotune' '#BB_LUA stage_out source=ssp// destination=/home/u/o'
check "refused: #BB_LUA (script line 4) stage_in: destination: '/' is not a valid key; $DKEY" \
  '#BB_LUA buffer capacity=4G pool=autotune' '#BB_LUA stage_in source=/home/u/d destination=/'
check "refused: #BB_LUA (script line 4) stage_out: source= and destination= are required" \
  '#BB_LUA buffer capacity=4G pool=autotune' '#BB_LUA stage_out source=o'
check "refused: #BB_LUA (script line 4): a second buffer line; give one" \
  '#BB_LUA buffer capacity=4G pool=autotune' '#BB_LUA buffer capacity=4G pool=autotune'
check "refused: #BB_LUA stage_in/stage_out need a '#BB_LUA buffer capacity=SIZE pool=autotune' line" \
  '#BB_LUA stage_in source=/x destination=x'
# ---- slurm_bb_data_out with a stage-out that loses objects (a fake autotune-bb) ----------------
mkdir -p "$tmp/etc"
sed "s|^local autotune_bb = .*|local autotune_bb = \"$tmp/fake-bb\"|" "$src" > "$tmp/etc/burst_buffer.lua"
cat > "$tmp/fake-bb" <<EOF
#!/bin/sh
# --conf FILE stage-out --job ID KEY DEST
echo "\$6 \$7" >> "$tmp/calls"
case "\$6" in
  lost/) echo "autotune-bb: stage-out: object 'lost/a': missing (pool missing): bytes 0..3 were on tier 'pmem' (pmem), whose pool /p is gone" >&2
         echo "job \$5: stage-out of 'lost/' to \$7 incomplete: 1 object not staged out, lost from the buffer: 'lost/a' (missing: pool missing on tier 'pmem'); 2 staged out"
         exit 1 ;;
  *) echo "job \$5: staged out '\$6' to \$7" ;;
esac
EOF
chmod +x "$tmp/fake-bb"
{ echo '#!/bin/bash'; echo '#BB_LUA buffer capacity=4G pool=autotune'
  echo '#BB_LUA stage_out source=lost/ destination=/home/u/lost'
  echo '#BB_LUA stage_out source=good destination=/home/u/good'; echo true; } > "$tmp/out.sh"
data_out() {
  rm -f "$tmp/calls"
  "$lua" - "$tmp/etc/burst_buffer.lua" "$tmp/out.sh" <<'EOF'
slurm = { SUCCESS = 0, ERROR = -1 }
for _, l in ipairs({ "log_info", "log_verbose", "log_debug" }) do slurm[l] = function() end end
slurm.log_error = function(fmt, ...) io.stderr:write(string.format(fmt, ...) .. "\n") end
dofile(arg[1])
local rc, msg = slurm_bb_data_out("7", arg[2])
print((rc == slurm.SUCCESS and "success" or "error") .. ": " .. tostring(msg))
EOF
}
LOST="stage-out of 'lost/' to /home/u/lost incomplete: 1 object not staged out, lost from the buffer: 'lost/a' (missing: pool missing on tier 'pmem'); 2 staged out; the buffer is torn down"
printf 'Directive=BB_LUA\nFlags=DisablePersistent,TeardownFailure\n' > "$tmp/etc/burst_buffer.conf"
got=$(data_out 2>"$tmp/log")
[ "$got" = "error: $LOST" ] && echo "ok: with TeardownFailure, data_out fails naming the lost object" \
  || { echo "FAIL: data_out with TeardownFailure"; echo "    got:  $got"; echo "    want: error: $LOST"; fail=1; }
[ "$(cat "$tmp/calls")" = "lost/ /home/u/lost
good /home/u/good" ] && echo "ok: every stage_out directive is tried after one fails" \
  || { echo "FAIL: directives tried: $(cat "$tmp/calls")"; fail=1; }
grep -q "JobId=7 stage_out: autotune-bb: stage-out: object 'lost/a': missing (pool missing)" "$tmp/log" \
  && echo "ok: the log has autotune-bb's whole answer" || { echo "FAIL: log: $(cat "$tmp/log")"; fail=1; }
printf 'Directive=BB_LUA\nFlags=DisablePersistent\n' > "$tmp/etc/burst_buffer.conf"
got=$(data_out 2>"$tmp/log")
[ "$got" = "success: nil" ] && echo "ok: without TeardownFailure, data_out succeeds (no job held in stage-out)" \
  || { echo "FAIL: data_out without TeardownFailure: $got"; fail=1; }
grep -qF "JobId=7 data_out: $LOST (burst_buffer.conf has no Flags=TeardownFailure" "$tmp/log" \
  && echo "ok: ... and logs what was lost" || { echo "FAIL: log: $(cat "$tmp/log")"; fail=1; }
exit $fail
