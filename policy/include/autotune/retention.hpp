// Retention of finished trials: what autotune.conf's TrialRetentionDays and TrialRetainLast
// prune from the store, and when ingest does it (Store::prune_trials() does the deleting).
//
// A trial is pruned when it finished (done, failed, timeout, cancelled) more than
// TrialRetentionDays days ago, unless it is its class's best trial, the incumbent a retune must
// beat, one of its class's last TrialRetainLast trials, or a trial of the search a tuning class is
// running.  Pending and running trials are never pruned.  TrialRetentionDays=0 (the default)
// keeps every trial.
//
// Thread safety: the functions are as safe as the Store they are given (one per thread).
#pragma once

#include <optional>
#include <string>

#include "autotune/store.hpp"

namespace autotune {

struct Conf;

// Ingest prunes at most once per this many seconds, and at most kPruneMaxPerIngest trials at a
// time (what is left is taken by the next ingest that prunes); `autotune admin prune` has no limit.
inline constexpr double kPruneIntervalS = 3600;
inline constexpr std::size_t kPruneMaxPerIngest = 20000;

// The policy of `conf` at time `now` (unix seconds); nullopt when retention is off.
std::optional<PrunePolicy> retention_policy(const Conf &conf, double now);

// Prunes by the policy when it is on and the last prune recorded in `stamp_path` (its
// modification time) is kPruneIntervalS or more before `now`; touches the stamp when everything
// due was removed.  nullopt when nothing was due or retention is off.
std::optional<PruneResult> prune_if_due(Store &store, const Conf &conf, double now,
                                        const std::string &stamp_path);

// "StateDir/prune.stamp"
std::string prune_stamp_path(const Conf &conf);

}  // namespace autotune
