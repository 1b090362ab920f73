#include "autotune/replay.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>

#include "autotune/error.hpp"
#include "autotune/objective.hpp"

namespace autotune {
namespace {

bool to_number(const std::string &s, double *out) {
  if (s.empty()) return false;
  char *end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) ||
      std::isspace(static_cast<unsigned char>(s[0])))
    return false;
  *out = v;
  return true;
}

}  // namespace

DerivedFeature DerivedFeature::parse(std::string_view text, std::string_view field) {
  const std::string f(field);
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 >= text.size())
    throw_invalid(f + ": '" + std::string(text) + "' is not NAME=COLUMN*COLUMN or NAME=COLUMN/COLUMN");
  DerivedFeature d;
  d.name = std::string(text.substr(0, eq));
  std::string_view rest = text.substr(eq + 1);
  size_t pos = 0;
  bool divide = false;
  while (pos <= rest.size()) {
    size_t op = rest.find_first_of("*/", pos);
    if (op == std::string_view::npos) op = rest.size();
    if (op == pos)
      throw_invalid(f + ": '" + std::string(text) +
                    "' has an empty factor; allowed: NAME=COLUMN*COLUMN or NAME=COLUMN/COLUMN");
    d.factors.emplace_back(rest.substr(pos, op - pos));
    d.divide.push_back(divide ? 1 : 0);
    divide = op < rest.size() && rest[op] == '/';
    pos = op + 1;
  }
  return d;
}

namespace {

// ReplayProblem::rate.
std::vector<double> rates_of(const ReplayProblem &p) {
  const std::size_t n = p.ok.size();
  std::vector<double> log_rate(n, std::numeric_limits<double>::quiet_NaN());
  std::vector<Eigen::Index> known;
  for (std::size_t j = 0; j < n; ++j)
    if (std::isfinite(p.time[j]) && std::isfinite(p.cost[j]) && p.time[j] > 0 && p.cost[j] > 0) {
      log_rate[j] = std::log(p.cost[j] / p.time[j]);
      known.push_back(static_cast<Eigen::Index>(j));
    }
  if (known.size() < n) {
    // log rate ~ c0 + X c, over the rows that give it (a tiny ridge keeps it defined with fewer
    // rows than columns).
    const Eigen::MatrixXd &X = p.candidates.encoded();
    const Eigen::Index k = static_cast<Eigen::Index>(known.size()), d = X.cols();
    Eigen::MatrixXd A(k, d + 1);
    Eigen::VectorXd b(k);
    for (Eigen::Index r = 0; r < k; ++r) {
      const Eigen::Index j = known[static_cast<std::size_t>(r)];
      A(r, 0) = 1;
      A.row(r).tail(d) = X.row(j);
      b[r] = log_rate[static_cast<std::size_t>(j)];
    }
    Eigen::MatrixXd AtA = A.transpose() * A;
    AtA.diagonal().array() += 1e-6;
    const Eigen::VectorXd c = AtA.ldlt().solve(A.transpose() * b);
    for (std::size_t j = 0; j < n; ++j)
      if (!std::isfinite(log_rate[j]))
        log_rate[j] = c[0] + X.row(static_cast<Eigen::Index>(j)).dot(c.tail(d));
  }
  std::vector<double> rate(n);
  for (std::size_t j = 0; j < n; ++j) rate[j] = std::exp(log_rate[j]);
  return rate;
}

}  // namespace

std::vector<ReplayProblem> load_problems(const Table &t, const ReplaySpec &spec) {
  if (t.header().empty()) throw_invalid(t.name() + ": the table is empty (no header line)");
  const std::size_t tc = t.column(spec.time_column, "time column");
  const std::size_t cc = t.column(spec.cost_column, "cost column");
  const std::size_t oc = t.column(spec.ok_column, "ok column");
  const bool grouped = !spec.group.empty();
  const std::size_t gc = grouped ? t.column(spec.group, "--group") : 0;
  std::vector<std::size_t> fcols;
  if (spec.features.empty()) {
    for (std::size_t c = 0; c < t.header().size(); ++c)
      if (c != tc && c != cc && c != oc && (!grouped || c != gc)) fcols.push_back(c);
  } else {
    for (const auto &f : spec.features) {
      const std::size_t c = t.column(f, "--features");
      if (c == tc || c == cc || c == oc || (grouped && c == gc))
        throw_invalid("--features: '" + f +
                      "' is the group or a measurement column, not a feature");
      if (std::find(fcols.begin(), fcols.end(), c) != fcols.end())
        throw_invalid("--features: '" + f + "' is given twice");
      fcols.push_back(c);
    }
  }
  if (fcols.empty() && spec.derived.empty()) throw_invalid(t.name() + ": no feature columns");
  // Derived features: factors must be numeric columns other than the measurements.
  std::vector<std::vector<std::size_t>> dcols;
  for (const auto &d : spec.derived) {
    if (t.find(d.name))
      throw_invalid("--derive: '" + d.name + "' is already a column of " + t.name());
    for (const auto &e : spec.derived)
      if (&e < &d && e.name == d.name) throw_invalid("--derive: '" + d.name + "' is given twice");
    std::vector<std::size_t> cs;
    for (const auto &f : d.factors) {
      const std::size_t c = t.column(f, "--derive " + d.name);
      if (c == tc || c == cc || c == oc || (grouped && c == gc))
        throw_invalid("--derive " + d.name + ": '" + f + "' is the group or a measurement column");
      cs.push_back(c);
    }
    dcols.push_back(cs);
  }
  if (t.rows() == 0) throw_invalid(t.name() + ": the table has no data rows");

  // A feature column is numeric when every value (in every problem) is a number.
  std::vector<bool> numeric(fcols.size(), true);
  for (std::size_t r = 0; r < t.rows(); ++r)
    for (std::size_t f = 0; f < fcols.size(); ++f) {
      const std::string &v = t.cell(r, fcols[f]);
      if (v.empty())
        throw_invalid(t.where(r) + ": " + t.header()[fcols[f]] +
                      ": empty value; every feature needs one");
      double x;
      if (!to_number(v, &x)) numeric[f] = false;
    }

  for (std::size_t r = 0; r < t.rows(); ++r)
    for (std::size_t d = 0; d < dcols.size(); ++d)
      for (std::size_t k = 0; k < dcols[d].size(); ++k) {
        const std::size_t c = dcols[d][k];
        double x;
        if (!to_number(t.cell(r, c), &x))
          throw_invalid(t.where(r) + ": " + t.header()[c] + ": '" + t.cell(r, c) +
                        "' is not a number (a factor of --derive " + spec.derived[d].name + ")");
        if (x == 0 && k < spec.derived[d].divide.size() && spec.derived[d].divide[k])
          throw_invalid(t.where(r) + ": " + t.header()[c] + ": '" + t.cell(r, c) +
                        "' is 0, a divisor of --derive " + spec.derived[d].name +
                        "; allowed: a number other than 0");
      }

  std::vector<std::string> order;
  std::map<std::string, std::vector<std::size_t>> rows;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const std::string g = grouped ? t.cell(r, gc) : std::string("all");
    if (grouped && g.empty())
      throw_invalid(t.where(r) + ": " + spec.group + ": empty problem name");
    if (!rows.count(g)) order.push_back(g);
    rows[g].push_back(r);
  }

  std::vector<ReplayProblem> out;
  for (const auto &g : order) {
    ReplayProblem p;
    p.name = g;
    std::vector<FeatureColumn> cols(fcols.size() + dcols.size());
    bool any_ok = false;
    for (std::size_t f = 0; f < fcols.size(); ++f) {
      cols[f].name = t.header()[fcols[f]];
      cols[f].scale = numeric[f] ? Scale::automatic : Scale::categorical;
    }
    for (std::size_t d = 0; d < dcols.size(); ++d)
      cols[fcols.size() + d].name = spec.derived[d].name;
    for (auto r : rows[g]) {
      const std::string &okv = t.cell(r, oc);
      if (okv != "0" && okv != "1")
        throw_invalid(t.where(r) + ": " + spec.ok_column + ": '" + okv + "' is not 0 or 1");
      const bool ok = okv == "1";
      double time = std::numeric_limits<double>::quiet_NaN(), cost = time;
      for (auto [col, dst, label] :
           {std::tuple{tc, &time, &spec.time_column}, std::tuple{cc, &cost, &spec.cost_column}}) {
        const std::string &v = t.cell(r, col);
        if (v.empty() && !ok) continue;
        if (!to_number(v, dst))
          throw_invalid(t.where(r) + ": " + *label + ": '" + v + "' is not a number");
        if (ok && !(*dst > 0))
          throw_invalid(t.where(r) + ": " + *label + ": '" + v +
                        "' must be greater than 0 on a row with " + spec.ok_column + "=1");
      }
      for (std::size_t f = 0; f < fcols.size(); ++f) {
        const std::string &v = t.cell(r, fcols[f]);
        if (numeric[f])
          cols[f].numbers.push_back(std::strtod(v.c_str(), nullptr));
        else
          cols[f].labels.push_back(v);
      }
      for (std::size_t d = 0; d < dcols.size(); ++d) {
        double prod = 1;
        for (std::size_t k = 0; k < dcols[d].size(); ++k) {
          const double x = std::strtod(t.cell(r, dcols[d][k]).c_str(), nullptr);
          const auto &div = spec.derived[d].divide;
          prod = k < div.size() && div[k] ? prod / x : prod * x;
        }
        cols[fcols.size() + d].numbers.push_back(prod);
      }
      p.time.push_back(time);
      p.cost.push_back(cost);
      p.ok.push_back(ok ? 1 : 0);
      any_ok = any_ok || ok;
    }
    if (!any_ok)
      throw_invalid(t.name() + ": problem '" + g + "'" + (grouped ? " (" + spec.group + ")" : "") +
                    ": no row has " + spec.ok_column +
                    "=1, so there is no optimum to compare with");
    p.candidates = CandidateSet(std::move(cols));
    p.rate = rates_of(p);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<double> score_factors(const ReplayProblem &pr, const Reference &ref, double gamma) {
  std::vector<double> f(pr.rate.size());
  // The score of one second of a run at the candidate's rate.
  for (std::size_t j = 0; j < f.size(); ++j) f[j] = score(1.0, pr.rate[j], ref, gamma);
  return f;
}

HistoryProblem history_of(const ReplayProblem &pr, double gamma) {
  if (!(gamma >= 0 && gamma <= 1)) throw_invalid("gamma must be from 0 to 1");
  HistoryProblem h;
  h.name = pr.name;
  Reference ref;
  for (std::size_t i = 0; i < pr.ok.size(); ++i) {
    if (!pr.ok[i]) {
      h.done.push_back(Observation::failure(i));
      continue;
    }
    if (!ref.valid()) ref = make_reference(pr.time[i], pr.cost[i]);
    h.done.push_back(Observation::ok(i, score(pr.time[i], pr.cost[i], ref, gamma)));
    h.times.push_back(Observation::ok(i, pr.time[i]));
  }
  return h;
}

std::size_t ReplayRun::trials_to_within(double fraction) const {
  for (std::size_t i = 0; i < best_ratio.size(); ++i)
    if (best_ratio[i] <= 1.0 + fraction + 1e-12) return i + 1;
  return 0;
}

double ReplayRun::regret_after(std::size_t trials) const {
  if (best_ratio.empty()) return std::numeric_limits<double>::infinity();
  const std::size_t i = std::min(trials, best_ratio.size()) - 1;
  return best_ratio[i] - 1.0;
}

ReplayRun replay_once(const ReplayProblem &pr, double gamma, const EngineOptions &options,
                      std::size_t batch) {
  if (!(gamma >= 0 && gamma <= 1)) throw_invalid("gamma must be from 0 to 1");
  EngineOptions o = options;
  o.gamma = gamma;  // the objective the search is scored on (Explore::automatic reads it)
  // Each candidate's cost per second is known before it runs (EngineOptions::rate).
  if (!pr.rate.empty() && std::all_of(pr.rate.begin(), pr.rate.end(),
                                      [](double r) { return std::isfinite(r) && r > 0; }))
    o.rate = std::make_shared<const std::vector<double>>(pr.rate);
  ReplayRun run;
  run.seed = o.seed;
  std::vector<Observation> done;
  Reference ref;
  double best = std::numeric_limits<double>::infinity(), optimum = best;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    const Proposal p = propose(pr.candidates, done, {}, batch, o);
    run.step_seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (p.stop.stopped()) {
      run.stop = p.stop;
      break;
    }
    if (p.indices.empty()) throw Error(Errc::internal, "replay: no proposal and no stop");
    const std::size_t by_model = p.indices.size() - std::min(p.designed, p.indices.size());
    const std::string by = p.explored == 0          ? "model"
                           : p.explored == by_model ? "explore"
                                                    : "model+explore";
    for (std::size_t j = 0; j < p.indices.size(); ++j) {
      const std::size_t i = p.indices[j];
      run.tried.push_back(i);
      run.proposed_by.push_back(o.strategy != Strategy::bo ? std::string(strategy_name(o.strategy))
                                : j < p.designed       ? std::string("design")
                                : p.form_modelled      ? std::string("model (form)")
                           : p.time_modelled      ? by + " (time)"
                                                       : by);
      if (!pr.ok[i]) {
        done.push_back(Observation::failure(i));
      } else {
        if (!ref.valid()) {
          ref = make_reference(pr.time[i], pr.cost[i]);
          if (!pr.rate.empty()) {
            auto factor = std::make_shared<const std::vector<double>>(score_factors(pr, ref, gamma));
            if (o.history && o.effective_history_time_model()) o.history = time_scored(o.history, *factor);
            if (o.time_model != EngineOptions::TimeModel::no) o.score_factor = std::move(factor);
          }
          for (std::size_t j = 0; j < pr.ok.size(); ++j)
            if (pr.ok[j]) optimum = std::min(optimum, score(pr.time[j], pr.cost[j], ref, gamma));
        }
        const double s = score(pr.time[i], pr.cost[i], ref, gamma);
        done.push_back(Observation::ok(i, s));
        best = std::min(best, s);
      }
      run.best_ratio.push_back(std::isinf(best) ? best : best / optimum);
    }
  }
  return run;
}

}  // namespace autotune
