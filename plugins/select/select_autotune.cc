// select/autotune: node selection for autotune jobs, on top of select/cons_tres.
//
// Every select_p_* call is forwarded to select_cons_tres.so, which this plugin dlopen()s from
// PluginDir; the forwarding table is filled in the order of Slurm's node_select_syms
// (src/common/select.c) into its slurm_select_ops_t.  For jobs submitted with --autotune it
// leaves out the nodes the store knows to be slow (their workers trailed the median worker of
// their trials: per-node speed below SlowNodeThreshold) when enough other nodes remain, and
// records, once per job, where the job was placed.  The speed scores are kept in memory by
// libautotune's background thread (at_select_configure), so node selection never reads the store.
//
// Every select_*.so in PluginDir is loaded by clients too (sinfo, squeue): init() stays quiet
// (debug level only) and does not fail when cons_tres cannot be found, only the first forwarded
// call does, loudly.
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "config.h"
extern "C" {
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/bitstring.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
}

#include "autotune/autotune.h"
#include "slurm_log.hpp"

extern "C" const char plugin_name[] = "autotune node selection plugin (forwards to cons_tres)";
extern "C" const char plugin_type[] = "select/autotune";
extern "C" const uint32_t plugin_version = SLURM_VERSION_NUMBER;
// Must be >= 100 and differ from every other select plugin's id (cons_tres is 109).
extern "C" const uint32_t plugin_id = 190;

namespace {

// The names of slurm_select_ops_t's members, in order (src/common/select.c node_select_syms).
const char *const kSyms[] = {
    "plugin_id",
    "select_p_state_save",
    "select_p_state_restore",
    "select_p_job_init",
    "select_p_node_init",
    "select_p_job_test",
    "select_p_job_begin",
    "select_p_job_ready",
    "select_p_job_expand",
    "select_p_job_resized",
    "select_p_job_signal",
    "select_p_job_fini",
    "select_p_job_suspend",
    "select_p_job_resume",
    "select_p_step_pick_nodes",
    "select_p_step_start",
    "select_p_step_finish",
    "select_p_select_nodeinfo_pack",
    "select_p_select_nodeinfo_unpack",
    "select_p_select_nodeinfo_alloc",
    "select_p_select_nodeinfo_free",
    "select_p_select_nodeinfo_set_all",
    "select_p_select_nodeinfo_set",
    "select_p_select_nodeinfo_get",
    "select_p_select_jobinfo_alloc",
    "select_p_select_jobinfo_free",
    "select_p_select_jobinfo_set",
    "select_p_select_jobinfo_get",
    "select_p_select_jobinfo_copy",
    "select_p_select_jobinfo_pack",
    "select_p_select_jobinfo_unpack",
    "select_p_select_jobinfo_sprint",
    "select_p_select_jobinfo_xstrdup",
    "select_p_get_info_from_plugin",
    "select_p_update_node_config",
    "select_p_reconfigure",
    "select_p_resv_test",
};
constexpr size_t kNumSyms = sizeof(kSyms) / sizeof(kSyms[0]);
static_assert(sizeof(slurm_select_ops_t) == kNumSyms * sizeof(void *),
              "slurm_select_ops_t changed: update kSyms from src/common/select.c");

constexpr const char kTarget[] = "select_cons_tres.so";

void *g_handle = nullptr;
slurm_select_ops_t g_ops;
bool g_loaded = false;

// Find select_cons_tres.so in PluginDir (a colon-separated list) and fill g_ops.
int load_target() {
  if (g_loaded) return SLURM_SUCCESS;
  const char *dirs = slurm_conf.plugindir;
  std::string list = dirs ? dirs : "";
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(':', pos);
    if (end == std::string::npos) end = list.size();
    std::string path = list.substr(pos, end - pos) + "/" + kTarget;
    pos = end + 1;
    if (path.size() <= sizeof(kTarget)) continue;
    void *h = dlopen(path.c_str(), RTLD_LAZY);
    if (!h) continue;
    void **slots = reinterpret_cast<void **>(&g_ops);
    bool complete = true;
    for (size_t i = 0; i < kNumSyms; ++i) {
      slots[i] = dlsym(h, kSyms[i]);
      if (!slots[i]) {
        error("%s: %s lacks symbol %s", plugin_type, path.c_str(), kSyms[i]);
        complete = false;
      }
    }
    if (!complete) {
      dlclose(h);
      return SLURM_ERROR;
    }
    using init_fn = int (*)(void);
    if (auto target_init = reinterpret_cast<init_fn>(dlsym(h, "init"))) {
      if (target_init() != SLURM_SUCCESS) {
        error("%s: init() of %s failed", plugin_type, path.c_str());
        dlclose(h);
        return SLURM_ERROR;
      }
    }
    g_handle = h;
    g_loaded = true;
    debug("%s: forwarding to %s", plugin_type, path.c_str());
    return SLURM_SUCCESS;
  }
  error("%s: cannot find %s in PluginDir=%s", plugin_type, kTarget, dirs ? dirs : "(unset)");
  return SLURM_ERROR;
}

std::set<uint32_t> g_logged;  // jobs whose slow-node exclusion was logged

// The autotune class of a job, or nullptr for a job without --autotune.
const char *job_class(const job_record_t *job_ptr) {
  if (!job_ptr) return nullptr;
  return at_env_get(job_ptr->spank_job_env, job_ptr->spank_job_env_size, "AUTOTUNE_CLASS");
}

}  // namespace

#define FORWARD(member, fallback, ...)                    \
  do {                                                    \
    if (!g_loaded && load_target() != SLURM_SUCCESS) {    \
      return fallback;                                    \
    }                                                     \
    return (*g_ops.member)(__VA_ARGS__);                  \
  } while (0)

extern "C" {

int init(void) {
  at_set_log_sink(autotune_plugin::slurm_log_sink);
  // Quiet: clients load every select plugin.  A missing target is reported on first use.
  if (load_target() != SLURM_SUCCESS) debug("%s: select/cons_tres not loaded yet", plugin_type);
  // Only slurmctld selects nodes for jobs: the speed scores are loaded there alone.
  if (running_in_slurmctld()) {
    char *path = get_extra_conf_path(const_cast<char *>("autotune.conf"));
    char err[512];
    if (at_select_configure(path, 30, err, sizeof err) != AT_OK) error("%s: %s", plugin_type, err);
    xfree(path);
  }
  return SLURM_SUCCESS;
}

int fini(void) {
  int rc = SLURM_SUCCESS;
  if (g_handle) {
    using fini_fn = int (*)(void);
    if (auto target_fini = reinterpret_cast<fini_fn>(dlsym(g_handle, "fini"))) rc = target_fini();
    dlclose(g_handle);
    g_handle = nullptr;
  }
  g_loaded = false;
  at_select_shutdown();
  at_set_log_sink(nullptr);
  return rc;
}

int select_p_state_save(char *dir_name) { FORWARD(state_save, SLURM_ERROR, dir_name); }
int select_p_state_restore(char *dir_name) { FORWARD(state_restore, SLURM_ERROR, dir_name); }
int select_p_job_init(List job_list) { FORWARD(job_init, SLURM_ERROR, job_list); }
int select_p_node_init(void) { FORWARD(node_init, SLURM_ERROR); }

int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
                      uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                      List preemptee_candidates, List *preemptee_job_list,
                      bitstr_t *exc_core_bitmap) {
  if (!g_loaded && load_target() != SLURM_SUCCESS) return EINVAL;
  // An autotune job: try without the slow nodes first, when enough nodes remain.
  if (job_class(job_ptr) && bitmap && (mode & SELECT_MODE_BASE) != SELECT_MODE_TEST_ONLY) {
    bitstr_t *trimmed = bit_copy(bitmap);
    std::string removed;
    node_record_t *node;
    for (int i = 0; (node = next_node(&i)); i++) {
      if (!bit_test(trimmed, node->index) || !at_node_is_slow(node->name)) continue;
      bit_clear(trimmed, node->index);
      removed += (removed.empty() ? "" : ",") + std::string(node->name);
    }
    const uint32_t need = std::max(min_nodes, req_nodes == NO_VAL ? 0u : req_nodes);
    if (!removed.empty() && static_cast<uint32_t>(bit_set_count(trimmed)) >= need) {
      const int rc = (*g_ops.job_test)(job_ptr, trimmed, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                                       preemptee_job_list, exc_core_bitmap);
      if (rc == SLURM_SUCCESS) {
        bit_copybits(bitmap, trimmed);
        if ((mode & SELECT_MODE_BASE) == SELECT_MODE_RUN_NOW && g_logged.insert(job_ptr->job_id).second) {
          info("%s: %pJ class=%s: leaving out slow nodes %s", plugin_type, job_ptr, job_class(job_ptr),
               removed.c_str());
          if (g_logged.size() > 10000) g_logged.clear();
        }
        FREE_NULL_BITMAP(trimmed);
        return rc;
      }
    }
    FREE_NULL_BITMAP(trimmed);
  }
  return (*g_ops.job_test)(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                           preemptee_job_list, exc_core_bitmap);
}

int select_p_job_begin(job_record_t *job_ptr) {
  if (!g_loaded && load_target() != SLURM_SUCCESS) return SLURM_ERROR;
  const int rc = (*g_ops.job_begin)(job_ptr);
  if (const char *cls = job_class(job_ptr)) {
    // job_ptr->nodes is set only after job_begin; cons_tres's job_resrcs already holds them.
    const job_resources_t *res = job_ptr->job_resrcs;
    info("%s: %pJ class=%s placed on %s (%u nodes) by select/cons_tres", plugin_type, job_ptr,
         cls, (res && res->nodes) ? res->nodes : "?", res ? res->nhosts : 0);
  }
  return rc;
}

int select_p_job_ready(job_record_t *job_ptr) { FORWARD(job_ready, SLURM_ERROR, job_ptr); }
int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr) {
  FORWARD(job_expand, SLURM_ERROR, from_job_ptr, to_job_ptr);
}
int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr) {
  FORWARD(job_resized, SLURM_ERROR, job_ptr, node_ptr);
}
int select_p_job_signal(job_record_t *job_ptr, int signal) {
  FORWARD(job_signal, SLURM_ERROR, job_ptr, signal);
}
int select_p_job_fini(job_record_t *job_ptr) { FORWARD(job_fini, SLURM_ERROR, job_ptr); }
int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp) {
  FORWARD(job_suspend, SLURM_ERROR, job_ptr, indf_susp);
}
int select_p_job_resume(job_record_t *job_ptr, bool indf_susp) {
  FORWARD(job_resume, SLURM_ERROR, job_ptr, indf_susp);
}
bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr, select_jobinfo_t *step_jobinfo,
                                   uint32_t node_count, bitstr_t **avail_nodes) {
  FORWARD(step_pick_nodes, nullptr, job_ptr, step_jobinfo, node_count, avail_nodes);
}
int select_p_step_start(step_record_t *step_ptr) { FORWARD(step_start, SLURM_ERROR, step_ptr); }
int select_p_step_finish(step_record_t *step_ptr, bool killing_step) {
  FORWARD(step_finish, SLURM_ERROR, step_ptr, killing_step);
}
int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo, buf_t *buffer,
                                  uint16_t protocol_version) {
  FORWARD(nodeinfo_pack, SLURM_ERROR, nodeinfo, buffer, protocol_version);
}
int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo, buf_t *buffer,
                                    uint16_t protocol_version) {
  FORWARD(nodeinfo_unpack, SLURM_ERROR, nodeinfo, buffer, protocol_version);
}
select_nodeinfo_t *select_p_select_nodeinfo_alloc(void) { FORWARD(nodeinfo_alloc, nullptr); }
int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo) {
  FORWARD(nodeinfo_free, SLURM_ERROR, nodeinfo);
}
int select_p_select_nodeinfo_set_all(void) { FORWARD(nodeinfo_set_all, SLURM_ERROR); }
int select_p_select_nodeinfo_set(job_record_t *job_ptr) {
  FORWARD(nodeinfo_set, SLURM_ERROR, job_ptr);
}
int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo,
                                 enum node_states state, void *data) {
  FORWARD(nodeinfo_get, SLURM_ERROR, nodeinfo, dinfo, state, data);
}
select_jobinfo_t *select_p_select_jobinfo_alloc(void) { FORWARD(jobinfo_alloc, nullptr); }
int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo) {
  FORWARD(jobinfo_free, SLURM_ERROR, jobinfo);
}
int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type,
                                void *data) {
  FORWARD(jobinfo_set, SLURM_ERROR, jobinfo, data_type, data);
}
int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type,
                                void *data) {
  FORWARD(jobinfo_get, SLURM_ERROR, jobinfo, data_type, data);
}
select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo) {
  FORWARD(jobinfo_copy, nullptr, jobinfo);
}
int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo, buf_t *buffer,
                                 uint16_t protocol_version) {
  FORWARD(jobinfo_pack, SLURM_ERROR, jobinfo, buffer, protocol_version);
}
int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo_pptr, buf_t *buffer,
                                   uint16_t protocol_version) {
  FORWARD(jobinfo_unpack, SLURM_ERROR, jobinfo_pptr, buffer, protocol_version);
}
char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo, char *buf, size_t size,
                                     int mode) {
  FORWARD(jobinfo_sprint, nullptr, jobinfo, buf, size, mode);
}
char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo, int mode) {
  FORWARD(jobinfo_xstrdup, nullptr, jobinfo, mode);
}
int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr,
                                  void *data) {
  FORWARD(get_info_from_plugin, SLURM_ERROR, dinfo, job_ptr, data);
}
int select_p_update_node_config(int index) { FORWARD(update_node_config, SLURM_ERROR, index); }
int select_p_reconfigure(void) { FORWARD(reconfigure, SLURM_ERROR); }
bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt,
                             bitstr_t *avail_bitmap, bitstr_t **core_bitmap) {
  FORWARD(resv_test, nullptr, resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}

}  // extern "C"
