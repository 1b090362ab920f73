#include "autotune/class_extra.hpp"

#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotune/error.hpp"

// std::optional as JSON: null when empty (nlohmann 3.11 has no conversion of its own).  Only this
// file converts a ClassExtra; the nulls are left out of what it writes.
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json &j, const std::optional<T> &v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  static void from_json(const json &j, std::optional<T> &v) {
    if (j.is_null())
      v.reset();
    else
      v = j.get<T>();
  }
};
}  // namespace nlohmann

namespace autotune {

using nlohmann::json;

const EngineConf &engine_defaults() {
  static const EngineConf d;
  return d;
}

const TunerConf &tuner_defaults() {
  static const TunerConf d;
  return d;
}

StoppingOptions ClassExtra::stopping(int class_budget) const {
  StoppingOptions s;
  s.budget = epoch_budget.value_or(stop.budget.value_or(static_cast<std::size_t>(class_budget)));
  s.min_improvement = stop.min_improvement;
  s.round_trials = stop.round_trials;
  s.ei_fraction = stop.ei_fraction;
  s.min_trials = stop.min_trials;
  return s;
}

EngineOptions ClassExtra::engine_options(double gamma) const {
  EngineOptions o;
  o.seed = seed;
  o.initial_trials = initial_trials;
  o.xi = xi;
  o.batch = batch;
  o.input_warping = input_warping;
  o.linear_trend = linear_trend;
  o.gp.kernel = kernel;
  o.explore = explore;
  o.time_model = time_model;
  // TimeModel=no turns off the warm start's time bases too (at gamma 0 and 1 they order as the
  // scores do, so yes is the automatic choice).
  o.history_time_model = time_model == TimeModel::no ? TimeModel::no : TimeModel::automatic;
  // The run time's form (EngineOptions::run_time_columns: Slurm's candidates have nodes,
  // total-cpus and total-mem) models run times too; TimeModel=no turns it off.
  if (time_model == TimeModel::no) o.run_time_columns.reset();
  o.gamma = gamma;
  return o;
}

PartitionLimits ClassExtra::partition_limits() const {
  PartitionLimits p = limits.value_or(PartitionLimits{});
  p.accounting = accounting_limits.value_or(AccountingLimits{});
  return p;
}

void ClassExtra::set_partition_limits(const PartitionLimits &l) {
  limits.reset();
  accounting_limits.reset();
  if (l.any()) {
    limits = l;
    limits->accounting = {};
  }
  if (l.accounting.any()) accounting_limits = l.accounting;
}

// ---- JSON ------------------------------------------------------------------------------------
// The conversions are found by argument-dependent lookup, so they live in this namespace; no
// other file defines them.

void to_json(json &j, BatchMode b) { j = batch_mode_name(b); }
void from_json(const json &j, BatchMode &b) { b = parse_batch_mode("batch", j.get<std::string>()); }

// A node type as a class keeps it; what a key lacks reads as the fallbacks below (every class
// since node types were recorded has all of them).
void to_json(json &j, const NodeType &t) {
  j = {{"name", t.name},
       {"count", t.count},
       {"cpus", t.cpus},
       {"mem_mb", t.mem_mb},
       {"gpus", t.gpus},
       {"features", t.features},
       {"billing_weight", t.billing_weight}};
}
void from_json(const json &j, NodeType &t) {
  t.name = j.value("name", std::string("node"));
  t.count = j.value("count", 1);
  t.cpus = j.value("cpus", 1);
  t.mem_mb = j.value("mem_mb", std::uint64_t{1});
  t.gpus = j.value("gpus", 0);
  t.features = j.value("features", std::vector<std::string>{});
  t.billing_weight = j.value("billing_weight", 1.0);
}
void to_json(json &j, const Inventory &inv) { j = inv.types; }
void from_json(const json &j, Inventory &inv) { inv.types = j.get<std::vector<NodeType>>(); }

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AccountingLimits, max_nodes, max_cpus, max_mem_mb,
                                                max_gpus, max_cpus_per_node, max_mem_per_node_mb,
                                                max_gpus_per_node, min_nodes, min_cpus, min_mem_mb,
                                                text)
// The partition's limits only: accounting's are a key of their own.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PartitionLimits, min_nodes, max_nodes,
                                                max_cpus_per_node, max_mem_per_node_mb,
                                                max_mem_per_cpu_mb)
// GCC 12 reports the std::optional members of the macros' default objects as maybe
// uninitialized once ClassExtra holds a vector (a known false positive of -Wmaybe-uninitialized
// with std::optional, GCC bug 80635).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ClassStop, budget, min_improvement, round_trials,
                                                ei_fraction, min_trials)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HistoryUse, class_id, owner, shared, name, weight)
// Every key required: a failure_edge without one of them is damage.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EdgeUse, feature, below, value, failures)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ClassExtra, space, inventory, billing_weights, seed,
                                                xi, batch, stop, queue_depth,
                                                change_margin, drift_threshold, drift_confirm,
                                                retune_budget, epoch_start, epoch_budget, incumbent,
                                                limits, accounting_limits)
#pragma GCC diagnostic pop

namespace {

// `j` without its null members, at every depth: a null reads as a missing key (its default), and
// an unset optional is written as no key at all.
json without_nulls(json j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it->is_null()) {
        it = j.erase(it);
      } else {
        *it = without_nulls(std::move(*it));
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (json &e : j) e = without_nulls(std::move(e));
  }
  return j;
}

}  // namespace

ClassExtra class_extra(const ClassRecord &c) {
  try {
    const json j = without_nulls(json::parse(c.settings.extra));
    if (!j.is_object()) throw Error(Errc::corrupt, "not a JSON object");
    ClassExtra x = j.get<ClassExtra>();
    // The warm start's keys (read here rather than by the macro above, which has enough members).
    x.history_shared = j.value("history_shared", false);
    if (j.contains("history")) x.history = j.at("history").get<std::vector<HistoryUse>>();
    if (j.contains("own_weight")) x.own_weight = j.at("own_weight").get<double>();
    if (j.contains("history_failure_trust"))
      x.history_failure_trust = j.at("history_failure_trust").get<double>();
    if (j.contains("history_set_aside"))
      x.history_set_aside = j.at("history_set_aside").get<std::vector<HistoryUse>>();
    if (j.contains("history_coherence")) x.history_coherence = j.at("history_coherence").get<double>();
    x.history_top_failed = j.value("history_top_failed", false);
    // The initial design's size: a count, or "auto" (by the objective); a class created before
    // every class stored it read as 3.  Any other JSON value (2.5, true, [3]) is read as its text,
    // which the parser refuses.
    x.initial_trials = kInitialTrials;
    if (j.contains("initial_trials")) {
      const json &t = j.at("initial_trials");
      x.initial_trials =
          parse_initial_trials("initial_trials", t.is_string() ? t.get<std::string>() : t.dump());
    }
    // The model's keys; a class created before they were searched with input warping, no
    // linear term, ard and EI alone (class_extra.hpp).
    x.input_warping = j.value("input_warping", true);
    x.linear_trend = Trend::no;
    if (j.contains("linear_trend")) {
      const json &t = j.at("linear_trend");
      x.linear_trend = t.is_boolean() ? (t.get<bool>() ? Trend::yes : Trend::no)
                                      : parse_trend("linear_trend", t.get<std::string>());
    }
    x.kernel = GpKernel::ard;
    if (j.contains("kernel")) x.kernel = parse_kernel("kernel", j.at("kernel").get<std::string>());
    x.explore = Explore::none;
    if (j.contains("explore")) x.explore = parse_explore("explore", j.at("explore").get<std::string>());
    x.time_model = TimeModel::no;
    if (j.contains("time_model"))
      x.time_model = parse_time_model("time_model", j.at("time_model").get<std::string>());
    x.time_modelled = j.value("time_modelled", false);
    x.form_modelled = j.value("form_modelled", false);
    if (j.contains("failure_edge")) x.failure_edge = j.at("failure_edge").get<EdgeUse>();
    return x;
  } catch (const json::exception &e) {
    throw Error(Errc::corrupt, "class " + c.name + ": its settings are damaged (" + e.what() + ")");
  } catch (const Error &e) {  // not an object, an unknown batch mode or kernel
    throw Error(Errc::corrupt, "class " + c.name + ": its settings are damaged (" + e.what() + ")");
  }
}

std::string format_class_extra(const ClassExtra &x) {
  json j = json(x);
  if (x.history_shared) j["history_shared"] = true;
  if (!x.history.empty()) j["history"] = x.history;
  if (x.own_weight) j["own_weight"] = *x.own_weight;
  if (x.history_failure_trust) j["history_failure_trust"] = *x.history_failure_trust;
  if (!x.history_set_aside.empty()) j["history_set_aside"] = x.history_set_aside;
  if (x.history_coherence) j["history_coherence"] = *x.history_coherence;
  if (x.history_top_failed) j["history_top_failed"] = true;
  if (x.initial_trials) j["initial_trials"] = *x.initial_trials;
  else j["initial_trials"] = "auto";
  j["input_warping"] = x.input_warping;
  j["linear_trend"] = trend_name(x.linear_trend);
  j["kernel"] = kernel_name(x.kernel);
  j["explore"] = explore_name(x.explore);
  j["time_model"] = time_model_name(x.time_model);
  if (x.time_modelled) j["time_modelled"] = true;
  if (x.form_modelled) j["form_modelled"] = true;
  if (x.failure_edge) j["failure_edge"] = *x.failure_edge;
  return without_nulls(std::move(j)).dump();
}

}  // namespace autotune
