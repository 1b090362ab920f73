// The log sink the plugins give libautotune: Slurm's own log, so the core's diagnostics land in
// slurmctld.log (or the client's stderr) with the plugin's prefix and at the right level.
// Include after the Slurm headers (it uses error(), info(), verbose(), debug()).
#pragma once

#include "autotune/autotune.h"

namespace autotune_plugin {

inline void slurm_log_sink(int level, const char *message) {
  switch (level) {
    case AT_LOG_ERROR: error("%s", message); break;
    case AT_LOG_INFO: info("%s", message); break;
    case AT_LOG_VERBOSE: verbose("%s", message); break;
    default: debug("%s", message); break;
  }
}

}  // namespace autotune_plugin
