#include "autotune/space.hpp"

#include <algorithm>
#include <set>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {
namespace {

constexpr const char *kAllowedDims =
    "nodes, workers, ps, cpus-per-worker, mem-per-worker, gpus-per-worker, cpus-per-ps, mem-per-ps";

std::string format_value(Dim d, std::uint64_t v) {
  return dim_is_memory(d) ? format_size(v << 20) : std::to_string(v);
}

// "1-16" or "4" for messages.
std::string format_range(Dim d, const DimValues &v) {
  if (v.front() == v.back()) return format_value(d, v.front());
  return format_value(d, v.front()) + "-" + format_value(d, v.back());
}

std::string syntax(Dim d) {
  return dim_is_memory(d)
             ? "allowed: a size (512M), a range (256M-2G, 1G-4G:512M, 256M-4G:x2) "
               "or a set (512M|1G|2G)"
             : "allowed: a number (4), a range (1-8, 2-16:2, 1-16:x2) or a set (1|2|4)";
}

std::uint64_t parse_atom(const std::string &where, Dim d, std::string_view atom) {
  if (dim_is_memory(d)) {
    const std::uint64_t mb = parse_mem_mb(where, atom);
    if (mb < dim_min(d) || mb > dim_max(d))
      throw_invalid(where + ": '" + std::string(atom) + "' is out of range; allowed: " +
                    format_value(d, dim_min(d)) + " to " + format_value(d, dim_max(d)));
    return mb;
  }
  return static_cast<std::uint64_t>(parse_int(where, atom, static_cast<long long>(dim_min(d)),
                                              static_cast<long long>(dim_max(d))));
}

DimValues parse_values(const std::string &field, Dim d, std::string_view text) {
  const std::string where = field + ": " + dim_name(d);
  if (text.empty()) throw_invalid(where + ": empty value; " + syntax(d));
  DimValues out;
  // Counted before anything is expanded or allocated.
  auto too_many = [&](std::uint64_t n, const char *hint) {
    throw_invalid(where + ": '" + std::string(text) + "' has " + std::to_string(n) +
                  " values; at most " + std::to_string(kMaxDimValues) +
                  " are allowed per dimension" + hint);
  };
  auto push = [&](std::uint64_t v) {
    if (out.size() >= kMaxDimValues) too_many(out.size() + 1, "");  // not reached: counted first
    out.push_back(v);
  };
  if (text.find('|') != std::string_view::npos) {
    const auto n = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '|')) + 1;
    if (n > kMaxDimValues) too_many(n, "");
    out.reserve(n);
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t bar = text.find('|', pos);
      if (bar == std::string_view::npos) bar = text.size();
      std::string_view atom = text.substr(pos, bar - pos);
      pos = bar + 1;
      if (atom.empty() || atom.find_first_of("-:") != std::string_view::npos)
        throw_invalid(where + ": '" + std::string(text) + "' is not a set of single values; " +
                      syntax(d));
      push(parse_atom(where, d, atom));
    }
  } else if (const size_t dash = text.find('-'); dash != std::string_view::npos) {
    std::string_view lo_s = text.substr(0, dash), rest = text.substr(dash + 1), step_s;
    const size_t colon = rest.find(':');
    const bool has_step = colon != std::string_view::npos;
    if (has_step) {
      step_s = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
    }
    if (lo_s.empty() || rest.empty() || rest.find('-') != std::string_view::npos ||
        (has_step && step_s.empty()))
      throw_invalid(where + ": '" + std::string(text) + "' is not a range; " + syntax(d));
    const std::uint64_t lo = parse_atom(where, d, lo_s), hi = parse_atom(where, d, rest);
    if (lo > hi)
      throw_invalid(where + ": '" + std::string(text) +
                    "' is an empty range; allowed: LOW-HIGH with LOW <= HIGH");
    bool geometric = dim_is_memory(d) && !has_step;
    std::uint64_t step = 1, factor = 2;
    if (has_step) {
      if (step_s[0] == 'x' || step_s[0] == 'X') {
        geometric = true;
        factor = static_cast<std::uint64_t>(parse_int(where + " step", step_s.substr(1), 2, 1024));
      } else if (dim_is_memory(d)) {
        step = parse_mem_mb(where + " step", step_s);
        if (step == 0)
          throw_invalid(where + " step: '" + std::string(step_s) + "' must be positive");
      } else {
        step = static_cast<std::uint64_t>(parse_int(where + " step", step_s, 1, 1000000));
      }
    }
    if (geometric && lo == 0)
      throw_invalid(where + ": '" + std::string(text) + "': a geometric range must start above 0");
    std::uint64_t n = 0;
    if (geometric) {
      for (std::uint64_t v = lo; v <= hi && n <= kMaxDimValues; ++n) {  // at most 64 steps
        if (v > hi / factor) {
          ++n;
          break;
        }
        v *= factor;
      }
    } else {
      n = (hi - lo) / step + 1;
    }
    if (n > kMaxDimValues) too_many(n, geometric ? "" : " (use a larger step, or a factor: LOW-HIGH:x2)");
    out.reserve(n);
    for (std::uint64_t v = lo; v <= hi;) {
      push(v);
      const std::uint64_t next = geometric ? v * factor : v + step;
      if (next <= v) break;  // overflow
      v = next;
    }
  } else if (text.find(':') != std::string_view::npos) {
    throw_invalid(where + ": '" + std::string(text) + "': a step needs a range (LOW-HIGH:STEP); " +
                  syntax(d));
  } else {
    push(parse_atom(where, d, text));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

const char *dim_name(Dim d) {
  switch (d) {
    case Dim::nodes:
      return kDimNodes;
    case Dim::workers:
      return kDimWorkers;
    case Dim::ps:
      return kDimServers;
    case Dim::cpus_per_worker:
      return kDimCpusPerWorker;
    case Dim::mem_per_worker:
      return kDimMemPerWorker;
    case Dim::gpus_per_worker:
      return kDimGpusPerWorker;
    case Dim::cpus_per_ps:
      return kDimCpusPerServer;
    case Dim::mem_per_ps:
      return kDimMemPerServer;
  }
  return "?";
}

bool dim_is_memory(Dim d) { return d == Dim::mem_per_worker || d == Dim::mem_per_ps; }

std::uint64_t dim_min(Dim d) {
  switch (d) {
    case Dim::ps:
    case Dim::gpus_per_worker:
      return 0;
    default:
      return 1;
  }
}

std::uint64_t dim_max(Dim d) {
  switch (d) {
    case Dim::nodes:
      return 100000;
    case Dim::workers:
    case Dim::ps:
      return 1000000;
    case Dim::cpus_per_worker:
    case Dim::cpus_per_ps:
      return 4096;
    case Dim::gpus_per_worker:
      return 64;
    case Dim::mem_per_worker:
    case Dim::mem_per_ps:
      return 1ull << 30;  // 1 PiB in MB
  }
  return 0;
}

SpaceSpec SpaceSpec::parse(std::string_view text, std::string_view field, std::size_t max_text) {
  const std::string f(field);
  if (text.empty())
    throw_invalid(f +
                  ": empty space; allowed: comma-separated DIMENSION=VALUES items with "
                  "DIMENSION one of " +
                  kAllowedDims);
  if (text.size() > max_text)
    throw_invalid(f + ": the space is " + std::to_string(text.size()) + " characters long; at most " +
                  std::to_string(max_text) + " are allowed (use ranges: 1-64:x2)");
  SpaceSpec s;
  for (const auto &[key, value] : split_assignments(f, text, "VALUES")) {
    int found = -1;
    for (int i = 0; i < kDimCount; ++i)
      if (key == dim_name(static_cast<Dim>(i))) found = i;
    if (found < 0)
      throw_invalid(f + ": unknown dimension '" + std::string(key) + "'; allowed: " + kAllowedDims);
    if (s.dims_[found])
      throw_invalid(f + ": " + std::string(key) + ": given twice in '" + std::string(text) + "'");
    s.dims_[found] = parse_values(f, static_cast<Dim>(found), value);
  }
  return s;
}

void SpaceSpec::set(Dim d, DimValues v) {
  if (v.empty()) throw Error(Errc::internal, std::string("empty value set for ") + dim_name(d));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  dims_[static_cast<int>(d)] = std::move(v);
}

bool SpaceSpec::empty() const {
  for (const auto &d : dims_)
    if (d) return false;
  return true;
}

std::string SpaceSpec::format() const {
  std::string out;
  for (int i = 0; i < kDimCount; ++i) {
    if (!dims_[i]) continue;
    if (!out.empty()) out += ',';
    out += dim_name(static_cast<Dim>(i));
    out += '=';
    bool first = true;
    for (auto v : *dims_[i]) {
      if (!first) out += '|';
      first = false;
      out += format_value(static_cast<Dim>(i), v);
    }
  }
  return out;
}

SpaceSpec restrict_space(const SpaceSpec &user, const SpaceSpec &defaults, const SpaceSpec &limits,
                         std::string_view field) {
  SpaceSpec out;
  for (int i = 0; i < kDimCount; ++i) {
    const Dim d = static_cast<Dim>(i);
    if (user.has(d)) {
      const DimValues &v = user.given(d);
      if (limits.has(d)) {
        const DimValues &l = limits.given(d);
        if (v.front() < l.front() || v.back() > l.back())
          throw_invalid(std::string(field) + ": " + dim_name(d) + ": " + format_range(d, v) +
                        " is outside the site's limits " + format_range(d, l) +
                        " (SpaceLimits in autotune.conf)");
      }
      out.set(d, v);
    } else if (defaults.has(d)) {
      DimValues v;
      for (auto x : defaults.given(d))
        if (!limits.has(d) || (x >= limits.given(d).front() && x <= limits.given(d).back()))
          v.push_back(x);
      if (!v.empty()) out.set(d, v);
    }
  }
  return out;
}

void Inventory::validate() const {
  if (types.empty()) throw_invalid("inventory: no node types");
  std::set<std::string> names;
  for (const auto &t : types) {
    const std::string w = "inventory: node type '" + t.name + "'";
    if (t.name.empty()) throw_invalid("inventory: a node type has no name");
    if (!names.insert(t.name).second) throw_invalid(w + " is given twice");
    if (t.count < 1) throw_invalid(w + ": count must be at least 1");
    if (t.cpus < 1) throw_invalid(w + ": cpus must be at least 1");
    if (t.mem_mb < 1) throw_invalid(w + ": memory must be at least 1M");
    if (t.gpus < 0) throw_invalid(w + ": gpus must not be negative");
    if (!(t.billing_weight >= 0)) throw_invalid(w + ": billing weight must not be negative");
  }
}

Placement place(const Configuration &c) {
  const int n = c.counts.nodes, w = c.counts.workers, s = c.counts.servers, r = w + s;
  Placement p;
  p.workers.assign(n, 0);
  p.servers.assign(n, 0);
  int rank = 0;
  for (int i = 0; i < n; ++i) {
    const int take = r / n + (i < r % n ? 1 : 0);
    for (int k = 0; k < take; ++k, ++rank) (rank < w ? p.workers[i] : p.servers[i])++;
  }
  return p;
}

bool fits(const Configuration &c, const NodeType &t) {
  const long long n = c.counts.nodes, w = c.counts.workers, sv = c.counts.servers, r = w + sv;
  if (n < 1 || w < 1 || sv < 0 || n > r || c.worker.cpus < 1 || c.server.cpus < 1 ||
      c.worker.mem_mb < 1 || c.server.mem_mb < 1 || c.worker.gpus < 0)
    return false;
  if (n > t.count) return false;
  // Node i holds ranks [start(i), start(i + 1)): the first r % n nodes one more than the others.
  const long long q = r / n, extra = r % n;
  auto start = [&](long long i) { return i * q + std::min(i, extra); };
  auto node_of = [&](long long rank) {
    const long long big = extra * (q + 1);
    return rank < big ? rank / (q + 1) : extra + (rank - big) / q;
  };
  auto node_ok = [&](long long i) {
    if (i < 0 || i >= n) return true;
    const long long b = start(i), e = start(i + 1);
    const long long wi = std::max(0LL, std::min(e, w) - b), si = (e - b) - wi;
    const long long cpus = wi * c.worker.cpus + si * c.server.cpus;
    const unsigned long long mem = static_cast<unsigned long long>(wi) * c.worker.mem_mb +
                                   static_cast<unsigned long long>(si) * c.server.mem_mb;
    const long long gpus = wi * c.worker.gpus;
    return cpus <= t.cpus && mem <= t.mem_mb && gpus <= t.gpus;
  };
  // The runs of equal nodes start at node 0, at the first node of one rank fewer (extra), at the
  // node holding the first server (possibly mixed) and at the one after it.
  if (!node_ok(0) || !node_ok(extra)) return false;
  if (sv > 0 && (!node_ok(node_of(w)) || !node_ok(node_of(w) + 1))) return false;
  return true;
}

double space_combinations(const SpaceSpec &space, std::size_t node_types) {
  auto count = [&](Dim d) { return space.has(d) ? static_cast<double>(space.given(d).size()) : 1.0; };
  // ps = 0 collapses the server dimensions, so those combinations count once.
  const bool has_zero_ps = !space.has(Dim::ps) || space.given(Dim::ps).front() == 0;
  const double server_combos = count(Dim::cpus_per_ps) * count(Dim::mem_per_ps);
  return static_cast<double>(node_types) * count(Dim::nodes) * count(Dim::workers) *
         count(Dim::cpus_per_worker) * count(Dim::mem_per_worker) * count(Dim::gpus_per_worker) *
         ((has_zero_ps ? 1.0 : 0.0) + (count(Dim::ps) - (has_zero_ps ? 1 : 0)) * server_combos);
}

void check_space_size(const SpaceSpec &space, std::size_t node_types, std::string_view field, double limit) {
  const double combos = space_combinations(space, node_types);
  if (combos <= limit) return;
  std::string parts;
  for (int i = 0; i < kDimCount; ++i) {
    const Dim d = static_cast<Dim>(i);
    if (!space.has(d) || space.given(d).size() < 2) continue;
    parts += (parts.empty() ? "" : " x ") + std::to_string(space.given(d).size()) + " " + dim_name(d);
  }
  if (node_types > 1) parts += (parts.empty() ? "" : " x ") + std::to_string(node_types) + " node types";
  const std::string n = combos < 1e18 ? std::to_string(static_cast<std::uint64_t>(combos)) : format_double(combos);
  throw_invalid((field.empty() ? std::string() : std::string(field) + ": ") + "the space has " + n +
                " combinations (" + parts +
                "); at most " + std::to_string(static_cast<std::uint64_t>(limit)) +
                " are allowed (narrow a range or use a step, e.g. 1-64:x2)");
}

std::string infeasible_reason(const Configuration &c, const NodeType &t) {
  // Structural checks first, without exceptions in the common case: enumerate() calls this for
  // every combination, and many have more nodes than ranks.
  if (c.counts.nodes > c.ranks() && c.ranks() >= 1)
    return "configuration: " + std::to_string(c.counts.nodes) + " nodes for " +
           std::to_string(c.ranks()) + " ranks (workers + ps); every node needs at least one rank";
  if (c.counts.nodes < 1 || c.counts.workers < 1 || c.counts.servers < 0 || c.worker.cpus < 1 ||
      c.server.cpus < 1 || c.worker.mem_mb < 1 || c.server.mem_mb < 1 || c.worker.gpus < 0) {
    try {
      c.validate();
    } catch (const Error &e) {
      return e.what();
    }
  }
  const std::string type = "type '" + t.name + "' has ";
  if (c.counts.nodes > t.count)
    return "needs " + std::to_string(c.counts.nodes) + " nodes, " + type + std::to_string(t.count);
  const Placement p = place(c);
  for (size_t i = 0; i < p.workers.size(); ++i) {
    const long long cpus = 1LL * p.workers[i] * c.worker.cpus + 1LL * p.servers[i] * c.server.cpus;
    const unsigned long long mem =
        1ULL * p.workers[i] * c.worker.mem_mb + 1ULL * p.servers[i] * c.server.mem_mb;
    const long long gpus = 1LL * p.workers[i] * c.worker.gpus;
    const std::string node = "node " + std::to_string(i) + " needs ";
    if (cpus > t.cpus)
      return node + std::to_string(cpus) + " CPUs, " + type + std::to_string(t.cpus);
    if (mem > t.mem_mb)
      return node + format_size(mem << 20) + " of memory, " + type + format_size(t.mem_mb << 20);
    if (gpus > t.gpus)
      return node + std::to_string(gpus) + " GPUs, " + type + std::to_string(t.gpus);
  }
  return "";
}

std::vector<Candidate> enumerate(const SpaceSpec &space, const Inventory &inventory,
                                 const EnumerateOptions &options) {
  std::vector<Candidate> out;
  enumerate_each(space, inventory, options, [&](const Candidate &c) {
    if (out.size() >= options.max_candidates)
      throw_invalid("the space has more than " + std::to_string(options.max_candidates) +
                    " feasible configurations (narrow a range or use a step)");
    out.push_back(c);
  });
  return out;
}

std::size_t enumerate_each(const SpaceSpec &space, const Inventory &inventory, const EnumerateOptions &options,
                           const std::function<void(const Candidate &)> &visit) {
  inventory.validate();
  std::array<DimValues, kDimCount> vals;
  const Configuration def;
  for (int i = 0; i < kDimCount; ++i) {
    const Dim d = static_cast<Dim>(i);
    if (space.has(d)) {
      vals[i] = space.given(d);
      continue;
    }
    switch (d) {
      case Dim::nodes:
        vals[i] = {1};
        break;
      case Dim::workers:
        vals[i] = {0};
        break;  // 0: one worker per node
      case Dim::ps:
        vals[i] = {0};
        break;
      case Dim::cpus_per_worker:
        vals[i] = {static_cast<std::uint64_t>(def.worker.cpus)};
        break;
      case Dim::mem_per_worker:
        vals[i] = {def.worker.mem_mb};
        break;
      case Dim::gpus_per_worker:
        vals[i] = {0};
        break;
      case Dim::cpus_per_ps:
        vals[i] = {static_cast<std::uint64_t>(def.server.cpus)};
        break;
      case Dim::mem_per_ps:
        vals[i] = {def.server.mem_mb};
        break;
    }
  }
  check_space_size(space, inventory.types.size(), "", options.max_combinations);

  std::size_t visited = 0;
  std::string first_reason;
  for (size_t ti = 0; ti < inventory.types.size(); ++ti) {
    const NodeType &t = inventory.types[ti];
    bool has_features = true;
    for (const auto &f : options.required_features)
      if (std::find(t.features.begin(), t.features.end(), f) == t.features.end())
        has_features = false;
    if (!has_features) {
      if (first_reason.empty()) first_reason = "type '" + t.name + "' lacks a required feature";
      continue;
    }
    for (auto nodes : vals[0])
      for (auto workers : vals[1])
        for (auto ps : vals[2])
          for (auto cpw : vals[3])
            for (auto mpw : vals[4])
              for (auto gpw : vals[5])
                for (size_t cps_i = 0; cps_i < (ps == 0 ? 1 : vals[6].size()); ++cps_i)
                  for (size_t mps_i = 0; mps_i < (ps == 0 ? 1 : vals[7].size()); ++mps_i) {
                    Configuration c;
                    c.counts.nodes = static_cast<int>(nodes);
                    c.counts.workers = static_cast<int>(workers == 0 ? nodes : workers);
                    c.counts.servers = static_cast<int>(ps);
                    c.worker.cpus = static_cast<int>(cpw);
                    c.worker.mem_mb = mpw;
                    c.worker.gpus = static_cast<int>(gpw);
                    c.server.cpus = static_cast<int>(vals[6][cps_i]);
                    c.server.mem_mb = vals[7][mps_i];
                    if (!fits(c, t)) {
                      if (first_reason.empty()) first_reason = c.format() + ": " + infeasible_reason(c, t);
                      continue;
                    }
                    visit(Candidate{c, ti, t.billing_weight * static_cast<double>(nodes)});
                    ++visited;
                  }
  }
  if (visited == 0)
    throw_invalid("no configuration of the space fits the cluster (e.g. " + first_reason + ")");
  return visited;
}

}  // namespace autotune
