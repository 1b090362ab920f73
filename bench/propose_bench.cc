// propose_bench: the time of one proposal step of the tuning engine.
//
// A space of about 2,000 feasible configurations on two node types, 50 finished trials (run
// times from a synthetic model, every tenth trial failed) and one proposal, repeated with
// different seeds.  Prints the median and p90 of the step (wall clock and this thread's CPU
// time: on a shared machine the CPU time is the step itself, the wall time also counts the time
// other processes held the core), the same step with scalar exp and erfc, the part spent
// fitting the score model's hyperparameters, the step with the dense products compiled for the
// x86-64 baseline where the CPU runs them for AVX2 and FMA (dense.hpp; also at gamma 0.5 with a
// history), the step without input warping, a batch of 4, and
// the random strategy's step run side by side as the baseline (everything but the model), with
// the ratio to the 5 ms target.  With a warm start (history.hpp): the step with the base models
// of --history problems of 69 observations each (default 10), and their preparation (done once,
// by ingest or replay, outside the step).  The default step (kernel ard) and the step with the
// additive kernels (gp_options.hpp: additive, ard+additive), cold and warm, run side by side; and
// the step with Thompson sampling and with the hedge portfolio on every proposal (--explore
// thompson / hedge, share 1); and the default step at gamma 0.5, where the automatic exploration
// and linear term (design.hpp) make it, cold, an EI step with the linear term (at 50 trials not
// one of the local search's share) and, with the history, a Thompson step with the linear term;
// and the default step at gamma 0, an EI step with the linear term (the history's base
// models with it too); and the default step with a score factor per candidate, where the time
// model (EngineOptions::time_model, auto) fits the run times' model beside the scores', without
// and (the default) with the run time's form (EngineOptions::run_time_columns: its particle
// posterior from the prior, as a search's first call in a process computes it), and the default
// step with the history and score factors at gamma 1 and 0.5, where the form may propose too; and
// the same steps on trials whose run times are of the form's shape, where it explains them and
// proposes (its expected improvement at every untried candidate is then part of the step; the
// bench counts the steps it proposed).  And the
// default step at gamma 1 in a parameter-server space with categorical features (flavor, sync;
// 1,920 configurations, 50 trials, every tenth failed, a cost rate per configuration), where the
// run times' model proposes at every step by Thompson sampling and the failure model's fit runs
// longer (design.hpp: kCheapDesignShare, kFeasibilityIterationsCheap), with the cold default step
// at gamma 1 of that space without rates (scores modelled, the shorter failure fit) and the step
// with rates but the shorter failure fit beside it.
//
//   build/bench/propose_bench [--observations N] [--repeats R] [--space SPEC] [--history H]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotune/candidates.hpp"
#include "autotune/dense.hpp"
#include "autotune/error.hpp"
#include "autotune/history.hpp"
#include "autotune/optimizer.hpp"
#include "autotune/run_time_model.hpp"
#include "autotune/rng.hpp"
#include "autotune/space.hpp"
#include "autotune/vector_math.hpp"

using namespace autotune;

namespace {

constexpr char kSpace[] =
    "nodes=1-8,workers=1-64:x2,ps=0-2,cpus-per-worker=1-16:x2,mem-per-worker=2G-8G,"
    "cpus-per-ps=2,mem-per-ps=4G";

double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}
double wall_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// A plausible run time: work spread over the workers' CPUs, a per-rank communication overhead,
// parameter servers that help, and a penalty when the total memory is below the data set.
double run_time(const Configuration &c) {
  const double cpus = c.counts.workers * c.worker.cpus;
  const double mem_gb = c.counts.workers * static_cast<double>(c.worker.mem_mb) / 1024.0;
  double t = 1000.0 / cpus + 2.0 * std::log2(1.0 + c.ranks()) + 5.0 / (1.0 + c.counts.servers);
  if (mem_gb < 24) t *= 1.0 + (24 - mem_gb) / 12.0;
  return t;
}

struct Timing {
  std::vector<double> wall, cpu;
};

}  // namespace

int main(int argc, char **argv) {
  size_t observations = 50, repeats = 100, history = 10;
  std::string spec = kSpace;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc ||
        (a != "--observations" && a != "--repeats" && a != "--space" && a != "--history")) {
      std::fprintf(stderr,
                   "usage: propose_bench [--observations N] [--repeats R] [--space SPEC] "
                   "[--history H]\n");
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--space")
      spec = v;
    else
      (a == "--observations" ? observations : a == "--history" ? history : repeats) =
          std::strtoul(v.c_str(), nullptr, 10);
  }
  if (observations < 3 || repeats < 1) {
    std::fprintf(stderr, "propose_bench: need at least 3 observations and 1 repeat\n");
    return 2;
  }
  Inventory inv;
  inv.types.push_back({"std", 8, 32, 128 * 1024, 0, {}, 1.0});
  inv.types.push_back({"fat", 4, 64, 512 * 1024, 0, {}, 2.5});
  std::vector<Candidate> cands;
  try {
    cands = enumerate(SpaceSpec::parse(spec, "--space"), inv);
  } catch (const Error &e) {
    std::fprintf(stderr, "propose_bench: %s\n", e.what());
    return 2;
  }
  const CandidateSet cs = CandidateSet::from_candidates(cands, inv);

  // History: seeded random candidates; every tenth one failed; 2% measurement noise.
  Rng rng(42);
  std::vector<Observation> done;
  std::vector<char> used(cs.size(), 0);
  const double ref = run_time(cands[0].config);
  while (done.size() < std::min(observations, cs.size())) {
    const size_t i = rng.below(cs.size());
    if (used[i]) continue;
    used[i] = 1;
    if (done.size() % 10 == 9)
      done.push_back(Observation::failure(i));
    else
      done.push_back(
          Observation::ok(i, run_time(cands[i].config) / ref * (1 + 0.02 * rng.normal())));
  }

  // History: H other problems of 69 observations each, their run times the same model's with a
  // per-problem weight on each term (related, not equal), 10% of them failed.
  std::vector<HistoryProblem> hist;
  for (size_t h = 0; h < history; ++h) {
    HistoryProblem hp;
    hp.name = "history-" + std::to_string(h);
    const double a = 0.5 + rng.uniform(), b = 0.5 + rng.uniform();
    std::vector<char> seen(cs.size(), 0);
    while (hp.done.size() < std::min<size_t>(69, cs.size())) {
      const size_t i = rng.below(cs.size());
      if (seen[i]) continue;
      seen[i] = 1;
      if (hp.done.size() % 10 == 9) {
        hp.done.push_back(Observation::failure(i));
        continue;
      }
      const Configuration &c = cands[i].config;
      const double t = a * run_time(c) + b * std::log2(1.0 + c.ranks());
      hp.done.push_back(Observation::ok(i, t / ref));
    }
    hist.push_back(std::move(hp));
  }
  std::shared_ptr<const WarmStart> warm;
  auto prepare = [&](std::uint64_t seed) {
    EngineOptions e;
    e.seed = seed;
    warm = prepare_warm_start(cs, hist, e);
  };
  prepare(1);
  // The warm step with the base models of the same history under each kernel (prepared once).
  const GpKernel kernels[] = {GpKernel::ard, GpKernel::additive, GpKernel::ard_additive};
  std::shared_ptr<const WarmStart> warm_kernel[3];
  for (int k = 0; k < 3; ++k) {
    EngineOptions e;
    e.seed = 1;
    e.gp.kernel = kernels[k];
    warm_kernel[k] = prepare_warm_start(cs, hist, e);
  }
  // gamma: the objective's; at 0.5 the defaults with a history are Thompson sampling with the
  // linear term (design.hpp).
  auto warm_with = [&](int k, double gamma = 1) {
    return [&, k, gamma](std::uint64_t seed) {
      EngineOptions e;
      e.stop.budget = 0;
      e.seed = seed;
      e.gamma = gamma;
      e.gp.kernel = kernels[k];
      e.history = k == 0 ? warm : warm_kernel[k];
      const Proposal p = propose(cs, done, {}, 1, e);
      if (p.indices.size() != 1) {
        std::fprintf(stderr, "propose_bench: got %zu proposals with history\n", p.indices.size());
        std::exit(1);
      }
    };
  };
  const auto warm_step = warm_with(0);
  // At gamma 0 the base models have the linear term as the problem's model does.
  EngineOptions time_only;
  time_only.seed = 1;
  time_only.gamma = 0;
  const auto warm_time = prepare_warm_start(cs, hist, time_only);

  // The time model's score factors (design.hpp, EngineOptions::score_factor): one per candidate,
  // seeded, from 1 to 4 (a rate that is not the run time's).
  auto factors = std::make_shared<std::vector<double>>(cs.size());
  for (auto &f : *factors) f = 1 + 3 * rng.uniform();
  // The same 50 candidates tried, their run times of the form's shape (run_time_model.hpp:
  // Amdahl's law, a data set of 150 GiB that spills below it, 2 GiB per vCPU needed, failures
  // below 40 GiB), so that the form explains them and proposes: its expected improvement at
  // every untried candidate is then part of the step.  Counted, not assumed: the step with these
  // trials prints how many of its steps the form proposed.
  const RunTimeColumns &columns = *EngineOptions{}.run_time_columns;
  const std::optional<Allocations> found = allocations_of(cs, columns);
  if (!found) {
    std::fprintf(stderr, "propose_bench: --space: the run time's form needs its allocations: %s\n",
                 allocations_error(cs, columns).c_str());
    return 2;
  }
  const Allocations &alloc = *found;
  std::vector<Observation> form_done;
  for (const auto &ob : done) {
    const std::size_t i = ob.index;
    const double v = alloc.cpus[i], m = alloc.mem_gib[i];
    double t = 30 + 4e4 / std::pow(v, 0.9) + alloc.nodes[i];
    if (m < 150) t *= 2 * std::sqrt(150 / m);
    if (m / v < 2) t *= 1 + 0.3 * (2 - m / v) / 2;
    form_done.push_back(m < 40 ? Observation::failure(i)
                               : Observation::ok(i, t * (*factors)[i] * (1 + 0.02 * rng.normal())));
  }
  // The default step with a history and score factors on `trials`, where the run time's form
  // proposes too (from kFormMinTrialsWarm successes): its posterior from the prior, as above
  // (each row's seeds its own, so that no step resumes from the particles another step left in
  // the thread).  On form_done it counts the steps the form proposed, per gamma (1, 0.5).
  std::size_t form_proposed[2] = {0, 0}, form_steps[2] = {0, 0};
  auto warm_form_on = [&](const std::vector<Observation> &trials, double gamma, std::uint64_t offset) {
    const std::vector<Observation> *tried = &trials;
    return [&, tried, gamma, offset](std::uint64_t seed) {
      EngineOptions e;
      e.stop.budget = 0;
      e.seed = seed + offset;
      e.gamma = gamma;
      e.history = warm;
      e.score_factor = factors;
      const Proposal p = propose(cs, *tried, {}, 1, e);
      if (p.indices.size() != 1) std::exit(1);
      if (tried == &form_done) {
        form_proposed[gamma == 1 ? 0 : 1] += p.form_modelled;
        ++form_steps[gamma == 1 ? 0 : 1];
      }
    };
  };
  auto warm_form = [&](double gamma) { return warm_form_on(done, gamma, gamma == 1 ? 1000000 : 2000000); };
  auto warm_form_proposing = [&](double gamma) {
    return warm_form_on(form_done, gamma, gamma == 1 ? 3000000 : 4000000);
  };

  // The parameter-server space: workers x servers x flavor x batch size x learning rate x sync,
  // its run times a model of compute, communication and the learning rate's distance from the
  // batch's best; its rates the flavor's price per node-hour times the nodes.
  const char *flavors[] = {"cpu-small", "cpu-large", "mem-large", "gpu"};
  const double flavor_speed[] = {1.0, 3.6, 3.2, 14.0}, flavor_price[] = {0.12, 0.38, 0.5, 1.2};
  FeatureColumn fw{"workers", Scale::automatic, {}, {}}, fs{"servers", Scale::automatic, {}, {}},
      ff{"flavor", Scale::categorical, {}, {}}, fb{"batch_size", Scale::automatic, {}, {}},
      fl{"lr", Scale::automatic, {}, {}}, fy{"sync", Scale::categorical, {}, {}};
  std::vector<double> ps_time, ps_rate;
  for (double w : {1, 2, 4, 8, 16, 32})
    for (double sv : {1, 2})
      for (int f = 0; f < 4; ++f)
        for (double b : {32, 64, 128, 256, 512})
          for (double lr : {0.001, 0.003, 0.01, 0.03})
            for (int sy = 0; sy < 2; ++sy) {
              fw.numbers.push_back(w);
              fs.numbers.push_back(sv);
              ff.labels.push_back(flavors[f]);
              fb.numbers.push_back(b);
              fl.numbers.push_back(lr);
              fy.labels.push_back(sy ? "async" : "sync");
              const double r = std::log(lr / (0.004 * b / 64));
              const double epochs = 10 * (1 + 0.6 * r * r) * (sy ? 1 + 0.05 * (w - 1) : 1);
              const double step = b * 2e-3 / flavor_speed[f] * (sy ? 1 : 1 + 0.1 * std::log2(w + 1)) +
                                  0.05 / sv * std::pow(w / sv, 0.3);
              ps_time.push_back(epochs * 1e5 / (b * w) * step + 60);
              ps_rate.push_back(flavor_price[f] * (w + sv) / 3600);
            }
  const CandidateSet ps_cs({fw, fs, ff, fb, fl, fy});
  std::vector<Observation> ps_done;
  {
    std::vector<char> seen(ps_cs.size(), 0);
    while (ps_done.size() < std::min(observations, ps_cs.size())) {
      const size_t i = rng.below(ps_cs.size());
      if (seen[i]) continue;
      seen[i] = 1;
      ps_done.push_back(ps_done.size() % 10 == 9
                            ? Observation::failure(i)
                            : Observation::ok(i, ps_time[i] * ps_rate[i] * (1 + 0.05 * rng.normal())));
    }
  }
  const auto ps_rates = std::make_shared<const std::vector<double>>(ps_rate);
  auto ps_step = [&](bool rates, std::optional<int> feasibility_iterations = std::nullopt) {
    return [&, rates, feasibility_iterations](std::uint64_t seed) {
      EngineOptions e;
      e.stop.budget = 0;
      e.seed = seed;
      e.gamma = 1;
      e.feasibility_iterations = feasibility_iterations;
      if (rates) e.rate = e.score_factor = ps_rates;
      if (propose(ps_cs, ps_done, {}, 1, e).indices.size() != 1) std::exit(1);
    };
  };

  // The steps run in turn within each repeat, so a change of machine speed during the run (a
  // shared machine) affects all of them alike and their ratios stay fair.
  auto time = [&](const std::vector<std::function<void(std::uint64_t)>> &steps) {
    std::vector<Timing> t(steps.size());
    for (const auto &step : steps) step(1000);  // warm-up
    for (size_t r = 0; r < repeats; ++r)
      for (size_t s = 0; s < steps.size(); ++s) {
        const double w0 = wall_ms(), c0 = cpu_ms();
        steps[s](1 + r);
        t[s].cpu.push_back(cpu_ms() - c0);
        t[s].wall.push_back(wall_ms() - w0);
      }
    return t;
  };
  EngineOptions o;
  o.stop.budget = 0;
  auto proposer = [&](Strategy s, size_t k, bool warping = EngineOptions{}.input_warping,
                      Explore explore = EngineOptions{}.explore, GpKernel kernel = GpKernel::ard) {
    return [&, s, k, warping, explore, kernel](std::uint64_t seed) {
      EngineOptions e = o;
      e.strategy = s;
      e.seed = seed;
      e.input_warping = warping;
      e.explore = explore;
      if (explore != Explore::none) e.explore_share = 1;
      e.gp.kernel = kernel;
      const Proposal p = propose(cs, done, {}, k, e);
      if (p.indices.size() != k) {
        std::fprintf(stderr, "propose_bench: got %zu proposals\n", p.indices.size());
        std::exit(1);
      }
    };
  };
  // The score model's fit alone, on the same data the step fits it on.
  std::vector<double> ys;
  Eigen::MatrixXd X(0, cs.encoded().cols());
  for (const auto &ob : done)
    if (!ob.failed) {
      X.conservativeResize(X.rows() + 1, Eigen::NoChange);
      X.row(X.rows() - 1) = cs.encoded().row(static_cast<Eigen::Index>(ob.index));
      ys.push_back(std::log(ob.score));
    }
  Eigen::VectorXd y = Eigen::Map<Eigen::VectorXd>(ys.data(), static_cast<Eigen::Index>(ys.size()));
  y = (y.array() - y.mean()) / std::sqrt((y.array() - y.mean()).square().mean());
  auto fitter = [&](bool warping) {
    return [&, warping](std::uint64_t seed) {
      GpFitOptions f = o.gp;
      f.seed = seed;
      if (warping) f.warp_columns = cs.numeric_columns();
      GaussianProcess::fit(X, y, cs.groups(), f);
    };
  };
  // The same step with std::exp and std::erfc in a loop (about what Eigen's own exp costs on
  // baseline x86-64), against the vectorized ones the engine uses.
  const std::string fast_math = vector_math_variant();
  auto scalar_math = [&](std::uint64_t seed) {
    use_vector_math_variant("scalar");
    proposer(Strategy::bo, 1, true)(seed);
    use_vector_math_variant(fast_math.c_str());
  };
  // The same steps with the dense products compiled for the x86-64 baseline (dense.hpp), against
  // the variant this CPU runs (AVX2 and FMA where it has them).
  const std::string fast_dense = dense_variant();
  auto baseline_products = [&](std::function<void(std::uint64_t)> step) {
    return [&, step](std::uint64_t seed) {
      use_dense_variant("baseline");
      step(seed);
      use_dense_variant(fast_dense.c_str());
    };
  };
  const auto half_warm_step = warm_with(0, 0.5);
  const std::vector<Timing> t = time({
      proposer(Strategy::bo, 1, true),
      scalar_math,
      fitter(true),
      proposer(Strategy::bo, 1, false),
      fitter(false),
      proposer(Strategy::bo, 4),
      proposer(Strategy::random, 1),
      warm_step,
      prepare,
      proposer(Strategy::bo, 1, true, Explore::none, GpKernel::additive),
      proposer(Strategy::bo, 1, true, Explore::none, GpKernel::ard_additive),
      warm_with(1),
      warm_with(2),
      proposer(Strategy::bo, 1, true, Explore::thompson),
      proposer(Strategy::bo, 1, true, Explore::hedge),
      [&](std::uint64_t seed) {  // the defaults at gamma 0.5: EI (local search's share), linear term
        EngineOptions e = o;
        e.seed = seed;
        e.gamma = 0.5;
        if (propose(cs, done, {}, 1, e).indices.size() != 1) std::exit(1);
      },
      half_warm_step,
      [&](std::uint64_t seed) {  // the defaults at gamma 0: EI, linear term
        EngineOptions e = o;
        e.seed = seed;
        e.gamma = 0;
        if (propose(cs, done, {}, 1, e).indices.size() != 1) std::exit(1);
      },
      [&](std::uint64_t seed) {
        EngineOptions e;
        e.stop.budget = 0;
        e.seed = seed;
        e.gamma = 0;
        e.history = warm_time;
        if (propose(cs, done, {}, 1, e).indices.size() != 1) std::exit(1);
      },
      [&](std::uint64_t seed) {  // the time model (auto): both models fitted, one used
        EngineOptions e = o;
        e.seed = seed;
        e.score_factor = factors;
        e.run_time_columns.reset();
        if (propose(cs, done, {}, 1, e).indices.size() != 1) std::exit(1);
      },
      baseline_products(proposer(Strategy::bo, 1, true)),
      baseline_products(half_warm_step),
      ps_step(true),
      ps_step(false),
      ps_step(true, kFeasibilityIterations),
      [&](std::uint64_t seed) {  // the default: with the run time's form, from no earlier state
        EngineOptions e = o;
        e.seed = seed;
        e.score_factor = factors;
        if (propose(cs, done, {}, 1, e).indices.size() != 1) std::exit(1);
      },
      warm_form(1),
      warm_form(0.5),
      warm_form_proposing(1),
      warm_form_proposing(0.5),
  });
  const Timing &bo = t[0], &scalar = t[1], &fit = t[2], &plain = t[3], &plain_fit = t[4], &batch = t[5],
               &rnd = t[6], &warm_t = t[7], &prep = t[8], &add = t[9], &both = t[10],
               &warm_add = t[11], &warm_both = t[12], &ts = t[13], &hedge = t[14], &half = t[15], &half_warm = t[16],
               &zero = t[17], &zero_warm = t[18], &timed = t[19], &bo_base = t[20], &half_warm_base = t[21],
               &ps = t[22], &ps_plain = t[23], &ps_short = t[24], &form = t[25], &warm_form1 = t[26],
               &warm_form_half = t[27], &proposing1 = t[28], &proposing_half = t[29];

  std::printf(
      "propose_bench: %zu candidates (%d features), %zu observations (%zu failed), "
      "%zu repeats; vector math: %s; dense products: %s\n",
      cs.size(), cs.feature_groups(), done.size(), done.size() / 10, repeats, fast_math.c_str(),
      fast_dense.c_str());
  std::printf("  %-28s %10s %10s %10s %10s\n", "", "cpu med", "cpu p90", "wall med", "wall p90");
  auto row = [](const char *name, const Timing &t) {
    std::printf("  %-28s %7.3f ms %7.3f ms %7.3f ms %7.3f ms\n", name, quantile(t.cpu, 0.5),
                quantile(t.cpu, 0.9), quantile(t.wall, 0.5), quantile(t.wall, 0.9));
  };
  row("bo step (k=1)", bo);
  row("  the same, scalar math", scalar);
  row("  baseline products", bo_base);
  row("  score model fit alone", fit);
  row("bo step, no input warping", plain);
  row("  score model fit alone", plain_fit);
  row("bo batch (k=4)", batch);
  row("random step (baseline)", rnd);
  char name[64];
  std::snprintf(name, sizeof name, "bo step, history %zu x 69", history);
  row(name, warm_t);
  row("  history preparation (once)", prep);
  row("bo step, kernel additive", add);
  row("bo step, kernel ard+additive", both);
  row("  additive, with history", warm_add);
  row("  ard+additive, with history", warm_both);
  row("bo step, thompson (share 1)", ts);
  row("bo step, hedge (share 1)", hedge);
  row("bo step, gamma 0.5 defaults", half);
  row("  the same, with history", half_warm);
  row("    and baseline products", half_warm_base);
  row("bo step, gamma 0 defaults", zero);
  row("  the same, with history", zero_warm);
  row("bo step, time model (auto)", timed);
  row("  and the run time's form", form);
  row("  the form, with history", warm_form1);
  row("  the same at gamma 0.5", warm_form_half);
  row("  the form proposing, hist.", proposing1);
  row("  the same at gamma 0.5", proposing_half);
  const double time_med = quantile(timed.cpu, 0.5);
  std::printf("  time model (auto) / bo step: %.2f; time model / 5 ms target: %.2f (%s)\n",
              time_med / std::max(1e-6, quantile(bo.cpu, 0.5)), time_med / 5.0, time_med <= 5.0 ? "met" : "NOT met");
  const double form_med = quantile(form.cpu, 0.5);
  std::printf("  with the run time's form / time model alone: %.2f; with the form / 5 ms target: %.2f (%s)\n",
              form_med / std::max(1e-6, time_med), form_med / 5.0, form_med <= 5.0 ? "met" : "NOT met");
  const double wf1 = quantile(warm_form1.cpu, 0.5), wfh = quantile(warm_form_half.cpu, 0.5);
  std::printf("  the form with history / without: %.2f at gamma 1; at gamma 0.5 / 5 ms target: %.2f (%s)\n",
              wf1 / std::max(1e-6, form_med), wfh / 5.0, wfh <= 5.0 ? "met" : "NOT met");
  const double fp1 = quantile(proposing1.cpu, 0.5), fph = quantile(proposing_half.cpu, 0.5);
  std::printf("  the form proposing (%zu / %zu steps at gamma 1, %zu / %zu at 0.5) / not: %.2f at gamma 1, %.2f at 0.5; "
              "the slower / 5 ms target: %.2f (%s)\n",
              form_proposed[0], form_steps[0], form_proposed[1], form_steps[1],
              fp1 / std::max(1e-6, wf1), fph / std::max(1e-6, wfh), std::max(fp1, fph) / 5.0,
              std::max(fp1, fph) <= 5.0 ? "met" : "NOT met");
  const double med = quantile(bo.cpu, 0.5);
  std::printf(
      "  bo step / random step: %.0fx; bo step / without input warping: %.2f; "
      "bo step / scalar math: %.2f; bo step / baseline products: %.2f; bo step / 5 ms target: %.2f (%s)\n",
      med / std::max(1e-6, quantile(rnd.cpu, 0.5)), med / std::max(1e-6, quantile(plain.cpu, 0.5)),
      med / std::max(1e-6, quantile(scalar.cpu, 0.5)), med / std::max(1e-6, quantile(bo_base.cpu, 0.5)),
      med / 5.0, med <= 5.0 ? "met" : "NOT met");
  const double wmed = quantile(warm_t.cpu, 0.5);
  std::printf("  bo step with history / without: %.2f; with history / 5 ms target: %.2f (%s)\n",
              wmed / std::max(1e-6, med), wmed / 5.0, wmed <= 5.0 ? "met" : "NOT met");
  const double amed = quantile(add.cpu, 0.5), bmed = quantile(both.cpu, 0.5);
  const double wamed = quantile(warm_add.cpu, 0.5), wbmed = quantile(warm_both.cpu, 0.5);
  std::printf("  kernel additive / ard: %.2f cold, %.2f with history; ard+additive / ard: %.2f cold, "
              "%.2f with history; the slowest with history / 5 ms target: %.2f (%s)\n",
              amed / std::max(1e-6, med), wamed / std::max(1e-6, wmed), bmed / std::max(1e-6, med),
              wbmed / std::max(1e-6, wmed), std::max(wamed, wbmed) / 5.0,
              std::max(wamed, wbmed) <= 5.0 ? "met" : "NOT met");
  const double tmed = quantile(ts.cpu, 0.5);
  std::printf("  thompson step / bo step: %.2f; thompson / 5 ms target: %.2f (%s)\n",
              tmed / std::max(1e-6, med), tmed / 5.0, tmed <= 5.0 ? "met" : "NOT met");
  const double hmed = quantile(half.cpu, 0.5);
  std::printf("  default step at gamma 0.5 / at gamma 1: %.2f; / 5 ms target: %.2f (%s)\n",
              hmed / std::max(1e-6, med), hmed / 5.0, hmed <= 5.0 ? "met" : "NOT met");
  const double hwmed = quantile(half_warm.cpu, 0.5);
  std::printf("  default step at gamma 0.5 with history / at gamma 1 with history: %.2f; / with baseline "
              "products: %.2f; / 5 ms target: %.2f (%s)\n",
              hwmed / std::max(1e-6, wmed), hwmed / std::max(1e-6, quantile(half_warm_base.cpu, 0.5)),
              hwmed / 5.0, hwmed <= 5.0 ? "met" : "NOT met");
  const double zmed = quantile(zero.cpu, 0.5), zwmed = quantile(zero_warm.cpu, 0.5);
  std::printf("  default step at gamma 0 / at gamma 1: %.2f cold, %.2f with history; with history / 5 ms "
              "target: %.2f (%s)\n",
              zmed / std::max(1e-6, med), zwmed / std::max(1e-6, wmed), zwmed / 5.0,
              zwmed <= 5.0 ? "met" : "NOT met");
  char ps_name[96];
  std::snprintf(ps_name, sizeof ps_name, "  %zu configurations, rates", ps_cs.size());
  std::printf("bo step, gamma 1, categorical:\n");
  row(ps_name, ps);
  row("  the same without rates", ps_plain);
  row("  rates, failure fit of 5", ps_short);
  const double pmed = quantile(ps.cpu, 0.5);
  std::printf("  categorical step with rates / without: %.2f; / with the failure fit of %d "
              "iterations: %.2f; / 5 ms target: %.2f (%s)\n",
              pmed / std::max(1e-6, quantile(ps_plain.cpu, 0.5)), kFeasibilityIterations,
              pmed / std::max(1e-6, quantile(ps_short.cpu, 0.5)), pmed / 5.0,
              pmed <= 5.0 ? "met" : "NOT met");
  return 0;
}
