--[[
burst_buffer.lua -- slurm-autotune's tiered burst buffer for Slurm's burst_buffer/lua plugin
(Slurm 22.05).

Enable it in slurm.conf with
    BurstBufferType=burst_buffer/lua
and put this file beside slurm.conf, together with autotune.conf, whose Tier= lines describe the
node's persistent memory and disk tiers.  `make install` writes the path of the installed
autotune-bb into the line below ($(pkgdatadir)/burst_buffer.lua); a copy of etc/burst_buffer.lua
must have it set by hand.

A job asks for a buffer with directives in the comment block at the top of its batch script:

    #BB_LUA buffer capacity=4G pool=autotune pmem=1G placement=bandwidth-proportional
    #BB_LUA stage_in source=/home/me/input.dat destination=input.dat
    #BB_LUA stage_out source=output.dat destination=/home/me/output.dat

  buffer     capacity=SIZE  the whole buffer (required; SIZE is a whole number with an optional
                            unit K, M, G, T or KiB, MiB, GiB, TiB; at least 1M)
             pool=autotune  required by Slurm next to capacity= (Slurm accounts the buffer
                            against this pool, whose size is the sum of the tiers' capacities)
             pmem=SIZE      how much of it is on the pmem tier (default: in proportion to the
                            tiers' capacities)
             placement=P    auto, bandwidth-proportional or fill-fastest (default: TierPlacement)
  stage_in   source=PATH destination=KEY    copy the file PATH (absolute, readable by the job's
                            user) into the buffer as object KEY before the job starts; with
                            KEY ending in '/' (e.g. ckpt/), PATH is a directory and every file
                            under it becomes an object KEY<relative path>
  stage_out  source=KEY destination=PATH    copy object KEY to the file PATH (absolute,
                            writable by the job's user) after the job ends; with KEY ending in
                            '/', every object under KEY goes, in key order, into the directory
                            PATH (created 0700) as PATH/<rest of the key>; objects lost from
                            the buffer (missing or damaged) are listed in PATH.incomplete and
                            in the job's Reason and SystemComment (see slurm_bb_data_out)

A libssp checkpoint (ssp::TierSnapshotStore, prefix ssp/) outlives its job this way:

    #BB_LUA stage_out source=ssp/ destination=/home/me/ckpt
and the next job, on any number of ranks, resumes from it with
    #BB_LUA stage_in source=/home/me/ckpt destination=ssp/
(submit it with --dependency=afterburstbuffer:JOBID so that it starts staging in only once the
first job's stage-out is done).

Inside the job, $AUTOTUNE_BB_JOB names the buffer; `autotune-bb get KEY FILE`, `autotune-bb put
FILE KEY` and `autotune-bb ls` reach its objects, and programs open it with
autotune::open_job_buffer() (tier/, autotune/job_buffer.hpp).  Values cannot contain blanks.

A bad directive refuses the job at submission with one line that names the directive line, the
field, the value and what is allowed.  slurm_bb_job_process and slurm_bb_paths run inside
slurmctld and only parse text; everything else runs autotune-bb, as root, which works on the
job's files as the job's user.
--]]

local autotune_bb = "/usr/local/bin/autotune-bb"

-- autotune.conf beside this file (which Slurm loads from beside slurm.conf).
local script_dir = (debug.getinfo(1, "S").source or ""):match("^@(.*)/[^/]*$") or "/etc/slurm"
local autotune_conf = script_dir .. "/autotune.conf"

local directive = "BB_LUA"
local size_allowed = "allowed: a whole number with an optional unit K, M, G, T (or KiB, MiB, GiB, TiB), e.g. 4G"
local key_allowed = "allowed: 1-200 characters from A-Z a-z 0-9 . _ - and '/' between non-empty components other than '.' and '..', not starting with '.'"
local dir_key_allowed = key_allowed .. "; a final '/' names every object under the key"
local MiB = 1048576

-- Sizes as Slurm reads capacity= and as autotune-bb reads it: only the spellings on which both
-- agree (Slurm takes "GB" as 10^9 bytes, autotune-bb as 2^30; so neither is accepted).
local function parse_size(field, value)
	local num, unit = value:match("^(%d+)(%a*)$")
	local mult = { [""] = 1, K = 2^10, M = 2^20, G = 2^30, T = 2^40,
		KIB = 2^10, MIB = 2^20, GIB = 2^30, TIB = 2^40 }
	if not num or #num > 15 or not mult[unit:upper()] then
		return nil, string.format("%s: '%s' is not a size; %s", field, value, size_allowed)
	end
	return tonumber(num) * mult[unit:upper()]
end

-- A key; with `dir_ok`, a key with a final '/' (every object under it) too.
local function check_key(field, key, dir_ok)
	local allowed = dir_ok and dir_key_allowed or key_allowed
	local k = key
	if dir_ok and #k > 1 and k:sub(-1) == "/" then
		k = k:sub(1, -2)
	end
	if #k == 0 or #k > 200 or not k:match("^[%w%._%-/]+$") or k:sub(1, 1) == "." then
		return string.format("%s: '%s' is not a valid key; %s", field, key, allowed)
	end
	for comp in (k .. "/"):gmatch("([^/]*)/") do
		if comp == "" or comp == "." or comp == ".." then
			return string.format("%s: '%s' is not a valid key; %s", field, key, allowed)
		end
	end
	return nil
end

local function check_path(field, path)
	if path:sub(1, 1) ~= "/" then
		return string.format("%s: '%s' is not an absolute path", field, path)
	end
	if path:match("[%c]") then
		return string.format("%s: '%s' contains a control character", field, path)
	end
	return nil
end

local kinds = {
	buffer = { capacity = true, pool = true, pmem = true, placement = true },
	stage_in = { source = true, destination = true },
	stage_out = { source = true, destination = true },
}
local kind_keys = {
	buffer = "capacity, pool, pmem, placement",
	stage_in = "source, destination",
	stage_out = "source, destination",
}

--[[
Parse the #BB_LUA directives of a job script.  Returns a table
  { capacity = "4G", pmem = "1G" or nil, placement = ... or nil,
    stage_in = { {source=, destination=}, ... }, stage_out = { ... } }
or nil and one line saying what is wrong.  Like Slurm, only the comment block at the top of the
script is read (up to the first line that is not a comment).
--]]
local function parse_directives(job_script)
	local f, err = io.open(job_script, "r")
	if not f then
		return nil, "cannot read the job script: " .. tostring(err)
	end
	local d = { stage_in = {}, stage_out = {} }
	local have_buffer = false
	local lineno = 0
	for line in f:lines() do
		lineno = lineno + 1
		if line:sub(1, 1) ~= "#" then
			break
		end
		if line:sub(2, 1 + #directive) == directive then
			local rest = line:sub(2 + #directive)
			local where = string.format("#%s (script line %d)", directive, lineno)
			if rest ~= "" and not rest:match("^%s") then
				f:close()
				return nil, string.format("%s: '%s' is not a directive; write '#%s buffer|stage_in|stage_out ...'", where, line, directive)
			end
			local words = {}
			for w in rest:gmatch("%S+") do
				words[#words + 1] = w
			end
			local kind = words[1]
			if not kind or not kinds[kind] then
				f:close()
				return nil, string.format("%s: unknown directive '%s'; allowed: buffer, stage_in, stage_out", where, tostring(kind))
			end
			local fields = {}
			for i = 2, #words do
				local k, v = words[i]:match("^([^=]+)=(.*)$")
				if not k then
					f:close()
					return nil, string.format("%s %s: '%s' is not key=value", where, kind, words[i])
				end
				if not kinds[kind][k] then
					f:close()
					return nil, string.format("%s %s: unknown field '%s'; allowed: %s", where, kind, k, kind_keys[kind])
				end
				if fields[k] then
					f:close()
					return nil, string.format("%s %s: %s is given twice", where, kind, k)
				end
				fields[k] = v
			end
			local e
			if kind == "buffer" then
				if have_buffer then
					f:close()
					return nil, string.format("%s: a second buffer line; give one", where)
				end
				have_buffer = true
				if not fields.capacity then
					f:close()
					return nil, string.format("%s buffer: capacity=SIZE is required", where)
				end
				if fields.pool ~= "autotune" then
					f:close()
					return nil, string.format("%s buffer: pool=autotune is required with capacity=", where)
				end
				local cap, pm
				cap, e = parse_size(where .. " buffer: capacity", fields.capacity)
				if cap and cap < MiB then
					e = string.format("%s buffer: capacity: '%s' is below the minimum 1M", where, fields.capacity)
				end
				if not e and fields.pmem then
					pm, e = parse_size(where .. " buffer: pmem", fields.pmem)
					if pm and pm > cap then
						e = string.format("%s buffer: pmem: '%s' is larger than the capacity '%s'", where, fields.pmem, fields.capacity)
					end
				end
				if not e and fields.placement and fields.placement ~= "bandwidth-proportional"
				   and fields.placement ~= "fill-fastest" and fields.placement ~= "auto" then
					e = string.format("%s buffer: placement: '%s' is not a placement policy; allowed: auto, bandwidth-proportional, fill-fastest", where, fields.placement)
				end
				d.capacity, d.pmem, d.placement = fields.capacity, fields.pmem, fields.placement
			else
				if not fields.source or not fields.destination then
					f:close()
					return nil, string.format("%s %s: source= and destination= are required", where, kind)
				end
				if kind == "stage_in" then
					e = check_path(where .. " stage_in: source", fields.source)
						or check_key(where .. " stage_in: destination", fields.destination, true)
				else
					e = check_key(where .. " stage_out: source", fields.source, true)
						or check_path(where .. " stage_out: destination", fields.destination)
				end
				local list = d[kind]
				list[#list + 1] = { source = fields.source, destination = fields.destination }
			end
			if e then
				f:close()
				return nil, e
			end
		end
	end
	f:close()
	if not have_buffer and (#d.stage_in > 0 or #d.stage_out > 0) then
		return nil, string.format("#%s stage_in/stage_out need a '#%s buffer capacity=SIZE pool=autotune' line", directive, directive)
	end
	if not have_buffer then
		return nil, string.format("no '#%s buffer capacity=SIZE pool=autotune' line", directive)
	end
	return d
end

local function quote(s)
	return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Run autotune-bb with `args`; returns ok (exit status 0) and its output (stdout and stderr,
-- trailing blanks removed).  Lua 5.1's popen cannot report the status: the shell prints it last.
local function run(args)
	local parts = { quote(autotune_bb), "--conf", quote(autotune_conf) }
	for _, a in ipairs(args) do
		parts[#parts + 1] = quote(a)
	end
	local cmd = table.concat(parts, " ") .. " 2>&1; echo \"autotune-bb-status=$?\""
	local p = io.popen(cmd, "r")
	if not p then
		return false, "cannot run " .. autotune_bb
	end
	local out = p:read("*a") or ""
	p:close()
	local body, status = out:match("^(.-)autotune%-bb%-status=(%d+)%s*$")
	if not status then
		return false, "cannot run " .. autotune_bb .. ": " .. out
	end
	body = body:gsub("%s+$", "")
	return tonumber(status) == 0, body
end

local function fail(job_id, what, msg)
	slurm.log_error("burst_buffer.lua: JobId=%s %s: %s", tostring(job_id), what, msg)
	return slurm.ERROR, msg
end

--[[ Called synchronously by slurmctld at submission (must be fast): check the directives. ]]
function slurm_bb_job_process(job_script)
	local d, err = parse_directives(job_script)
	if not d then
		return slurm.ERROR, err
	end
	return slurm.SUCCESS
end

--[[ Called synchronously by slurmctld at start-up and then periodically: the pool Slurm
accounts buffers against (JSON from `autotune-bb pools`). ]]
function slurm_bb_pools()
	local ok, out = run({ "pools" })
	if not ok then
		slurm.log_error("burst_buffer.lua: pools: %s", out)
		return slurm.ERROR, out
	end
	return slurm.SUCCESS, out
end

--[[ Asynchronous, while the job is pending: grant and create the buffer, owned by uid:gid. ]]
function slurm_bb_setup(job_id, uid, gid, pool, bb_size, job_script)
	local d, err = parse_directives(job_script)
	if not d then
		return fail(job_id, "setup", err)
	end
	local args = { "create", "--job", job_id, "--uid", uid, "--gid", gid, "--capacity", d.capacity }
	if d.pmem then
		args[#args + 1] = "--pmem"
		args[#args + 1] = d.pmem
	end
	if d.placement then
		args[#args + 1] = "--placement"
		args[#args + 1] = d.placement
	end
	local ok, out = run(args)
	if not ok then
		return fail(job_id, "setup", out)
	end
	slurm.log_info("burst_buffer.lua: %s", out)
	return slurm.SUCCESS
end

--[[ Runs `autotune-bb VERB --job ID SOURCE DESTINATION` for each pair of a directive list. ]]
local function stage(job_id, pairs, verb, what)
	for _, p in ipairs(pairs) do
		local ok, out = run({ verb, "--job", job_id, p.source, p.destination })
		if not ok then
			return fail(job_id, what, out)
		end
		slurm.log_info("burst_buffer.lua: %s", out)
	end
	return slurm.SUCCESS
end

--[[ Asynchronous, after setup: stage the files in (read as the job's user). ]]
function slurm_bb_data_in(job_id, job_script)
	local d, err = parse_directives(job_script)
	if not d then
		return fail(job_id, "data_in", err)
	end
	return stage(job_id, d.stage_in, "stage-in", "stage_in")
end

--[[ Asynchronous, only for jobs that name a pool: the buffer's real size (unchanged). ]]
function slurm_bb_real_size(job_id)
	return slurm.SUCCESS
end

--[[ Called synchronously by slurmctld before the job starts: the job's environment. ]]
function slurm_bb_paths(job_id, job_script, path_file)
	local f, err = io.open(path_file, "w")
	if not f then
		return fail(job_id, "paths", tostring(err))
	end
	f:write("AUTOTUNE_BB_JOB=" .. job_id .. "\n")
	f:close()
	return slurm.SUCCESS
end

--[[ Asynchronous, before the job starts: nothing left to do (the data is staged). ]]
function slurm_bb_pre_run(job_id, job_script)
	return slurm.SUCCESS
end

--[[ Asynchronous, after the job ends: nothing to do before stage-out. ]]
function slurm_bb_post_run(job_id, job_script)
	return slurm.SUCCESS
end

-- Whether burst_buffer.conf (beside this file) sets Flags=TeardownFailure: only then does Slurm
-- tear a buffer down after slurm_bb_data_out fails; without it the job stays in stage-out (SO),
-- holding its buffer, until an admin runs `scancel --hurry`.
local function teardown_on_failure()
	local f = io.open(script_dir .. "/burst_buffer.conf", "r")
	if not f then
		return false
	end
	local set = false
	for line in f:lines() do
		local flags = line:match("^%s*[Ff][Ll][Aa][Gg][Ss]%s*=%s*(%S+)")
		if flags and (("," .. flags:lower() .. ","):find(",teardownfailure,", 1, true)) then
			set = true
		end
	end
	f:close()
	return set
end

--[[ Asynchronous, after post_run: stage the results out (written as the job's user).  Every
directive is tried, even after one fails, so that whatever can be staged out is.  When some
could not be (an object missing or damaged in the buffer, a destination not writable), the
answer names them: Slurm shows it as the job's Reason and SystemComment (`scontrol show job`)
and, with Flags=TeardownFailure in burst_buffer.conf, tears the buffer down at once, so the job
leaves stage-out.  Without that flag Slurm would hold the job in stage-out until an admin runs
`scancel --hurry`; then the failure is logged and success returned, so that the buffer is torn
down all the same. ]]
function slurm_bb_data_out(job_id, job_script)
	local d, err = parse_directives(job_script)
	if not d then
		return fail(job_id, "data_out", err)
	end
	local failed = {}
	for _, p in ipairs(d.stage_out) do
		local ok, out = run({ "stage-out", "--job", job_id, p.source, p.destination })
		if ok then
			slurm.log_info("burst_buffer.lua: %s", out)
		else
			-- One log line per line of autotune-bb's answer (each lost object with its reason);
			-- the summary line ("job N: stage-out of ... incomplete: ...") answers Slurm, else
			-- the whole answer does.
			local summary
			for line in out:gmatch("[^\n]+") do
				slurm.log_error("burst_buffer.lua: JobId=%s stage_out: %s", tostring(job_id), line)
				if line:match("^job %d+: stage%-out of .* incomplete: ") then
					summary = line:gsub("^job %d+: ", "")
				end
			end
			failed[#failed + 1] = summary or string.format("stage-out of '%s' to %s failed: %s",
				p.source, p.destination, (out:gsub("\n", "; ")))
		end
	end
	if #failed == 0 then
		return slurm.SUCCESS
	end
	local msg = table.concat(failed, "; ") .. "; the buffer is torn down"
	if teardown_on_failure() then
		slurm.log_error("burst_buffer.lua: JobId=%s data_out: %s", tostring(job_id), msg)
		return slurm.ERROR, msg
	end
	slurm.log_error("burst_buffer.lua: JobId=%s data_out: %s (burst_buffer.conf has no Flags=TeardownFailure: reporting success so that Slurm does not hold the job in stage-out)", tostring(job_id), msg)
	return slurm.SUCCESS
end

--[[ Asynchronous, after stage-out or when the job is cancelled: remove the buffer. ]]
function slurm_bb_job_teardown(job_id, job_script, hurry)
	local ok, out = run({ "destroy", "--job", job_id })
	if not ok then
		return fail(job_id, "teardown", out)
	end
	slurm.log_info("burst_buffer.lua: %s", out)
	return slurm.SUCCESS
end

--[[ `scontrol show bbstat`: the tiers, how much of each is granted, and how many buffers.  Any
user may run it and Slurm does not say who asks, so no buffer's owner, job or usage is shown:
a job's own buffer is shown by `autotune-bb status` inside the job, every buffer by
`autotune-bb status` as root. ]]
function slurm_bb_get_status(...)
	local args = { ... }
	if args[1] then
		-- (Slurm shows only "Error running slurm_bb_get_status" for an error: the answer is the text.)
		return slurm.SUCCESS, "scontrol show bbstat takes no JOBID: a buffer's owner and usage are shown only to its owner, by `autotune-bb status` inside the job (root: autotune-bb status --job JOBID)\n"
	end
	local ok, out = run({ "summary" })
	if not ok then
		return slurm.ERROR, out
	end
	return slurm.SUCCESS, out .. "\n"
end
