#include "autotune/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <string>

#include "autotune/acquisition.hpp"
#include "autotune/dense.hpp"
#include "autotune/error.hpp"
#include "autotune/history.hpp"
#include "autotune/rng.hpp"
#include "autotune/run_time_model.hpp"
#include "autotune/units.hpp"

namespace autotune {
namespace {

// The seed's stream of the GP fits (design.cc draws streams 1 and 2).
constexpr std::uint64_t kStreamGp = 3, kStreamExplore = 7, kStreamThompson = 9, kStreamHedge = 10,
                        kStreamForm = 11;
// The run time's form (EngineOptions::run_time_columns): the particles resampled for its
// predictions at every candidate.
constexpr std::size_t kFormDraws = 256;
// Thompson sampling's joint draw: over every untried candidate when there are at most
// kThompsonSubset of them, else over the kThompsonTop of lowest lower confidence bound
// (mean - 2 sd, where nearly all of the draw's minima fall) and a seeded uniform sample of the
// others (a draw's minimum may fall anywhere while the posterior is flat).  The Cholesky
// factorization of the subset's covariance is O(s^3): 160 keeps the step's addition well under
// a millisecond at 50 observations (bench/README.md).
constexpr std::size_t kThompsonSubset = 160, kThompsonTop = 64;
// Hedge's lower confidence bound: mean - kappa sd of the log score.
constexpr double kHedgeKappa = 2.0;

// EngineOptions::bowl_mean_sd: the bowl prior mean at every candidate, in the units of the
// standardized log scores `ys`, the score model's targets at the candidates `rows`.  q(x) is the
// mean over the numeric columns of 4 (x_j - 1/2)^2, centred over the candidates; the amplitude is
// the posterior mean of a ~ N(0, sd^2) given ys = a q(rows) + e, e ~ N(0, 1):
// sum(q ys) / (sum(q^2) + 1 / sd^2).
Eigen::VectorXd bowl_mean(const CandidateSet &cs, const std::vector<Eigen::Index> &rows,
                          const Eigen::VectorXd &ys, double sd) {
  const Eigen::MatrixXd &Xall = cs.encoded();
  Eigen::VectorXd q = Eigen::VectorXd::Zero(Xall.rows());
  for (int c : cs.numeric_columns()) q.array() += 4.0 * (Xall.col(c).array() - 0.5).square();
  q /= static_cast<double>(cs.numeric_columns().size());
  q.array() -= q.mean();
  const Eigen::VectorXd qr = q(rows);
  return q * (qr.dot(ys) / (qr.squaredNorm() + 1.0 / (sd * sd)));
}

}  // namespace

Proposal propose(const CandidateSet &cs, const std::vector<Observation> &done,
                 const std::vector<std::size_t> &pending, std::size_t k, const EngineOptions &o) {
  DesignStep step = propose_without_model(cs, done, pending, k, o);
  step.proposal.designed = step.proposal.indices.size();
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
  // the failures at the worst score seen).  With a warm start (history.hpp) the target may have
  // fewer than two successes; its own model is then left out until it has them.
  const WarmStart *ws = o.warm() ? o.history.get() : nullptr;
  const bool taf = ws && o.history_mode == EngineOptions::HistoryMode::taf;
  if (ws && ws->candidates != n)
    throw_invalid("propose: the warm start was prepared for " + std::to_string(ws->candidates) +
                  " candidates, not " + std::to_string(n));
  const Eigen::MatrixXd &Xall = cs.encoded();
  const bool impute = o.failures == EngineOptions::Failures::impute;
  std::size_t failures = 0;
  double worst = -std::numeric_limits<double>::infinity();
  std::vector<char> ok_seen(n, 0);
  std::size_t distinct_ok = 0;
  for (const auto &ob : done) {
    failures += ob.failed;
    if (!ob.failed) {
      worst = std::max(worst, std::log(ob.score));
      distinct_ok += !ok_seen[ob.index];
      ok_seen[ob.index] = 1;
    }
  }
  const bool own = distinct_ok >= 2;
  const Eigen::Index nd = static_cast<Eigen::Index>(impute ? done.size() : done.size() - failures);
  Eigen::MatrixXd X(nd, Xall.cols());
  Eigen::VectorXd y(nd);
  std::vector<Eigen::Index> ok_rows;  // rows of X of successful trials
  std::vector<std::size_t> ok_index;  // and their candidates
  std::vector<Eigen::Index> row_index;  // the candidate of every row of X
  {
    Eigen::Index r = 0;
    for (const auto &ob : done) {
      if (ob.failed && !impute) continue;
      const Eigen::Index j = static_cast<Eigen::Index>(ob.index);
      row_index.push_back(j);
      if (!ob.failed) {
        ok_rows.push_back(r);
        ok_index.push_back(ob.index);
      }
      X.row(r) = Xall.row(j);
      y[r++] = (ob.failed ? worst : std::log(ob.score));
    }
  }
  // The model of the problem's own trials: its targets standardized, the cold search's bowl prior
  // mean over a space of numeric features (EngineOptions::bowl_mean_sd: the GP is fitted to the
  // targets minus it, and its posterior means get it back), and the GP.  The targets are the log
  // scores, or with the time model (EngineOptions::time_model) the log run times: log score -
  // log f, f the candidate's score factor.
  const bool with_bowl =
      !ws && o.bowl_mean_sd > 0 && !cs.numeric_columns().empty() && !cs.has_categorical();
  GpFitOptions gpo = o.gp;
  gpo.seed = Rng(o.seed, kStreamGp).next();
  if (o.input_warping) gpo.warp_columns = cs.numeric_columns();
  gpo.linear = o.effective_linear_trend();
  struct OwnModel {
    double mean = 0, std = 1;
    Eigen::VectorXd ys, bowl;
    std::optional<GaussianProcess> gp;
  };
  // The time model's own linear term (EngineOptions::effective_time_linear_trend()).
  GpFitOptions tpo = gpo;
  tpo.linear = o.effective_time_linear_trend();
  auto fit_own = [&](const Eigen::VectorXd &target, bool time) {
    OwnModel m;
    if (own) {
      m.mean = target.mean();
      m.std = std::sqrt((target.array() - m.mean).square().sum() / static_cast<double>(nd));
      if (!(m.std > 1e-12)) m.std = 1.0;
    }
    m.ys = (target.array() - m.mean) / m.std;
    if (own && with_bowl) m.bowl = bowl_mean(cs, row_index, m.ys, o.bowl_mean_sd);
    if (own)
      m.gp.emplace(GaussianProcess::fit(
          X, m.bowl.size() > 0 ? Eigen::VectorXd(m.ys - m.bowl(row_index)) : m.ys, cs.groups(),
          time ? tpo : gpo));
    return m;
  };
  // The time model's log f per candidate, when it may be used.
  std::vector<double> log_factor;
  if (own && !ws && o.score_factor && o.time_model != EngineOptions::TimeModel::no) {
    if (o.score_factor->size() != n)
      throw_invalid("propose: " + std::to_string(o.score_factor->size()) +
                    " score factors for " + std::to_string(n) + " candidates");
    log_factor.resize(n);
    for (std::size_t i = 0; i < n; ++i) log_factor[i] = std::log((*o.score_factor)[i]);
    // A factor the same everywhere (gamma 0: 1 / T_ref) makes the time model the score model.
    const auto [lo, hi] = std::minmax_element(log_factor.begin(), log_factor.end());
    if (*hi - *lo < 1e-12) log_factor.clear();
  }
  // The measured log scores of the successful trials, and an own model's leave-one-out
  // predictions of them (the bowl and log f added back): what the time model and the run time's
  // form are chosen by (RankingLoss::concordance()).
  const Eigen::Index ns = static_cast<Eigen::Index>(ok_rows.size());
  Eigen::VectorXd ok_log_score(ns);
  for (Eigen::Index k = 0; k < ns; ++k) ok_log_score[k] = y[ok_rows[static_cast<std::size_t>(k)]];
  const RankingLoss ok_ranking(ok_log_score);
  auto loo_log_scores = [&](const OwnModel &m, bool time) {
    Eigen::VectorXd loo_mean, loo_var;
    m.gp->leave_one_out(&loo_mean, &loo_var);
    Eigen::VectorXd pred(ns);
    for (Eigen::Index k = 0; k < ns; ++k) {
      const Eigen::Index r = ok_rows[static_cast<std::size_t>(k)];
      const std::size_t c = static_cast<std::size_t>(row_index[static_cast<std::size_t>(r)]);
      const double b = m.bowl.size() > 0 ? m.bowl[static_cast<Eigen::Index>(c)] : 0.0;
      pred[k] = m.mean + m.std * (loo_mean[r] + b) + (time ? log_factor[c] : 0.0);
    }
    return pred;
  };
  OwnModel own_model;
  if (log_factor.empty()) {
    own_model = fit_own(y, false);
  } else {
    // The log run times; a failure (Failures::impute) at the worst of them.
    Eigen::VectorXd yt(nd);
    double worst_t = -std::numeric_limits<double>::infinity();
    for (auto r : ok_rows) worst_t = std::max(worst_t, y[r] - log_factor[static_cast<std::size_t>(row_index[static_cast<std::size_t>(r)])]);
    for (Eigen::Index r = 0; r < nd; ++r) yt[r] = worst_t;
    for (auto r : ok_rows) yt[r] = y[r] - log_factor[static_cast<std::size_t>(row_index[static_cast<std::size_t>(r)])];
    if (o.time_model == EngineOptions::TimeModel::yes ||
        (o.time_model == EngineOptions::TimeModel::automatic &&
         automatic_time_model_always(o.gamma, cs.has_categorical()))) {
      own_model = fit_own(yt, true);
      p.time_modelled = true;
    } else if (ok_rows.size() < kTimeModelMinTrials) {
      own_model = fit_own(y, false);
    } else {
      // Each model's leave-one-out predictions against the measured log scores.
      auto concordance = [&](const OwnModel &m, bool time) {
        return ok_ranking.concordance(loo_log_scores(m, time));
      };
      // The time model when it orders the trials clearly better; from gamma 0.5 to below 1 over
      // numeric features also at every other step, unless it orders them clearly worse.
      OwnModel score_model = fit_own(y, false), time_model = fit_own(yt, true);
      const double by_time = concordance(time_model, true), by_score = concordance(score_model, false);
      const bool turn = o.time_model == EngineOptions::TimeModel::automatic &&
                        automatic_time_model_turns(o.gamma, cs.has_categorical()) && ok_rows.size() % 2 == 1;
      if (by_time > by_score + kTimeModelMargin || (turn && by_time > by_score - kTimeModelMargin)) {
        own_model = std::move(time_model);
        p.time_modelled = true;
      } else {
        own_model = std::move(score_model);
      }
    }
    if (!p.time_modelled) log_factor.clear();
  }
  const double y_mean = own_model.mean, y_std = own_model.std;
  const Eigen::VectorXd &ys = own_model.ys;
  const Eigen::VectorXd &bowl = own_model.bowl;
  std::optional<GaussianProcess> &gp = own_model.gp;
  std::optional<CandidatePosterior> post;
  if (own) {
    // Fantasies are needed when running trials or earlier picks must be taken into account.
    post.emplace(*gp, Xall,
                 (!pending.empty() || !p.indices.empty() || slots > 1) && p.indices.size() < slots);
    // The bowl, and the time model's log f (in the units of the standardized log run times):
    // the posterior means are then those of the log score, and a fantasy is one of a score.
    if (bowl.size() > 0 || !log_factor.empty()) {
      Eigen::VectorXd prior = bowl.size() > 0 ? bowl : Eigen::VectorXd::Zero(Xall.rows());
      if (!log_factor.empty())
        prior += Eigen::Map<const Eigen::VectorXd>(log_factor.data(), Xall.rows()) / y_std;
      post->add_prior_mean(prior);
    }
    p.modelled = true;
    p.hyper = gp->hyper();
  }

  // The run time's form (EngineOptions::run_time_columns): from kTimeModelMinTrials successful
  // trials on, or from kFormMinTrialsUnfailed while no trial has failed, and with a history from
  // kFormMinTrialsWarm (the history's model has the first steps), its expected improvement at
  // every untried candidate, when it explains every trial's success or failure and its
  // leave-one-out predictions order the successful trials better than the problem's own model's
  // by at least run_time_margin (or perfectly, where the model's are within the margin of
  // perfect).  Not where the factors are the same everywhere (gamma 0: the run time alone is the
  // score; its optimum, the fastest allocation, the model finds as soon).
  std::vector<double> form_ei;
  const bool factors_vary =
      o.score_factor && o.score_factor->size() == n &&
      *std::max_element(o.score_factor->begin(), o.score_factor->end()) >
          *std::min_element(o.score_factor->begin(), o.score_factor->end()) * (1 + 1e-12);
  const bool form_trials =
      ws ? ok_rows.size() >= kFormMinTrialsWarm
         : ok_rows.size() >= kTimeModelMinTrials ||
               (ok_rows.size() >= kFormMinTrialsUnfailed && ok_rows.size() == done.size());
  if (own && o.run_time_columns && factors_vary && form_trials) {
    if (const auto alloc = allocations_of(cs, *o.run_time_columns)) {
      std::vector<double> lf(n);
      for (std::size_t i = 0; i < n; ++i) lf[i] = std::log((*o.score_factor)[i]);
      std::vector<std::size_t> idx;
      std::vector<double> lt;
      for (const auto &ob : done) {
        idx.push_back(ob.index);
        lt.push_back(ob.failed ? std::numeric_limits<double>::quiet_NaN()
                               : std::log(ob.score) - lf[ob.index]);
      }
      const RunTimePosterior form =
          run_time_posterior(*alloc, idx, lt, Rng(o.seed, kStreamForm).next(),
                             o.run_time_particles, std::min(kFormDraws, o.run_time_particles));
      Eigen::VectorXd by_form(ns);
      for (Eigen::Index k = 0; k < ns; ++k) {
        const double f = form.loo()[static_cast<std::size_t>(k)];
        by_form[k] = std::isnan(f) ? 1e300 : f + lf[ok_index[static_cast<std::size_t>(k)]];
      }
      // Only while the form explains every trial: a failure it predicts to run, or a run it
      // predicts to fail, is a workload outside its form (one that fails on few nodes whatever
      // their memory), where its confident predictions would steer the search away.  The margin
      // is capped at a perfect ordering: where the model's is within the margin of perfect, the
      // form's perfect one is enough (else no form could ever propose there).
      const double by_model = ok_ranking.concordance(loo_log_scores(own_model, p.time_modelled));
      if (form.unexplained() == 0 &&
          ok_ranking.concordance(by_form) >= std::min(by_model + o.run_time_margin, 1.0)) {
        form_ei = form.improvement(*o.score_factor, p.best_score, taken);
      }
    }
  }

  // The weights of the warm start's base models and of the target's own model (history.hpp).
  std::vector<double> w;
  if (ws) {
    // The trials the weights rank: the successes by their scores, and the failures after every
    // success (a model that predicts a failed configuration to be cheap orders them wrongly).
    const std::size_t nb = ws->size();
    std::vector<std::size_t> failed_index;
    for (const auto &ob : done)
      if (ob.failed) failed_index.push_back(ob.index);
    const Eigen::Index nr = ns + static_cast<Eigen::Index>(failed_index.size());
    std::vector<Eigen::VectorXd> bm(nb, Eigen::VectorXd(nr)), bv(nb, Eigen::VectorXd(nr));
    Eigen::VectorXd yo(nr), lm, lv;
    const double fail_rank = ns > 0 ? ys.maxCoeff() + 1e6 : 1e6;
    auto candidate_of = [&](Eigen::Index r) {
      return static_cast<Eigen::Index>(r < ns ? ok_index[static_cast<std::size_t>(r)]
                                              : failed_index[static_cast<std::size_t>(r - ns)]);
    };
    for (Eigen::Index r = 0; r < nr; ++r) {
      yo[r] = r < ns ? ys[ok_rows[static_cast<std::size_t>(r)]] : fail_rank;
      const Eigen::Index c = candidate_of(r);
      for (std::size_t b = 0; b < nb; ++b) {
        bm[b][r] = ws->mean[b][c];
        bv[b][r] = ws->var[b][c];
      }
    }
    if (ns == 0) yo.resize(0);  // nothing to rank yet
    if (gp) {
      // Leave-one-out predictions of the target's model at its successes (its targets are ys:
      // no bowl with a history); its posterior at failures.
      Eigen::VectorXd loo_mean, loo_var;
      gp->leave_one_out(&loo_mean, &loo_var);
      lm.resize(nr);
      lv.resize(nr);
      for (Eigen::Index r = 0; r < nr; ++r) {
        if (r < ns) {
          const Eigen::Index row = ok_rows[static_cast<std::size_t>(r)];
          lm[r] = loo_mean[row];
          lv[r] = loo_var[row];
        } else {
          const Eigen::Index c = candidate_of(r);
          lm[r] = post->mean()[c];
          lv[r] = post->var()[c];
        }
      }
    }
    // A history that passed EngineOptions::history_confirm's test is gated at that level.
    const double gate =
        step.history_confirmed ? std::min(o.history_gate, o.effective_history_confirm())
                               : o.history_gate;
    w = rgpe_weights(bm, bv, yo, lm, lv, Rng(o.seed, kStreamGp + 1).next() ^ done.size(),
                     o.history_ties_to_own, gate);
    // The floor under the problem's own weight (EngineOptions::history_own_floor).
    if (const double c = o.effective_history_own_floor(); gp && c > 0) {
      const double own_n = static_cast<double>(ok_rows.size());
      const double floor = own_n / (own_n + c);
      if (w[nb] < floor) {
        const double scale = (1 - floor) / (1 - w[nb]);
        for (std::size_t b = 0; b < nb; ++b) w[b] *= scale;
        w[nb] = floor;
      }
    }
    // A history whose top-ranked tried candidate failed (EngineOptions::history_top_must_run).
    if (o.history_top_must_run && gp) {
      double top = std::numeric_limits<double>::infinity();
      for (const auto &ob : done) {
        const double m = ws->combined_mean(ob.index);
        if (m < top) {
          top = m;
          p.history_top_failed = ob.failed;
        }
      }
      if (p.history_top_failed) {
        std::fill(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(nb), 0.0);
        w[nb] = 1;
      }
    }
    p.history_weights.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(nb));
    p.own_weight = w[nb];
    // The initial design after the history's picks (design.cc) filled the proposal.
    if (p.indices.size() >= slots) return p;
  }

  // The constraint model: a GP on the +1 / -1 labels of every finished trial, standardized, with
  // hyperparameters of its own (where runs fail need not vary like how long they take), fitted
  // from one start, the score model's hyperparameters, for five L-BFGS iterations (ten did
  // no better on scout-dev.csv), fifteen where the design is among the cheapest rates
  // (EngineOptions::feasibility_iterations, design.hpp).  P(feasible) = Phi(mu_c / sigma_c) is
  // computed only where it can change a decision (see best_of below), since it is at most 1.
  std::optional<GaussianProcess> cgp;
  double c_mean = 0, c_std = 1;
  if (!impute && failures > 0 && failures < done.size()) {
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
    if (gp) {
      cpo.first_start = gp->hyper();
      cpo.linear = gp->hyper().linear();  // the time model's may differ from the score model's
    }
    const int iterations = o.effective_feasibility_iterations(cs.has_categorical());
    cpo.max_iterations =
        o.feasibility_iterations ? iterations : std::min(cpo.max_iterations, iterations);
    cgp.emplace(GaussianProcess::fit(Xc, (c.array() - c_mean) / c_std, cs.groups(), cpo));
  }
  // The history's failures (EngineOptions::history_feasibility): P(runs) is multiplied by
  // (1 - h)^(f t), h the share of the history's problems that failed at the candidate, t the
  // trust in it (history.hpp).
  std::optional<Eigen::VectorXd> history_runs;
  if (ws && o.history_feasibility > 0) {
    const double trust = history_failure_trust(*ws, done);
    p.history_feasibility_trust = trust;
    const double k = o.history_feasibility * trust;
    if (k > 0) {
      history_runs.emplace(ws->failure_share.size());
      for (Eigen::Index i = 0; i < ws->failure_share.size(); ++i) {
        const double h = ws->failure_share[i];
        (*history_runs)[i] = h > 0 ? std::pow(1.0 - h, k) : 1.0;
      }
    }
  }
  // The failures' edge (EngineOptions::failure_edge, design.hpp), in a space of numeric
  // features: P(runs) is multiplied by its factor.
  const FailureEdge edge =
      o.failure_edge && !cs.has_categorical() &&
              failures >= static_cast<std::size_t>(kFailureEdgeMinFailures)
          ? failure_edge(Xall, cs.numeric_columns(), done)
          : FailureEdge{};
  if (edge) {
    const int group = cs.groups()[static_cast<std::size_t>(edge.column)];
    const std::string &name = cs.group_names()[static_cast<std::size_t>(group)];
    for (const auto &col : cs.columns())
      if (col.name == name && !col.numbers.empty())
        p.failure_edge = EdgeUse{name, edge.sign > 0, col.numbers[edge.innermost], edge.failures};
  }
  auto edge_factor = [&](std::size_t i) {
    return edge.factor(Xall(static_cast<Eigen::Index>(i), edge.column));
  };
  // At gamma 1 the time model's proposals weigh it more (design.hpp, kTimeModelFeasibilityPower).
  const double feasibility_power =
      o.effective_feasibility_power(p.time_modelled, cs.has_categorical());
  std::vector<double> feasible(n, -1.0);
  auto p_feasible = [&](std::size_t i) {
    if (feasible[i] < 0) {
      double pf = 1.0;
      if (cgp) {
        double m, v;
        cgp->predict_one(Xall.row(static_cast<Eigen::Index>(i)), &m, &v);
        const double mu = c_mean + c_std * m, sd = c_std * std::sqrt(v);
        pf = sd > 0 ? normal_cdf(mu / sd) : (mu > 0 ? 1.0 : 0.0);
        // EngineOptions::feasibility_power.
        if (feasibility_power != 1) pf = std::pow(pf, feasibility_power);
      }
      if (history_runs) pf *= (*history_runs)[static_cast<Eigen::Index>(i)];
      if (edge) pf *= edge_factor(i);
      feasible[i] = pf;
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

  // Predictive log score of every candidate: N(mu, sd^2) -- the target's model alone, or with a
  // warm start the weighted ensemble -- and expected improvement over all of them at once
  // (acquisition.hpp's array forms).
  const double best_log = std::log(p.best_score);
  std::vector<double> mu(n), sd(n), ei(n);
  const Eigen::Index ni = static_cast<Eigen::Index>(n);
  auto moments = [&] {
    Eigen::Map<Eigen::ArrayXd> m(mu.data(), ni), s(sd.data(), ni);
    if (!ws || (taf && post)) {
      m = y_mean + y_std * post->mean().array();
      s = y_std * post->var().array().sqrt();
      return;
    }
    const double wo = w.back();
    Eigen::ArrayXd em = Eigen::ArrayXd::Zero(ni), ev = Eigen::ArrayXd::Zero(ni);
    if (post && wo > 0) {
      em = wo * post->mean().array();
      ev = wo * wo * post->var().array();
    }
    for (std::size_t b = 0; b < ws->size(); ++b)
      if (w[b] > 0) {
        em += w[b] * ws->mean[b].array();
        ev += w[b] * w[b] * ws->var[b].array();
      }
    m = y_mean + y_std * em;
    s = y_std * ev.sqrt();
  };
  auto ei_of = [&](std::size_t i) { return ei[i]; };
  // TAF (EngineOptions::HistoryMode::taf): the target's EI (standardized) and each base model's
  // improvement over its own prediction of the target's best trial, weighted.
  std::vector<double> base_best;
  if (taf && post)
    for (std::size_t b = 0; b < ws->size(); ++b) {
      double lo = std::numeric_limits<double>::infinity();
      for (auto c : ok_index) lo = std::min(lo, ws->mean[b][static_cast<Eigen::Index>(c)]);
      base_best.push_back(lo);
    }
  auto transfer = [&] {
    if (base_best.empty()) return;
    Eigen::Map<Eigen::ArrayXd> a(ei.data(), ni);
    a *= w.back() / y_std;
    for (std::size_t b = 0; b < ws->size(); ++b)
      if (w[b] > 0) a += w[b] * (base_best[b] - ws->mean[b].array()).max(0.0);
  };
  moments();
  if (o.predictions) {
    p.predictions.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double mean = std::exp(mu[i] + 0.5 * sd[i] * sd[i]);
      p.predictions[i] = {mean, mean * std::sqrt(std::expm1(sd[i] * sd[i]))};
    }
  }
  if (!own) {
    // Warm start before the target has a model: the lowest ensemble means, in turn.
    const double lo = *std::min_element(mu.begin(), mu.end());
    auto value = [&](std::size_t i) { return std::exp(lo - mu[i]); };
    while (p.indices.size() < slots) {
      double v;
      const std::size_t pick = best_of(value, &v);
      if (pick == n) break;
      take(pick);
    }
    return p;
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
  const bool collapsed = o.explore_collapse > 0 && p.max_ei < o.explore_collapse * p.best_score;

  // Fantasies for what is running or already picked, then EI picks one at a time.  The
  // posterior is in standardized residual units; EI is taken on the log score.
  const double best_res = (best_log - y_mean) / y_std;
  auto fantasize = [&](std::size_t i) {
    const Eigen::Index j = static_cast<Eigen::Index>(i);
    // Kriging believer: the predicted mean.  Constant liar (CL-min): the incumbent.
    const double lie = o.batch == BatchMode::kriging_believer ? post->mean()[j] : best_res;
    post->condition(j, lie);
  };
  if (p.indices.size() < slots) {
    for (auto i : pending) fantasize(i);
    for (auto i : p.indices) fantasize(i);
  }
  // Exploration (EngineOptions::explore): the trials scheduled by the share, and the first pick
  // of a proposal whose EI collapsed.
  double explore_share = 0;
  const Explore explore = o.effective_explore(&explore_share, cs.has_categorical());
  const std::size_t initial = o.effective_initial_trials(cs.has_categorical());
  auto scheduled = [&](std::size_t t) {
    if (explore_share <= 0 || t < initial) return false;
    const double a = static_cast<double>(t - initial);
    return std::floor((a + 1) * explore_share) > std::floor(a * explore_share);
  };
  // Thompson sampling (Explore::thompson, and hedge's third arm): one joint draw of the log
  // score -- the target's posterior (fantasies included) and, with a warm start, each weighted
  // base model's marginal (as moments() combines them) -- over the untried candidates (a bounded
  // subset of them, kThompsonSubset), and, when some trial failed, one joint draw of the
  // feasibility model's c(x) over the same candidates: the candidate of the lowest score draw
  // among those whose c draw is > 0 (the event whose probability weights EI), else the one of
  // the highest c draw (constrained Thompson sampling as in SCBO: Eriksson & Poloczek, AISTATS
  // 2021).  Seeded by the seed and the trial number t.
  auto joint_draw = [](const Eigen::VectorXd &mean, const Eigen::MatrixXd &C, Rng &rng) {
    const Eigen::Index m = mean.size();
    Eigen::VectorXd z(m);
    for (Eigen::Index r = 0; r < m; ++r) z[r] = rng.normal();
    // Jitter grows until the factorization succeeds; independent marginals if it never does.
    double jitter = 1e-10 * std::max(C.diagonal().maxCoeff(), 1e-12);
    for (int a = 0; a < 6; ++a, jitter *= 100) {
      Eigen::MatrixXd Cj = C;
      Cj.diagonal().array() += jitter;
      if (cholesky_lower(Cj)) return Eigen::VectorXd(mean + Cj.triangularView<Eigen::Lower>() * z);
    }
    return Eigen::VectorXd(mean + C.diagonal().cwiseMax(0.0).cwiseSqrt().cwiseProduct(z));
  };
  auto thompson_pick = [&](std::size_t t) {
    moments();
    std::vector<std::size_t> sub;
    for (std::size_t i = 0; i < n; ++i)
      if (taken[i] == 0) sub.push_back(i);
    if (sub.empty()) return n;
    Rng rng(o.seed, kStreamThompson + 16 * static_cast<std::uint64_t>(t));
    if (sub.size() > kThompsonSubset) {
      std::vector<std::pair<double, std::size_t>> lcb;
      for (auto i : sub) lcb.emplace_back(mu[i] - 2 * sd[i], i);
      std::nth_element(lcb.begin(), lcb.begin() + static_cast<std::ptrdiff_t>(kThompsonTop),
                       lcb.end());
      sub.clear();
      for (std::size_t r = 0; r < kThompsonTop; ++r) sub.push_back(lcb[r].second);
      std::vector<std::size_t> rest;
      for (std::size_t r = kThompsonTop; r < lcb.size(); ++r) rest.push_back(lcb[r].second);
      std::sort(rest.begin(), rest.end());
      for (std::size_t r = 0; r < kThompsonSubset - kThompsonTop; ++r) {
        std::swap(rest[r], rest[r + rng.below(rest.size() - r)]);
        sub.push_back(rest[r]);
      }
      std::sort(sub.begin(), sub.end());
    }
    const Eigen::Index m = static_cast<Eigen::Index>(sub.size());
    const std::vector<Eigen::Index> idx(sub.begin(), sub.end());
    const bool own_only = !ws || (taf && post);
    const double wo = own_only ? 1.0 : w.back();
    Eigen::VectorXd draw = Eigen::VectorXd::Zero(m);
    if (post && wo > 0) {
      Eigen::VectorXd mean(m);
      for (Eigen::Index r = 0; r < m; ++r) mean[r] = post->mean()[idx[static_cast<std::size_t>(r)]];
      draw = wo * joint_draw(mean, post->covariance(idx), rng);
    }
    if (!own_only)
      for (std::size_t b = 0; b < ws->size(); ++b)
        if (w[b] > 0)
          for (Eigen::Index r = 0; r < m; ++r) {
            const Eigen::Index c = idx[static_cast<std::size_t>(r)];
            draw[r] += w[b] * (ws->mean[b][c] + std::sqrt(ws->var[b][c]) * rng.normal());
          }
    Eigen::VectorXd cdraw = Eigen::VectorXd::Ones(m);
    if (cgp) {
      Eigen::MatrixXd Xs(m, Xall.cols());
      for (Eigen::Index r = 0; r < m; ++r) Xs.row(r) = Xall.row(idx[static_cast<std::size_t>(r)]);
      // With fantasies kept, covariance() reuses the posterior's L^-1 k(X, Xs) (the same numbers
      // it would compute again).
      const CandidatePosterior cpost(*cgp, Xs, true);
      std::vector<Eigen::Index> all(static_cast<std::size_t>(m));
      std::iota(all.begin(), all.end(), 0);
      cdraw =
          (c_mean + c_std * joint_draw(cpost.mean(), cpost.covariance(all), rng).array()).matrix();
    }
    // The history's failures (history_runs): the candidate runs in the draw with that probability.
    if (history_runs)
      for (Eigen::Index r = 0; r < m; ++r)
        if (rng.uniform() >= (*history_runs)[idx[static_cast<std::size_t>(r)]])
          cdraw[r] = -std::abs(cdraw[r]) - 1e-9;
    // The failures' edge (edge): likewise.
    if (edge)
      for (Eigen::Index r = 0; r < m; ++r)
        if (rng.uniform() >= edge_factor(idx[static_cast<std::size_t>(r)]))
          cdraw[r] = -std::abs(cdraw[r]) - 1e-9;
    Eigen::Index best = -1, least_bad = 0;
    for (Eigen::Index r = 0; r < m; ++r) {
      if (cdraw[r] > 0 && (best < 0 || draw[r] < draw[best])) best = r;
      if (cdraw[r] > cdraw[least_bad]) least_bad = r;
    }
    return sub[static_cast<std::size_t>(best >= 0 ? best : least_bad)];
  };
  // Hedge (Explore::hedge): EXP3 (Auer, Cesa-Bianchi, Freund & Schapire, SIAM J. Computing 2002)
  // over three arms -- 0 EI, 1 the lowest lower confidence bound, 2 Thompson sampling -- as
  // GP-Hedge's portfolio (Hoffman, Brochu & de Freitas, UAI 2011), but with the observed reward
  // of the chosen arm's trial (the share of the earlier successful trials it beat; 0 for a
  // failure), importance-weighted, instead of the model's mean at every arm's nominee: propose()
  // keeps no state, so the arms of the earlier exploring trials are re-derived in order from the
  // trials before each (done's order: the order they were proposed in, for one trial at a time).
  // gamma = min(1, sqrt(K ln K / ((e - 1) T))), eta = gamma / K, T the trials after the design.
  auto hedge_arm = [&](std::size_t t) {
    constexpr double K = 3;
    const std::size_t budget = o.stop.budget > 0 ? o.stop.budget : 20;
    const double horizon =
        static_cast<double>(budget > initial + 1 ? budget - initial : 1);
    const double gamma =
        std::min(1.0, std::sqrt(K * std::log(K) / ((std::exp(1.0) - 1) * horizon)));
    const double eta = gamma / K;
    double gain[3] = {0, 0, 0};
    for (std::size_t s = initial; s <= t; ++s) {
      if (!scheduled(s) && s != t) continue;
      const double top = std::max({gain[0], gain[1], gain[2]});
      double pr[3], sum = 0;
      for (int a = 0; a < 3; ++a) sum += pr[a] = std::exp(eta * (gain[a] - top));
      for (int a = 0; a < 3; ++a) pr[a] = (1 - gamma) * pr[a] / sum + gamma / K;
      const double u = Rng(o.seed, kStreamHedge + 16 * static_cast<std::uint64_t>(s)).uniform();
      const int arm = u < pr[0] ? 0 : u < pr[0] + pr[1] ? 1 : 2;
      if (s == t) return arm;
      if (s >= done.size()) continue;  // running: no reward yet
      double reward = 0;
      if (!done[s].failed) {
        std::size_t earlier = 0, beaten = 0;
        for (std::size_t q = 0; q < s; ++q)
          if (!done[q].failed) {
            ++earlier;
            beaten += done[q].score > done[s].score;
          }
        reward = earlier > 0 ? static_cast<double>(beaten) / static_cast<double>(earlier) : 0.5;
      }
      gain[arm] += reward / pr[arm];
    }
    return 0;
  };
  auto lcb_pick = [&] {
    moments();
    double lo = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i)
      if (taken[i] == 0) lo = std::min(lo, mu[i] - kHedgeKappa * sd[i]);
    double v;
    return best_of([&](std::size_t i) { return std::exp(lo - (mu[i] - kHedgeKappa * sd[i])); }, &v);
  };
  std::vector<double> dmin;
  auto explore_pick = [&](std::size_t t) {
    if (explore == Explore::thompson) return thompson_pick(t);
    if (explore == Explore::hedge) {
      const int arm = hedge_arm(t);
      return arm == 0 ? n : arm == 1 ? lcb_pick() : thompson_pick(t);
    }
    if (explore == Explore::spacefill) {
      dmin.assign(n, std::numeric_limits<double>::infinity());
      for (std::size_t j = 0; j < n; ++j) {
        if (taken[j] == 0) continue;
        const auto xj = Xall.row(static_cast<Eigen::Index>(j));
        for (std::size_t i = 0; i < n; ++i)
          if (taken[i] == 0)
            dmin[i] = std::min(dmin[i], (Xall.row(static_cast<Eigen::Index>(i)) - xj).squaredNorm());
      }
      double v;
      return best_of([&](std::size_t i) { return std::sqrt(dmin[i]); }, &v);
    }
    std::vector<std::size_t> untried;
    for (std::size_t i = 0; i < n; ++i)
      if (taken[i] == 0) untried.push_back(i);
    if (untried.empty()) return n;
    if (explore == Explore::local) {
      // A trust region: the untried candidates nearest the incumbent (a twentieth of the
      // candidates, at least 5), the one of highest EI among them (the lowest predicted score
      // when their EI is nil).
      const auto xb = Xall.row(static_cast<Eigen::Index>(*p.best_index));
      std::vector<std::pair<double, std::size_t>> near;
      for (auto i : untried)
        near.emplace_back((Xall.row(static_cast<Eigen::Index>(i)) - xb).squaredNorm(), i);
      const std::size_t region = std::min(near.size(), std::max<std::size_t>(5, n / 20));
      std::nth_element(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(region - 1),
                       near.end());
      moments();
      expected_improvement(mu.data(), sd.data(), n, best_log, o.xi * y_std, ei.data());
      transfer();
      std::vector<char> in(n, 0);
      double lo = std::numeric_limits<double>::infinity();
      for (std::size_t r = 0; r < region; ++r) {
        in[near[r].second] = 1;
        lo = std::min(lo, mu[near[r].second]);
      }
      double v;
      return best_of(
          [&](std::size_t i) { return in[i] ? std::max(ei[i], 0.0) + 1e-12 * std::exp(lo - mu[i]) : 0.0; },
          &v);
    }
    Rng rng(o.seed, kStreamExplore + 16 * static_cast<std::uint64_t>(t));
    std::size_t pick = n;
    for (int a = 0; a < 16; ++a) {
      pick = untried[rng.below(untried.size())];
      if (rng.uniform() < p_feasible(pick)) break;
    }
    return pick;
  };
  while (p.indices.size() < slots) {
    const std::size_t t = done.size() + pending.size() + p.indices.size();
    std::size_t pick = n;
    if (!form_ei.empty()) {
      // The form's pick: the untried candidate of the highest expected improvement over its
      // particles (the lower index on a tie); none when it expects none.  With a history, that
      // improvement times P(runs), as the model's picks weigh theirs (the failure model with
      // the history's failures): the form knows failures below a share of the data set only,
      // and a history may know others (a workload that fails on too few vCPUs whatever their
      // memory).
      if (ws) {
        double top;
        pick = best_of([&](std::size_t i) { return form_ei[i]; }, &top);
        if (!(top > 0)) pick = n;
      } else {
        double top = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (taken[i] == 0 && form_ei[i] > top) {
            top = form_ei[i];
            pick = i;
          }
      }
      if (pick != n) {
        p.form_modelled = true;
        take(pick);
        continue;
      }
    }
    if (explore != Explore::none && (scheduled(t) || (collapsed && p.indices.empty()))) {
      pick = explore_pick(t);
      if (pick != n) ++p.explored;
    }
    if (pick == n) {
      double best_ei;
      moments();
      expected_improvement(mu.data(), sd.data(), n, best_log, o.xi * y_std, ei.data());
      transfer();
      pick = best_of(ei_of, &best_ei);
    }
    if (pick == n) break;
    take(pick);
    if (p.indices.size() < slots) fantasize(pick);
  }
  return p;
}

}  // namespace autotune
