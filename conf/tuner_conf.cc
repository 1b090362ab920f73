#include "autotune/tuner_conf.hpp"

#include "autotune/raw_conf.hpp"
#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

void parse_tuner_section(RawConf &raw, TunerConf &out) {
  if (auto l = raw.take_line("DefaultMode")) {
    const std::string &v = l->tokens[0].value;
    if (v != "jobs" && v != "steps") throw_invalid(l->where() + ": DefaultMode: '" + v + "' is not one of: jobs, steps");
    out.default_mode = v;
  }
  auto int_key = [&](const char *key, long long lo, long long hi, int *dst) {
    if (auto l = raw.take_line(key))
      *dst = static_cast<int>(parse_int(l->where() + ": " + key, l->tokens[0].value, lo, hi));
  };
  auto dbl_key = [&](const char *key, double lo, double hi, double *dst) {
    if (auto l = raw.take_line(key)) *dst = parse_double(l->where() + ": " + key, l->tokens[0].value, lo, hi);
  };
  int_key("DefaultProbeBatches", 1, 1000000, &out.default_probe_batches);
  int_key("MaxProbeBatches", 1, 1000000, &out.max_probe_batches);
  int_key("QueueDepth", 1, 64, &out.queue_depth);
  dbl_key("ChangeMargin", 0, 1, &out.change_margin);
  dbl_key("DriftThreshold", 0, 100, &out.drift_threshold);
  int_key("DriftConfirm", 1, 100, &out.drift_confirm);
  int_key("RetuneBudget", 0, 100000, &out.retune_budget);
  dbl_key("NodeSpeedAlpha", 0, 1, &out.node_speed_alpha);
  dbl_key("SlowNodeThreshold", 0, 1, &out.slow_node_threshold);
  int_key("SubmitBusyTimeout", 0, 10000, &out.submit_busy_timeout_ms);
  int_key("TrialRetentionDays", 0, 36500, &out.trial_retention_days);
  int_key("TrialRetainLast", 1, 1000000, &out.trial_retain_last);
  if (out.trial_retention_days > 0 && out.trial_retain_last < out.drift_confirm)
    throw_invalid("TrialRetainLast " + std::to_string(out.trial_retain_last) + " is below DriftConfirm " +
                  std::to_string(out.drift_confirm) +
                  ": pruning would remove the re-measurements drift is judged on; allowed: TrialRetainLast >= "
                  "DriftConfirm");
  if (out.default_probe_batches > out.max_probe_batches)
    throw_invalid("DefaultProbeBatches " + std::to_string(out.default_probe_batches) + " is above MaxProbeBatches " +
                  std::to_string(out.max_probe_batches));
}

}  // namespace autotune
