// job_submit/autotune: for a job submitted with --autotune=CLASS, validate its options and
// rewrite its request to the configuration libautotune chose (the class's next trial while it
// is tuning, its best configuration once it converged); record what was done in the AdminComment
// and hand the configuration to the job in its environment.
//
// Runs inside slurmctld under its locks.  The work is libautotune's at_submit(): option checks
// and one short store transaction (the recommendations are precomputed after every measurement,
// outside slurmctld).  When slurmctld enforces accounting limits, it also copies the job's QOS
// and association limits from assoc_mgr (read locks, hash lookups; see copy_job_accounting()) and
// reduces them to bounds (autotune/limits.hpp), so that no job is given a configuration Slurm
// would keep pending for ever.  A store that is locked, full, damaged or missing, or a broken
// autotune.conf, never blocks a submission: the job is accepted unchanged, the reason logged,
// told to the user (job_submit's message, which sbatch prints) and to the job
// (AUTOTUNE_UNAVAILABLE, for autotune-run), and kept in the AdminComment.  The options come from
// the SPANK plugin (sbatch --autotune*) or, for submissions without it (slurmrestd), from the
// job's environment as SPANK_AUTOTUNE_<NAME> entries.  No exception crosses into slurmctld (the
// C API is the firewall).  A job without --autotune is untouched.
#include <array>
#include <cctype>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "config.h"
extern "C" {
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"
#include "src/common/assoc_mgr.h"
#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
}

#include "autotune/autotune.h"
#include "autotune/limits.hpp"
#include "slurm_log.hpp"

extern "C" const char plugin_name[] = "autotune job_submit plugin";
extern "C" const char plugin_type[] = "job_submit/autotune";
extern "C" const uint32_t plugin_version = SLURM_VERSION_NUMBER;

namespace {

void log_stats(const char *when) {
  char buf[256];
  at_submit_stats(buf, sizeof buf);
  info("%s: %s: %s", plugin_type, when, buf);
}

// Append `note` to the job's AdminComment, keeping what an administrator put there.
void note_admin_comment(job_desc_msg_t *job_desc, const char *note) {
  if (job_desc->admin_comment && job_desc->admin_comment[0]) {
    xstrfmtcat(job_desc->admin_comment, "; %s", note);
  } else {
    xfree(job_desc->admin_comment);
    job_desc->admin_comment = xstrdup(note);
  }
}

// Set KEY=VALUE in an environment array of `count` entries (xmalloc'd, as Slurm keeps them).
void set_env(char ***env, uint32_t *count, const char *kv) {
  const char *eq = strchr(kv, '=');
  if (!eq) return;
  const size_t klen = static_cast<size_t>(eq - kv) + 1;
  for (uint32_t i = 0; i < *count; ++i) {
    if ((*env)[i] && !strncmp((*env)[i], kv, klen)) {
      xfree((*env)[i]);
      (*env)[i] = xstrdup(kv);
      return;
    }
  }
  xrecalloc(*env, *count + 2, sizeof(char *));
  (*env)[(*count)++] = xstrdup(kv);
  (*env)[*count] = nullptr;
}

void unset_env(char **env, uint32_t *count, const char *key) {
  const size_t klen = strlen(key);
  for (uint32_t i = 0; i < *count; ++i) {
    if (env[i] && !strncmp(env[i], key, klen) && env[i][klen] == '=') {
      xfree(env[i]);
      env[i] = env[*count - 1];
      env[*count - 1] = nullptr;
      --*count;
      return;
    }
  }
}

bool has_autotune_option(const job_desc_msg_t *jd) {
  for (uint32_t i = 0; i < jd->spank_job_env_size; ++i)
    if (jd->spank_job_env[i] && !strncmp(jd->spank_job_env[i], "AUTOTUNE_", 9)) return true;
  for (uint32_t i = 0; i < jd->env_size; ++i)
    if (jd->environment && jd->environment[i] && !strncmp(jd->environment[i], "SPANK_AUTOTUNE_", 15)) return true;
  return false;
}

// The --autotune* options given as entries of the job's environment, SPANK_AUTOTUNE_<NAME>
// (the name under which Slurm shows a job's SPANK environment to its prolog and epilog): the
// way through which a submission without the SPANK plugin (slurmrestd's job description, whose
// "environment" is the job's environment) sets them.  Each moves into the job's SPANK
// environment as AUTOTUNE_<NAME>, where at_submit() validates it as the option's; an option
// the SPANK plugin set as well wins.  The entries leave the job's environment, so that a job
// submitted from inside this one is not an autotune job.  False, with *err set, for an entry
// that is not one of the options.
const char *const kEnvOptions[] = {"CLASS", "GAMMA", "BUDGET", "MODE", "PROBE_BATCHES", "SPACE", "METRIC", "WORKFLOW"};

bool options_from_environment(job_desc_msg_t *jd, std::string *err) {
  if (!jd->environment) return true;
  for (uint32_t i = 0; i < jd->env_size;) {
    const char *e = jd->environment[i];
    if (!e || strncmp(e, "SPANK_AUTOTUNE_", 15)) {
      ++i;
      continue;
    }
    const char *eq = strchr(e, '=');
    const std::string name = eq ? std::string(e + 15, eq) : std::string(e + 15);
    bool known = false;
    for (const char *o : kEnvOptions) known = known || name == o;
    if (!known) {
      std::string shown = name.substr(0, 64);  // the user's text, quoted harmlessly
      for (char &ch : shown)
        if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '?';
      *err = "environment entry SPANK_AUTOTUNE_" + shown + (name.size() > 64 ? "..." : "") +
             ": not an option of slurm-autotune; allowed: ";
      for (const char *o : kEnvOptions) *err += std::string(o == kEnvOptions[0] ? "" : ", ") + "SPANK_AUTOTUNE_" + o;
      return false;
    }
    const std::string var = "AUTOTUNE_" + name;
    bool given = false;
    for (uint32_t k = 0; k < jd->spank_job_env_size; ++k)
      given = given || (jd->spank_job_env[k] && !strncmp(jd->spank_job_env[k], var.c_str(), var.size()) &&
                        jd->spank_job_env[k][var.size()] == '=');
    if (!given) set_env(&jd->spank_job_env, &jd->spank_job_env_size, (var + "=" + (eq ? eq + 1 : "")).c_str());
    unset_env(jd->environment, &jd->env_size, std::string(e, eq ? eq : e + strlen(e)).c_str());  // moves the last entry to i
  }
  return true;
}

part_record_t *job_partition(const job_desc_msg_t *jd) {
  if (!jd->partition || !jd->partition[0]) return default_part_loc;
  std::string first = jd->partition;
  first = first.substr(0, first.find(','));
  part_record_t *p = find_part_record(const_cast<char *>(first.c_str()));
  return p ? p : default_part_loc;
}

// The node kinds of the partition: nodes grouped by (CPUs, memory, features).
struct InventoryCtx {
  part_record_t *part;
  std::vector<std::string> names, features;  // storage for the strings handed out
};

size_t inventory_cb(void *vctx, at_node_type *types, size_t max) {
  auto *ctx = static_cast<InventoryCtx *>(vctx);
  std::map<std::tuple<int, unsigned long long, std::string>, int> kinds;
  node_record_t *node;
  for (int i = 0; (node = next_node(&i)); i++) {
    if (ctx->part && ctx->part->node_bitmap && !bit_test(ctx->part->node_bitmap, node->index)) continue;
    // What a job can use: CPUs without the specialized cores, RealMemory without MemSpecLimit.
    const int cpus = node->cpus_efctv ? node->cpus_efctv : node->cpus;
    const uint64_t mem = node->real_memory > node->mem_spec_limit ? node->real_memory - node->mem_spec_limit : 1;
    kinds[{cpus, static_cast<unsigned long long>(mem), node->features ? node->features : ""}]++;
  }
  ctx->names.clear();
  ctx->features.clear();
  ctx->names.reserve(kinds.size());
  ctx->features.reserve(kinds.size());
  size_t n = 0;
  for (const auto &[k, count] : kinds) {
    if (n >= max) break;
    ctx->names.push_back("cpus" + std::to_string(std::get<0>(k)) + "-mem" + std::to_string(std::get<1>(k)) +
                         (std::get<2>(k).empty() ? "" : "-" + std::get<2>(k)));
    ctx->features.push_back(std::get<2>(k));
    types[n].name = ctx->names.back().c_str();
    types[n].count = count;
    types[n].cpus = std::get<0>(k);
    types[n].mem_mb = std::get<1>(k);
    types[n].gpus = 0;
    types[n].features = ctx->features.back().c_str();
    ++n;
  }
  return n;
}

void rewrite(job_desc_msg_t *jd, const at_submit_decision &d) {
  jd->min_nodes = d.nodes;
  jd->max_nodes = d.nodes;
  jd->num_tasks = d.ntasks;
  jd->cpus_per_task = static_cast<uint16_t>(d.cpus_per_task);
  jd->pn_min_cpus = static_cast<uint16_t>(d.cpus_per_task);
  jd->min_cpus = d.ntasks * d.cpus_per_task;
  jd->max_cpus = NO_VAL;
  jd->pn_min_memory = d.mem_per_cpu_mb | MEM_PER_CPU;
  jd->ntasks_per_node = NO_VAL16;
  jd->ntasks_per_socket = NO_VAL16;
  jd->ntasks_per_core = NO_VAL16;
  jd->ntasks_per_board = NO_VAL16;
  xfree(jd->mem_per_tres);
  xfree(jd->cpus_per_tres);
  // What sbatch exported from the original options would contradict the new request.
  if (jd->environment) {
    char buf[64];
    snprintf(buf, sizeof buf, "SLURM_NTASKS=%u", d.ntasks);
    set_env(&jd->environment, &jd->env_size, buf);
    snprintf(buf, sizeof buf, "SLURM_NPROCS=%u", d.ntasks);
    set_env(&jd->environment, &jd->env_size, buf);
    snprintf(buf, sizeof buf, "SLURM_CPUS_PER_TASK=%u", d.cpus_per_task);
    set_env(&jd->environment, &jd->env_size, buf);
    snprintf(buf, sizeof buf, "SLURM_MEM_PER_CPU=%llu", d.mem_per_cpu_mb);
    set_env(&jd->environment, &jd->env_size, buf);
    for (const char *k : {"SLURM_MEM_PER_NODE", "SLURM_NTASKS_PER_NODE", "SLURM_MEM_PER_GPU"})
      unset_env(jd->environment, &jd->env_size, k);
  }
}

// ---- accounting limits ---------------------------------------------------------------------
// With AccountingStorageEnforce=limits, slurmctld keeps a job pending for ever (or, with a QOS
// flagged DenyOnLimit, refuses it) when its request exceeds a per-job limit of its QOS or
// association.  Which of those limits bound one job, and how tightly, is the policy's
// (autotune/limits.hpp, accounting_limits()); here the job's association, its parents and its
// QOSes are found in assoc_mgr and their TRES limits copied, under assoc_mgr's read locks.

struct AcctCtx {
  const job_desc_msg_t *jd;
  part_record_t *part;
  uint32_t uid;
  std::string text;  // storage for at_accounting_limits.text
};

// assoc_mgr's read locks on associations, QOSes, TRES and users, for one scope.
class AssocMgrReadLock {
 public:
  AssocMgrReadLock() {
    memset(&locks_, 0, sizeof locks_);
    locks_.assoc = READ_LOCK;
    locks_.qos = READ_LOCK;
    locks_.tres = READ_LOCK;
    locks_.user = READ_LOCK;
    assoc_mgr_lock(&locks_);
  }
  ~AssocMgrReadLock() { assoc_mgr_unlock(&locks_); }
  AssocMgrReadLock(const AssocMgrReadLock &) = delete;
  AssocMgrReadLock &operator=(const AssocMgrReadLock &) = delete;

 private:
  assoc_mgr_lock_t locks_;
};

// Where each resource's limit sits in assoc_mgr's TRES arrays: cpu, mem and node at their fixed
// positions, gres/gpu wherever AccountingStorageTRES put it (-1: not tracked).  Caller holds the
// TRES read lock.
using TresPositions = std::array<int, autotune::kTresCount>;
TresPositions tres_positions() {
  slurmdb_tres_rec_t gpu;
  memset(&gpu, 0, sizeof gpu);
  gpu.type = const_cast<char *>("gres");
  gpu.name = const_cast<char *>("gpu");
  TresPositions pos{};
  pos[static_cast<size_t>(autotune::Tres::cpu)] = TRES_ARRAY_CPU;
  pos[static_cast<size_t>(autotune::Tres::mem)] = TRES_ARRAY_MEM;
  pos[static_cast<size_t>(autotune::Tres::node)] = TRES_ARRAY_NODE;
  pos[static_cast<size_t>(autotune::Tres::gpu)] = assoc_mgr_find_tres_pos(&gpu, true);
  return pos;
}

// A TRES array of assoc_mgr (g_tres_count entries, or none) as limits: INFINITE64 and NO_VAL64
// (not set), 0, a missing array and an untracked TRES are no limit.
autotune::TresLimits copy_tres(const uint64_t *arr, const TresPositions &pos) {
  autotune::TresLimits out;
  for (const autotune::Tres r : autotune::kAllTres) {
    const int p = pos[static_cast<size_t>(r)];
    if (!arr || p < 0 || static_cast<uint32_t>(p) >= g_tres_count) continue;
    const uint64_t v = arr[p];
    if (v != INFINITE64 && v != NO_VAL64 && v > 0) out[r] = v;
  }
  return out;
}

autotune::QosLimits copy_qos(const slurmdb_qos_rec_t *q, const TresPositions &pos) {
  autotune::QosLimits out;
  out.name = q->name ? q->name : "";
  out.over_part_qos = (q->flags & QOS_FLAG_OVER_PART_QOS) != 0;
  // Not set: INFINITE (NO_VAL and the like are no factor either).
  if (q->limit_factor > 0 && q->limit_factor < static_cast<double>(INFINITE)) out.limit_factor = q->limit_factor;
  out.max_per_job = copy_tres(q->max_tres_pj_ctld, pos);
  out.max_per_node = copy_tres(q->max_tres_pn_ctld, pos);
  out.grp = copy_tres(q->grp_tres_ctld, pos);
  out.max_per_user = copy_tres(q->max_tres_pu_ctld, pos);
  out.max_per_account = copy_tres(q->max_tres_pa_ctld, pos);
  out.min_per_job = copy_tres(q->min_tres_pj_ctld, pos);
  return out;
}

autotune::AssocLimits copy_assoc(const slurmdb_assoc_rec_t *a, const TresPositions &pos) {
  autotune::AssocLimits out;
  out.user = a->user ? a->user : "";
  out.account = a->acct ? a->acct : "";
  out.max_per_job = copy_tres(a->max_tres_ctld, pos);
  out.max_per_node = copy_tres(a->max_tres_pn_ctld, pos);
  out.grp = copy_tres(a->grp_tres_ctld, pos);
  return out;
}

// The job's association (with every account above it) and QOSes, copied.  False when the job has
// no association: Slurm refuses the job itself.  Caller holds assoc_mgr's read locks.
bool copy_job_accounting(const AcctCtx &ctx, autotune::JobAccounting *out) {
  slurmdb_assoc_rec_t want;
  memset(&want, 0, sizeof want);
  want.uid = ctx.uid;
  want.acct = ctx.jd->account && ctx.jd->account[0] ? ctx.jd->account : nullptr;
  want.partition = ctx.part ? ctx.part->name : nullptr;
  slurmdb_assoc_rec_t *assoc = nullptr;
  if (assoc_mgr_fill_in_assoc(acct_db_conn, &want, accounting_enforce, &assoc, true) != SLURM_SUCCESS || !assoc)
    return false;
  slurmdb_qos_rec_t qwant;
  memset(&qwant, 0, sizeof qwant);
  qwant.name = ctx.jd->qos && ctx.jd->qos[0] ? ctx.jd->qos : nullptr;
  assoc_mgr_get_default_qos_info(assoc, &qwant);
  slurmdb_qos_rec_t *job_qos = nullptr;
  if (assoc_mgr_fill_in_qos(acct_db_conn, &qwant, accounting_enforce, &job_qos, true) != SLURM_SUCCESS)
    job_qos = nullptr;
  const slurmdb_qos_rec_t *part_qos = ctx.part ? ctx.part->qos_ptr : nullptr;
  const TresPositions pos = tres_positions();
  if (job_qos) out->job_qos = copy_qos(job_qos, pos);
  if (part_qos) out->partition_qos = copy_qos(part_qos, pos);
  for (const slurmdb_assoc_rec_t *a = assoc; a; a = a->usage ? a->usage->parent_assoc_ptr : nullptr)
    out->associations.push_back(copy_assoc(a, pos));
  return true;
}

void accounting_cb(void *vctx, at_accounting_limits *out) {
  if (!(accounting_enforce & ACCOUNTING_ENFORCE_LIMITS)) return;
  auto *ctx = static_cast<AcctCtx *>(vctx);
  autotune::JobAccounting job;
  {
    AssocMgrReadLock lock;
    if (!copy_job_accounting(*ctx, &job)) return;
  }
  const autotune::AccountingLimits l = autotune::accounting_limits(job);
  out->max_cpus = l.max_cpus;
  out->max_mem_mb = l.max_mem_mb;
  out->max_nodes = l.max_nodes;
  out->max_gpus = l.max_gpus;
  out->max_cpus_per_node = l.max_cpus_per_node;
  out->max_mem_per_node_mb = l.max_mem_per_node_mb;
  out->max_gpus_per_node = l.max_gpus_per_node;
  out->min_cpus = l.min_cpus;
  out->min_mem_mb = l.min_mem_mb;
  out->min_nodes = l.min_nodes;
  ctx->text = l.text;
  out->text = ctx->text.c_str();
}

}  // namespace

extern "C" int init(void) {
  at_set_log_sink(autotune_plugin::slurm_log_sink);
  char *path = get_extra_conf_path(const_cast<char *>("autotune.conf"));
  char err[512];
  if (at_submit_configure(path, err, sizeof err) != AT_OK)
    error("%s: %s: jobs with --autotune run as submitted until it is fixed", plugin_type, err);
  else
    debug("%s: loaded (%s)", plugin_type, path);
  xfree(path);
  return SLURM_SUCCESS;
}

extern "C" int fini(void) {
  log_stats("unloaded");
  at_set_log_sink(nullptr);
  return SLURM_SUCCESS;
}

extern "C" int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg) {
  if (!has_autotune_option(job_desc)) return SLURM_SUCCESS;  // untouched
  if (std::string why; !options_from_environment(job_desc, &why)) {
    verbose("%s: submission refused: %s", plugin_type, why.c_str());
    if (err_msg) *err_msg = xstrdup(why.c_str());
    return SLURM_ERROR;
  }
  InventoryCtx ctx{job_partition(job_desc), {}, {}};
  at_submit_request req{};
  req.uid = job_desc->user_id != NO_VAL ? job_desc->user_id : submit_uid;
  req.spank_env = job_desc->spank_job_env;
  req.spank_env_count = job_desc->spank_job_env_size;
  req.partition = ctx.part ? ctx.part->name : nullptr;
  req.billing_weights = ctx.part ? ctx.part->billing_weights_str : nullptr;
  req.inventory = inventory_cb;
  req.inventory_ctx = &ctx;
  req.is_array = job_desc->array_inx && job_desc->array_inx[0] ? 1 : 0;
  req.is_het = job_desc->het_job_offset != NO_VAL ? 1 : 0;
  AcctCtx acct{job_desc, ctx.part, req.uid, {}};
  req.accounting = accounting_cb;
  req.accounting_ctx = &acct;
  if (const part_record_t *p = ctx.part) {
    at_partition_limits &l = req.limits;
    l.min_nodes = p->min_nodes > 1 && p->min_nodes != INFINITE ? p->min_nodes : 0;
    l.max_nodes = p->max_nodes != INFINITE ? p->max_nodes : 0;
    l.max_cpus_per_node = p->max_cpus_per_node != INFINITE ? p->max_cpus_per_node : 0;
    if (p->max_mem_per_cpu && p->max_mem_per_cpu != INFINITE64) {
      if (p->max_mem_per_cpu & MEM_PER_CPU) l.max_mem_per_cpu_mb = p->max_mem_per_cpu & ~MEM_PER_CPU;
      else l.max_mem_per_node_mb = p->max_mem_per_cpu;
    }
  }
  at_submit_decision d;
  char err[1024];
  const int rc = at_submit(&req, &d, err, sizeof err);
  if (rc == AT_EINVAL) {
    verbose("%s: uid %u: submission refused: %s", plugin_type, req.uid, err);
    if (err_msg) *err_msg = xstrdup(err);
    return SLURM_ERROR;
  }
  if (rc != AT_OK) {
    error("%s: uid %u: %s; job accepted unchanged", plugin_type, req.uid, err);
    if (d.is_autotune) {
      // The job runs untuned on what it asked for; it, its user and the AdminComment say why.
      note_admin_comment(job_desc, d.admin_comment[0] ? d.admin_comment : "autotune: tuner unavailable; job runs as submitted");
      for (int i = 0; i < d.env_count; ++i) {
        set_env(&job_desc->spank_job_env, &job_desc->spank_job_env_size, d.env[i]);
        if (job_desc->environment) set_env(&job_desc->environment, &job_desc->env_size, d.env[i]);
      }
      if (err_msg && d.user_msg[0]) *err_msg = xstrdup(d.user_msg);
    }
    return SLURM_SUCCESS;
  }
  if (!d.is_autotune) return SLURM_SUCCESS;
  if (d.rewrite) rewrite(job_desc, d);
  for (int i = 0; i < d.env_count; ++i) {
    set_env(&job_desc->spank_job_env, &job_desc->spank_job_env_size, d.env[i]);
    if (job_desc->environment) set_env(&job_desc->environment, &job_desc->env_size, d.env[i]);
  }
  note_admin_comment(job_desc, d.admin_comment);
  verbose("%s: uid %u: %s", plugin_type, req.uid, d.admin_comment);
  return SLURM_SUCCESS;
}

extern "C" int job_modify(job_desc_msg_t * /*job_desc*/, job_record_t * /*job_ptr*/, uint32_t /*modify_uid*/) {
  return SLURM_SUCCESS;
}
