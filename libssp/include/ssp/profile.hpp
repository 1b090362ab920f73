// The profiling hook that slurm-autotune's tuner reads: environment variables and the result file.
//
// Environment (read by every rank when the Context is created; Options::profile = false ignores
// them):
//   AUTOTUNE_RESULT=FILE          rank 0 writes the result here (write to FILE.tmp.PID, rename)
//   AUTOTUNE_PROFILE_BATCHES=K    measure the first K clocks after the warm-up (1..1000000)
//   AUTOTUNE_PROFILE_WARMUP=W     clocks skipped before measuring (0..1000000, default 2)
//   AUTOTUNE_PROFILE_ONLY=1       stop the job once the K clocks are measured: every rank writes
//                                 its figures, rank 0 the file, then every rank finalizes MPI and
//                                 exits with status 0 (from inside clock() / run())
// Without AUTOTUNE_PROFILE_BATCHES the whole run after the warm-up is measured and the file is
// written by finish() (the Context's destructor), so a full run reports what it measured too.
//
// The result file (JSON object, format "autotune-result/1"):
//   {"format":"autotune-result/1", "status":"ok", "app":"logreg",
//    "ranks":4, "workers":3, "servers":1, "consistency":"SSP(2)", "staleness":2,
//    "warmup_clocks":2, "clocks":20,        // clocks measured (per worker)
//    "samples":123456,                      // samples all workers processed in those clocks
//    "wall_s":..,                           // the longest worker's measured wall time
//    "samples_per_s":..,                    // samples / wall_s
//    "time_per_clock_s":..,                 // wall_s / clocks
//    "profile_only":true,
//    "roles":{"worker":{"ranks":3,"cpu_util_mean":..,"cpu_util_max":..,"cpus_allocated":1,
//                       "peak_rss_mb_max":..,"mem_limit_mb":1024 or null},
//             "server":{...same fields...}},
//    "per_rank":[{"rank":0,"role":"server","node":"n1","samples":0,"samples_per_s":0,
//                 "cpu_util":..,"peak_rss_mb":..,"wall_s":..},...]}
// cpu_util = process CPU seconds / wall seconds over the measured window (cores used; a server's
// window runs from the first worker's entry into the window to the last worker's exit).
// node = $SLURMD_NODENAME, else the host name.  cpus_allocated = $SLURM_CPUS_PER_TASK, else 1.
// mem_limit_mb = $SLURM_MEM_PER_CPU x cpus_allocated, else $SLURM_MEM_PER_NODE, else null.
// peak_rss_mb = getrusage(RUSAGE_SELF).ru_maxrss (the process's peak so far).
// When nothing was measured (fewer clocks than the warm-up) "status" is "empty" and the figures
// are 0.
#pragma once

namespace ssp {
// The format name written in "format".
inline constexpr const char *kResultFormat = "autotune-result/1";
}  // namespace ssp
