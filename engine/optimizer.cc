#include "autotune/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "autotune/acquisition.hpp"
#include "autotune/error.hpp"
#include "autotune/rng.hpp"
#include "autotune/units.hpp"

namespace autotune {
namespace {

// The seed's stream of the GP fits (design.cc draws streams 1 and 2).
constexpr std::uint64_t kStreamGp = 3;

}  // namespace

Proposal propose(const CandidateSet &cs, const std::vector<Observation> &done,
                 const std::vector<std::size_t> &pending, std::size_t k, const EngineOptions &o) {
  DesignStep step = propose_without_model(cs, done, pending, k, o);
  if (!step.needs_model) return std::move(step.proposal);
  Proposal &p = step.proposal;
  std::vector<char> &taken = step.taken;
  const std::size_t slots = step.slots;
  const std::size_t n = cs.size();
  auto take = [&](std::size_t i) {
    p.indices.push_back(i);
    taken[i] = 3;
  };

  // The model: standardized log scores of the successful trials (and, with Failures::impute,
  // the failures at the worst score seen).
  const Eigen::MatrixXd &Xall = cs.encoded();
  const bool impute = o.failures == EngineOptions::Failures::impute;
  std::size_t failures = 0;
  double worst = -std::numeric_limits<double>::infinity();
  for (const auto &ob : done) {
    failures += ob.failed;
    if (!ob.failed) worst = std::max(worst, std::log(ob.score));
  }
  const Eigen::Index nd = static_cast<Eigen::Index>(impute ? done.size() : done.size() - failures);
  Eigen::MatrixXd X(nd, Xall.cols());
  Eigen::VectorXd y(nd);
  {
    Eigen::Index r = 0;
    for (const auto &ob : done) {
      if (ob.failed && !impute) continue;
      const Eigen::Index j = static_cast<Eigen::Index>(ob.index);
      X.row(r) = Xall.row(j);
      y[r++] = (ob.failed ? worst : std::log(ob.score));
    }
  }
  const double y_mean = y.mean();
  double y_std = std::sqrt((y.array() - y_mean).square().sum() / static_cast<double>(nd));
  if (!(y_std > 1e-12)) y_std = 1.0;
  const Eigen::VectorXd ys = (y.array() - y_mean) / y_std;
  GpFitOptions gpo = o.gp;
  gpo.seed = Rng(o.seed, kStreamGp).next();
  if (o.input_warping) gpo.warp_columns = cs.numeric_columns();
  gpo.linear = o.linear_trend;
  const GaussianProcess gp = GaussianProcess::fit(X, ys, cs.groups(), gpo);
  // Fantasies are needed when running trials or earlier picks must be taken into account.
  CandidatePosterior post(
      gp, Xall, (!pending.empty() || !p.indices.empty() || slots > 1) && p.indices.size() < slots);
  p.modelled = true;
  p.hyper = gp.hyper();

  // The constraint model: a GP on the +1 / -1 labels of every finished trial, standardized, with
  // hyperparameters of its own (where runs fail need not vary like how long they take), fitted
  // from one start, the score model's hyperparameters, for five L-BFGS iterations (ten did
  // no better: bench/README.md).  P(feasible) = Phi(mu_c / sigma_c) is
  // computed only where it can change a decision (see best_of below), since it is at most 1.
  std::optional<GaussianProcess> cgp;
  double c_mean = 0, c_std = 1;
  if (!impute && failures > 0) {
    const Eigen::Index na = static_cast<Eigen::Index>(done.size());
    Eigen::MatrixXd Xc(na, Xall.cols());
    Eigen::VectorXd c(na);
    for (Eigen::Index r = 0; r < na; ++r) {
      const auto &ob = done[static_cast<std::size_t>(r)];
      Xc.row(r) = Xall.row(static_cast<Eigen::Index>(ob.index));
      c[r] = ob.failed ? -1.0 : 1.0;
    }
    // Constant mean = the observed mean label, so an unexplored region gets the observed success
    // rate rather than even odds.
    c_mean = c.mean();
    c_std = std::sqrt((c.array() - c_mean).square().mean());
    GpFitOptions cpo = gpo;
    cpo.starts = 1;
    cpo.first_start = gp.hyper();
    cpo.max_iterations = std::min(cpo.max_iterations, 5);
    cgp.emplace(GaussianProcess::fit(Xc, (c.array() - c_mean) / c_std, cs.groups(), cpo));
  }
  std::vector<double> feasible(n, -1.0);
  auto p_feasible = [&](std::size_t i) {
    if (!cgp) return 1.0;
    if (feasible[i] < 0) {
      double m, v;
      cgp->predict_one(Xall.row(static_cast<Eigen::Index>(i)), &m, &v);
      const double mu = c_mean + c_std * m, sd = c_std * std::sqrt(v);
      feasible[i] = sd > 0 ? normal_cdf(mu / sd) : (mu > 0 ? 1.0 : 0.0);
    }
    return feasible[i];
  };
  // The untried candidate maximizing value(i) * P(feasible i), value >= 0: candidates are taken
  // from a heap in decreasing order of value, stopping when the value alone cannot beat the best
  // product (P <= 1), so P is computed for a few candidates only.  Ties go to the lower index.
  // Returns n when nothing is untried.
  std::vector<std::pair<double, std::size_t>> heap;
  auto best_of = [&](const std::function<double(std::size_t)> &value, double *best) {
    heap.clear();
    for (std::size_t i = 0; i < n; ++i)
      if (taken[i] == 0) heap.emplace_back(value(i), n - i);  // max-heap: larger value, lower index
    std::make_heap(heap.begin(), heap.end());
    std::size_t pick = n;
    *best = -1;
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const auto [v, rev] = heap.back();
      heap.pop_back();
      if (v <= *best) break;
      const std::size_t i = n - rev;
      const double w = v * p_feasible(i);
      if (w > *best) {
        *best = w;
        pick = i;
      }
    }
    return pick;
  };

  // Predictive log score of every candidate: N(mu, sd^2), and expected improvement over all of
  // them at once (acquisition.hpp's array forms).
  const double best_log = std::log(p.best_score);
  std::vector<double> mu(n), sd(n), ei(n);
  const Eigen::Index ni = static_cast<Eigen::Index>(n);
  auto moments = [&] {
    Eigen::Map<Eigen::ArrayXd>(mu.data(), ni) = y_mean + y_std * post.mean().array();
    Eigen::Map<Eigen::ArrayXd>(sd.data(), ni) = y_std * post.var().array().sqrt();
  };
  auto ei_of = [&](std::size_t i) { return ei[i]; };
  moments();
  if (o.predictions) {
    p.predictions.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double mean = std::exp(mu[i] + 0.5 * sd[i] * sd[i]);
      p.predictions[i] = {mean, mean * std::sqrt(std::expm1(sd[i] * sd[i]))};
    }
  }
  // The ei rule, on the untried candidates, before any fantasy.
  expected_improvement_lognormal(mu.data(), sd.data(), n, p.best_score, ei.data());
  best_of(ei_of, &p.max_ei);
  p.max_ei = std::max(p.max_ei, 0.0);
  p.stop = check_ei_rule(p.max_ei, p.best_score, done.size(), o.stop);
  if (p.stop.stopped()) {
    p.indices.clear();
    return p;
  }

  // Fantasies for what is running or already picked, then EI picks one at a time.  The
  // posterior is in standardized residual units; EI is taken on the log score.
  const double best_res = (best_log - y_mean) / y_std;
  auto fantasize = [&](std::size_t i) {
    const Eigen::Index j = static_cast<Eigen::Index>(i);
    // Kriging believer: the predicted mean.  Constant liar (CL-min): the incumbent.
    const double lie = o.batch == BatchMode::kriging_believer ? post.mean()[j] : best_res;
    post.condition(j, lie);
  };
  if (p.indices.size() < slots) {
    for (auto i : pending) fantasize(i);
    for (auto i : p.indices) fantasize(i);
  }
  while (p.indices.size() < slots) {
    double best_ei;
    moments();
    expected_improvement(mu.data(), sd.data(), n, best_log, o.xi * y_std, ei.data());
    const std::size_t pick = best_of(ei_of, &best_ei);
    if (pick == n) break;
    take(pick);
    if (p.indices.size() < slots) fantasize(pick);
  }
  return p;
}

}  // namespace autotune
