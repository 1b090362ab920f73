// autotune.conf keys of jobs and the tuner (etc/autotune.conf documents each with its default).
#pragma once

#include <string>

namespace autotune {

class RawConf;

struct TunerConf {
  std::string default_mode = "jobs";  // DefaultMode: jobs | steps
  int default_probe_batches = 20;     // DefaultProbeBatches
  int max_probe_batches = 10000;      // MaxProbeBatches
  int queue_depth = 4;                // QueueDepth: configurations precomputed per class
  double change_margin = 0.05;        // ChangeMargin: a new best must be this much better
  double drift_threshold = 0.25;      // DriftThreshold: re-measured best this much worse -> retune
  int drift_confirm = 2;              // DriftConfirm: that many re-measurements in a row
  int retune_budget = 6;              // RetuneBudget: trials of a retune after drift
  double node_speed_alpha = 0.3;      // NodeSpeedAlpha: weight of a new speed measurement
  double slow_node_threshold = 0.7;   // SlowNodeThreshold: slower than this is left out
  int submit_busy_timeout_ms = 50;    // SubmitBusyTimeout: job_submit's store lock wait
  int trial_retention_days = 0;       // TrialRetentionDays: prune finished trials older (0: keep all)
  int trial_retain_last = 20;         // TrialRetainLast: trials per class never pruned (the last ones)
};

// Takes the keys above from `raw`; throws Error(invalid_argument) "FILE:LINE: Key: ...".
void parse_tuner_section(RawConf &raw, TunerConf &out);

}  // namespace autotune
