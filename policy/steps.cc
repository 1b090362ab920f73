#include "autotune/steps.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <map>

#include "autotune/class_extra.hpp"
#include "autotune/conf.hpp"
#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

std::string Allocation::describe() const {
  std::string s = std::to_string(nodes) + (nodes == 1 ? " node x " : " nodes x ") +
                  std::to_string(cpus_per_node) + (cpus_per_node == 1 ? " CPU, " : " CPUs, ") +
                  std::to_string(mem_per_node_mb) + " MB";
  if (gpus_per_node > 0)
    s += ", " + std::to_string(gpus_per_node) + (gpus_per_node == 1 ? " GPU" : " GPUs");
  return s;
}

std::vector<int> parse_cpus_per_node(std::string_view field, std::string_view text) {
  const std::string f(field);
  std::vector<int> out;
  size_t pos = 0;
  if (text.empty()) throw_invalid(f + ": empty; expected CPU counts such as '2(x3),1'");
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    long long reps = 1;
    const size_t paren = item.find('(');
    std::string_view count = item;
    if (paren != std::string_view::npos) {
      if (item.size() < paren + 4 || item.substr(paren, 2) != "(x" || item.back() != ')')
        throw_invalid(f + ": '" + std::string(item) + "' is not COUNT or COUNT(xREPEATS)");
      reps = parse_int(f + " repeats", item.substr(paren + 2, item.size() - paren - 3), 1, 100000);
      count = item.substr(0, paren);
    }
    const int n = static_cast<int>(parse_int(f, count, 1, 1000000));
    if (out.size() + static_cast<size_t>(reps) > 100000)
      throw_invalid(f + ": more than 100000 nodes");
    out.insert(out.end(), static_cast<size_t>(reps), n);
  }
  return out;
}

bool fits(const Configuration &c, const Allocation &a) {
  const SlurmRequest r = slurm_request(c);
  return r.nodes <= a.nodes && r.cpus_per_node() <= a.cpus_per_node &&
         r.mem_per_node_mb() <= a.mem_per_node_mb &&
         r.gpus_per_task * r.max_tasks_per_node() <= a.gpus_per_node;
}

AllocationSearch::AllocationSearch(const ClassRecord &cls, std::vector<TrialRecord> history,
                                   const Allocation &a, ProposeFn propose)
    : alloc_(a), propose_(propose), local_(cls), trials_(std::move(history)) {
  if (a.nodes < 1 || a.cpus_per_node < 1 || a.mem_per_node_mb < 1 || a.gpus_per_node < 0)
    throw_invalid("allocation: " + a.describe() + " is not a usable allocation");
  ClassExtra x = class_extra(cls);
  NodeType node;
  node.name = "allocation";
  node.count = a.nodes;
  node.cpus = a.cpus_per_node;
  node.mem_mb = a.mem_per_node_mb;
  node.gpus = a.gpus_per_node;
  x.inventory.types = {node};
  local_.settings.extra = format_class_extra(x);
  // This search decides on its own; the class's own state and incumbent are the tuner's.
  local_.state = ClassState::tuning;
  local_.state_reason.clear();
  local_.stop_rule.clear();
  local_.best_trial.reset();
  try {
    problem_ = load_problem(local_);
  } catch (const Error &e) {
    if (e.code() != Errc::invalid_argument) throw;
    throw_invalid("no configuration of class " + cls.name +
                  "'s space fits this job's allocation (" + a.describe() + "): " + e.what());
  }
  double latest = static_cast<double>(std::time(nullptr));
  for (const TrialRecord &t : trials_) {
    next_id_ = std::max(next_id_, t.id + 1);
    next_seq_ = std::max(next_seq_, t.seq + 1);
    latest = std::max({latest, t.created, t.ended.value_or(0)});
    if (t.seq >= problem_.settings.epoch_start &&
        (t.status == TrialStatus::done || t.status == TrialStatus::failed ||
         t.status == TrialStatus::timeout) &&
        problem_.index_of(t.config))
      ++used_before_;
  }
  next_seq_ = std::max(next_seq_, 1);
  clock_ = latest + 1;
  refresh();
}

void AllocationSearch::refresh() { last_ = decide(local_, trials_, Conf::defaults(), propose_); }

std::vector<Configuration> AllocationSearch::candidates() const {
  std::vector<Configuration> out;
  out.reserve(problem_.candidates.size());
  for (const Candidate &c : problem_.candidates) out.push_back(c.config);
  return out;
}

bool AllocationSearch::is_candidate(const Configuration &c) const {
  return problem_.index_of(c.format()).has_value();
}

bool AllocationSearch::tried(const Configuration &c) const {
  const std::string s = c.format();
  for (const TrialRecord &t : trials_)
    if (t.config == s && t.seq >= problem_.settings.epoch_start &&
        (t.status == TrialStatus::done || t.status == TrialStatus::failed ||
         t.status == TrialStatus::timeout))
      return true;
  return false;
}

AllocationSearch::Next AllocationSearch::next() {
  Next n;
  if (last_.state != ClassState::tuning) {
    n.reason = last_.state_reason;
    n.stop_rule = last_.stop_rule.empty() ? "none" : last_.stop_rule;
    return n;
  }
  if (last_.queue.empty()) {
    n.reason =
        "every configuration that fits the allocation was tried or is being tried by another job";
    n.stop_rule = "exhausted";
    return n;
  }
  const Recommendation &r = last_.queue.front();
  n.config = Configuration::parse(r.config, "proposal");
  // The tuner labels each entry of the queue: the initial design's (or its continuation while
  // fewer than two configurations succeeded), or the model's.
  const bool initial = r.origin == TrialOrigin::initial;
  n.origin = initial ? TrialOrigin::initial : TrialOrigin::model;
  n.reason = initial ? "initial design (spread over the space)" : r.reason;
  if (!initial && r.predicted) {
    n.reason += " (predicted score " + format_double(std::round(*r.predicted * 1000) / 1000);
    if (r.stddev) n.reason += " +- " + format_double(std::round(*r.stddev * 1000) / 1000);
    n.reason += ")";
  }
  return n;
}

std::optional<double> AllocationSearch::record(const Configuration &c,
                                               std::optional<double> samples_per_s,
                                               bool timed_out) {
  TrialRecord t;
  t.id = next_id_++;
  t.class_id = local_.id;
  t.seq = next_seq_++;
  t.config = c.format();
  t.origin = TrialOrigin::model;
  t.created = clock_;
  t.started = clock_;
  t.ended = clock_;
  clock_ += 1;
  if (samples_per_s && *samples_per_s > 0) {
    t.status = TrialStatus::done;
    Measurement m;
    m.samples_per_s = *samples_per_s;
    t.measurement = m;
  } else {
    t.status = timed_out ? TrialStatus::timeout : TrialStatus::failed;
  }
  trials_.push_back(t);
  ++recorded_;
  refresh();
  for (const auto &[id, s] : last_.scores)
    if (id == t.id) return s;
  return std::nullopt;
}

std::vector<AllocationSearch::Best> AllocationSearch::ranked() const {
  std::map<std::int64_t, double> score_of(last_.scores.begin(), last_.scores.end());
  const std::int64_t first_here = next_id_ - static_cast<std::int64_t>(recorded_);
  struct Acc {
    double sum = 0;
    int n = 0;
    double sps = 0;
    bool here = false;
  };
  std::map<std::string, Acc> acc;
  for (const TrialRecord &t : trials_) {
    if (t.status != TrialStatus::done || !score_of.count(t.id) || t.seq < problem_.settings.epoch_start)
      continue;
    if (!problem_.index_of(t.config)) continue;
    Acc &a = acc[t.config];
    a.sum += score_of[t.id];
    a.n += 1;
    if (t.measurement) a.sps = std::max(a.sps, t.measurement->samples_per_s);
    a.here = a.here || t.id >= first_here;
  }
  std::vector<Best> out;
  for (const auto &[cfg, a] : acc)
    out.push_back(Best{Configuration::parse(cfg, "trial config"), a.sps, a.sum / a.n, a.here, a.n});
  std::stable_sort(out.begin(), out.end(), [](const Best &x, const Best &y) { return x.score < y.score; });
  return out;
}

std::optional<AllocationSearch::Best> AllocationSearch::best() const {
  std::vector<Best> r = ranked();
  if (r.empty()) return std::nullopt;
  return r.front();
}

}  // namespace autotune
