#!/bin/sh
# etc/burst_buffer.lua under Lua 5.1 (the interpreter Slurm's burst_buffer/lua embeds): it
# defines the eleven slurm_bb_* functions burst_buffer/lua requires (the list of
# src/plugins/burst_buffer/lua/burst_buffer_lua.c, req_fxns), and slurm_bb_job_process accepts
# good #BB_LUA directives and refuses each bad one with one line naming the line, the field and
# what is allowed.
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
check "refused: $L buffer: placement: 'fastest' is not a placement policy; allowed: bandwidth-proportional, fill-fastest" \
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
exit $fail
