#include "autotune/run_time_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>

#include "autotune/error.hpp"
#include "autotune/rng.hpp"
#include "autotune/vector_math.hpp"

namespace autotune {
namespace {

// The eight parameters, each uniform on its range in the coordinate the particles keep: the log
// of the value for the serial time, the work, the per-node overhead and the data set
// (log-uniform), the value itself for the others.
enum Param { kSerial, kWork, kEfficiency, kPerNode, kData, kSpill, kNeed, kShare, kParams };
struct Range {
  double lo, hi;
};
const std::array<Range, kParams> &prior() {
  static const std::array<Range, kParams> r = {{
      {std::log(1.0), std::log(1e4)},     // serial, s
      {std::log(1e2), std::log(1e7)},     // work, vCPU-s
      {0.3, 1.0},                         // efficiency
      {std::log(0.01), std::log(100.0)},  // per-node overhead, s
      {std::log(5.0), std::log(5000.0)},  // data set, GiB
      {1.0, 6.0},                         // spill factor
      {0.25, 16.0},                       // need, GiB per vCPU
      {0.0, 1.0},                         // failing share of the data set
  }};
  return r;
}
constexpr double kNoise = 0.1;      // sd of a log run time
constexpr double kMismatch = -20;   // log weight of a run or failure the particle did not predict
constexpr int kMovesMax = 5;        // Metropolis moves after a resampling
// A resampling after trial j (counting from 1) is followed by kMoveBudget / j Metropolis moves,
// from 1 to kMovesMax, each over the j trials: from j = 5 on, one resampling's moves cost about
// kMoveBudget model evaluations per particle, and fewer moves follow once the trials are many.
constexpr double kMoveBudget = 25;
constexpr double kStep = 0.05;      // a move's sd, as a share of each range, / sqrt(1 + trials)

}  // namespace

// The particles, one array per parameter, and what the model needs of them.
struct Particles {
  std::size_t n = 0;
  std::array<std::vector<double>, kParams> th;
  // The values: serial, work, per_node, data, sqrt(data), spill, need, share.
  std::vector<double> serial, work, per_node, data, root_data, spill, need, share;

  explicit Particles(std::size_t count) : n(count) {
    for (auto &v : th) v.resize(n);
    for (auto *v : {&serial, &work, &per_node, &data, &root_data, &spill, &need, &share})
      v->resize(n);
  }
  void values() {
    for (std::size_t p = 0; p < n; ++p) {
      serial[p] = th[kSerial][p];
      work[p] = th[kWork][p];
      per_node[p] = th[kPerNode][p];
      data[p] = th[kData][p];
      root_data[p] = 0.5 * th[kData][p];
    }
    exp_in_place(serial.data(), n);
    exp_in_place(work.data(), n);
    exp_in_place(per_node.data(), n);
    exp_in_place(data.data(), n);
    exp_in_place(root_data.data(), n);
    spill = th[kSpill];
    need = th[kNeed];
    share = th[kShare];
  }
  void copy_from(const Particles &o, std::size_t to, std::size_t from) {
    for (int k = 0; k < kParams; ++k) th[k][to] = o.th[k][from];
  }
};

namespace {

// One candidate's allocation, as the model reads it.
struct Row {
  double nodes, log_cpus, mem, root_mem, mem_per_cpu;
};
Row row_of(const Allocations &a, std::size_t i) {
  return {a.nodes[i], std::log(a.cpus[i]), a.mem_gib[i], std::sqrt(a.mem_gib[i]),
          a.mem_gib[i] / a.cpus[i]};
}

// Every particle's speed-up at `r` (r's vCPUs to the power -efficiency) into sp.
void speedups(const Particles &ps, const Row &r, double *sp) {
  const double *eff = ps.th[kEfficiency].data();
  for (std::size_t p = 0; p < ps.n; ++p) sp[p] = -eff[p] * r.log_cpus;
  exp_in_place(sp, ps.n);
}

// Particle p's run time at `r`, given its speed-up there.
inline double time_at(const Particles &ps, const Row &r, std::size_t p, double speedup) {
  double t = ps.serial[p] + ps.work[p] * speedup + ps.per_node[p] * r.nodes;
  if (r.mem < ps.data[p]) t *= ps.spill[p] * ps.root_data[p] / r.root_mem;
  const double short_by = ps.need[p] - r.mem_per_cpu;
  if (short_by > 0) t *= 1 + 0.3 * short_by / ps.need[p];
  return t;
}

inline bool runs_at(const Particles &ps, const Row &r, std::size_t p) {
  return r.mem >= ps.share[p] * ps.data[p];
}

// Every particle's log run time at `r` (lt) and whether it runs there.
void predict(const Particles &ps, const Row &r, double *lt, char *runs) {
  speedups(ps, r, lt);
  for (std::size_t p = 0; p < ps.n; ++p) {
    lt[p] = time_at(ps, r, p, lt[p]);
    runs[p] = runs_at(ps, r, p);
  }
  log_in_place(lt, ps.n);
}

// ll[p] += each particle's log likelihood of one trial (y: its log run time, NaN: failed).
void add_log_likelihood(const Particles &ps, const Row &r, double y, double *ll, double *lt,
                        char *runs) {
  predict(ps, r, lt, runs);
  const bool ok = !std::isnan(y);
  for (std::size_t p = 0; p < ps.n; ++p) {
    if (ok) {
      const double z = (y - lt[p]) / kNoise;
      ll[p] += runs[p] ? -0.5 * z * z : kMismatch;
    } else {
      ll[p] += runs[p] ? kMismatch : 0.0;
    }
  }
}

// Normalized weights from log weights.
std::vector<double> normalized(const std::vector<double> &logw) {
  const double top = *std::max_element(logw.begin(), logw.end());
  std::vector<double> w(logw.size());
  double sum = 0;
  for (std::size_t p = 0; p < w.size(); ++p) sum += w[p] = std::exp(logw[p] - top);
  for (double &v : w) v /= sum;
  return w;
}

// Systematic resampling: `count` indices drawn by the weights w (normalized).
std::vector<std::size_t> systematic(const std::vector<double> &w, std::size_t count, Rng &rng) {
  std::vector<std::size_t> out(count);
  const double u0 = rng.uniform() / static_cast<double>(count);
  double cum = w[0];
  std::size_t k = 0;
  for (std::size_t j = 0; j < count; ++j) {
    const double u = u0 + static_cast<double>(j) / static_cast<double>(count);
    while (u > cum && k + 1 < w.size()) cum += w[++k];
    out[j] = k;
  }
  return out;
}

// The particles after a call's trials (run_time_posterior), kept for the next call.
struct SmcState {
  std::uint64_t seed = 0;
  Allocations allocations;
  std::vector<std::size_t> index;
  std::vector<double> log_time;
  std::array<std::vector<double>, kParams> th;
  std::vector<double> ll, logw;

  static bool same(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }
  // Whether `idx` and `lt` begin with this state's trials, for the same allocations, seed and
  // number of particles.
  bool resumes(const Allocations &a, const std::vector<std::size_t> &idx,
               const std::vector<double> &lt, std::uint64_t s, std::size_t n) const {
    if (s != seed || ll.size() != n || index.size() > idx.size() || a.nodes != allocations.nodes ||
        a.cpus != allocations.cpus || a.mem_gib != allocations.mem_gib)
      return false;
    for (std::size_t j = 0; j < index.size(); ++j)
      if (index[j] != idx[j] || !same(log_time[j], lt[j])) return false;
    return true;
  }
};

}  // namespace

namespace {

// The allocations of `cs` by `columns` into *out, or why there are none.
std::string resolve(const CandidateSet &cs, const RunTimeColumns &columns, Allocations *out) {
  auto find = [&](const std::string &name) -> const std::vector<double> * {
    for (const auto &col : cs.columns())
      if (col.name == name && col.scale != Scale::categorical && !col.numbers.empty())
        return &col.numbers;
    return nullptr;
  };
  RunTimeColumns c = columns;
  if (c.automatic) {
    auto first = [&](std::initializer_list<const char *> names) -> std::string {
      for (const char *n : names)
        if (find(n)) return n;
      return "";
    };
    c.nodes = "nodes";
    c.cpus = first({"total-cpus", "total_vcpus", "total_cpus"});
    c.cpus_per_node = c.cpus.empty();
    if (c.cpus.empty()) c.cpus = first({"vcpus_per_node", "cpus_per_node", "node-cpus"});
    c.mem = first({"total-mem", "total_mem_gib"});
    c.mem_per_node = c.mem.empty();
    if (c.mem.empty()) c.mem = first({"mem_gib_per_node", "node-mem"});
    c.mem_to_gib = c.mem == "total-mem" || c.mem == "node-mem" ? 1.0 / 1024 : 1.0;
  }
  for (const std::string *name : {&c.nodes, &c.cpus, &c.mem})
    if (!find(*name))
      return "'" + *name + "' is not a numeric feature (give it in --features or --derive)";
  Allocations &a = *out;
  a.nodes = *find(c.nodes);
  a.cpus = *find(c.cpus);
  a.mem_gib = *find(c.mem);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (c.cpus_per_node) a.cpus[i] *= a.nodes[i];
    a.mem_gib[i] *= c.mem_to_gib * (c.mem_per_node ? a.nodes[i] : 1.0);
    if (!(a.nodes[i] > 0 && a.cpus[i] > 0 && a.mem_gib[i] > 0))
      return "configuration " + cs.label(i) +
             " has a node count, vCPUs or memory that is not > 0 (name columns of positive numbers)";
  }
  return "";
}

}  // namespace

std::optional<Allocations> allocations_of(const CandidateSet &cs, const RunTimeColumns &columns) {
  Allocations a;
  if (!resolve(cs, columns, &a).empty()) return std::nullopt;
  return a;
}

std::string allocations_error(const CandidateSet &cs, const RunTimeColumns &columns) {
  Allocations a;
  return resolve(cs, columns, &a);
}

RunTimePosterior run_time_posterior(const Allocations &a, const std::vector<std::size_t> &index,
                                     const std::vector<double> &log_time, std::uint64_t seed,
                                     std::size_t particles, std::size_t draws) {
  if (index.size() != log_time.size())
    throw_invalid("run_time_posterior: " + std::to_string(index.size()) + " trials and " +
                  std::to_string(log_time.size()) + " run times");
  if (particles < 64 || particles > 100000 || draws < 1 || draws > particles)
    throw_invalid("run_time_posterior: particles must be from 64 to 100000 and draws from 1 to them");
  for (auto i : index)
    if (i >= a.size()) throw_invalid("run_time_posterior: a trial's candidate is out of range");
  const auto &pr = prior();
  const std::size_t n = particles, m = index.size();
  std::vector<Row> rows;
  for (auto i : index) rows.push_back(row_of(a, i));

  // The state after the trials before: the last call's in this thread when its trials begin
  // these (a search's next step), else the prior.  Each trial's resampling and moves draw from a
  // stream of their own, so resuming gives what starting over would.
  thread_local std::optional<SmcState> last;
  Particles ps(n), next(n);
  std::vector<double> ll(n, 0.0), logw(n, 0.0);
  std::size_t from = 0;
  if (last && last->resumes(a, index, log_time, seed, n)) {
    ps.th = last->th;
    ll = last->ll;
    logw = last->logw;
    from = last->index.size();
  } else {
    Rng rng(seed, 1);
    for (std::size_t p = 0; p < n; ++p)
      for (int k = 0; k < kParams; ++k) ps.th[k][p] = pr[k].lo + (pr[k].hi - pr[k].lo) * rng.uniform();
  }
  ps.values();
  std::vector<double> lt(n), llp(n), inc(n), z(n * kParams), u(n);
  std::vector<char> inside(n);
  std::vector<char> runs(n);
  // Each trial in turn: reweight; below half the particles' effective number, resample and move.
  for (std::size_t j = from; j < m; ++j) {
    std::fill(inc.begin(), inc.end(), 0.0);
    add_log_likelihood(ps, rows[j], log_time[j], inc.data(), lt.data(), runs.data());
    for (std::size_t p = 0; p < n; ++p) {
      ll[p] += inc[p];
      logw[p] += inc[p];
    }
    const std::vector<double> w = normalized(logw);
    double sq = 0;
    for (double v : w) sq += v * v;
    if (1.0 / sq >= static_cast<double>(n) / 2) continue;
    Rng rng(seed, 16 + j);
    const std::vector<std::size_t> pick = systematic(w, n, rng);
    std::vector<double> ll_next(n);
    for (std::size_t p = 0; p < n; ++p) {
      next.copy_from(ps, p, pick[p]);
      ll_next[p] = ll[pick[p]];
    }
    std::swap(ps.th, next.th);
    ll.swap(ll_next);
    std::fill(logw.begin(), logw.end(), 0.0);
    ps.values();
    const double seen = static_cast<double>(j + 1);
    const int moves = std::clamp(static_cast<int>(kMoveBudget / seen), 1, kMovesMax);
    for (int mv = 0; mv < moves; ++mv) {
      std::array<double, kParams> sd;
      for (int k = 0; k < kParams; ++k) sd[k] = (pr[k].hi - pr[k].lo) * kStep / std::sqrt(1 + seen);
      fill_normal(rng, z.data(), z.size());
      std::fill(inside.begin(), inside.end(), 1);
      for (int k = 0; k < kParams; ++k)
        for (std::size_t p = 0; p < n; ++p) {
          const double v = ps.th[k][p] + sd[k] * z[static_cast<std::size_t>(k) * n + p];
          next.th[k][p] = v;
          if (v < pr[k].lo || v > pr[k].hi) inside[p] = 0;
        }
      next.values();
      std::fill(llp.begin(), llp.end(), 0.0);
      for (std::size_t t = 0; t <= j; ++t)
        add_log_likelihood(next, rows[t], log_time[t], llp.data(), lt.data(), runs.data());
      for (std::size_t p = 0; p < n; ++p) u[p] = 1.0 - rng.uniform();
      log_in_place(u.data(), n);
      for (std::size_t p = 0; p < n; ++p)
        if (inside[p] && u[p] < llp[p] - ll[p]) {
          ps.copy_from(next, p, p);
          ll[p] = llp[p];
        }
      ps.values();
    }
  }
  last = SmcState{seed, a, index, log_time, ps.th, ll, logw};

  RunTimePosterior out;
  const std::vector<double> w = normalized(logw);
  std::vector<double> log_w(n);
  for (std::size_t p = 0; p < n; ++p) log_w[p] = w[p] > 0 ? std::log(w[p]) : 0.0;
  // Leave-one-out at each trial that ran: the weights divided by its likelihood, truncated at
  // sqrt(n) times their mean (truncated importance sampling, Ionides 2008), among the particles
  // that predict it runs.
  for (std::size_t j = 0; j < m; ++j) {
    std::fill(inc.begin(), inc.end(), 0.0);
    add_log_likelihood(ps, rows[j], log_time[j], inc.data(), lt.data(), runs.data());
    // The posterior's own verdict on the trial: a weighted majority of the particles predicting
    // the other outcome is a trial the form cannot explain.
    double p_runs = 0;
    for (std::size_t p = 0; p < n; ++p) p_runs += runs[p] ? w[p] : 0.0;
    out.unexplained_ += std::isnan(log_time[j]) ? p_runs > 0.5 : p_runs < 0.5;
    if (std::isnan(log_time[j])) continue;
    std::vector<double> r(n, 0.0);
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < n; ++p)
      if (runs[p] && w[p] > 0) top = std::max(top, log_w[p] - inc[p]);
    double sum = 0;
    std::size_t count = 0;
    for (std::size_t p = 0; p < n; ++p)
      if (runs[p] && w[p] > 0) {
        r[p] = std::exp(log_w[p] - inc[p] - top);
        sum += r[p];
        ++count;
      }
    if (count == 0) {
      out.loo_.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    const double cap = sum / static_cast<double>(count) * std::sqrt(static_cast<double>(n));
    double num = 0, den = 0;
    for (std::size_t p = 0; p < n; ++p)
      if (r[p] > 0) {
        const double v = std::min(r[p], cap);
        num += v * lt[p];
        den += v;
      }
    out.loo_.push_back(num / den);
  }
  // The draws, resampled by the weights.
  {
    Rng rng(seed, 2);
    const std::vector<std::size_t> pick = systematic(w, draws, rng);
    auto d = std::make_shared<Particles>(draws);
    for (std::size_t q = 0; q < draws; ++q) d->copy_from(ps, q, pick[q]);
    d->values();
    out.draws_ = std::move(d);
    out.allocations_ = std::make_shared<const Allocations>(a);
  }
  return out;
}

std::size_t RunTimePosterior::draws() const { return draws_ ? draws_->n : 0; }

std::vector<double> RunTimePosterior::improvement(const std::vector<double> &factor, double best,
                                                  const std::vector<char> &skip) const {
  const std::size_t n = allocations_ ? allocations_->size() : 0;
  if (!draws_ || factor.size() != n || skip.size() != n)
    throw_invalid("RunTimePosterior::improvement: " + std::to_string(factor.size()) +
                  " factors and " + std::to_string(skip.size()) + " flags for " +
                  std::to_string(n) + " candidates");
  if (!std::isfinite(best))
    throw_invalid("RunTimePosterior::improvement: the best score is not a finite number");
  for (std::size_t i = 0; i < n; ++i)
    if (skip[i] == 0 && !(factor[i] > 0 && std::isfinite(factor[i])))
      throw_invalid("RunTimePosterior::improvement: candidate " + std::to_string(i) +
                    "'s factor is not a positive number");
  const Allocations &a = *allocations_;
  const Particles &ps = *draws_;
  // The candidates by allocation (vCPUs first), so that each vCPU count's speed-ups and each
  // allocation's run times are computed once however many candidates share them.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (skip[i] == 0) order.push_back(i);
  auto key = [&](std::size_t i) { return std::make_tuple(a.cpus[i], a.nodes[i], a.mem_gib[i]); };
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return key(x) < key(y); });
  std::vector<double> out(n, 0.0), sp(ps.n), t;
  t.reserve(ps.n);
  for (std::size_t k = 0, end = 0; k < order.size(); k = end) {
    const std::size_t i = order[k];
    const Row r = row_of(a, i);
    // The candidates of this allocation: order[k, end); the highest run time at which any of
    // them gains on `best`.
    double below = 0;
    for (end = k; end < order.size() && key(order[end]) == key(i); ++end)
      below = std::max(below, best / factor[order[end]]);
    if (k == 0 || a.cpus[order[k - 1]] != a.cpus[i]) speedups(ps, r, sp.data());
    // The draws that run here and gain on `best` for some of these candidates: their run times.
    t.clear();
    for (std::size_t d = 0; d < ps.n; ++d)
      if (runs_at(ps, r, d)) {
        const double time = time_at(ps, r, d, sp[d]);
        if (time < below) t.push_back(time);
      }
    for (std::size_t c = k; c < end; ++c) {
      const double f = factor[order[c]];
      double sum = 0;
      for (const double time : t) sum += std::max(best - time * f, 0.0);
      out[order[c]] = sum;
    }
  }
  return out;
}

void RunTimePosterior::predict(std::size_t candidate, double *log_time, char *runs) const {
  if (!draws_ || candidate >= allocations_->size())
    throw_invalid("RunTimePosterior::predict: no candidate " + std::to_string(candidate));
  autotune::predict(*draws_, row_of(*allocations_, candidate), log_time, runs);
}

}  // namespace autotune
