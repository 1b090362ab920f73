#include "autotune/history.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "autotune/error.hpp"
#include "autotune/gp.hpp"
#include "autotune/rng.hpp"
#include "autotune/units.hpp"
#include "autotune/vector_math.hpp"

namespace autotune {
namespace {

// The seed's stream of the base models' fits (design.cc: 1 and 2, optimizer.cc: 3 and 4).
constexpr std::uint64_t kStreamHistory = 5, kStreamRgpe = 6;
// history_failure_trust(): the prior is at most kFailureTrustMax, so that the problem's own
// trials can always overrule it; where the whole history failed, H1 expects the problem to fail
// with probability q + (1 - q) kFailureShareWeight.
constexpr double kFailureTrustMax = 0.95, kFailureShareWeight = 0.9;
// The coherence counts at most this many measurements of each problem (evenly spaced among its
// candidates), so that its O(n^2) pairs stay bounded.
constexpr std::size_t kCoherencePoints = 400;

// The mean and standard deviation of v (1 where it is 0: a constant standardizes to 0).
struct Moments {
  double mean = 0, sd = 1;
};
Moments moments_of(const Eigen::VectorXd &v) {
  Moments m;
  m.mean = v.mean();
  m.sd = std::sqrt((v.array() - m.mean).square().mean());
  if (!(m.sd > 1e-12)) m.sd = 1.0;
  return m;
}

// A base model of one history problem: a GP on the standardized logs of `values` (candidate ->
// score or run time), predicted at every candidate of `cs`: its mean and variance (noise
// included) in standardized units, and the moments that undo the standardization.
struct BaseFit {
  Eigen::VectorXd mean, var;
  Moments moments;
};
BaseFit fit_base(const CandidateSet &cs, const std::map<std::size_t, double> &values, const GpFitOptions &gpo) {
  const Eigen::MatrixXd &Xall = cs.encoded();
  Eigen::MatrixXd X(static_cast<Eigen::Index>(values.size()), Xall.cols());
  Eigen::VectorXd y(X.rows());
  Eigen::Index r = 0;
  for (const auto &[i, s] : values) {
    X.row(r) = Xall.row(static_cast<Eigen::Index>(i));
    y[r++] = std::log(s);
  }
  BaseFit b;
  b.moments = moments_of(y);
  const GaussianProcess gp =
      GaussianProcess::fit(X, (y.array() - b.moments.mean) / b.moments.sd, cs.groups(), gpo);
  Eigen::VectorXd v;
  gp.predict(Xall, &b.mean, &v);
  b.var = v.cwiseMax(0.0) + Eigen::VectorXd::Constant(v.size(), gp.noise_var());
  return b;
}

}  // namespace

std::vector<Observation> map_history(const CandidateSet &from, const std::vector<Observation> &done,
                                     const CandidateSet &to) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < to.size(); ++i) index.emplace(to.label(i), i);
  std::vector<Observation> out;
  for (const auto &ob : done) {
    if (ob.index >= from.size())
      throw_invalid("history observation of candidate " + std::to_string(ob.index) + ": only " +
                    std::to_string(from.size()) + " candidates");
    const auto it = index.find(from.label(ob.index));
    if (it == index.end()) continue;
    Observation o = ob;
    o.index = it->second;
    out.push_back(o);
  }
  return out;
}

std::shared_ptr<const WarmStart> prepare_warm_start(const CandidateSet &cs,
                                                    const std::vector<HistoryProblem> &history,
                                                    const EngineOptions &o) {
  auto ws = std::make_shared<WarmStart>();
  ws->candidates = cs.size();
  Rng seeds(o.seed, kStreamHistory);
  // Per base model: 1 where its problem's last trial of a candidate failed, 0 where it
  // succeeded, -1 where it was not measured.
  std::vector<Eigen::VectorXd> outcomes;
  // Per base model: its problem's successful candidates and their last scores.
  std::vector<std::map<std::size_t, double>> measured_ok;
  for (const auto &h : history) {
    // The last score of each successful candidate (a candidate measured twice counts once).
    std::map<std::size_t, double> last;
    Eigen::VectorXd failed = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(cs.size()), -1.0);
    for (const auto &ob : h.done) {
      if (ob.index >= cs.size())
        throw_invalid("history '" + h.name + "': candidate " + std::to_string(ob.index) +
                      ": only " + std::to_string(cs.size()) + " candidates");
      failed[static_cast<Eigen::Index>(ob.index)] = ob.failed ? 1.0 : 0.0;
      if (ob.failed) continue;
      if (!(ob.score > 0 && std::isfinite(ob.score)))
        throw_invalid("history '" + h.name + "': score '" + format_double(ob.score) +
                      "' must be a positive number");
      last[ob.index] = ob.score;
    }
    const std::uint64_t seed = seeds.next();
    if (last.size() < 2) continue;
    GpFitOptions gpo = o.gp;
    gpo.seed = seed;
    if (o.input_warping) gpo.warp_columns = cs.numeric_columns();
    gpo.linear = o.effective_linear_trend();
    BaseFit base = fit_base(cs, last, gpo);
    ws->names.push_back(h.name);
    ws->mean.push_back(std::move(base.mean));
    ws->var.push_back(std::move(base.var));
    // The time base: the same fit on the log run times (the last of each candidate), where
    // they are given for every successful candidate and the search will use them.
    std::map<std::size_t, double> last_time;
    for (const auto &ob : h.times) {
      if (ob.failed) continue;
      if (ob.index >= cs.size())
        throw_invalid("history '" + h.name + "': run time of candidate " + std::to_string(ob.index) +
                      ": only " + std::to_string(cs.size()) + " candidates");
      if (!(ob.score > 0 && std::isfinite(ob.score)))
        throw_invalid("history '" + h.name + "': run time '" + format_double(ob.score) +
                      "' must be a positive number");
      last_time[ob.index] = ob.score;
    }
    bool all_timed = !last_time.empty() && o.effective_history_time_model();
    for (const auto &[i, s] : last) all_timed = all_timed && last_time.count(i);
    if (all_timed) {
      const BaseFit t = fit_base(cs, last_time, gpo);
      const double sd = t.moments.sd;
      ws->log_time_mean.push_back((t.mean.array() * sd + t.moments.mean).matrix());
      ws->log_time_var.push_back(t.var * (sd * sd));
      std::vector<std::size_t> idx;
      for (const auto &entry : last_time) idx.push_back(entry.first);
      ws->measured.push_back(std::move(idx));
    }
    outcomes.push_back(std::move(failed));
    measured_ok.push_back(std::move(last));
  }
  // The coherence: each problem's measurements ordered by the other models' mean.
  if (ws->size() >= 2) {
    double right = 0, pairs = 0;
    for (std::size_t b = 0; b < ws->size(); ++b) {
      const auto &ok = measured_ok[b];
      const std::size_t step = (ok.size() + kCoherencePoints - 1) / kCoherencePoints;
      std::vector<std::pair<double, double>> pts;  // (score, the others' mean)
      std::size_t k = 0;
      for (const auto &[i, s] : ok) {
        if (k++ % step) continue;
        double m = 0;
        for (std::size_t o2 = 0; o2 < ws->size(); ++o2)
          if (o2 != b) m += ws->mean[o2][static_cast<Eigen::Index>(i)];
        pts.emplace_back(s, m);
      }
      for (std::size_t i = 0; i < pts.size(); ++i)
        for (std::size_t j = i + 1; j < pts.size(); ++j) {
          const double dy = pts[i].first - pts[j].first, dm = pts[i].second - pts[j].second;
          if (dy == 0) continue;
          pairs += 1;
          right += dy * dm > 0 ? 1.0 : dm == 0 ? 0.5 : 0.0;
        }
    }
    ws->coherence_pairs = pairs;
    if (pairs > 0) ws->coherence = 2 * right / pairs - 1;
    if (ws->coherence < o.history_coherence) {
      ws->set_aside = std::move(ws->names);
      ws->names.clear();
      ws->mean.clear();
      ws->var.clear();
      ws->log_time_mean.clear();
      ws->log_time_var.clear();
      ws->measured.clear();
      outcomes.clear();
    }
  }
  // The failure share at every candidate, and its leave-one-out agreement with each problem.
  const Eigen::Index nc = static_cast<Eigen::Index>(cs.size());
  Eigen::VectorXd fails = Eigen::VectorXd::Zero(nc), measured = Eigen::VectorXd::Zero(nc);
  for (const auto &f : outcomes) {
    fails += (f.array() > 0).cast<double>().matrix();
    measured += (f.array() >= 0).cast<double>().matrix();
  }
  ws->failure_share = (measured.array() > 0).select(fails.array() / measured.array().max(1.0), -1.0);
  for (const auto &f : outcomes) {
    std::vector<double> hf, hs;
    for (Eigen::Index i = 0; i < nc; ++i) {
      if (f[i] < 0 || measured[i] < 2) continue;
      const double others = (fails[i] - f[i]) / (measured[i] - 1);
      (f[i] > 0 ? hf : hs).push_back(others);
    }
    count_ordered_pairs(hf, hs, &ws->failure_pairs_right, &ws->failure_pairs);
  }
  return ws;
}

std::shared_ptr<const WarmStart> time_scored(const std::shared_ptr<const WarmStart> &ws,
                                             const std::vector<double> &factor) {
  if (!ws || ws->log_time_mean.size() != ws->size() || ws->size() == 0) return ws;
  if (factor.size() != ws->candidates)
    throw_invalid("time_scored: " + std::to_string(factor.size()) + " score factors for " +
                  std::to_string(ws->candidates) + " candidates");
  auto out = std::make_shared<WarmStart>(*ws);
  const Eigen::Index n = static_cast<Eigen::Index>(factor.size());
  Eigen::VectorXd lf(n);
  for (Eigen::Index i = 0; i < n; ++i) lf[i] = std::log(factor[static_cast<std::size_t>(i)]);
  for (std::size_t b = 0; b < ws->size(); ++b) {
    const Eigen::VectorXd z = ws->log_time_mean[b] + lf;
    const Moments m = moments_of(z(ws->measured[b]));
    out->mean[b] = (z.array() - m.mean) / m.sd;
    out->var[b] = ws->log_time_var[b] / (m.sd * m.sd);
  }
  return out;
}

void count_ordered_pairs(const std::vector<double> &failed, std::vector<double> succeeded,
                         double *right, double *pairs) {
  std::sort(succeeded.begin(), succeeded.end());
  for (double a : failed) {
    const auto lo = std::lower_bound(succeeded.begin(), succeeded.end(), a);
    const auto hi = std::upper_bound(lo, succeeded.end(), a);
    *right += static_cast<double>(lo - succeeded.begin()) + 0.5 * static_cast<double>(hi - lo);
  }
  *pairs += static_cast<double>(failed.size()) * static_cast<double>(succeeded.size());
}

double history_failure_trust(const WarmStart &ws, const std::vector<Observation> &done) {
  if (ws.failure_share.size() != static_cast<Eigen::Index>(ws.candidates) || !(ws.failure_pairs > 0))
    return 0.0;
  const double prior =
      std::min(kFailureTrustMax, std::max(0.0, 2 * ws.failure_pairs_right / ws.failure_pairs - 1));
  if (prior <= 0) return 0.0;
  std::vector<signed char> last(ws.candidates, -1);
  for (const auto &ob : done)
    if (ob.index < ws.candidates) last[ob.index] = ob.failed ? 1 : 0;
  double n = 0, nf = 0;
  for (auto l : last)
    if (l >= 0) {
      ++n;
      nf += l;
    }
  // The problem's failure rate (Laplace's rule), and the log-likelihood ratio of its trials:
  // where the history failed, H1 expects more failures than that rate, H0 no more.
  const double q = (nf + 1) / (n + 2);
  double log_ratio = 0;
  for (std::size_t i = 0; i < ws.candidates; ++i) {
    const double h = ws.failure_share[static_cast<Eigen::Index>(i)];
    if (last[i] < 0 || !(h > 0)) continue;
    const double p1 = q + (1 - q) * kFailureShareWeight * h;
    log_ratio += last[i] ? std::log(p1 / q) : std::log((1 - p1) / (1 - q));
  }
  const double log_odds = std::log(prior / (1 - prior)) + log_ratio;
  return 1.0 / (1.0 + std::exp(-log_odds));
}

std::vector<double> rgpe_weights(const std::vector<Eigen::VectorXd> &base_mean,
                                 const std::vector<Eigen::VectorXd> &base_var,
                                 const Eigen::VectorXd &y, const Eigen::VectorXd &loo_mean,
                                 const Eigen::VectorXd &loo_var, std::uint64_t seed, bool ties_to_own,
                                 double gate, int samples) {
  const std::size_t nb = base_mean.size();
  std::vector<double> w(nb + 1, 0.0);
  const bool target = loo_mean.size() == y.size() && y.size() >= 2;
  if (y.size() < 2) {
    // Nothing to rank: the bases share the weight (the target has no model yet).
    if (nb == 0) {
      w[0] = 1.0;
      return w;
    }
    for (std::size_t b = 0; b < nb; ++b) w[b] = 1.0 / static_cast<double>(nb);
    return w;
  }
  Rng rng(seed, kStreamRgpe);
  const std::size_t models = nb + (target ? 1 : 0);
  std::vector<std::vector<std::size_t>> loss(models, std::vector<std::size_t>(samples));
  // Each draw is written in y's order, where the ranking loss counts it.
  const RankingLoss ranking(y);
  std::vector<Eigen::VectorXd> sd(models);
  for (std::size_t b = 0; b < models; ++b)
    sd[b] = (b == nb ? loo_var : base_var[b]).head(y.size()).cwiseMax(0.0).cwiseSqrt();
  Eigen::VectorXd t(y.size()), z(y.size());
  for (int k = 0; k < samples; ++k)
    for (std::size_t b = 0; b < models; ++b) {
      const Eigen::VectorXd &m = b == nb ? loo_mean : base_mean[b];
      fill_normal(rng, z.data(), static_cast<std::size_t>(y.size()));
      for (Eigen::Index j = 0; j < y.size(); ++j) t[ranking.position(j)] = m[j] + sd[b][j] * z[j];
      loss[b][static_cast<std::size_t>(k)] = ranking.sorted(t);
    }
  // Weight dilution: drop a base whose median loss is above the target's 95th percentile.
  std::vector<bool> kept(models, true);
  // The gate: once the target has its own model, a base whose mean orders the trials no better
  // than a random order would, at `gate` standard deviations (Kendall's test), gets no weight.
  if (target && gate > 0) {
    const double limit = kendall_limit(ranking.pairs(), static_cast<std::size_t>(y.size()), gate);
    for (std::size_t b = 0; b < nb; ++b)
      if (static_cast<double>(ranking_loss(base_mean[b], y)) > limit) kept[b] = false;
  }
  if (target) {
    std::vector<std::size_t> own = loss[nb];
    std::sort(own.begin(), own.end());
    const std::size_t p95 = own[std::min<std::size_t>(
        own.size() - 1, static_cast<std::size_t>(std::ceil(0.95 * own.size())) - 1)];
    for (std::size_t b = 0; b < nb; ++b) {
      std::vector<std::size_t> l = loss[b];
      std::nth_element(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(l.size() / 2), l.end());
      if (l[l.size() / 2] > p95) kept[b] = false;
    }
  }
  for (int k = 0; k < samples; ++k) {
    // ties_to_own: a draw in which the target's own model is among the lowest losses is the
    // target's alone (a base model must order the trials strictly better to win it).
    if (ties_to_own && target) {
      std::size_t lo = SIZE_MAX;
      for (std::size_t b = 0; b < models; ++b)
        if (kept[b]) lo = std::min(lo, loss[b][static_cast<std::size_t>(k)]);
      if (loss[nb][static_cast<std::size_t>(k)] == lo) {
        w[nb] += 1.0 / static_cast<double>(samples);
        continue;
      }
    }
    std::size_t lo = SIZE_MAX, ties = 0;
    for (std::size_t b = 0; b < models; ++b)
      if (kept[b]) lo = std::min(lo, loss[b][static_cast<std::size_t>(k)]);
    for (std::size_t b = 0; b < models; ++b) ties += kept[b] && loss[b][static_cast<std::size_t>(k)] == lo;
    for (std::size_t b = 0; b < models; ++b)
      if (kept[b] && loss[b][static_cast<std::size_t>(k)] == lo)
        w[b] += 1.0 / static_cast<double>(ties * static_cast<std::size_t>(samples));
  }
  return w;
}

}  // namespace autotune
