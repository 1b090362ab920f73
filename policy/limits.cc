#include "autotune/limits.hpp"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "autotune/config.hpp"

namespace autotune {

// ---- the partition's limits and accounting's, against a request -----------------------------

bool AccountingLimits::any() const {
  return max_nodes || max_cpus || max_mem_mb || max_gpus || max_cpus_per_node ||
         max_mem_per_node_mb || max_gpus_per_node || min_nodes || min_cpus || min_mem_mb;
}

std::string AccountingLimits::violation(const SlurmRequest &r) const {
  const std::uint64_t nodes = static_cast<std::uint64_t>(r.nodes);
  const std::uint64_t cpus =
      static_cast<std::uint64_t>(r.ntasks) * static_cast<std::uint64_t>(r.cpus_per_task);
  const std::uint64_t mem = cpus * r.mem_per_cpu_mb;  // Slurm's memory TRES of a --mem-per-cpu job
  const std::uint64_t gpus =
      static_cast<std::uint64_t>(r.ntasks) * static_cast<std::uint64_t>(r.gpus_per_task);
  const std::uint64_t per_node_tasks = static_cast<std::uint64_t>(r.max_tasks_per_node());
  struct Bound {
    std::uint64_t asked, limit;
    bool at_least;
    const char *what;
  };
  const Bound bounds[] = {
      {nodes, max_nodes, false, "nodes"},
      {cpus, max_cpus, false, "CPUs"},
      {mem, max_mem_mb, false, "MB of memory"},
      {gpus, max_gpus, false, "GPUs"},
      {static_cast<std::uint64_t>(r.cpus_per_node()), max_cpus_per_node, false, "CPUs per node"},
      {r.mem_per_node_mb(), max_mem_per_node_mb, false, "MB of memory per node"},
      {static_cast<std::uint64_t>(r.gpus_per_task) * per_node_tasks, max_gpus_per_node, false,
       "GPUs per node"},
      {nodes, min_nodes, true, "nodes"},
      {cpus, min_cpus, true, "CPUs"},
      {mem, min_mem_mb, true, "MB of memory"},
  };
  for (const Bound &b : bounds) {
    if (b.limit == 0 || (b.at_least ? b.asked >= b.limit : b.asked <= b.limit)) continue;
    return "asks for " + std::to_string(b.asked) + " " + b.what +
           (b.at_least ? ", at least " : ", at most ") + std::to_string(b.limit);
  }
  return "";
}

bool PartitionLimits::any() const {
  return min_nodes > 0 || max_nodes > 0 || max_cpus_per_node > 0 || max_mem_per_node_mb > 0 ||
         max_mem_per_cpu_mb > 0;
}

std::string PartitionLimits::describe() const {
  std::string out;
  auto add = [&](const std::string &kv) { out += (out.empty() ? "" : ", ") + kv; };
  if (min_nodes > 0) add("MinNodes=" + std::to_string(min_nodes));
  if (max_nodes > 0) add("MaxNodes=" + std::to_string(max_nodes));
  if (max_cpus_per_node > 0) add("MaxCPUsPerNode=" + std::to_string(max_cpus_per_node));
  if (max_mem_per_node_mb > 0) add("MaxMemPerNode=" + std::to_string(max_mem_per_node_mb));
  if (max_mem_per_cpu_mb > 0) add("MaxMemPerCPU=" + std::to_string(max_mem_per_cpu_mb));
  return out;
}

std::string PartitionLimits::violation(const SlurmRequest &r) const {
  if (min_nodes > 0 && r.nodes < min_nodes)
    return "asks for " + std::to_string(r.nodes) + (r.nodes == 1 ? " node" : " nodes") +
           ", MinNodes=" + std::to_string(min_nodes);
  if (max_nodes > 0 && r.nodes > max_nodes)
    return "asks for " + std::to_string(r.nodes) + " nodes, MaxNodes=" + std::to_string(max_nodes);
  if (max_cpus_per_node > 0 && r.cpus_per_node() > max_cpus_per_node)
    return "asks for " + std::to_string(r.cpus_per_node()) +
           " CPUs per node, MaxCPUsPerNode=" + std::to_string(max_cpus_per_node);
  if (max_mem_per_node_mb > 0 && r.mem_per_node_mb() > max_mem_per_node_mb)
    return "asks for " + std::to_string(r.mem_per_node_mb()) +
           " MB per node, MaxMemPerNode=" + std::to_string(max_mem_per_node_mb);
  if (max_mem_per_cpu_mb > 0 && r.mem_per_cpu_mb > max_mem_per_cpu_mb)
    return "asks for " + std::to_string(r.mem_per_cpu_mb) +
           " MB per CPU, MaxMemPerCPU=" + std::to_string(max_mem_per_cpu_mb);
  return accounting.violation(r);
}

// ---- a job's QOS and association limits, reduced to bounds -----------------------------------

const char *tres_name(Tres r) {
  switch (r) {
    case Tres::cpu:
      return "cpu";
    case Tres::mem:
      return "mem";
    case Tres::node:
      return "node";
    case Tres::gpu:
      return "gres/gpu";
  }
  return "?";
}

namespace {

bool is_set(const std::optional<std::uint64_t> &v) { return v && *v > 0; }

// Where a bound comes from: a QOS or an association, and the limit's name.
struct Origin {
  const QosLimits *qos = nullptr;
  const AssocLimits *assoc = nullptr;
  const char *limit = nullptr;
};

// The tightest bound per resource (the largest, for bounds from below), and where it comes from.
struct Bounds {
  std::array<std::uint64_t, kTresCount> value{};  // 0: none
  std::array<Origin, kTresCount> origin{};
  bool at_least = false;
  // A bound offered later replaces the one held only when it is strictly tighter.
  void offer(Tres r, const std::optional<std::uint64_t> &v, Origin where) {
    if (!is_set(v)) return;
    const std::size_t i = static_cast<std::size_t>(r);
    if (value[i] == 0 || (at_least ? *v > value[i] : *v < value[i])) {
      value[i] = *v;
      origin[i] = where;
    }
  }
  std::uint64_t operator[](Tres r) const { return value[static_cast<std::size_t>(r)]; }
};

// "QOS small: MaxTRESPerJob", "association of user u, account a: GrpTRES"
std::string where(const Origin &o) {
  auto or_unknown = [](const std::string &s) { return s.empty() ? std::string("?") : s; };
  std::string w;
  if (o.qos)
    w = "QOS " + or_unknown(o.qos->name);
  else if (o.assoc && !o.assoc->user.empty())
    w = "association of user " + o.assoc->user + ", account " + or_unknown(o.assoc->account);
  else if (o.assoc)
    w = "association of account " + or_unknown(o.assoc->account);
  return w + ": " + o.limit;
}

}  // namespace

AccountingLimits accounting_limits(const JobAccounting &job) {
  // The QOSes in the order their limits apply.
  const QosLimits *job_qos = job.job_qos ? &*job.job_qos : nullptr;
  const QosLimits *part_qos = job.partition_qos ? &*job.partition_qos : nullptr;
  const QosLimits *q1 = job_qos, *q2 = nullptr;
  if (job_qos && part_qos && job_qos->name != part_qos->name) {
    if (job_qos->over_part_qos) {
      q2 = part_qos;
    } else {
      q1 = part_qos;
      q2 = job_qos;
    }
  } else if (!job_qos) {
    q1 = part_qos;
  }
  // The association limits' scale: the LimitFactor of the first QOS that has one.
  std::optional<double> factor;
  for (const QosLimits *q : {q1, q2})
    if (q && !factor && q->limit_factor && *q->limit_factor > 0) factor = q->limit_factor;
  auto scaled = [&](const std::optional<std::uint64_t> &v) -> std::optional<std::uint64_t> {
    if (!factor || !is_set(v)) return v;
    const double x = static_cast<double>(*v) * *factor;
    if (!(x < 18446744073709551616.0)) return std::nullopt;  // beyond 2^64: no limit
    return static_cast<std::uint64_t>(x);
  };
  const AssocLimits *assoc = job.associations.empty() ? nullptr : &job.associations.front();

  Bounds max_job, max_node, min_job;
  min_job.at_least = true;
  for (const Tres r : kAllTres) {
    // The first QOS that sets each kind of limit decides it.
    bool qos_pj = false, qos_pn = false, qos_grp = false;
    for (const QosLimits *q : {q1, q2}) {
      if (!q) continue;
      if (!qos_pj && is_set(q->max_per_job[r])) {
        max_job.offer(r, q->max_per_job[r], {q, nullptr, "MaxTRESPerJob"});
        qos_pj = true;
      }
      if (!qos_pn && is_set(q->max_per_node[r])) {
        max_node.offer(r, q->max_per_node[r], {q, nullptr, "MaxTRESPerNode"});
        qos_pn = true;
      }
      if (!qos_grp && is_set(q->grp[r])) {
        max_job.offer(r, q->grp[r], {q, nullptr, "GrpTRES"});
        qos_grp = true;
      }
      max_job.offer(r, q->max_per_user[r], {q, nullptr, "MaxTRESPerUser"});
      max_job.offer(r, q->max_per_account[r], {q, nullptr, "MaxTRESPerAccount"});
      min_job.offer(r, q->min_per_job[r], {q, nullptr, "MinTRESPerJob"});
    }
    if (!assoc) continue;
    if (!qos_pj) max_job.offer(r, scaled(assoc->max_per_job[r]), {nullptr, assoc, "MaxTRES"});
    if (!qos_pn)
      max_node.offer(r, scaled(assoc->max_per_node[r]), {nullptr, assoc, "MaxTRESPerNode"});
    if (!qos_grp)
      for (const AssocLimits &a : job.associations)
        max_job.offer(r, scaled(a.grp[r]), {nullptr, &a, "GrpTRES"});
  }

  AccountingLimits out;
  out.max_cpus = max_job[Tres::cpu];
  out.max_mem_mb = max_job[Tres::mem];
  out.max_nodes = max_job[Tres::node];
  out.max_gpus = max_job[Tres::gpu];
  out.max_cpus_per_node = max_node[Tres::cpu];
  out.max_mem_per_node_mb = max_node[Tres::mem];
  out.max_gpus_per_node = max_node[Tres::gpu];
  out.min_cpus = min_job[Tres::cpu];
  out.min_mem_mb = min_job[Tres::mem];
  out.min_nodes = min_job[Tres::node];
  // Each binding bound as "cpu=4" under its origin ("QOS small: MaxTRESPerJob"), origins in the
  // order they first bind.
  std::vector<std::pair<std::string, std::string>> groups;
  for (const Bounds *b : {&max_job, &max_node, &min_job})
    for (const Tres r : kAllTres) {
      const std::size_t i = static_cast<std::size_t>(r);
      if (!b->value[i]) continue;
      const std::string item = std::string(tres_name(r)) + "=" + std::to_string(b->value[i]) +
                               (r == Tres::mem ? "M" : "");
      const std::string origin = where(b->origin[i]);
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto &g) { return g.first == origin; });
      if (it == groups.end())
        groups.emplace_back(origin, item);
      else
        it->second += "," + item;
    }
  for (const auto &[origin, items] : groups)
    out.text += (out.text.empty() ? "" : "; ") + origin + "=" + items;
  return out;
}

}  // namespace autotune
