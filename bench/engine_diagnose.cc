// engine_diagnose: where the budget of a replayed search goes, problem by problem.
//
// For every problem of a replay table (gamma 1: the score is the cost), runs the engine (bo, the
// default options) for --seeds seeds of --budget trials, as `autotune replay` does, and prints:
// - the share of the table's configurations that fail, and of the search's trials that failed
//   (a failure model that steers away from failures keeps the second below the first);
// - the rank of the optimum by expected improvement among the untried candidates, at each
//   trial with a model until the optimum is tried (median over the trials and seeds; 0 = the
//   next proposal);
// - the fitted length scale of each feature (median over the last proposals of the seeds; the
//   inputs are in [0, 1], so a length scale far above 1 means the feature is taken as
//   irrelevant); with additive terms (--kernel additive or ard+additive), also each term's
//   weight w_g (the share of the signal variance it takes: a weight near 0 means the feature is
//   taken as irrelevant);
// - the same model fitted on M random successful configurations other than the optimum
//   (--fit M, default 10 and 30; five draws): the rank of the optimum by predicted cost among the
//   successful configurations not used -- whether the model could single out the optimum from
//   that many measurements at all.
//
//   build/bench/engine_diagnose --table FILE [--group COLUMN] [--features A,B] [--derive N=A/B]
//                               [--seeds N] [--budget N] [--fit M,M] [--kernel K]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "autotune/acquisition.hpp"
#include "autotune/error.hpp"
#include "autotune/gp.hpp"
#include "autotune/objective.hpp"
#include "autotune/optimizer.hpp"
#include "autotune/replay.hpp"
#include "autotune/rng.hpp"
#include "autotune/table.hpp"

using namespace autotune;

namespace {

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::size_t p = 0;
  while (p <= s.size()) {
    std::size_t c = s.find(',', p);
    if (c == std::string::npos) c = s.size();
    out.push_back(s.substr(p, c - p));
    p = c + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

int usage() {
  std::fprintf(stderr,
               "usage: engine_diagnose --table FILE [--group COLUMN] [--features A,B] "
               "[--derive N=A/B] [--seeds N] [--budget N] [--fit M,M] [--kernel ard|additive|ard+additive]\n");
  return 2;
}

}  // namespace

int main(int argc, char **argv) try {
  std::string table;
  ReplaySpec spec;
  spec.group = "workload";
  int seeds = 20, budget = 20;
  std::vector<int> fits = {10, 30};
  GpKernel kernel = GpKernel::ard;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string k = argv[a], v = argv[a + 1];
    if (k == "--table") table = v;
    else if (k == "--group") spec.group = v;
    else if (k == "--features") spec.features = split(v);
    else if (k == "--derive") for (const auto &d : split(v)) spec.derived.push_back(DerivedFeature::parse(d));
    else if (k == "--kernel") kernel = parse_kernel("--kernel", v);
    else if (k == "--seeds") seeds = std::atoi(v.c_str());
    else if (k == "--budget") budget = std::atoi(v.c_str());
    else if (k == "--fit") {
      fits.clear();
      for (const auto &m : split(v)) fits.push_back(std::atoi(m.c_str()));
    } else return usage();
  }
  if (table.empty() || seeds < 1 || budget < 1 || argc % 2 == 0) return usage();
  const auto problems = load_problems(Table::read_csv(table), spec);
  std::printf("# engine_diagnose --table %s: %d seeds x %d trials, gamma 1, default options, kernel %s\n",
              table.c_str(), seeds, budget, kernel_name(kernel));
  for (const auto &pr : problems) {
    const CandidateSet &cs = pr.candidates;
    const std::size_t n = cs.size();
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < n; ++i)
      if (pr.ok[i]) ok.push_back(i);
    const std::size_t opt = *std::min_element(
        ok.begin(), ok.end(), [&](std::size_t a, std::size_t b) { return pr.cost[a] < pr.cost[b]; });
    std::size_t fails = 0, trials = 0;
    std::vector<double> ranks;
    std::vector<std::vector<double>> scales(static_cast<std::size_t>(cs.feature_groups()));
    std::vector<std::vector<double>> additive_scales(scales.size()), weights(scales.size());
    for (int s = 1; s <= seeds; ++s) {
      EngineOptions o;
      o.seed = static_cast<std::uint64_t>(s);
      o.stop.budget = static_cast<std::size_t>(budget);
      o.predictions = true;
      o.gp.kernel = kernel;
      std::vector<Observation> done;
      Reference ref;
      std::vector<char> tried(n, 0);
      GpHyper last;
      bool modelled = false;
      for (;;) {
        const Proposal p = propose(cs, done, {}, 1, o);
        if (p.indices.empty()) break;
        if (p.modelled) {
          last = p.hyper;
          modelled = true;
          if (!tried[opt]) {
            // EI from the predictions (log-normal moments back to the log score's).
            std::vector<double> mu(n), sd(n), ei(n);
            for (std::size_t j = 0; j < n; ++j) {
              const double m = p.predictions[j].mean, v = p.predictions[j].std / m;
              const double s2 = std::log1p(v * v);
              sd[j] = std::sqrt(s2);
              mu[j] = std::log(m) - s2 / 2;
            }
            expected_improvement_lognormal(mu.data(), sd.data(), n, p.best_score, ei.data());
            double rank = 0;
            for (std::size_t j = 0; j < n; ++j) rank += !tried[j] && ei[j] > ei[opt];
            ranks.push_back(rank);
          }
        }
        const std::size_t i = p.indices[0];
        tried[i] = 1;
        ++trials;
        if (!pr.ok[i]) {
          ++fails;
          done.push_back(Observation::failure(i));
          continue;
        }
        if (!ref.valid()) ref = make_reference(pr.time[i], pr.cost[i]);
        done.push_back(Observation::ok(i, score(pr.time[i], pr.cost[i], ref, 1.0)));
      }
      if (modelled)
        for (int g = 0; g < cs.feature_groups(); ++g) {
          const auto u = static_cast<std::size_t>(g);
          scales[u].push_back(std::exp(last.log_lengthscale[g]));
          if (last.additive()) weights[u].push_back(std::exp(last.log_additive_weight[g]));
          if (last.additive() && last.ard) additive_scales[u].push_back(std::exp(last.log_additive_lengthscale[g]));
        }
    }
    std::printf("%s: %zu configurations, %.0f%% fail; the search's trials: %.0f%% failed; EI rank "
                "of the optimum until tried: median %.0f\n  length scales:",
                pr.name.c_str(), n, 100.0 * static_cast<double>(n - ok.size()) / static_cast<double>(n),
                100.0 * static_cast<double>(fails) / static_cast<double>(trials), median(ranks));
    for (int g = 0; g < cs.feature_groups(); ++g)
      std::printf(" %s %.2g", cs.group_names()[static_cast<std::size_t>(g)].c_str(),
                  median(scales[static_cast<std::size_t>(g)]));
    auto print_medians = [&](const char *what, const std::vector<std::vector<double>> &v) {
      if (v.empty() || v[0].empty()) return;
      std::printf("\n  %s:", what);
      for (int g = 0; g < cs.feature_groups(); ++g)
        std::printf(" %s %.2g", cs.group_names()[static_cast<std::size_t>(g)].c_str(),
                    median(v[static_cast<std::size_t>(g)]));
    };
    print_medians("additive terms' length scales", additive_scales);
    print_medians("additive terms' weights", weights);
    std::printf("\n");
    // The model on M random successful configurations (not the optimum).
    const Eigen::MatrixXd &X = cs.encoded();
    for (int m : fits) {
      std::vector<double> fit_ranks;
      for (std::uint64_t draw = 1; draw <= 5; ++draw) {
        std::vector<std::size_t> pool;
        for (auto i : ok)
          if (i != opt) pool.push_back(i);
        Rng rng(draw, 11);
        const std::size_t k = std::min(pool.size(), static_cast<std::size_t>(std::max(m, 2)));
        for (std::size_t i = 0; i < k; ++i) std::swap(pool[i], pool[i + rng.below(pool.size() - i)]);
        Eigen::MatrixXd Xt(static_cast<Eigen::Index>(k), X.cols());
        Eigen::VectorXd y(static_cast<Eigen::Index>(k));
        std::vector<char> used(n, 0);
        for (std::size_t r = 0; r < k; ++r) {
          Xt.row(static_cast<Eigen::Index>(r)) = X.row(static_cast<Eigen::Index>(pool[r]));
          y[static_cast<Eigen::Index>(r)] = std::log(pr.cost[pool[r]]);
          used[pool[r]] = 1;
        }
        const double mean = y.mean();
        const double sd = std::sqrt((y.array() - mean).square().mean());
        GpFitOptions g;
        g.warp_columns = cs.numeric_columns();
        g.kernel = kernel;
        const auto gp = GaussianProcess::fit(Xt, (y.array() - mean) / sd, cs.groups(), g);
        Eigen::VectorXd pm, pv;
        gp.predict(X, &pm, &pv);
        double rank = 0;
        for (auto i : ok) rank += !used[i] && i != opt && pm[static_cast<Eigen::Index>(i)] < pm[static_cast<Eigen::Index>(opt)];
        fit_ranks.push_back(rank);
      }
      std::printf("  fitted on %d random successes: rank of the optimum among the other %zu: median %.0f\n",
                  m, ok.size() - static_cast<std::size_t>(m) - 1, median(fit_ranks));
    }
  }
  return 0;
} catch (const Error &e) {
  std::fprintf(stderr, "engine_diagnose: %s\n", e.what());
  return 1;
}
