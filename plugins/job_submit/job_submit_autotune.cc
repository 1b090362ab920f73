// job_submit/autotune: for a job submitted with --autotune=CLASS, validate its options and
// rewrite its request to the configuration libautotune chose (the class's next trial while it
// is tuning, its best configuration once it converged); record what was done in the AdminComment
// and hand the configuration to the job in its environment.
//
// Runs inside slurmctld under its locks.  The work is libautotune's at_submit(): option checks
// and one short store transaction (the recommendations are precomputed after every measurement,
// outside slurmctld).  When slurmctld enforces accounting limits, it also reads the job's QOS
// and association limits from assoc_mgr (read locks, hash lookups; see accounting_limits()), so
// that no job is given a configuration Slurm would keep pending for ever.  A store that is locked
// or unreadable, or a broken autotune.conf, never blocks a submission: the job is accepted
// unchanged and the reason logged.  No exception crosses into slurmctld (the C API is the
// firewall).  A job without --autotune is untouched.
#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <map>
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
  return false;
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
// association.  These are the limits acct_policy.c applies to one job, reduced to bounds on the
// job's nodes, CPUs, memory and GPUs: for each resource the first QOS that sets a limit (the
// partition's QOS before the job's, unless the job's has OverPartQOS) and, where no QOS sets it,
// the association's (MaxTRES and MaxTRESPerNode of the job's association, GrpTRES of it and of
// every account above it, scaled by the QOS's LimitFactor).  A group or per-user limit smaller
// than one job is a bound on one job too.

struct AcctCtx {
  const job_desc_msg_t *jd;
  part_record_t *part;
  uint32_t uid;
  std::string text;  // storage for at_accounting_limits.text
};

bool limit_set(uint64_t v) { return v != INFINITE64 && v != NO_VAL64 && v > 0; }

// Tightest bound per resource, and where each binding one comes from: a QOS or an association,
// and the limit's name (the text is made only at the end, for the bounds that bind).
struct Origin {
  const slurmdb_qos_rec_t *qos = nullptr;
  const slurmdb_assoc_rec_t *assoc = nullptr;
  const char *limit = nullptr;
};
struct Bounds {
  uint64_t value[4] = {0, 0, 0, 0};  // cpu, mem, node, gpu; 0 = none
  Origin origin[4];
  void offer(int r, uint64_t v, Origin where, bool at_least = false) {
    if (!limit_set(v)) return;
    if (value[r] == 0 || (at_least ? v > value[r] : v < value[r])) {
      value[r] = v;
      origin[r] = where;
    }
  }
};

const char *const kResName[4] = {"cpu", "mem", "node", "gres/gpu"};

void accounting_limits(AcctCtx *ctx, at_accounting_limits *out) {
  slurmdb_assoc_rec_t want;
  memset(&want, 0, sizeof want);
  want.uid = ctx->uid;
  want.acct = ctx->jd->account && ctx->jd->account[0] ? ctx->jd->account : nullptr;
  want.partition = ctx->part ? ctx->part->name : nullptr;
  slurmdb_assoc_rec_t *assoc = nullptr;
  if (assoc_mgr_fill_in_assoc(acct_db_conn, &want, accounting_enforce, &assoc, true) != SLURM_SUCCESS || !assoc)
    return;  // Slurm refuses the job itself (no association)
  slurmdb_qos_rec_t qwant;
  memset(&qwant, 0, sizeof qwant);
  qwant.name = ctx->jd->qos && ctx->jd->qos[0] ? ctx->jd->qos : nullptr;
  assoc_mgr_get_default_qos_info(assoc, &qwant);
  slurmdb_qos_rec_t *job_qos = nullptr;
  if (assoc_mgr_fill_in_qos(acct_db_conn, &qwant, accounting_enforce, &job_qos, true) != SLURM_SUCCESS)
    job_qos = nullptr;
  slurmdb_qos_rec_t *part_qos = ctx->part ? ctx->part->qos_ptr : nullptr;
  slurmdb_qos_rec_t *q1 = job_qos, *q2 = nullptr;
  if (job_qos && part_qos && job_qos != part_qos) {
    if (job_qos->flags & QOS_FLAG_OVER_PART_QOS) q2 = part_qos;
    else { q1 = part_qos; q2 = job_qos; }
  } else if (!job_qos) {
    q1 = part_qos;
  }
  slurmdb_tres_rec_t gpu_rec;
  memset(&gpu_rec, 0, sizeof gpu_rec);
  gpu_rec.type = const_cast<char *>("gres");
  gpu_rec.name = const_cast<char *>("gpu");
  const int pos[4] = {TRES_ARRAY_CPU, TRES_ARRAY_MEM, TRES_ARRAY_NODE, assoc_mgr_find_tres_pos(&gpu_rec, true)};
  auto at = [&](const uint64_t *arr, int r) -> uint64_t {
    return arr && pos[r] >= 0 && static_cast<uint32_t>(pos[r]) < g_tres_count ? arr[pos[r]] : INFINITE64;
  };
  double factor = -1;
  for (slurmdb_qos_rec_t *q : {q1, q2})
    if (q && factor < 0 && q->limit_factor > 0 && q->limit_factor < static_cast<double>(INFINITE)) factor = q->limit_factor;
  auto scaled = [&](uint64_t v) {
    return factor > 0 && limit_set(v) ? static_cast<uint64_t>(static_cast<double>(v) * factor) : v;
  };
  Bounds max_job, max_node, min_job;
  for (int r = 0; r < 4; ++r) {
    // The first QOS that sets each kind of limit decides it.
    bool qos_pj = false, qos_pn = false, qos_grp = false;
    for (slurmdb_qos_rec_t *q : {q1, q2}) {
      if (!q) continue;
      if (!qos_pj && limit_set(at(q->max_tres_pj_ctld, r))) {
        max_job.offer(r, at(q->max_tres_pj_ctld, r), {q, nullptr, "MaxTRESPerJob"});
        qos_pj = true;
      }
      if (!qos_pn && limit_set(at(q->max_tres_pn_ctld, r))) {
        max_node.offer(r, at(q->max_tres_pn_ctld, r), {q, nullptr, "MaxTRESPerNode"});
        qos_pn = true;
      }
      if (!qos_grp && limit_set(at(q->grp_tres_ctld, r))) {
        max_job.offer(r, at(q->grp_tres_ctld, r), {q, nullptr, "GrpTRES"});
        qos_grp = true;
      }
      max_job.offer(r, at(q->max_tres_pu_ctld, r), {q, nullptr, "MaxTRESPerUser"});
      max_job.offer(r, at(q->max_tres_pa_ctld, r), {q, nullptr, "MaxTRESPerAccount"});
      min_job.offer(r, at(q->min_tres_pj_ctld, r), {q, nullptr, "MinTRESPerJob"}, true);
    }
    if (!qos_pj) max_job.offer(r, scaled(at(assoc->max_tres_ctld, r)), {nullptr, assoc, "MaxTRES"});
    if (!qos_pn) max_node.offer(r, scaled(at(assoc->max_tres_pn_ctld, r)), {nullptr, assoc, "MaxTRESPerNode"});
    if (!qos_grp)
      for (slurmdb_assoc_rec_t *a = assoc; a; a = a->usage ? a->usage->parent_assoc_ptr : nullptr)
        max_job.offer(r, scaled(at(a->grp_tres_ctld, r)), {nullptr, a, "GrpTRES"});
  }
  out->max_cpus = max_job.value[0];
  out->max_mem_mb = max_job.value[1];
  out->max_nodes = max_job.value[2];
  out->max_gpus = max_job.value[3];
  out->max_cpus_per_node = max_node.value[0];
  out->max_mem_per_node_mb = max_node.value[1];
  out->max_gpus_per_node = max_node.value[3];
  out->min_cpus = min_job.value[0];
  out->min_mem_mb = min_job.value[1];
  out->min_nodes = min_job.value[2];
  // "QOS small: MaxTRESPerJob=cpu=4,node=2; association of user u, account a: GrpTRES=mem=2000M"
  auto where = [](const Origin &o) {
    std::string w;
    if (o.qos) w = std::string("QOS ") + (o.qos->name ? o.qos->name : "?");
    else if (o.assoc && o.assoc->user) w = std::string("association of user ") + o.assoc->user + ", account " +
                                           (o.assoc->acct ? o.assoc->acct : "?");
    else if (o.assoc) w = std::string("association of account ") + (o.assoc->acct ? o.assoc->acct : "?");
    return w + ": " + o.limit;
  };
  std::vector<std::pair<std::string, std::string>> groups;
  for (const Bounds *b : {&max_job, &max_node, &min_job})
    for (int r = 0; r < 4; ++r) {
      if (!b->value[r]) continue;
      const std::string item = std::string(kResName[r]) + "=" + std::to_string(b->value[r]) + (r == 1 ? "M" : "");
      const std::string origin = where(b->origin[r]);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto &g) { return g.first == origin; });
      if (it == groups.end()) groups.emplace_back(origin, item);
      else it->second += "," + item;
    }
  ctx->text.clear();
  for (const auto &[where, items] : groups) {
    // "QOS small: MaxTRESPerJob" + "=cpu=4,node=2"
    ctx->text += (ctx->text.empty() ? "" : "; ") + where + "=" + items;
  }
  out->text = ctx->text.c_str();
}

void accounting_cb(void *vctx, at_accounting_limits *out) {
  if (!(accounting_enforce & ACCOUNTING_ENFORCE_LIMITS)) return;
  assoc_mgr_lock_t locks;
  memset(&locks, 0, sizeof locks);
  locks.assoc = READ_LOCK;
  locks.qos = READ_LOCK;
  locks.tres = READ_LOCK;
  locks.user = READ_LOCK;
  assoc_mgr_lock(&locks);
  accounting_limits(static_cast<AcctCtx *>(vctx), out);
  assoc_mgr_unlock(&locks);
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
    if (d.is_autotune) note_admin_comment(job_desc, "autotune: tuner unavailable; job runs as submitted");
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
