#include "autotune/export.hpp"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>

#include <nlohmann/json.hpp>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

namespace {

using nlohmann::json;

json opt_number(const std::optional<double> &x) { return x ? json(*x) : json(); }
json opt_whole(const std::optional<std::int64_t> &x) { return x ? json(*x) : json(); }

// ---- the parser: each field read through a Field, which names it in every message

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr std::int64_t kMaxId = std::numeric_limits<std::int64_t>::max();

// A JSON value shown in a message: strings quoted as the user wrote them, the rest as JSON,
// cut to 60 characters.
std::string shown(const json &v) {
  std::string s = v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

class Field {
 public:
  // `obj` must be an object; `path` is the field's full name ("trials[2].status").
  Field(const json &obj, const std::string &path, const char *key) : path_(path) {
    auto it = obj.find(key);
    if (it != obj.end()) v_ = &*it;
  }

  bool present() const { return v_ != nullptr; }
  bool null() const { return !v_ || v_->is_null(); }
  bool is_object() const { return v_ && v_->is_object(); }

  [[noreturn]] void refuse(const std::string &what, const std::string &allowed) const {
    if (!v_) throw_invalid("export: " + path_ + ": missing; allowed: " + allowed);
    throw_invalid("export: " + path_ + ": " + shown(*v_) + " " + what + "; allowed: " + allowed);
  }

  std::string text() const {
    if (!v_ || !v_->is_string()) refuse("is not a string", "a string");
    return v_->get<std::string>();
  }
  bool boolean() const {
    if (!v_ || !v_->is_boolean()) refuse("is not a boolean", "true or false");
    return v_->get<bool>();
  }
  double number(double lo = -std::numeric_limits<double>::max(),
                double hi = std::numeric_limits<double>::max()) const {
    const bool bounded =
        lo > -std::numeric_limits<double>::max() || hi < std::numeric_limits<double>::max();
    const std::string allowed =
        bounded ? "a number from " + format_double(lo) + " to " + format_double(hi) : "a number";
    if (!v_ || !v_->is_number()) refuse("is not a number", allowed);
    const double d = v_->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) refuse("is out of range", allowed);
    return d;
  }
  std::optional<double> opt_number() const {
    if (present() && null()) return std::nullopt;
    if (!v_ || !v_->is_number()) refuse("is not a number", "a number or null");
    return number();
  }
  std::int64_t whole(std::int64_t lo, std::int64_t hi) const {
    const std::string allowed =
        "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    if (!v_ || !v_->is_number_integer()) refuse("is not a whole number", allowed);
    if (v_->is_number_unsigned()) {
      const auto u = v_->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(hi)) refuse("is out of range", allowed);
      return static_cast<std::int64_t>(u);
    }
    const auto i = v_->get<std::int64_t>();
    if (i < lo || i > hi) refuse("is out of range", allowed);
    return i;
  }
  std::optional<std::int64_t> opt_whole(std::int64_t lo, std::int64_t hi) const {
    if (present() && null()) return std::nullopt;
    if (!v_ || !v_->is_number_integer())
      refuse("is not a whole number", "a whole number from " + std::to_string(lo) + " to " +
                                          std::to_string(hi) + " or null");
    return whole(lo, hi);
  }
  const json &object() const {
    if (!v_ || !v_->is_object()) refuse("is not an object", "a JSON object");
    return *v_;
  }
  const json &array(const std::string &of) const {
    if (!v_ || !v_->is_array()) refuse("is not an array", "an array of " + of);
    return *v_;
  }
  // One of `values` by its to_string() name; `noun` says what it is ("a trial status").
  template <typename Enum>
  Enum choice(const char *noun, std::initializer_list<Enum> values) const {
    std::string allowed;
    for (Enum e : values) allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(e));
    if (!v_ || !v_->is_string()) refuse(std::string("is not ") + noun, allowed);
    const std::string s = v_->get<std::string>();
    for (Enum e : values)
      if (s == to_string(e)) return e;
    refuse(std::string("is not ") + noun, allowed);
  }

 private:
  const json *v_ = nullptr;
  std::string path_;
};

// The object at `key` of `obj` (for nested objects: "settings", "trials[2].measurement").
const json &object_at(const json &obj, const std::string &path, const char *key) {
  return Field(obj, path, key).object();
}

const std::initializer_list<ClassState> kStates = {ClassState::tuning, ClassState::converged,
                                                   ClassState::stale};
const std::initializer_list<TrialStatus> kStatuses = {TrialStatus::pending, TrialStatus::running,
                                                      TrialStatus::done,    TrialStatus::failed,
                                                      TrialStatus::timeout, TrialStatus::cancelled};
const std::initializer_list<TrialOrigin> kOrigins = {TrialOrigin::initial, TrialOrigin::model,
                                                     TrialOrigin::best, TrialOrigin::adjust,
                                                     TrialOrigin::manual};

TrialRecord parse_trial(const json &t, const std::string &path) {
  if (!t.is_object())
    throw_invalid("export: " + path + ": " + shown(t) +
                  " is not an object; allowed: a trial (a JSON object)");
  const std::string p = path + ".";
  auto f = [&](const char *key) { return Field(t, p + key, key); };
  TrialRecord r;
  r.seq = static_cast<int>(f("trial").whole(0, kMaxInt));
  r.id = f("id").whole(0, kMaxId);
  r.config = f("config").text();
  r.status = f("status").choice("a trial status", kStatuses);
  r.origin = f("origin").choice("a trial origin", kOrigins);
  r.reason = f("reason").text();
  r.job_id = f("job_id").opt_whole(0, kMaxId);
  r.step_id = f("step_id").opt_whole(0, kMaxId);
  r.created = f("created").number();
  r.started = f("started").opt_number();
  r.ended = f("ended").opt_number();
  if (!f("measurement").null()) {
    const json &m = object_at(t, p + "measurement", "measurement");
    const std::string mp = p + "measurement.";
    auto g = [&](const char *key) { return Field(m, mp + key, key); };
    Measurement x;
    x.samples_per_s = g("samples_per_s").number();
    x.time_s = g("time_s").number();
    x.cost = g("cost").number();
    x.score = g("score").opt_number();
    x.worker_cpu = g("worker_cpu").opt_number();
    x.worker_mem_mb = g("worker_mem_mb").opt_number();
    x.server_cpu = g("server_cpu").opt_number();
    x.server_mem_mb = g("server_mem_mb").opt_number();
    x.nodes = g("nodes").text();
    r.measurement = std::move(x);
  }
  return r;
}

}  // namespace

nlohmann::json trial_to_json(const TrialRecord &t) {
  json j = {{"trial", t.seq},
            {"id", t.id},
            {"config", t.config},
            {"status", to_string(t.status)},
            {"origin", to_string(t.origin)},
            {"reason", t.reason},
            {"job_id", opt_whole(t.job_id)},
            {"step_id", opt_whole(t.step_id)},
            {"created", t.created},
            {"started", opt_number(t.started)},
            {"ended", opt_number(t.ended)}};
  if (t.measurement) {
    const Measurement &m = *t.measurement;
    j["measurement"] = {{"samples_per_s", m.samples_per_s},
                        {"time_s", m.time_s},
                        {"cost", m.cost},
                        {"score", opt_number(m.score)},
                        {"worker_cpu", opt_number(m.worker_cpu)},
                        {"worker_mem_mb", opt_number(m.worker_mem_mb)},
                        {"server_cpu", opt_number(m.server_cpu)},
                        {"server_mem_mb", opt_number(m.server_mem_mb)},
                        {"nodes", m.nodes}};
  }
  return j;
}

nlohmann::json class_to_json(const ClassExport &e, bool full) {
  const ClassRecord &c = e.cls;
  json j = {{"class", c.name},
            {"owner", e.owner_name},
            {"owner_uid", c.owner},
            {"shared", c.shared},
            {"state", to_string(c.state)},
            {"state_reason", c.state_reason},
            {"stop_rule", c.stop_rule},
            {"trials_used", e.trials_used},
            {"settings",
             {{"space", c.settings.space},
              {"gamma", c.settings.gamma},
              {"budget", c.settings.budget},
              {"mode", to_string(c.settings.mode)},
              {"probe_batches", c.settings.probe_batches},
              {"metric", to_string(c.settings.metric)}}},
            {"t_ref", opt_number(c.t_ref)},
            {"c_ref", opt_number(c.c_ref)}};
  if (c.shared) j["allow_users"] = c.allow_users;
  j["best"] = e.best ? trial_to_json(*e.best) : json();
  if (full) {
    // What the class is searched with (space, node types, billing weights, engine options):
    // autotune-run rebuilds the class's problem from it (tuner.hpp load_problem).
    try {
      j["settings"]["extra"] = json::parse(c.settings.extra);
    } catch (const std::exception &) {
      j["settings"]["extra"] = nullptr;
    }
    j["best_trial_id"] = opt_whole(c.best_trial);
    j["trials"] = json::array();
    for (const auto &t : e.trials) j["trials"].push_back(trial_to_json(t));
    j["queue"] = json::array();
    for (const auto &r : e.queue)
      j["queue"].push_back({{"config", r.config},
                            {"origin", to_string(r.origin)},
                            {"reason", r.reason},
                            {"predicted", opt_number(r.predicted)},
                            {"stddev", opt_number(r.stddev)}});
  }
  return j;
}

std::string export_json(const ClassExport &e) { return class_to_json(e, true).dump(2); }

ClassExport parse_export(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const std::exception &e) {
    throw Error(Errc::corrupt, std::string("export: not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object())
    throw_invalid("export: " + shown(j) + " is not an object; allowed: a class (a JSON object)");
  auto f = [&](const char *key) { return Field(j, key, key); };
  ClassExport e;
  ClassRecord &c = e.cls;
  c.name = f("class").text();
  e.owner_name = f("owner").text();
  c.owner = static_cast<std::uint32_t>(
      f("owner_uid").whole(0, std::numeric_limits<std::uint32_t>::max()));
  c.shared = f("shared").boolean();
  if (f("allow_users").present()) c.allow_users = f("allow_users").boolean();
  c.state = f("state").choice("a class state", kStates);
  c.state_reason = f("state_reason").text();
  c.stop_rule = f("stop_rule").text();
  e.trials_used = static_cast<int>(f("trials_used").whole(0, kMaxInt));
  c.t_ref = f("t_ref").opt_number();
  c.c_ref = f("c_ref").opt_number();
  c.best_trial = f("best_trial_id").opt_whole(0, kMaxId);

  const json &s = object_at(j, "settings", "settings");
  auto g = [&](const char *key) { return Field(s, std::string("settings.") + key, key); };
  c.settings.space = g("space").text();
  c.settings.gamma = g("gamma").number(0, 1);
  c.settings.budget = static_cast<int>(g("budget").whole(0, kMaxInt));
  c.settings.mode = g("mode").choice("a mode", {ClassMode::jobs, ClassMode::steps});
  c.settings.probe_batches = static_cast<int>(g("probe_batches").whole(0, kMaxInt));
  if (!g("metric").null())  // absent from the export of an older `autotune`
    c.settings.metric =
        g("metric").choice("a metric", {ClassMetric::automatic, ClassMetric::time, ClassMetric::throughput});
  const Field extra = g("extra");
  if (!extra.is_object())
    extra.refuse("is not an object (an unreadable class, or the export of an older `autotune`)",
                 "a JSON object: the class's engine options");
  c.settings.extra = s.at("extra").dump();

  if (!f("best").null()) e.best = parse_trial(j.at("best"), "best");
  const json &trials = f("trials").array("trials");
  for (std::size_t i = 0; i < trials.size(); ++i)
    e.trials.push_back(parse_trial(trials[i], "trials[" + std::to_string(i) + "]"));
  const json &queue = f("queue").array("recommendations");
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const std::string p = "queue[" + std::to_string(i) + "]";
    if (!queue[i].is_object())
      throw_invalid("export: " + p + ": " + shown(queue[i]) +
                    " is not an object; allowed: a recommendation (a JSON object)");
    auto q = [&](const char *key) { return Field(queue[i], p + "." + key, key); };
    Recommendation r;
    r.config = q("config").text();
    r.origin = q("origin").choice("a trial origin", kOrigins);
    r.reason = q("reason").text();
    r.predicted = q("predicted").opt_number();
    r.stddev = q("stddev").opt_number();
    e.queue.push_back(std::move(r));
  }
  return e;
}

}  // namespace autotune
