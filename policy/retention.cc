#include "autotune/retention.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autotune/conf.hpp"

namespace autotune {

std::optional<PrunePolicy> retention_policy(const Conf &conf, double now) {
  if (conf.tuner.trial_retention_days <= 0) return std::nullopt;
  PrunePolicy p;
  p.ended_before = now - 86400.0 * conf.tuner.trial_retention_days;
  p.keep_last = conf.tuner.trial_retain_last;
  return p;
}

std::string prune_stamp_path(const Conf &conf) { return conf.core.state_dir + "/prune.stamp"; }

std::optional<PruneResult> prune_if_due(Store &store, const Conf &conf, double now,
                                        const std::string &stamp_path) {
  std::optional<PrunePolicy> p = retention_policy(conf, now);
  if (!p) return std::nullopt;
  struct stat sb {};
  if (::stat(stamp_path.c_str(), &sb) == 0 &&
      now - static_cast<double>(sb.st_mtime) < kPruneIntervalS)
    return std::nullopt;
  p->max_trials = kPruneMaxPerIngest;
  PruneResult r = store.prune_trials(*p);
  if (r.complete) {
    // Recorded only once everything due is gone, so that the next ingest continues otherwise.
    const int fd = ::open(stamp_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
      ::futimens(fd, nullptr);
      ::close(fd);
    }
  }
  return r;
}

}  // namespace autotune
