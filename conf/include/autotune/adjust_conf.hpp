// The per-role adjuster's section of autotune.conf (the adjuster itself: autotune/adjust.hpp).
#pragma once

namespace autotune {

class RawConf;

// autotune.conf keys (etc/autotune.conf documents each with its default).
struct AdjustConf {
  int trials = 2;           // AdjustTrials: adjusted trials per in-allocation search; 0 = off
  double cpu_idle = 0.5;    // AdjustCpuIdle
  double cpu_target = 0.8;  // AdjustCpuTarget
  double mem_high = 0.85;   // AdjustMemHigh
  double mem_low = 0.25;    // AdjustMemLow; 0 = memory is never lowered
};

// Takes the keys above from `raw`.  Throws Error(invalid_argument) "FILE:LINE: Key: ..." for a
// malformed value, and when cpu_idle >= cpu_target or mem_low >= mem_high.
void parse_adjust_section(RawConf &raw, AdjustConf &out);

}  // namespace autotune
