#include "autotune/config.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

std::string Configuration::format() const {
  std::string s = std::string(kDimNodes) + "=" + std::to_string(counts.nodes) + "," + kDimWorkers +
                  "=" + std::to_string(counts.workers) + "," + kDimServers + "=" +
                  std::to_string(counts.servers) + "," + kDimCpusPerWorker + "=" +
                  std::to_string(worker.cpus) + "," + kDimMemPerWorker + "=" +
                  format_size(worker.mem_mb << 20);
  if (worker.gpus > 0) s += std::string(",") + kDimGpusPerWorker + "=" + std::to_string(worker.gpus);
  s += std::string(",") + kDimCpusPerServer + "=" + std::to_string(server.cpus) + "," +
       kDimMemPerServer + "=" + format_size(server.mem_mb << 20);
  return s;
}

Configuration Configuration::parse(std::string_view text, std::string_view field) {
  const std::string f(field);
  std::map<std::string, std::string> kv;
  for (const auto &[k, v] : split_assignments(f, text, "VALUE")) {
    std::string key(k);
    if (!kv.emplace(key, std::string(v)).second) throw_invalid(f + ": dimension '" + key + "' given twice");
  }
  const char *required[] = {kDimNodes,        kDimWorkers,       kDimServers,     kDimCpusPerWorker,
                            kDimMemPerWorker, kDimCpusPerServer, kDimMemPerServer};
  for (const char *k : required)
    if (!kv.count(k)) throw_invalid(f + ": dimension '" + k + "' is missing in '" + std::string(text) + "'");
  for (const auto &[k, v] : kv) {
    bool known = k == kDimGpusPerWorker;
    for (const char *r : required) known = known || k == r;
    if (!known)
      throw_invalid(f + ": unknown dimension '" + k +
                    "'; allowed: nodes, workers, ps, cpus-per-worker, mem-per-worker, "
                    "gpus-per-worker, cpus-per-ps, mem-per-ps");
  }
  auto sub = [&](const char *k) { return f + " " + k; };
  Configuration c;
  c.counts.nodes = static_cast<int>(parse_int(sub(kDimNodes), kv[kDimNodes], 1, 100000));
  c.counts.workers = static_cast<int>(parse_int(sub(kDimWorkers), kv[kDimWorkers], 1, 1000000));
  c.counts.servers = static_cast<int>(parse_int(sub(kDimServers), kv[kDimServers], 0, 1000000));
  c.worker.cpus = static_cast<int>(parse_int(sub(kDimCpusPerWorker), kv[kDimCpusPerWorker], 1, 4096));
  c.worker.mem_mb = parse_mem_mb(sub(kDimMemPerWorker), kv[kDimMemPerWorker]);
  if (kv.count(kDimGpusPerWorker))
    c.worker.gpus = static_cast<int>(parse_int(sub(kDimGpusPerWorker), kv[kDimGpusPerWorker], 0, 64));
  c.server.cpus = static_cast<int>(parse_int(sub(kDimCpusPerServer), kv[kDimCpusPerServer], 1, 4096));
  c.server.mem_mb = parse_mem_mb(sub(kDimMemPerServer), kv[kDimMemPerServer]);
  c.validate(field);
  return c;
}

SlurmRequest slurm_request(const Configuration &c) {
  SlurmRequest r;
  r.nodes = c.counts.nodes;
  r.ntasks = c.ranks();
  r.cpus_per_task = c.counts.servers > 0 ? std::max(c.worker.cpus, c.server.cpus) : c.worker.cpus;
  const std::uint64_t mem = c.counts.servers > 0 ? std::max(c.worker.mem_mb, c.server.mem_mb) : c.worker.mem_mb;
  r.mem_per_cpu_mb = (mem + static_cast<std::uint64_t>(r.cpus_per_task) - 1) / static_cast<std::uint64_t>(r.cpus_per_task);
  r.gpus_per_task = c.worker.gpus;
  return r;
}

void Configuration::validate(std::string_view field) const {
  const std::string f(field);
  if (counts.nodes < 1) throw_invalid(f + ": nodes must be at least 1");
  if (counts.workers < 1) throw_invalid(f + ": workers must be at least 1");
  if (counts.servers < 0) throw_invalid(f + ": ps must not be negative");
  if (worker.cpus < 1 || server.cpus < 1) throw_invalid(f + ": CPUs per role must be at least 1");
  if (worker.mem_mb < 1 || server.mem_mb < 1) throw_invalid(f + ": memory per role must be at least 1M");
  if (worker.gpus < 0) throw_invalid(f + ": gpus-per-worker must not be negative");
  if (counts.nodes > ranks())
    throw_invalid(f + ": " + std::to_string(counts.nodes) + " nodes for " + std::to_string(ranks()) +
                  " ranks (workers + ps); every node needs at least one rank");
}

}  // namespace autotune
