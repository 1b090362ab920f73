#include "autotune/workflow_search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "autotune/acquisition.hpp"
#include "autotune/error.hpp"
#include "autotune/gp.hpp"
#include "autotune/optimizer.hpp"
#include "autotune/rng.hpp"
#include "autotune/units.hpp"

namespace autotune {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Seed streams: per function f, the design (kStreamDesign + f), the GP fits (kStreamGp + 2f and
// + 2f + 1), propose() of the function strategy (kStreamFunction + f); per run r, the random
// strategy (kStreamRandom + r) and the flat strategy's pool (kStreamPool + r).
constexpr std::uint64_t kStreamDesign = 1000, kStreamGp = 2000, kStreamFunction = 3000,
                        kStreamRandom = 5000, kStreamClassifier = 6000, kStreamSample = 500000,
                        kStreamPool = 1000000;

std::string seconds(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, t >= 100 ? "%.0f s" : "%.3g s", t);
  return buf;
}

// What a function's model says of each of its candidates.
struct FunctionModel {
  bool modelled = false;
  std::vector<double> mu, sd;    // log time
  std::vector<double> cmu, csd;  // log cost (without rates)
  // Thompson sampling: the lower Cholesky factor of the posterior covariance of log time over the
  // candidates (empty: sample each candidate's marginal alone).
  Eigen::MatrixXd chol;
  double y_std = 1;          // standard deviation of the observed log times
  std::vector<double> p_ok;  // P(success) per candidate (acquisition ei)
  double time_mean(std::size_t i) const { return std::exp(mu[i] + 0.5 * sd[i] * sd[i]); }
  double time_std(std::size_t i) const {
    return time_mean(i) * std::sqrt(std::expm1(sd[i] * sd[i]));
  }
};

// Whether the stage strategy's models of log time and log cost have the linear term: only when
// engine.linear_trend says yes.  The automatic choice by gamma (design.hpp) was made for models of
// a score, not of a function's time or cost, so it does not apply here.
bool stage_linear_trend(const EngineOptions &eo) { return eo.linear_trend == Trend::yes; }

// A GP of log(value) of the successful measurements of one function; false with fewer than two
// distinct candidates measured, except for a function of one candidate (a fixed configuration,
// e.g. a space of one point), whose model is the mean and spread of its measurements' logs: it
// needs no GP and must not hold back the other functions' models.
// With `chol`, also the factor of the joint posterior covariance (at most kMaxJointSample
// candidates; more are sampled by their marginals).
constexpr std::size_t kMaxJointSample = 1500;
bool fit_log(const CandidateSet &cs, const std::vector<std::pair<std::size_t, double>> &obs,
             const EngineOptions &eo, std::uint64_t seed, std::vector<double> *mu,
             std::vector<double> *sd, Eigen::MatrixXd *chol = nullptr, double *ystd = nullptr,
             GpHyper *hyper = nullptr) {
  std::set<std::size_t> distinct;
  for (const auto &o : obs) distinct.insert(o.first);
  const Eigen::MatrixXd &Xall = cs.encoded();
  if (cs.size() == 1 && !obs.empty()) {
    double m = 0, v = 0;
    for (const auto &o : obs) m += std::log(o.second);
    m /= static_cast<double>(obs.size());
    for (const auto &o : obs) v += (std::log(o.second) - m) * (std::log(o.second) - m);
    const double spread = obs.size() > 1 ? std::sqrt(v / static_cast<double>(obs.size() - 1)) : 0.0;
    *mu = {m};
    *sd = {spread / std::sqrt(static_cast<double>(obs.size()))};  // of the mean
    if (chol) *chol = Eigen::MatrixXd::Constant(1, 1, (*sd)[0]);
    if (ystd) *ystd = spread > 1e-12 ? spread : 1.0;
    return true;
  }
  if (distinct.size() < 2 || Xall.cols() == 0) return false;
  const Eigen::Index n = static_cast<Eigen::Index>(obs.size());
  Eigen::MatrixXd X(n, Xall.cols());
  Eigen::VectorXd y(n);
  for (Eigen::Index r = 0; r < n; ++r) {
    X.row(r) = Xall.row(static_cast<Eigen::Index>(obs[static_cast<std::size_t>(r)].first));
    y[r] = std::log(obs[static_cast<std::size_t>(r)].second);
  }
  const double y_mean = y.mean();
  double y_std = std::sqrt((y.array() - y_mean).square().mean());
  if (!(y_std > 1e-12)) y_std = 1.0;
  if (ystd) *ystd = y_std;
  GpFitOptions gpo = eo.gp;
  gpo.seed = seed;
  if (eo.input_warping) gpo.warp_columns = cs.numeric_columns();
  gpo.linear = stage_linear_trend(eo);
  const GaussianProcess gp =
      GaussianProcess::fit(X, (y.array() - y_mean) / y_std, cs.groups(), gpo);
  if (hyper) *hyper = gp.hyper();
  const CandidatePosterior post(gp, Xall, false);
  const std::size_t m = cs.size();
  mu->resize(m);
  sd->resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    (*mu)[i] = y_mean + y_std * post.mean()[static_cast<Eigen::Index>(i)];
    (*sd)[i] = y_std * std::sqrt(std::max(0.0, post.var()[static_cast<Eigen::Index>(i)]));
  }
  if (chol && m <= kMaxJointSample) {
    const Eigen::MatrixXd V = gp.chol_inverse() * gp.kernel(Xall, gp.inputs()).transpose();
    Eigen::MatrixXd C = gp.kernel(Xall, Xall) - V.transpose() * V;
    const double jitter = 1e-6 * std::max(1e-12, C.diagonal().maxCoeff());
    for (double j = jitter; j < 1e3 * jitter + 1; j *= 10) {
      Eigen::LLT<Eigen::MatrixXd> llt(C + j * Eigen::MatrixXd::Identity(C.rows(), C.cols()));
      if (llt.info() == Eigen::Success) {
        *chol = y_std * llt.matrixL().toDenseMatrix();
        break;
      }
    }
  }
  return true;
}

// P(success) of every candidate of a function with failures: a GP on the +1 / -1 labels of its
// measurements, as propose()'s constraint model (optimizer.cc: one start from the time model's
// hyperparameters, five iterations), P = Phi(mu / sd).  All 1 without failures.
std::vector<double> success_probability(const CandidateSet &cs,
                                        const std::vector<std::pair<std::size_t, bool>> &labels,
                                        const EngineOptions &eo, std::uint64_t seed,
                                        const GpHyper &start) {
  std::vector<double> p(cs.size(), 1.0);
  const bool any_fail =
      std::any_of(labels.begin(), labels.end(), [](const auto &l) { return !l.second; });
  if (!any_fail || cs.encoded().cols() == 0) return p;
  const Eigen::MatrixXd &Xall = cs.encoded();
  const Eigen::Index n = static_cast<Eigen::Index>(labels.size());
  Eigen::MatrixXd X(n, Xall.cols());
  Eigen::VectorXd c(n);
  for (Eigen::Index r = 0; r < n; ++r) {
    X.row(r) = Xall.row(static_cast<Eigen::Index>(labels[static_cast<std::size_t>(r)].first));
    c[r] = labels[static_cast<std::size_t>(r)].second ? 1.0 : -1.0;
  }
  const double c_mean = c.mean();
  const double c_std = std::sqrt((c.array() - c_mean).square().mean());
  if (!(c_std > 1e-12)) {
    std::fill(p.begin(), p.end(), c_mean > 0 ? 1.0 : 0.0);
    return p;
  }
  GpFitOptions cpo = eo.gp;
  cpo.seed = seed;
  if (eo.input_warping) cpo.warp_columns = cs.numeric_columns();
  cpo.linear = stage_linear_trend(eo);
  cpo.starts = 1;
  cpo.first_start = start;
  cpo.max_iterations = std::min(cpo.max_iterations, 5);
  const GaussianProcess gp =
      GaussianProcess::fit(X, (c.array() - c_mean) / c_std, cs.groups(), cpo);
  const CandidatePosterior post(gp, Xall, false);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const double mu = c_mean + c_std * post.mean()[static_cast<Eigen::Index>(i)];
    const double sd = c_std * std::sqrt(std::max(0.0, post.var()[static_cast<Eigen::Index>(i)]));
    p[i] = sd > 0 ? normal_cdf(mu / sd) : (mu > 0 ? 1.0 : 0.0);
  }
  return p;
}

void check_inputs(const Workflow &w, const std::vector<FunctionCandidates> &fc,
                  const std::vector<WorkflowRun> &runs) {
  const std::size_t n = w.functions.size();
  if (fc.size() != n)
    throw_invalid("workflow '" + w.name + "': " + std::to_string(fc.size()) +
                  " candidate sets for " + std::to_string(n) + " functions");
  for (std::size_t f = 0; f < n; ++f) {
    if (fc[f].candidates.size() == 0)
      throw_invalid("workflow '" + w.name + "': function '" + w.functions[f].name +
                    "' has no candidates");
    if (!fc[f].rate.empty()) {
      if (fc[f].rate.size() != fc[f].candidates.size())
        throw_invalid("workflow '" + w.name + "': function '" + w.functions[f].name +
                      "': one rate per candidate is needed");
      for (double r : fc[f].rate)
        if (!(r >= 0) || !std::isfinite(r))
          throw_invalid("workflow '" + w.name + "': function '" + w.functions[f].name +
                        "': rate '" + format_double(r) + "' must be a number >= 0");
    }
  }
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (runs[r].functions.size() != n)
      throw_invalid("workflow '" + w.name + "': run " + std::to_string(r) + " has " +
                    std::to_string(runs[r].functions.size()) + " measurements for " +
                    std::to_string(n) + " functions");
    for (std::size_t f = 0; f < n; ++f) {
      const FunctionMeasurement &m = runs[r].functions[f];
      const std::string at = "workflow '" + w.name + "': run " + std::to_string(r) +
                             ", function '" + w.functions[f].name + "': ";
      if (m.candidate >= fc[f].candidates.size())
        throw_invalid(at + "candidate " + std::to_string(m.candidate) + " is out of range (" +
                      std::to_string(fc[f].candidates.size()) + " candidates)");
      if (!m.failed &&
          (!(m.time > 0) || !(m.cost > 0) || !std::isfinite(m.time) || !std::isfinite(m.cost)))
        throw_invalid(at + "time and cost of a successful measurement must be > 0");
    }
  }
}

// The stage's joint choice minimizing a * max_f t_f + b * sum_f c_f over the allowed candidates
// of each function: every predicted time is tried as the stage's time T, each function taking its
// cheapest allowed candidate with t <= T.  `fixed[f]` < n pins a function's candidate.
struct StageInput {
  std::size_t f;
  const std::vector<double> *t, *c;
  const std::vector<char> *allowed;
};
std::vector<std::size_t> best_stage(const std::vector<StageInput> &in, double a, double b) {
  const std::size_t m = in.size();
  // Per function: allowed candidates sorted by t, with the prefix minimum of c.
  std::vector<std::vector<std::size_t>> order(m);
  std::vector<std::vector<std::size_t>> argmin(m);
  std::vector<double> thresholds;
  for (std::size_t k = 0; k < m; ++k) {
    const auto &t = *in[k].t, &c = *in[k].c;
    for (std::size_t i = 0; i < t.size(); ++i)
      if ((*in[k].allowed)[i]) order[k].push_back(i);
    std::stable_sort(order[k].begin(), order[k].end(),
                     [&](std::size_t x, std::size_t y) { return t[x] < t[y]; });
    std::size_t best = order[k].empty() ? 0 : order[k][0];
    for (auto i : order[k]) {
      if (c[i] < c[best]) best = i;
      argmin[k].push_back(best);
      thresholds.push_back(t[i]);
    }
  }
  std::sort(thresholds.begin(), thresholds.end());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  std::vector<std::size_t> pick(m, 0), cur(m, 0);
  double best_val = kInf;
  for (double T : thresholds) {
    double tmax = 0, csum = 0;
    bool feasible = true;
    for (std::size_t k = 0; k < m && feasible; ++k) {
      const auto &t = *in[k].t;
      // The last position with t <= T.
      auto it = std::upper_bound(order[k].begin(), order[k].end(), T,
                                 [&](double v, std::size_t i) { return v < t[i]; });
      if (it == order[k].begin()) {
        feasible = false;
        break;
      }
      const std::size_t i = argmin[k][static_cast<std::size_t>(it - order[k].begin()) - 1];
      cur[k] = i;
      tmax = std::max(tmax, t[i]);
      csum += (*in[k].c)[i];
    }
    if (!feasible) continue;
    const double v = a * tmax + b * csum;
    if (v < best_val) {
      best_val = v;
      pick = cur;
    }
  }
  return pick;
}

StopDecision history_stop(const std::vector<double> &scores, const StoppingOptions &stop) {
  std::vector<Observation> done;
  for (std::size_t r = 0; r < scores.size(); ++r)
    done.push_back(std::isnan(scores[r]) ? Observation::failure(r) : Observation::ok(r, scores[r]));
  StopDecision d = check_history_rules(done, 0, 1, stop);
  if (d.rule == StopRule::budget)
    d.reason = "the budget of " + std::to_string(stop.budget) + " runs is spent";
  return d;
}

struct Context {
  const Workflow &w;
  const std::vector<FunctionCandidates> &fc;
  const std::vector<WorkflowRun> &runs;
  const WorkflowSearchOptions &o;
  Stages stages;
  std::vector<double> scores;  // per run, NaN when failed
};

// The next point of function f's initial design not yet measured, or nullopt.
std::optional<std::size_t> next_design(const Context &cx, std::size_t f) {
  const CandidateSet &cs = cx.fc[f].candidates;
  EngineOptions eo = cx.o.engine;
  eo.seed = Rng(cx.o.seed, kStreamDesign + f).next();
  eo.initial_trials = std::min(cx.o.initial_runs, cs.size());
  const std::size_t count = std::min(cs.size(), cx.runs.size() + 1);
  const std::vector<std::size_t> design = initial_design(cs, count, eo);
  for (auto i : design) {
    bool seen = false;
    for (const auto &r : cx.runs) seen = seen || r.functions[f].candidate == i;
    if (!seen) return i;
  }
  return std::nullopt;
}

// The expected improvement of the run's score a max(t + L, C0) + b c + const over gstar when one
// function's time is t and its cost c and every other function keeps its configuration (L: the
// longest path through the function without its own time; C0: the critical path with its time
// 0; const, the others' cost, taken off gstar by the caller), for a candidate whose log time and
// log cost are predicted N(mt, st^2) and N(mc, sc^2), taken as comonotone (log t = mt + st z, log c
// = mc + sc z: for one configuration cost is rate x time, so the two move together), by quadrature
// over z on 41 points of mu +- 4 sd.  With `log`, the improvement of the log score less the margin
// xi.
double coupled_ei(double mt, double st, double mc, double sc, double a, double b, double L,
                  double C0, double gstar, bool log, double xi) {
  auto g = [&](double z) {
    return a * std::max(std::exp(mt + st * z) + L, C0) + b * std::exp(mc + sc * z);
  };
  auto gain = [&](double z) { return log ? std::log(gstar) - xi - std::log(g(z)) : gstar - g(z); };
  if (!(st > 1e-12) && !(sc > 1e-12)) return std::max(0.0, gain(0));
  constexpr int K = 41;
  double ei = 0, wsum = 0;
  for (int k = 0; k < K; ++k) {
    const double z = -4.0 + 8.0 * k / (K - 1);
    const double wgt = std::exp(-0.5 * z * z);
    wsum += wgt;
    const double v = gain(z);
    if (v > 0) ei += wgt * v;
  }
  return ei / wsum;
}

// For function f with the others' times `t`: L (longest path through f without f's time) and
// C0 (the critical path with f's time 0).
void path_terms(const Workflow &w, const Stages &st, std::vector<double> t, std::size_t f,
                double *L, double *C0) {
  const std::size_t n = t.size();
  t[f] = 0;
  std::vector<double> finish(n, 0), tail(n, 0);
  for (const auto &stage : st.stage)
    for (auto v : stage) {
      double start = 0;
      for (auto d : w.functions[v].deps) start = std::max(start, finish[d]);
      finish[v] = start + t[v];
    }
  // tail[v]: the longest path after v (excluding v), in reverse stage order.
  for (auto it = st.stage.rbegin(); it != st.stage.rend(); ++it)
    for (auto v : *it)
      for (auto d : w.functions[v].deps) tail[d] = std::max(tail[d], tail[v] + t[v]);
  *L = finish[f] + tail[f];  // finish[f] = start of f, since t[f] = 0
  *C0 = *std::max_element(finish.begin(), finish.end());
}

// The stage strategy's default choice.  The base is the best combination of measured
// configurations: each stage chosen exactly from its functions' measurements (best_stage), then
// refined on the critical path when the stages are not exact.  Every function then takes the
// candidate of largest expected improvement of the run's score with the others at the base
// (coupled_ei): a function off the critical path gains nothing from being faster than its slack
// and is steered to cheaper configurations.  The functions' measurements do not depend on each
// other, so all of them explore in the same run.
void propose_stage_ei(const Context &cx, const std::vector<FunctionModel> &models,
                      const std::vector<std::vector<char>> &allowed, double a, double b,
                      WorkflowProposal *p) {
  const Workflow &w = cx.w;
  const std::size_t nf = w.functions.size();
  std::vector<std::vector<double>> mt(nf), mc(nf);
  std::vector<std::vector<char>> measured(nf);
  for (std::size_t f = 0; f < nf; ++f) {
    const std::size_t n = cx.fc[f].candidates.size();
    mt[f].assign(n, kInf);
    mc[f].assign(n, kInf);
    measured[f].assign(n, 0);
    for (const auto &r : cx.runs) {
      const auto &m = r.functions[f];
      if (m.failed) continue;
      measured[f][m.candidate] = 1;
      mt[f][m.candidate] = m.time;
      mc[f][m.candidate] = m.cost;
    }
  }
  std::vector<std::size_t> base(nf, 0);
  for (const auto &st : cx.stages.stage) {
    std::vector<StageInput> in;
    for (auto f : st) in.push_back({f, &mt[f], &mc[f], &measured[f]});
    const auto sp = best_stage(in, a, b);
    for (std::size_t k = 0; k < st.size(); ++k) base[st[k]] = sp[k];
  }
  auto measured_score = [&](const std::vector<std::size_t> &pick) {
    std::vector<double> tt(nf);
    double cost = 0;
    for (std::size_t f = 0; f < nf; ++f) {
      tt[f] = mt[f][pick[f]];
      cost += mc[f][pick[f]];
    }
    return a * critical_path(w, tt) + b * cost;
  };
  double gstar = measured_score(base);
  if (!cx.stages.exact) {
    for (int pass = 0; pass < 3; ++pass) {
      bool changed = false;
      for (std::size_t f = 0; f < nf; ++f) {
        const std::size_t keep = base[f];
        std::size_t best = keep;
        for (std::size_t i = 0; i < mt[f].size(); ++i) {
          if (!measured[f][i] || i == keep) continue;
          base[f] = i;
          const double v = measured_score(base);
          if (v < gstar - 1e-12 * gstar) {
            gstar = v;
            best = i;
          }
        }
        base[f] = best;
        changed = changed || best != keep;
      }
      if (!changed) break;
    }
  }
  std::vector<double> bt(nf), bc(nf);
  double base_cost = 0;
  for (std::size_t f = 0; f < nf; ++f) {
    bt[f] = mt[f][base[f]];
    bc[f] = mc[f][base[f]];
    base_cost += bc[f];
  }
  // Per function: the expected improvement of every allowed candidate.
  std::vector<std::vector<std::pair<double, std::size_t>>> ranked(nf);
  std::vector<double> slack(nf);
  double total_ei = 0;
  for (std::size_t f = 0; f < nf; ++f) {
    double L, C0;
    path_terms(w, cx.stages, bt, f, &L, &C0);
    slack[f] = C0 - L - bt[f];
    const double g_f = gstar - b * (base_cost - bc[f]);
    const FunctionModel &fm = models[f];
    for (std::size_t i = 0; i < mt[f].size(); ++i) {
      if (!allowed[f][i]) continue;
      const double e = coupled_ei(fm.mu[i], fm.sd[i], fm.cmu[i], fm.csd[i], a, b, L, C0, g_f,
                                  cx.o.log_ei, cx.o.engine.xi * fm.y_std) *
                       (fm.p_ok.empty() ? 1.0 : fm.p_ok[i]);
      ranked[f].emplace_back(e, i);
    }
    std::stable_sort(ranked[f].begin(), ranked[f].end(),
                     [](const auto &x, const auto &y) { return x.first > y.first; });
    total_ei += ranked[f].empty() ? 0.0 : ranked[f][0].first;
  }
  const double best_score_units = gstar;  // a T + b C of the base: its score
  if (cx.o.stop.ei_fraction > 0 && cx.runs.size() >= cx.o.stop.min_trials &&
      total_ei < cx.o.stop.ei_fraction * best_score_units) {
    p->functions.clear();
    p->stop = {StopRule::ei, "the largest expected improvement of the run is " +
                                 format_double(100 * total_ei / best_score_units) +
                                 "% of the best score (less than " +
                                 format_double(100 * cx.o.stop.ei_fraction) + "%)"};
    return;
  }
  // Each function's choice: its largest EI, or its base when nothing improves in expectation.
  std::vector<std::size_t> pick(nf);
  for (std::size_t f = 0; f < nf; ++f)
    pick[f] = !ranked[f].empty() && ranked[f][0].first > 0 ? ranked[f][0].second : base[f];
  // A function whose choice is already measured learns nothing from this run: it takes its
  // unmeasured candidate of largest expected improvement instead (its own measurement does not
  // depend on the others' choices).
  std::vector<char> fresh(nf, 0);
  if (cx.o.fresh)
    for (std::size_t f = 0; f < nf; ++f) {
      if (!measured[f][pick[f]]) continue;
      for (const auto &[e, i] : ranked[f])
        if (!measured[f][i]) {
          pick[f] = i;
          fresh[f] = 1;
          break;
        }
    }
  // The best combination of measurements may never have run as a whole (its functions were
  // measured in different runs).  When it beats the best run by more than the margin, run it:
  // a run is what the user gets, and a run in which an exploring function fails has no score.
  bool exploit = false;
  const bool last_run = cx.o.stop.budget > 0 && cx.runs.size() + 1 >= cx.o.stop.budget;
  if (cx.o.exploit_margin >= 0 || (last_run && cx.o.exploit_last)) {
    std::vector<std::size_t> cur = pick;
    pick = base;
    bool ran = false;
    for (const auto &r : cx.runs) {
      bool same = true;
      for (std::size_t f = 0; f < nf && same; ++f) same = r.functions[f].candidate == base[f];
      ran = ran || same;
    }
    const double best_run = p->best_run ? p->best_score : kInf;
    exploit = !ran &&
              gstar < best_run * (1 - (last_run && cx.o.exploit_last ? 0.0 : cx.o.exploit_margin));
    if (!exploit) pick = cur;
  }
  auto repeats = [&] {
    for (const auto &r : cx.runs) {
      bool same = true;
      for (std::size_t f = 0; f < nf && same; ++f) same = r.functions[f].candidate == pick[f];
      if (same) return true;
    }
    return false;
  };
  // A repeat of a past run measures nothing new: move the function with the best next candidate
  // not yet measured.
  for (std::size_t tries = 0; repeats() && tries < 4 * nf; ++tries) {
    std::size_t bf = nf, bi = 0;
    double be = -1;
    for (std::size_t f = 0; f < nf; ++f)
      for (const auto &[e, i] : ranked[f])
        if (!measured[f][i] && i != pick[f]) {
          if (e > be) {
            be = e;
            bf = f;
            bi = i;
          }
          break;
        }
    if (bf == nf) break;
    pick[bf] = bi;
  }
  if (repeats()) {
    p->functions.clear();
    p->stop = {StopRule::exhausted,
               "every function's configurations have been measured or have failed"};
    return;
  }
  std::vector<double> tm(nf);
  double cost = 0;
  for (std::size_t f = 0; f < nf; ++f) {
    FunctionProposal &fp = p->functions[f];
    const std::size_t i = pick[f];
    const FunctionModel &fm = models[f];
    fp.candidate = i;
    fp.time = fm.time_mean(i);
    fp.time_std = fm.time_std(i);
    fp.cost = std::exp(fm.cmu[i] + 0.5 * fm.csd[i] * fm.csd[i]);
    tm[f] = fp.time;
    cost += fp.cost;
    std::string why = "stage " + std::to_string(fp.stage + 1) + ": ";
    if (exploit)
      why += "the best combination of measured configurations, not yet run together";
    else if (fresh[f])
      why +=
          "its unmeasured configuration of largest expected improvement of the run's score "
          "(its best is measured)";
    else if (i == base[f])
      why += measured[f][i] ? "its best measured configuration" : "its best configuration";
    else
      why += "largest expected improvement of the run's score";
    if (slack[f] > 0)
      why += "; off the critical path by " + seconds(slack[f]) + " at the best runs so far";
    else
      why += "; on the critical path";
    fp.reason = why;
  }
  p->time = critical_path(w, tm);
  p->cost = cost;
  p->score = score(p->time, p->cost, p->reference, w.gamma);
}

void propose_stage(const Context &cx, WorkflowProposal *p) {
  const Workflow &w = cx.w;
  const std::size_t nf = w.functions.size();
  const double g = cx.w.gamma;
  std::vector<FunctionModel> models(nf);
  std::vector<std::vector<char>> allowed(nf);
  std::vector<std::vector<double>> rate(nf);
  for (std::size_t f = 0; f < nf; ++f) {
    const CandidateSet &cs = cx.fc[f].candidates;
    allowed[f].assign(cs.size(), 1);
    std::vector<std::pair<std::size_t, double>> tobs, cobs;
    std::vector<std::pair<std::size_t, bool>> labels;
    for (const auto &r : cx.runs) {
      const auto &m = r.functions[f];
      labels.emplace_back(m.candidate, !m.failed);
      if (m.failed) {
        allowed[f][m.candidate] = 0;
        continue;
      }
      tobs.emplace_back(m.candidate, m.time);
      cobs.emplace_back(m.candidate, m.cost);
    }
    // Every candidate failed: allow them all again rather than propose nothing.
    if (std::none_of(allowed[f].begin(), allowed[f].end(), [](char c) { return c != 0; }))
      allowed[f].assign(cs.size(), 1);
    if (cx.runs.size() < cx.o.initial_runs) continue;
    FunctionModel &fm = models[f];
    GpHyper hyper;
    fm.modelled = fit_log(
        cs, tobs, cx.o.engine, Rng(cx.o.seed, kStreamGp + 2 * f).next(), &fm.mu, &fm.sd,
        cx.o.acquisition == WorkflowSearchOptions::Acquisition::thompson ? &fm.chol : nullptr,
        &fm.y_std, &hyper);
    if (fm.modelled && cx.o.acquisition == WorkflowSearchOptions::Acquisition::ei && cs.size() > 1)
      fm.p_ok = success_probability(cs, labels, cx.o.engine,
                                    Rng(cx.o.seed, kStreamClassifier + f).next(), hyper);
    // The expected-improvement choice models cost on its own even with rates: the cost surface
    // is far flatter than the time surface (time falls with the resources, the rate grows), and
    // a model of time times the rate carries the time model's errors into every cost.
    if (fm.modelled &&
        (cx.fc[f].rate.empty() || cx.o.acquisition == WorkflowSearchOptions::Acquisition::ei))
      fm.modelled = fit_log(cs, cobs, cx.o.engine, Rng(cx.o.seed, kStreamGp + 2 * f + 1).next(),
                            &fm.cmu, &fm.csd);
  }
  p->functions.assign(nf, {});
  for (std::size_t f = 0; f < nf; ++f) p->functions[f].stage = cx.stages.level[f];

  // The initial design, and its continuation while a function has no model or no run has
  // given the score's references.
  const bool all_modelled =
      std::all_of(models.begin(), models.end(), [](const FunctionModel &m) { return m.modelled; });
  if (!all_modelled || !p->reference.valid()) {
    for (std::size_t f = 0; f < nf; ++f) {
      FunctionProposal &fp = p->functions[f];
      if (auto d = next_design(cx, f)) {
        fp.candidate = *d;
        fp.reason = cx.runs.size() < cx.o.initial_runs
                        ? "initial design (run " + std::to_string(cx.runs.size() + 1) + " of " +
                              std::to_string(cx.o.initial_runs) + ")"
                        : "design continued: the function has no model yet";
      } else {
        fp.candidate = Rng(cx.o.seed, kStreamRandom + cx.runs.size() * 64 + f)
                           .below(cx.fc[f].candidates.size());
        fp.reason = "every design point measured: a random candidate";
      }
    }
    return;
  }

  const double a = (1 - g) / p->reference.time, b = g / p->reference.cost;
  std::vector<std::vector<double>> t(nf), c(nf);
  if (cx.o.acquisition == WorkflowSearchOptions::Acquisition::ei) {
    propose_stage_ei(cx, models, allowed, a, b, p);
    return;
  }
  const bool thompson = cx.o.acquisition == WorkflowSearchOptions::Acquisition::thompson;
  Rng draw(cx.o.seed, kStreamSample + cx.runs.size());
  auto optimistic = [&](double kappa) {
    for (std::size_t f = 0; f < nf; ++f) {
      const FunctionModel &fm = models[f];
      const std::size_t n = cx.fc[f].candidates.size();
      t[f].resize(n);
      c[f].resize(n);
      // Thompson sampling: one draw of log time from the posterior, kappa widening it.
      Eigen::VectorXd z;
      if (thompson) {
        z.resize(static_cast<Eigen::Index>(n));
        for (auto &v : z) v = draw.normal();
        if (fm.chol.rows() == z.size())
          z = fm.chol * z;
        else
          for (std::size_t i = 0; i < n; ++i) z[static_cast<Eigen::Index>(i)] *= fm.sd[i];
      }
      for (std::size_t i = 0; i < n; ++i) {
        t[f][i] = thompson ? std::exp(fm.mu[i] + kappa * z[static_cast<Eigen::Index>(i)])
                           : std::exp(fm.mu[i] - kappa * fm.sd[i]);
        c[f][i] = cx.fc[f].rate.empty() ? std::exp(fm.cmu[i] - kappa * fm.csd[i])
                                        : cx.fc[f].rate[i] * t[f][i];
      }
    }
  };
  auto objective = [&](const std::vector<std::size_t> &pick) {
    std::vector<double> tt(nf);
    double cost = 0;
    for (std::size_t f = 0; f < nf; ++f) {
      tt[f] = t[f][pick[f]];
      cost += c[f][pick[f]];
    }
    return a * critical_path(w, tt) + b * cost;
  };
  std::vector<std::size_t> pick(nf, 0);
  double kappa = cx.o.kappa;
  bool repeats = true;
  std::size_t repeated_run = 0;
  for (int attempt = 0; attempt < 5 && repeats; ++attempt, kappa = kappa > 0 ? 2 * kappa : 1) {
    optimistic(kappa);
    for (const auto &st : cx.stages.stage) {
      std::vector<StageInput> in;
      for (auto f : st) in.push_back({f, &t[f], &c[f], &allowed[f]});
      const auto sp = best_stage(in, a, b);
      for (std::size_t k = 0; k < st.size(); ++k) pick[st[k]] = sp[k];
    }
    // Not fork-join: the stage split over-counts time; refine on the critical path itself.
    if (!cx.stages.exact) {
      double cur = objective(pick);
      for (int pass = 0; pass < 3; ++pass) {
        bool changed = false;
        for (std::size_t f = 0; f < nf; ++f) {
          const std::size_t keep = pick[f];
          std::size_t best = keep;
          for (std::size_t i = 0; i < t[f].size(); ++i) {
            if (!allowed[f][i] || i == keep) continue;
            pick[f] = i;
            const double v = objective(pick);
            if (v < cur - 1e-12 * std::abs(cur)) {
              cur = v;
              best = i;
            }
          }
          pick[f] = best;
          changed = changed || best != keep;
        }
        if (!changed) break;
      }
    }
    repeats = false;
    for (std::size_t r = 0; r < cx.runs.size() && !repeats; ++r) {
      bool same = true;
      for (std::size_t f = 0; f < nf && same; ++f)
        same = cx.runs[r].functions[f].candidate == pick[f];
      if (same) {
        repeats = true;
        repeated_run = r;
      }
    }
  }
  if (repeats) {
    p->functions.clear();
    p->stop = {StopRule::ei,
               "no configuration is predicted to beat the runs so far: the best "
               "choice of the models, even optimistic, repeats run " +
                   std::to_string(repeated_run + 1)};
    return;
  }

  // Predictions (means) and reasons.
  std::vector<double> tm(nf);
  double cost = 0;
  for (std::size_t f = 0; f < nf; ++f) {
    FunctionProposal &fp = p->functions[f];
    const std::size_t i = pick[f];
    fp.candidate = i;
    fp.time = models[f].time_mean(i);
    fp.time_std = models[f].time_std(i);
    fp.cost = cx.fc[f].rate.empty()
                  ? std::exp(models[f].cmu[i] + 0.5 * models[f].csd[i] * models[f].csd[i])
                  : cx.fc[f].rate[i] * fp.time;
    tm[f] = fp.time;
    cost += fp.cost;
  }
  for (const auto &st : cx.stages.stage) {
    std::size_t slow = st[0];
    for (auto f : st)
      if (t[f][pick[f]] > t[slow][pick[slow]]) slow = f;
    for (auto f : st) {
      FunctionProposal &fp = p->functions[f];
      bool tried = false;
      for (const auto &r : cx.runs) tried = tried || r.functions[f].candidate == pick[f];
      std::string why = "stage " + std::to_string(fp.stage + 1) + ": ";
      if (st.size() == 1)
        why += "best predicted time/cost trade-off";
      else if (f == slow)
        why += "the stage's critical branch, predicted " + seconds(fp.time);
      else
        why += "off the critical branch: cheapest predicted within the stage's " +
               seconds(t[slow][pick[slow]]) + " (optimistic)";
      why += tried ? "; measured before" : "; untried";
      if (kappa != cx.o.kappa) why += "; more exploration (kappa " + format_double(kappa / 2) + ")";
      fp.reason = why;
    }
  }
  p->time = critical_path(w, tm);
  p->cost = cost;
  p->score = score(p->time, p->cost, p->reference, g);
}

void propose_function(const Context &cx, WorkflowProposal *p) {
  const std::size_t nf = cx.w.functions.size();
  p->functions.assign(nf, {});
  for (std::size_t f = 0; f < nf; ++f) {
    FunctionProposal &fp = p->functions[f];
    fp.stage = cx.stages.level[f];
    const CandidateSet &cs = cx.fc[f].candidates;
    Reference ref;
    std::vector<Observation> done;
    std::set<std::size_t> seen;
    for (const auto &r : cx.runs) {
      const auto &m = r.functions[f];
      if (!seen.insert(m.candidate).second) continue;  // a repeat adds nothing to propose()
      if (m.failed) {
        done.push_back(Observation::failure(m.candidate));
        continue;
      }
      if (!ref.valid()) ref = make_reference(m.time, m.cost);
      done.push_back(Observation::ok(m.candidate, score(m.time, m.cost, ref, cx.w.gamma)));
    }
    EngineOptions eo = cx.o.engine;
    eo.gamma = cx.w.gamma;  // propose()'s automatic choices follow the score it is given
    eo.strategy = Strategy::bo;
    eo.seed = Rng(cx.o.seed, kStreamFunction + f).next();
    eo.initial_trials = std::min(cx.o.initial_runs, cs.size());
    eo.stop = StoppingOptions{};
    eo.stop.budget = 0;
    eo.predictions = false;  // propose() models the score: no time or cost to report
    const Proposal fpp = propose(cs, done, {}, 1, eo);
    if (!fpp.indices.empty()) {
      fp.candidate = fpp.indices[0];
      fp.reason = fpp.modelled ? "tuned alone: largest expected improvement of its own score"
                               : "tuned alone: initial design";
    } else {
      fp.candidate = fpp.best_index.value_or(0);
      fp.reason = "tuned alone: every candidate tried; its best again";
    }
  }
}

void propose_random(const Context &cx, WorkflowProposal *p) {
  const std::size_t nf = cx.w.functions.size();
  p->functions.assign(nf, {});
  Rng rng(cx.o.seed, kStreamRandom + cx.runs.size());
  for (std::size_t f = 0; f < nf; ++f) {
    p->functions[f].stage = cx.stages.level[f];
    p->functions[f].candidate = rng.below(cx.fc[f].candidates.size());
    p->functions[f].reason = "random";
  }
}

void propose_flat(const Context &cx, WorkflowProposal *p) {
  const std::size_t nf = cx.w.functions.size();
  // The pool: the runs so far (distinct), then random joint configurations.
  std::vector<std::vector<std::size_t>> pool;
  std::set<std::vector<std::size_t>> in_pool;
  std::vector<Observation> done;
  for (std::size_t r = 0; r < cx.runs.size(); ++r) {
    std::vector<std::size_t> j(nf);
    for (std::size_t f = 0; f < nf; ++f) j[f] = cx.runs[r].functions[f].candidate;
    if (!in_pool.insert(j).second) continue;
    done.push_back(std::isnan(cx.scores[r]) ? Observation::failure(pool.size())
                                            : Observation::ok(pool.size(), cx.scores[r]));
    pool.push_back(j);
  }
  Rng rng(cx.o.seed, kStreamPool + cx.runs.size());
  for (std::size_t k = 0; k < cx.o.flat_pool * 2 && pool.size() < done.size() + cx.o.flat_pool;
       ++k) {
    std::vector<std::size_t> j(nf);
    for (std::size_t f = 0; f < nf; ++f) j[f] = rng.below(cx.fc[f].candidates.size());
    if (in_pool.insert(j).second) pool.push_back(j);
  }
  std::vector<FeatureColumn> cols;
  for (std::size_t f = 0; f < nf; ++f) {
    const Eigen::MatrixXd &E = cx.fc[f].candidates.encoded();
    for (Eigen::Index d = 0; d < E.cols(); ++d) {
      FeatureColumn col;
      col.name = cx.w.functions[f].name + ":" + std::to_string(d);
      col.scale = Scale::linear;
      for (const auto &j : pool) col.numbers.push_back(E(static_cast<Eigen::Index>(j[f]), d));
      cols.push_back(std::move(col));
    }
  }
  if (cols.empty()) {  // every function has one candidate
    FeatureColumn col;
    col.name = "none";
    col.numbers.assign(pool.size(), 0.0);
    cols.push_back(std::move(col));
  }
  const CandidateSet cs(std::move(cols));
  EngineOptions eo = cx.o.engine;
  eo.gamma = cx.w.gamma;
  eo.strategy = Strategy::bo;
  eo.seed = cx.o.seed;
  eo.initial_trials = cx.o.initial_runs;
  eo.stop = StoppingOptions{};
  eo.stop.budget = 0;
  eo.predictions = false;
  const Proposal fp = propose(cs, done, {}, 1, eo);
  const std::size_t pick = fp.indices.empty() ? fp.best_index.value_or(0) : fp.indices[0];
  p->functions.assign(nf, {});
  for (std::size_t f = 0; f < nf; ++f) {
    p->functions[f].stage = cx.stages.level[f];
    p->functions[f].candidate = pool[pick][f];
    p->functions[f].reason = fp.modelled
                                 ? "flat: largest expected improvement of the joint configuration"
                                 : "flat: initial design";
  }
}

}  // namespace

bool WorkflowRun::ok() const {
  return std::none_of(functions.begin(), functions.end(),
                      [](const FunctionMeasurement &m) { return m.failed; });
}

double workflow_run_time(const Workflow &w, const WorkflowRun &run) {
  std::vector<double> t;
  for (const auto &m : run.functions) t.push_back(m.time);
  return critical_path(w, t);
}

double workflow_run_cost(const WorkflowRun &run) {
  double c = 0;
  for (const auto &m : run.functions) c += m.cost;
  return c;
}

void WorkflowSearchOptions::validate() const {
  if (initial_runs < 1) throw_invalid("initial runs must be at least 1");
  if (!(kappa >= 0) || !std::isfinite(kappa))
    throw_invalid("kappa '" + format_double(kappa) + "' must be a number >= 0");
  if (flat_pool < 1) throw_invalid("the flat pool must hold at least one configuration");
  stop.validate();
  if (reference && !reference->valid())
    throw_invalid("the reference time and cost must be positive");
}

WorkflowSearchOptions workflow_search_options(const Workflow &w) {
  WorkflowSearchOptions o;
  o.stop.budget = w.budget;
  o.strategy = w.search;
  return o;
}

WorkflowProposal propose_workflow(const Workflow &w, const std::vector<FunctionCandidates> &fc,
                                  const std::vector<WorkflowRun> &runs,
                                  const WorkflowSearchOptions &o) {
  o.validate();
  check_inputs(w, fc, runs);
  Context cx{w, fc, runs, o, cut_stages(w), {}};
  WorkflowProposal p;
  if (o.reference) p.reference = *o.reference;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (!runs[r].ok()) {
      cx.scores.push_back(kNaN);
      continue;
    }
    const double t = workflow_run_time(w, runs[r]), c = workflow_run_cost(runs[r]);
    if (!p.reference.valid()) p.reference = make_reference(t, c);
    const double s = score(t, c, p.reference, w.gamma);
    cx.scores.push_back(s);
    if (!p.best_run || s < p.best_score) {
      p.best_run = r;
      p.best_score = s;
    }
  }
  p.stop = history_stop(cx.scores, o.stop);
  if (p.stop.stopped()) return p;
  switch (o.strategy) {
    case WorkflowStrategy::stage:
      propose_stage(cx, &p);
      break;
    case WorkflowStrategy::function:
      propose_function(cx, &p);
      break;
    case WorkflowStrategy::flat:
      propose_flat(cx, &p);
      break;
    case WorkflowStrategy::random:
      propose_random(cx, &p);
      break;
  }
  return p;
}

}  // namespace autotune
