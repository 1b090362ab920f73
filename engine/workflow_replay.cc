#include "autotune/workflow_replay.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

#include "autotune/error.hpp"
#include "autotune/objective.hpp"

namespace autotune {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The rows of a problem on its Pareto front of (time, cost): no other successful row is at
// least as fast and as cheap and better in one.  Equal rows keep the first.
std::vector<std::size_t> pareto_front(const ReplayProblem &p) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < p.ok.size(); ++i)
    if (p.ok[i]) rows.push_back(i);
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
    return p.time[a] < p.time[b] || (p.time[a] == p.time[b] && p.cost[a] < p.cost[b]);
  });
  std::vector<std::size_t> front;
  double best_cost = kInf;
  for (auto i : rows)
    if (p.cost[i] < best_cost) {
      front.push_back(i);
      best_cost = p.cost[i];
    }
  return front;
}

}  // namespace

WorkflowReplay make_workflow_replay(const Workflow &w, const std::vector<ReplayProblem> &problems) {
  WorkflowReplay r;
  r.workflow = w;
  std::vector<double> fastest;
  double cheapest = 0;
  for (const auto &f : w.functions) {
    const ReplayProblem *p = nullptr;
    for (const auto &q : problems)
      if (q.name == f.problem) p = &q;
    if (!p)
      throw_invalid("workflow '" + w.name + "': function '" + f.name + "': problem: '" + f.problem +
                    "' is not a problem of the table");
    r.problems.push_back(p);
    FunctionCandidates fc;
    fc.candidates = p->candidates;
    bool rates = true;
    double tmin = kInf, cmin = kInf;
    for (std::size_t i = 0; i < p->ok.size(); ++i) {
      const bool known = std::isfinite(p->time[i]) && std::isfinite(p->cost[i]) && p->time[i] > 0;
      rates = rates && known;
      if (known) fc.rate.push_back(p->cost[i] / p->time[i]);
      if (p->ok[i]) {
        tmin = std::min(tmin, p->time[i]);
        cmin = std::min(cmin, p->cost[i]);
      }
    }
    if (!rates) fc.rate.clear();
    r.functions.push_back(std::move(fc));
    fastest.push_back(tmin);
    cheapest += cmin;
  }
  r.reference = make_reference(critical_path(w, fastest), cheapest);
  return r;
}

double workflow_replay_score(const WorkflowReplay &r, const std::vector<std::size_t> &choice,
                             double gamma) {
  std::vector<double> t;
  double c = 0;
  for (std::size_t f = 0; f < choice.size(); ++f) {
    const ReplayProblem &p = *r.problems[f];
    if (!p.ok[choice[f]]) return std::numeric_limits<double>::quiet_NaN();
    t.push_back(p.time[choice[f]]);
    c += p.cost[choice[f]];
  }
  return score(critical_path(r.workflow, t), c, r.reference, gamma);
}

WorkflowOptimum workflow_optimum(const WorkflowReplay &r, double gamma) {
  const Workflow &w = r.workflow;
  const std::size_t nf = w.functions.size();
  const Stages st = cut_stages(w);
  std::vector<std::vector<std::size_t>> front(nf);
  WorkflowOptimum opt;
  opt.combinations = 1;
  for (std::size_t f = 0; f < nf; ++f) {
    front[f] = pareto_front(*r.problems[f]);
    opt.combinations *= static_cast<double>(front[f].size());
  }
  const double a = (1 - gamma) / r.reference.time, b = gamma / r.reference.cost;
  opt.choice.assign(nf, 0);
  if (st.exact) {
    // Stage by stage: every front time of the stage's functions as the stage's time T.
    opt.stage_by_stage = true;
    for (const auto &stage : st.stage) {
      double best = kInf;
      std::vector<double> ts;
      for (auto f : stage)
        for (auto i : front[f]) ts.push_back(r.problems[f]->time[i]);
      for (double T : ts) {
        double tmax = 0, csum = 0;
        std::vector<std::size_t> pick;
        bool ok = true;
        for (auto f : stage) {
          const ReplayProblem &p = *r.problems[f];
          std::size_t bi = 0;
          double bc = kInf;
          for (auto i : front[f])
            if (p.time[i] <= T && p.cost[i] < bc) {
              bc = p.cost[i];
              bi = i;
            }
          if (!(bc < kInf)) {
            ok = false;
            break;
          }
          pick.push_back(bi);
          tmax = std::max(tmax, p.time[bi]);
          csum += bc;
        }
        if (!ok) continue;
        const double v = a * tmax + b * csum;
        if (v < best) {
          best = v;
          for (std::size_t k = 0; k < stage.size(); ++k) opt.choice[stage[k]] = pick[k];
        }
      }
    }
  } else {
    if (opt.combinations > kMaxOptimumCombinations)
      throw_invalid("workflow '" + w.name + "': the exact optimum of this DAG needs " +
                    std::to_string(static_cast<long long>(opt.combinations)) +
                    " combinations of Pareto-optimal rows; at most " +
                    std::to_string(static_cast<long long>(kMaxOptimumCombinations)) +
                    " are allowed (kMaxOptimumCombinations)");
    // Branch and bound in a topological order (the stages'): unassigned functions count with
    // their fastest time and cheapest cost, a lower bound since the score is monotone.
    std::vector<std::size_t> order;
    for (const auto &stage : st.stage) order.insert(order.end(), stage.begin(), stage.end());
    std::vector<double> tmin(nf, kInf), cmin(nf, kInf);
    for (std::size_t f = 0; f < nf; ++f)
      for (auto i : front[f]) {
        tmin[f] = std::min(tmin[f], r.problems[f]->time[i]);
        cmin[f] = std::min(cmin[f], r.problems[f]->cost[i]);
      }
    std::vector<double> t = tmin;
    std::vector<std::size_t> cur(nf, 0);
    double best = kInf, rest_cost = 0;
    for (auto c : cmin) rest_cost += c;
    std::function<void(std::size_t, double)> go = [&](std::size_t k, double cost) {
      const double bound = a * critical_path(w, t) + b * (cost + rest_cost);
      if (bound >= best) return;
      if (k == nf) {
        best = bound;
        opt.choice = cur;
        return;
      }
      const std::size_t f = order[k];
      rest_cost -= cmin[f];
      for (auto i : front[f]) {
        cur[f] = i;
        t[f] = r.problems[f]->time[i];
        go(k + 1, cost + r.problems[f]->cost[i]);
      }
      t[f] = tmin[f];
      rest_cost += cmin[f];
    };
    go(0, 0);
  }
  std::vector<double> t;
  for (std::size_t f = 0; f < nf; ++f) {
    t.push_back(r.problems[f]->time[opt.choice[f]]);
    opt.cost += r.problems[f]->cost[opt.choice[f]];
  }
  opt.time = critical_path(w, t);
  opt.score = score(opt.time, opt.cost, r.reference, gamma);
  return opt;
}

ReplayRun replay_workflow_once(const WorkflowReplay &r, const WorkflowOptimum &optimum,
                               const WorkflowSearchOptions &options) {
  WorkflowSearchOptions o = options;
  o.reference = r.reference;
  ReplayRun run;
  run.seed = o.seed;
  std::vector<WorkflowRun> runs;
  double best = kInf;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    const WorkflowProposal p = propose_workflow(r.workflow, r.functions, runs, o);
    run.step_seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (p.stopped()) {
      run.stop = p.stop;
      break;
    }
    WorkflowRun wr;
    std::vector<std::size_t> choice;
    for (std::size_t f = 0; f < p.functions.size(); ++f) {
      const std::size_t i = p.functions[f].candidate;
      const ReplayProblem &pr = *r.problems[f];
      FunctionMeasurement m;
      m.candidate = i;
      m.failed = !pr.ok[i];
      if (!m.failed) {
        m.time = pr.time[i];
        m.cost = pr.cost[i];
      }
      wr.functions.push_back(m);
      choice.push_back(i);
    }
    const double s = workflow_replay_score(r, choice, r.workflow.gamma);
    if (!std::isnan(s)) best = std::min(best, s);
    run.tried.push_back(runs.size());
    runs.push_back(std::move(wr));
    run.best_ratio.push_back(std::isinf(best) ? best : best / optimum.score);
  }
  return run;
}

}  // namespace autotune
