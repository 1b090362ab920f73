// Per-role resource adjustment from measured use: the second tuple of a configuration (CPUs and
// memory per worker and per parameter server) corrected from what a trial's ranks actually used.
//
// The Bayesian search chooses whole configurations; it learns that a parameter server with two
// CPUs is no faster than one with one only after trying both.  A trial's own measurements say it
// directly: libssp reports, per role, the busiest rank's CPU use (cores busy over the measured
// window) and the largest peak RSS.  From them, for each role (workers; parameter servers when
// the configuration has any), independently:
//
//  CPUs down   when the busiest rank used less than `cpu_idle` of the role's CPUs, the role gets
//              the fewest CPUs that keep that use below `cpu_target` of them (at least 1).
//  memory up   when the peak RSS is above `mem_high` of the role's memory, the role gets the
//              least memory that keeps the peak below `mem_high` of it (the largest allowed
//              value when none does).
//  memory down when the peak RSS is below `mem_low` of the role's memory (mem_low > 0), the role
//              gets the least memory that keeps the peak below `mem_high` of it.
//
// CPUs are never raised: a rank's CPU use cannot show that it would use more (a single-threaded
// rank is "busy" at one core however many it has); the search covers that.  Every new value is
// one the class may try: the changed configuration must be one of `allowed` (the class's
// candidates that fit the job's allocation), so each change picks among the values `allowed`
// offers with every other dimension unchanged; a change with no such value is skipped.  Changes
// are applied in the order workers' CPUs, workers' memory, servers' CPUs, servers' memory.
//
// The roles' limits are the configuration's own per-role values, not what Slurm enforced (Slurm
// gives every task of a step the larger role's CPUs and memory, config.hpp): the question is what
// each role needs.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "autotune/adjust_conf.hpp"
#include "autotune/config.hpp"

namespace autotune {

// What a role used during a trial (from libssp's result, result.hpp RoleUse).
struct RoleMeasure {
  std::optional<double> cpu_max;      // the busiest rank's cores busy
  std::optional<double> peak_rss_mb;  // the largest peak RSS of the role's ranks
};

struct Adjustment {
  Configuration config;  // the adjusted configuration (one of `allowed`)
  std::string reason;    // one line per change, joined by "; "
};

// The adjusted configuration for `measured` run on `c`, or nullopt when nothing needs changing
// or no change is allowed.  `server` is ignored when c has no parameter servers.
std::optional<Adjustment> adjust(const Configuration &c, const RoleMeasure &worker,
                                 const RoleMeasure &server,
                                 const std::vector<Configuration> &allowed, const AdjustConf &conf);

}  // namespace autotune
