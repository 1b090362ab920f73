// The search without a model: engine options, the initial design, and the part of a proposal
// that needs no Gaussian process (see autotune/design.hpp).
#include "autotune/design.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "autotune/error.hpp"
#include "autotune/history.hpp"
#include "autotune/rng.hpp"
#include "autotune/units.hpp"
#include "cpu_variants.hpp"

namespace autotune {
namespace {

// RankingLoss::sorted()'s inner count: of v[q], ..., v[n - 1], how many are below tp and how many
// equal to it.  Exact in every variant: a comparison is a lane of all ones (-1), subtracted.
using CountFn = void (*)(const double *v, Eigen::Index q, Eigen::Index n, double tp,
                         std::uint64_t *below, std::uint64_t *equal);

void count_from(const double *v, Eigen::Index q, Eigen::Index n, double tp, std::uint64_t *below,
                std::uint64_t *equal) {
  std::uint64_t b = 0, e = 0;
#if defined(__SSE2__)
  // Two at a time.
  const __m128d vp = _mm_set1_pd(tp);
  __m128i lt = _mm_setzero_si128(), eq = _mm_setzero_si128();
  for (; q + 2 <= n; q += 2) {
    const __m128d vq = _mm_loadu_pd(v + q);
    lt = _mm_sub_epi64(lt, _mm_castpd_si128(_mm_cmplt_pd(vq, vp)));
    eq = _mm_sub_epi64(eq, _mm_castpd_si128(_mm_cmpeq_pd(vq, vp)));
  }
  std::uint64_t lanes[2];
  _mm_storeu_si128(reinterpret_cast<__m128i *>(lanes), lt);
  b = lanes[0] + lanes[1];
  _mm_storeu_si128(reinterpret_cast<__m128i *>(lanes), eq);
  e = lanes[0] + lanes[1];
#endif
  for (; q < n; ++q) {
    b += v[q] < tp;
    e += v[q] == tp;
  }
  *below = b;
  *equal = e;
}

#if defined(__x86_64__)
// Four at a time, where the CPU has AVX2 (chosen at run time: count_variants()).
__attribute__((target("avx2"))) void count_from_avx2(const double *v, Eigen::Index q, Eigen::Index n,
                                                     double tp, std::uint64_t *below,
                                                     std::uint64_t *equal) {
  const __m256d vp = _mm256_set1_pd(tp);
  __m256i lt = _mm256_setzero_si256(), eq = _mm256_setzero_si256();
  for (; q + 4 <= n; q += 4) {
    const __m256d vq = _mm256_loadu_pd(v + q);
    lt = _mm256_sub_epi64(lt, _mm256_castpd_si256(_mm256_cmp_pd(vq, vp, _CMP_LT_OS)));
    eq = _mm256_sub_epi64(eq, _mm256_castpd_si256(_mm256_cmp_pd(vq, vp, _CMP_EQ_OQ)));
  }
  std::uint64_t lanes[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(lanes), lt);
  std::uint64_t b = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(lanes), eq);
  std::uint64_t e = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; q < n; ++q) {
    b += v[q] < tp;
    e += v[q] == tp;
  }
  *below = b;
  *equal = e;
}
#endif

struct CountVariant {
  CountFn count;
  const char *name;
};

// The variants this build and CPU have, fastest first.
std::vector<CountVariant> count_variants() {
  std::vector<CountVariant> v;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) v.push_back({count_from_avx2, "avx2"});
#endif
  v.push_back({count_from, "baseline"});
  return v;
}

using CountChoice = CpuVariants<CountVariant, count_variants>;

// Streams of the seed, so the parts of one search draw independent numbers.
constexpr std::uint64_t kStreamDesign = 1, kStreamRandom = 2;  // kStreamGp = 3: optimizer.cc
// history.cc: 5 and 6, optimizer.cc: 7 (exploration).
constexpr std::uint64_t kStreamWarmDesign = 8;

double sq_dist(const Eigen::MatrixXd &X, std::size_t a, std::size_t b) {
  return (X.row(static_cast<Eigen::Index>(a)) - X.row(static_cast<Eigen::Index>(b))).squaredNorm();
}

std::vector<std::size_t> random_order(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed, kStreamRandom);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

}  // namespace

const char *explore_name(Explore e) {
  switch (e) {
    case Explore::none: return "none";
    case Explore::spacefill: return "spacefill";
    case Explore::random: return "random";
    case Explore::local: return "local";
    case Explore::thompson: return "thompson";
    case Explore::hedge: return "hedge";
    case Explore::automatic: return "auto";
  }
  return "?";
}

Explore parse_explore(std::string_view field, std::string_view value) {
  for (Explore e : {Explore::none, Explore::spacefill, Explore::random, Explore::local,
                    Explore::thompson, Explore::hedge, Explore::automatic})
    if (value == explore_name(e)) return e;
  throw_invalid(
      std::string(field) + ": '" + std::string(value) +
      "' is not an exploration; allowed: auto, none, spacefill, random, local, thompson, hedge");
}

Explore EngineOptions::effective_explore(double *share, bool categorical) const {
  if (explore != Explore::automatic) {
    *share = explore_share;
    return explore;
  }
  const Explore e =
      automatic_explore(gamma, warm(), effective_linear_trend(), categorical);
  *share = e == Explore::thompson ? 1.0 : e == Explore::local ? kLocalShare : 0.0;
  return e;
}

Explore automatic_explore(double gamma, bool warm, bool linear, bool categorical) {
  // With a warm start: where the model has the linear term (bench/README.md, "The warm start's
  // exploration and linear term": without it, Thompson sampling did worse than cold with a
  // shuffled history).  Cold, also in a space with a categorical feature when gamma is above
  // kThompsonCategoricalGammaLow ("Thompson sampling where a feature is categorical").  Below
  // kLinearLowGammaBelow a warm start keeps EI alone with the linear term ("The linear term below
  // gamma 0.25").
  // Cold in a space with a categorical feature, from kCategoricalPowerGammaLow on, EI
  // (automatic_feasibility_power() weighs it).  Cold over numeric features, Thompson sampling
  // below kLocalGammaLow only, and wherever it is not, a share of local search ("Local search on
  // a share of the proposals over numeric features").
  if (!warm && !categorical)
    return gamma >= kThompsonGammaLow && gamma < kLocalGammaLow ? Explore::thompson : Explore::local;
  const bool ts = warm ? linear && gamma >= kLinearLowGammaBelow
                       : (gamma >= kThompsonGammaLow && gamma < kCategoricalPowerGammaLow) ||
                             gamma > kThompsonCategoricalGammaLow;
  return ts ? Explore::thompson : Explore::none;
}

bool automatic_linear_trend(double gamma) {
  return (gamma >= kLinearGammaLow && gamma <= kLinearGammaHigh) || gamma < kLinearLowGammaBelow;
}

bool automatic_time_linear_trend(double gamma) {
  return automatic_linear_trend(gamma) || (gamma > kLinearGammaHigh && gamma < 1);
}

double automatic_feasibility_power(double gamma, bool time_modelled, bool categorical_cold) {
  if (gamma >= 1) return time_modelled ? kTimeModelFeasibilityPower : 1.0;
  const double low = categorical_cold ? kCategoricalPowerGammaLow : kFeasibilityPowerGammaLow;
  return gamma >= low ? kFeasibilityPowerAuto : 1.0;
}

bool automatic_time_model_always(double gamma, bool categorical) { return gamma >= 1 && categorical; }

double automatic_cheap_design(double gamma, bool warm, bool categorical) {
  return !warm && automatic_time_model_always(gamma, categorical) ? kCheapDesignShare : 1.0;
}

double EngineOptions::effective_cheap_design(bool categorical) const {
  if (cheap_design) return *cheap_design;
  return automatic_cheap_design(gamma, warm(), categorical);
}

bool EngineOptions::warm() const { return history && history->size() > 0; }

bool EngineOptions::design_among_cheapest(bool categorical) const {
  return rate && effective_cheap_design(categorical) < 1;
}

int EngineOptions::effective_feasibility_iterations(bool categorical) const {
  if (feasibility_iterations) return *feasibility_iterations;
  return design_among_cheapest(categorical) ? kFeasibilityIterationsCheap : kFeasibilityIterations;
}

bool automatic_time_model_turns(double gamma, bool categorical) {
  return gamma >= kTimeModelTurnsGammaLow && gamma < 1 && !categorical;
}

std::size_t automatic_initial_trials(double gamma, bool warm, bool categorical) {
  return !warm && !categorical && gamma <= kSmallDesignGammaHigh ? kSmallDesign : kInitialTrials;
}

std::size_t EngineOptions::effective_initial_trials(bool categorical) const {
  if (initial_trials) return *initial_trials;
  if (design_among_cheapest(categorical)) return kCheapDesignTrials;
  return automatic_initial_trials(gamma, warm(), categorical);
}

std::optional<std::size_t> parse_initial_trials(std::string_view field, std::string_view value) {
  if (value == "auto") return std::nullopt;
  try {
    return static_cast<std::size_t>(
        parse_int(field, value, 1, static_cast<long long>(kMaxInitialTrials)));
  } catch (const Error &e) {
    throw_invalid(std::string(e.what()) + ", or auto");
  }
}

bool automatic_history_design(double gamma) {
  return !(gamma >= kHistoryDesignGammaLow && gamma <= kHistoryDesignGammaHigh);
}

EngineOptions engine_options(const EngineConf &conf, std::size_t budget) {
  EngineOptions o;
  o.seed = conf.seed;
  o.initial_trials = conf.initial_trials;
  o.xi = conf.exploration_margin;
  o.input_warping = conf.input_warping;
  o.linear_trend = conf.linear_trend;
  o.gp.kernel = conf.kernel;
  o.time_model = conf.time_model;
  o.batch = conf.batch;
  o.stop = conf.stopping(budget);
  return o;
}

const char *time_model_name(EngineOptions::TimeModel m) {
  switch (m) {
    case EngineOptions::TimeModel::no: return "no";
    case EngineOptions::TimeModel::automatic: return "auto";
    case EngineOptions::TimeModel::better: return "better";
    case EngineOptions::TimeModel::yes: return "yes";
  }
  return "?";
}

EngineOptions::TimeModel parse_time_model(std::string_view field, std::string_view value, bool with_better) {
  if (value == "auto") return EngineOptions::TimeModel::automatic;
  if (value == "better" && with_better) return EngineOptions::TimeModel::better;
  try {
    return parse_bool(field, value) ? EngineOptions::TimeModel::yes : EngineOptions::TimeModel::no;
  } catch (const Error &) {
    throw_invalid(std::string(field) + ": '" + std::string(value) +
                  "' is not allowed; allowed: auto, " + (with_better ? "better, " : "") +
                  "yes, no (or true, false, 1, 0, on, off)");
  }
}

bool EngineOptions::effective_history_time_model() const {
  if (history_time_model != TimeModel::automatic) return history_time_model == TimeModel::yes;
  return gamma > 0 && gamma < 1;
}

bool EngineOptions::effective_linear_trend() const {
  if (linear_trend != Trend::automatic) return linear_trend == Trend::yes;
  return automatic_linear_trend(gamma);
}

bool EngineOptions::effective_time_linear_trend() const {
  if (time_linear_trend != Trend::automatic) return time_linear_trend == Trend::yes;
  if (linear_trend != Trend::automatic) return linear_trend == Trend::yes;
  return automatic_time_linear_trend(gamma);
}

double EngineOptions::effective_feasibility_power(bool time_modelled, bool categorical) const {
  return feasibility_power ? *feasibility_power
                           : automatic_feasibility_power(
                                 gamma, time_modelled,
                                 categorical && !warm());
}

std::size_t EngineOptions::effective_history_picks() const {
  if (history_picks) return *history_picks;
  return automatic_history_design(gamma) ? 1 : 0;
}

double EngineOptions::effective_history_confirm() const {
  if (history_confirm) return *history_confirm;
  return automatic_history_design(gamma) ? 1.0 : -1.0;
}

std::size_t EngineOptions::effective_history_doubt() const {
  if (history_doubt) return *history_doubt;
  return gamma >= kHistoryDoubtGammaLow && effective_history_confirm() >= 0 ? kHistoryDoubt : 0;
}

double EngineOptions::effective_history_own_floor() const {
  if (history_own_floor) return *history_own_floor;
  return gamma >= kHistoryOwnFloorGammaLow ? kHistoryOwnFloor : 0.0;
}

RunTimeColumns RunTimeColumns::parse(const std::string &text) {
  RunTimeColumns c;
  if (text == "auto") {
    c.automatic = true;
    return c;
  }
  // nodes; cpus or cpus-per-node; mem or mem-per-node.
  const char *keys[] = {"nodes", "cpus", "mem", "cpus-per-node", "mem-per-node"};
  const int slot[] = {0, 1, 2, 1, 2};
  std::string given[3];
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    const std::size_t eq = part.find('=');
    const std::string key = part.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    int k = -1;
    for (int i = 0; i < 5; ++i)
      if (key == keys[i]) k = i;
    if (k < 0 || eq == std::string::npos)
      throw_invalid("the run-time columns: '" + part +
                    "' is not KEY=COLUMN; the keys: nodes, cpus or cpus-per-node, mem or "
                    "mem-per-node");
    const int s = slot[k];
    if (given[s] == key) throw_invalid("the run-time columns: '" + key + "' is given twice");
    if (!given[s].empty())
      throw_invalid("the run-time columns: '" + given[s] + "' and '" + key + "' are both given");
    given[s] = key;
    double scale = 1;
    if (s == 2) {
      if (const std::size_t slash = value.find('/'); slash != std::string::npos) {
        const std::string d = value.substr(slash + 1);
        char *end = nullptr;
        scale = std::strtod(d.c_str(), &end);
        if (d.empty() || *end != '\0' || !(scale > 0) || !std::isfinite(scale))
          throw_invalid("the run-time columns: " + key + "'s divisor '" + d +
                        "' is not a number > 0 (" + key + "=COLUMN/DIVISOR gives GiB)");
        scale = 1 / scale;
        value = value.substr(0, slash);
      }
    }
    if (value.empty()) throw_invalid("the run-time columns: '" + key + "' names no column");
    (s == 0 ? c.nodes : s == 1 ? c.cpus : c.mem) = value;
    if (s == 1) c.cpus_per_node = k == 3;
    if (s == 2) {
      c.mem_to_gib = scale;
      c.mem_per_node = k == 4;
    }
    start = comma + 1;
  }
  if (given[0].empty() || given[1].empty() || given[2].empty())
    throw_invalid("the run-time columns: nodes, cpus (or cpus-per-node) and mem (or "
                  "mem-per-node) must all be given");
  return c;
}

void EngineOptions::validate() const {
  if (initial_trials && *initial_trials < 1) throw_invalid("initial trials must be at least 1");
  if (design_draws < 1) throw_invalid("design draws must be at least 1");
  if (!(xi >= 0) || !std::isfinite(xi))
    throw_invalid("the EI margin '" + format_double(xi) + "' must be >= 0");
  if (!(explore_share >= 0 && explore_share <= 1))
    throw_invalid("the exploration share '" + format_double(explore_share) +
                  "' must be from 0 to 1");
  if (!(gamma >= 0 && gamma <= 1))
    throw_invalid("the objective's gamma '" + format_double(gamma) + "' must be from 0 to 1");
  if (!(explore_collapse >= 0 && explore_collapse <= 1))
    throw_invalid("the exploration collapse fraction '" + format_double(explore_collapse) +
                  "' must be from 0 to 1");
  if (history_own_floor && !(*history_own_floor >= 0 && *history_own_floor <= 1000))
    throw_invalid("the floor of the problem's own weight '" + format_double(*history_own_floor) +
                  "' must be from 0 to 1000");
  if (!(history_coherence >= -1 && history_coherence <= 1))
    throw_invalid("the history's coherence threshold '" + format_double(history_coherence) +
                  "' must be from -1 to 1");
  if (!(history_feasibility >= 0 && history_feasibility <= 10))
    throw_invalid("the history's feasibility weight '" + format_double(history_feasibility) +
                  "' must be from 0 to 10");
  if (!(history_gate >= 0 && history_gate <= 10))
    throw_invalid("the history gate '" + format_double(history_gate) + "' must be from 0 to 10");
  if (feasibility_power && !(*feasibility_power >= 1 && *feasibility_power <= 64))
    throw_invalid("the power of the probability of running '" + format_double(*feasibility_power) +
                  "' must be from 1 to 64");
  if (feasibility_iterations && !(*feasibility_iterations >= 1 && *feasibility_iterations <= 50))
    throw_invalid("the failure model's fit iterations '" + std::to_string(*feasibility_iterations) +
                  "' must be from 1 to 50");
  if (!(run_time_margin >= -2 && run_time_margin <= 2))
    throw_invalid("the run-time model's margin '" + format_double(run_time_margin) +
                  "' is not from -2 to 2");
  if (run_time_particles < 64 || run_time_particles > 100000)
    throw_invalid("the run-time model's particles (" + std::to_string(run_time_particles) +
                  ") must be from 64 to 100000");
  if (!(bowl_mean_sd >= 0 && bowl_mean_sd <= 10))
    throw_invalid("the bowl prior mean's standard deviation '" + format_double(bowl_mean_sd) +
                  "' must be from 0 to 10");
  if (score_factor)
    for (double f : *score_factor)
      if (!(std::isfinite(f) && f > 0))
        throw_invalid("a candidate's score factor '" + format_double(f) + "' must be finite and > 0");
  if (rate)
    for (double r : *rate)
      if (!(std::isfinite(r) && r > 0))
        throw_invalid("a candidate's cost rate '" + format_double(r) + "' must be finite and > 0");
  if (cheap_design && !(*cheap_design > 0 && *cheap_design <= 1))
    throw_invalid("the share of the cheapest candidates for the initial design '" +
                  format_double(*cheap_design) + "' must be above 0 and at most 1");
  if (history_confirm && !(*history_confirm <= 10))
    throw_invalid("the history's confirmation '" + format_double(*history_confirm) +
                  "' must be at most 10 (below 0: off)");
  if (history_doubt && *history_doubt > 100)
    throw_invalid("the doubted history's trial after the initial design '" +
                  std::to_string(*history_doubt) + "' must be from 0 (off) to 100");
  stop.validate();
}

double FailureEdge::factor(double x) const {
  if (column < 0) return 1.0;
  const double v = sign * x;
  const double low = 1.0 / (failures + 2.0);
  if (v <= failed) return low;
  if (v >= ran) return 1.0;
  return low + (1.0 - low) * (v - failed) / (ran - failed);
}

FailureEdge failure_edge(const Eigen::MatrixXd &encoded, const std::vector<int> &numeric_columns,
                         const std::vector<Observation> &done) {
  FailureEdge best;
  for (int j : numeric_columns) {
    for (const double sign : {1.0, -1.0}) {
      double ran = std::numeric_limits<double>::infinity();
      for (const auto &ob : done)
        if (!ob.failed) ran = std::min(ran, sign * encoded(static_cast<Eigen::Index>(ob.index), j));
      if (!std::isfinite(ran)) return {};  // no success: nothing to lie beyond
      int m = 0;
      double failed = -std::numeric_limits<double>::infinity();
      std::size_t innermost = 0;
      for (const auto &ob : done) {
        if (!ob.failed) continue;
        const double x = sign * encoded(static_cast<Eigen::Index>(ob.index), j);
        if (x < ran) {
          ++m;
          if (x > failed) {
            failed = x;
            innermost = ob.index;
          }
        }
      }
      if (m >= kFailureEdgeMinFailures && m > best.failures)
        best = {j, sign, failed, ran, m, innermost};
    }
  }
  return best;
}

std::size_t ranking_loss(const Eigen::VectorXd &s, const Eigen::VectorXd &y) {
  std::size_t loss = 0;
  const Eigen::Index n = y.size();
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index k = j + 1; k < n; ++k)
      if (y[j] != y[k]) loss += (s[j] < s[k]) != (y[j] < y[k]);
  return loss;
}

RankingLoss::RankingLoss(const Eigen::VectorXd &y) {
  const auto n = static_cast<std::size_t>(y.size());
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), Eigen::Index{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](Eigen::Index a, Eigen::Index b) { return y[a] < y[b]; });
  pos_.resize(n);
  next_.resize(n);
  for (std::size_t p = 0; p < n; ++p) pos_[static_cast<std::size_t>(order_[p])] = static_cast<Eigen::Index>(p);
  for (std::size_t p = n; p-- > 0;) {
    const bool last_of_group = p + 1 == n || y[order_[p + 1]] != y[order_[p]];
    next_[p] = last_of_group ? static_cast<Eigen::Index>(p + 1) : next_[p + 1];
    pairs_ += n - static_cast<std::size_t>(next_[p]);
  }
}

std::size_t RankingLoss::operator()(const Eigen::VectorXd &s) const {
  Eigen::VectorXd t(s.size());
  for (Eigen::Index j = 0; j < s.size(); ++j) t[position(j)] = s[j];
  return sorted(t);
}

std::size_t RankingLoss::sorted(const Eigen::VectorXd &t) const {
  // A pair (p, q) of positions with y lower at p is discordant when t[q] < t[p], or when they
  // tie and p's index is the lower one (ranking_loss compares s[j] < s[k] for j < k).
  const Eigen::Index n = t.size();
  const double *v = t.data();
  const CountFn count_below_equal = CountChoice::current().count;
  std::size_t loss = 0;
  for (Eigen::Index p = 0; p < n; ++p) {
    const double tp = v[p];
    std::uint64_t below = 0, equal = 0;
    count_below_equal(v, next_[static_cast<std::size_t>(p)], n, tp, &below, &equal);
    loss += below;
    if (equal != 0)
      for (Eigen::Index q = next_[static_cast<std::size_t>(p)]; q < n; ++q)
        loss += v[q] == tp && order_[static_cast<std::size_t>(q)] > order_[static_cast<std::size_t>(p)];
  }
  return loss;
}

const char *ranking_variant() { return CountChoice::current().name; }

bool use_ranking_variant(const char *name) { return CountChoice::use(name); }

double kendall_limit(std::size_t pairs, std::size_t n, double z) {
  const double pd = static_cast<double>(pairs), nd = static_cast<double>(n);
  return pd / 2 - z * std::sqrt(pd * (2 * nd + 5) / 36);
}

bool kendall_passes(std::size_t discordant, std::size_t pairs, std::size_t n, double z) {
  return pairs > 0 && static_cast<double>(discordant) <= kendall_limit(pairs, n, z);
}

bool history_confirmed(const WarmStart &ws, const std::vector<Observation> &done, double z) {
  if (ws.size() == 0 || done.size() < 2) return false;
  // The last observation of each candidate; its rank: the log score of a success, after every
  // success for a failure (failures tie with each other).
  std::vector<std::pair<std::size_t, double>> trials;
  {
    std::vector<std::size_t> at(ws.candidates, SIZE_MAX);
    for (const auto &ob : done) {
      if (ob.index >= ws.candidates)
        throw_invalid("observation of candidate " + std::to_string(ob.index) + ": only " +
                      std::to_string(ws.candidates) + " candidates");
      const double r = ob.failed ? std::numeric_limits<double>::infinity() : std::log(ob.score);
      if (at[ob.index] == SIZE_MAX) {
        at[ob.index] = trials.size();
        trials.emplace_back(ob.index, r);
      } else {
        trials[at[ob.index]].second = r;
      }
    }
  }
  const std::size_t n = trials.size();
  Eigen::VectorXd m = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n)), y(static_cast<Eigen::Index>(n));
  for (std::size_t j = 0; j < n; ++j) {
    const auto i = static_cast<Eigen::Index>(j);
    m[i] = ws.combined_mean(trials[j].first);
    y[i] = trials[j].second;
  }
  std::size_t pairs = 0;
  for (Eigen::Index j = 0; j < y.size(); ++j)
    for (Eigen::Index k = j + 1; k < y.size(); ++k) pairs += y[j] != y[k];
  return kendall_passes(ranking_loss(m, y), pairs, n, z);
}

namespace {

// The candidates the cold initial design is drawn from (EngineOptions::cheap_design): those whose
// cost rate is at most the rate of rank floor(share x n) (ties included), or every candidate.
// `at_least` widens the share (its continuation's pool: kCheapContinuationShare).
std::vector<std::size_t> design_pool(const CandidateSet &cs, const EngineOptions &o,
                                     double at_least = 0) {
  const std::size_t n = cs.size();
  std::vector<std::size_t> pool(n);
  std::iota(pool.begin(), pool.end(), 0);
  if (!o.design_among_cheapest(cs.has_categorical()) || n == 0) return pool;
  const double share = std::max(o.effective_cheap_design(cs.has_categorical()), at_least);
  if (share >= 1) return pool;
  const std::vector<double> &rate = *o.rate;
  if (rate.size() != n)
    throw_invalid("propose: " + std::to_string(rate.size()) + " cost rates for " + std::to_string(n) +
                  " candidates");
  std::vector<double> sorted = rate;
  const std::size_t rank =
      std::min(n - 1, static_cast<std::size_t>(std::floor(share * static_cast<double>(n))));
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
  const double cut = sorted[rank];
  pool.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (rate[i] <= cut) pool.push_back(i);
  return pool;
}

}  // namespace

std::vector<std::size_t> initial_design(const CandidateSet &cs, std::size_t count,
                                        const EngineOptions &o) {
  count = std::min(count, cs.size());
  const Eigen::MatrixXd &X = cs.encoded();
  Rng rng(o.seed, kStreamDesign);
  // The maximin subset of size m among design_draws random subsets of the pool (every candidate,
  // or the cheapest ones: design_pool()).
  std::vector<std::size_t> perm = design_pool(cs, o);
  const std::size_t n = perm.size();
  const std::size_t m = std::min(o.effective_initial_trials(cs.has_categorical()), n);
  std::vector<std::size_t> best;
  double best_score = -1;
  for (std::size_t d = 0; d < std::max<std::size_t>(1, o.design_draws); ++d) {
    // A partial Fisher-Yates shuffle picks perm[0..m); undo its swaps afterwards so every draw
    // starts from the pool's order (O(m) per draw instead of O(n)).
    std::vector<std::pair<std::size_t, std::size_t>> swaps;
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t j = i + rng.below(n - i);
      std::swap(perm[i], perm[j]);
      swaps.emplace_back(i, j);
    }
    double min_d = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = i + 1; j < m; ++j) min_d = std::min(min_d, sq_dist(X, perm[i], perm[j]));
    if (min_d > best_score) {
      best_score = min_d;
      best.assign(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(m));
    }
    for (auto it = swaps.rbegin(); it != swaps.rend(); ++it)
      std::swap(perm[it->first], perm[it->second]);
  }
  std::vector<std::size_t> order = best;
  order.resize(std::min(order.size(), count));
  if (order.size() >= count) return order;
  // Greedy continuation: the candidate farthest from all chosen ones (ties: a seeded order),
  // within the cheaper half of the rates while any of it is left when the design is among the
  // cheapest (kCheapContinuationShare), then over every candidate.
  const std::size_t all = cs.size();
  const std::vector<std::size_t> tie = random_order(all, o.seed ^ 0x5bd1e995u);
  const std::vector<std::size_t> cont = design_pool(cs, o, kCheapContinuationShare);
  std::vector<char> in_pool(all, 0);
  for (auto i : cont) in_pool[i] = 1;
  std::vector<double> dmin(all, std::numeric_limits<double>::infinity());
  std::vector<bool> chosen(all, false);
  for (auto c : order) chosen[c] = true;
  for (std::size_t i = 0; i < all; ++i)
    for (auto c : order) dmin[i] = std::min(dmin[i], sq_dist(X, i, c));
  while (order.size() < count) {
    std::size_t pick = all;
    for (auto i : tie)
      if (!chosen[i] &&
          (pick == all || in_pool[i] > in_pool[pick] ||
           (in_pool[i] == in_pool[pick] && dmin[i] > dmin[pick] + 1e-12)))
        pick = i;
    chosen[pick] = true;
    order.push_back(pick);
    for (std::size_t i = 0; i < all; ++i) dmin[i] = std::min(dmin[i], sq_dist(X, i, pick));
  }
  return order;
}

DesignStep propose_without_model(const CandidateSet &cs, const std::vector<Observation> &done,
                                 const std::vector<std::size_t> &pending, std::size_t k,
                                 const EngineOptions &o) {
  DesignStep step;
  o.validate();
  const std::size_t n = cs.size();
  if (k < 1) throw_invalid("propose: k must be at least 1");
  const std::size_t initial = o.effective_initial_trials(cs.has_categorical());
  std::vector<char> &taken = step.taken, succeeded(n, 0);
  taken.assign(n, 0);
  Proposal &p = step.proposal;
  for (const auto &ob : done) {
    if (ob.index >= n)
      throw_invalid("observation of candidate " + std::to_string(ob.index) + ": only " +
                    std::to_string(n) + " candidates");
    if (!ob.failed && !(ob.score > 0 && std::isfinite(ob.score)))
      throw_invalid("observation of candidate " + std::to_string(ob.index) + ": score '" +
                    format_double(ob.score) + "' must be a positive number");
    taken[ob.index] = 1;
    if (!ob.failed) {
      succeeded[ob.index] = 1;
      if (!p.best_index || ob.score < p.best_score) {
        p.best_index = ob.index;
        p.best_score = ob.score;
      }
    }
  }
  for (auto i : pending) {
    if (i >= n)
      throw_invalid("pending candidate " + std::to_string(i) + ": only " + std::to_string(n) +
                    " candidates");
    if (taken[i] == 2) throw_invalid("pending candidate " + std::to_string(i) + " is listed twice");
    taken[i] = 2;
  }
  std::size_t untried = 0;
  for (std::size_t i = 0; i < n; ++i) untried += taken[i] == 0;

  p.stop = check_history_rules(done, pending.size(), untried, o.stop);
  if (p.stop.stopped()) return step;
  std::size_t &slots = step.slots;
  slots = std::min(k, untried);
  if (o.stop.budget > 0) {
    const std::size_t used = done.size() + pending.size();
    slots = std::min(slots, used >= o.stop.budget ? 0 : o.stop.budget - used);
  }
  auto take = [&](std::size_t i) {
    p.indices.push_back(i);
    taken[i] = 3;
  };

  if (o.strategy != Strategy::bo) {
    std::vector<std::size_t> order(n);
    if (o.strategy == Strategy::random)
      order = random_order(n, o.seed);
    else
      std::iota(order.begin(), order.end(), 0);
    for (auto i : order)
      if (p.indices.size() < slots && taken[i] == 0) take(i);
    return step;
  }

  // Initial design, and its continuation while the model has too little to learn from.
  const std::size_t distinct_ok =
      static_cast<std::size_t>(std::count(succeeded.begin(), succeeded.end(), 1));
  // A warm start: the history's models propose the first history_picks trials; the rest of the
  // initial design fills the space around them (the maximin subset with the taken trials), so
  // that the target's own model and the gate (history.hpp) see trials the history did not choose
  // -- except the trials the history earns (EngineOptions::history_confirm): while its combined
  // mean orders the finished trials better than chance, the design leaves the next trials to the
  // weighted ensemble (optimizer.cc).
  if (o.warm()) {
    if (o.history->candidates != n)
      throw_invalid("propose: the warm start was prepared for " +
                    std::to_string(o.history->candidates) + " candidates, not " + std::to_string(n));
    const std::size_t started = done.size() + pending.size();
    // The picks end at the first failed trial: a history whose best configurations break one of
    // the problem's limits picks no more of them (bench/README.md, "The history's picks end at
    // the first failure").
    std::size_t picks = o.effective_history_picks();
    if (started < picks &&
        std::any_of(done.begin(), done.end(), [](const Observation &d) { return d.failed; }))
      picks = started;
    const double confirm = o.effective_history_confirm();
    // EngineOptions::history_doubt: one more space-filling trial after the design (one of this
    // step's, when it proposes a batch), unless the history's combined mean passes the
    // confirmation test right then.  The test runs once for both uses.
    const std::size_t doubt = o.effective_history_doubt(), at = initial + doubt - 1;
    const bool doubt_step = doubt > 0 && started <= at && at < started + slots;
    const bool confirm_step =
        started >= picks && (started < initial || o.history_confirm_after);
    const bool passes = confirm >= 0 && (confirm_step || doubt_step) &&
                        history_confirmed(*o.history, done, confirm);
    step.history_confirmed = confirm_step && passes;
    const bool doubted = doubt_step && confirm >= 0 && !passes;
    const std::size_t design = started >= picks && started < initial &&
                                       !step.history_confirmed
                                   ? initial - started
                                   : 0;
    if (design + doubted > 0) {
      // The maximin subset, with the taken candidates, among design_draws random subsets of the
      // untried ones (as initial_design(), on the seed's own stream).
      const Eigen::MatrixXd &X = cs.encoded();
      std::vector<std::size_t> untried_list, taken_list;
      for (std::size_t i = 0; i < n; ++i) (taken[i] == 0 ? untried_list : taken_list).push_back(i);
      const std::size_t m = std::min({slots, design + doubted, untried_list.size()});
      Rng rng(o.seed, kStreamWarmDesign);
      std::vector<std::size_t> best;
      double best_score = -1;
      for (std::size_t d = 0; d < o.design_draws && m > 0; ++d) {
        for (std::size_t i = 0; i < m; ++i)
          std::swap(untried_list[i], untried_list[i + rng.below(untried_list.size() - i)]);
        double min_d = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < m; ++i) {
          for (std::size_t j = i + 1; j < m; ++j)
            min_d = std::min(min_d, sq_dist(X, untried_list[i], untried_list[j]));
          for (auto t : taken_list) min_d = std::min(min_d, sq_dist(X, untried_list[i], t));
        }
        if (min_d > best_score) {
          best_score = min_d;
          best.assign(untried_list.begin(), untried_list.begin() + static_cast<std::ptrdiff_t>(m));
        }
      }
      for (auto i : best) take(i);
    }
    // The model runs even when the design filled the slots: the weights are reported.
    step.needs_model = slots > 0;
    return step;
  }
  {
    const std::size_t started = done.size() + pending.size();
    // Every taken candidate may come first in the order, so this many suffice.
    const std::vector<std::size_t> design =
        initial_design(cs, distinct_ok < 2 ? started + slots : std::min(n, initial), o);
    for (auto i : design) {
      if (p.indices.size() >= slots) break;
      const bool in_initial = started + p.indices.size() < initial;
      if (!in_initial && distinct_ok >= 2) break;
      if (taken[i] == 0) take(i);
    }
    if (distinct_ok < 2) return step;
  }
  step.needs_model = true;
  return step;
}

Proposal propose_design(const CandidateSet &cs, const std::vector<Observation> &done,
                        const std::vector<std::size_t> &pending, std::size_t k,
                        const EngineOptions &o) {
  DesignStep step = propose_without_model(cs, done, pending, k, o);
  if (step.needs_model)
    throw Error(Errc::invalid_argument,
                "propose_design: two configurations succeeded, so the next proposal needs the model "
                "(engine/optimizer.hpp propose())");
  return std::move(step.proposal);
}


}  // namespace autotune
