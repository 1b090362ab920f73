// The export of a class (`autotune export`, read back by autotune-run's steps mode): what the
// writer writes the parser reads back unchanged, and each bad input is refused with a message
// naming the field and what is allowed.
#include "autotune/export.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotune/error.hpp"

using namespace autotune;
using nlohmann::json;

namespace {

TrialRecord trial(int seq, std::int64_t id, TrialStatus status, bool measured) {
  TrialRecord t;
  t.seq = seq;
  t.id = id;
  t.config =
      "nodes=" + std::to_string(seq) + ",workers=2,ps=1,cpus-per-worker=1,mem-per-worker=256M";
  t.status = status;
  t.origin = seq == 1 ? TrialOrigin::initial : TrialOrigin::model;
  t.reason = seq == 1 ? "seed \"quoted\" caf\xc3\xa9" : "";
  t.created = 1.7e9 + seq + 0.123456789;
  if (status != TrialStatus::pending) {
    t.job_id = 1000 + seq;
    t.started = t.created + 1;
  }
  if (seq == 2) t.step_id = 3;
  if (is_final(status)) t.ended = t.created + 20.5;
  if (measured) {
    Measurement m;
    m.samples_per_s = 1234.5678 * seq;
    m.time_s = 1.0 / 3;
    m.cost = 17.25;
    m.score = seq == 3 ? std::nullopt : std::optional<double>(0.987654321 / seq);
    if (seq == 1) {
      m.worker_cpu = 0.95;
      m.worker_mem_mb = 180.5;
      m.server_cpu = 0.25;
      m.server_mem_mb = 99;
    }
    m.nodes = "n[1-" + std::to_string(seq) + "]";
    t.measurement = m;
  }
  return t;
}

// A class with one of everything the export holds.
ClassExport sample() {
  ClassExport e;
  ClassRecord &c = e.cls;
  c.owner = 4294967294u;
  c.name = "mnist-large";
  c.shared = true;
  c.allow_users = true;
  c.settings.space = "workers=1-8,ps=1-2";
  c.settings.gamma = 0.3;
  c.settings.budget = 12;
  c.settings.mode = ClassMode::steps;
  c.settings.probe_batches = 7;
  c.settings.metric = ClassMetric::time;
  // Compact, keys sorted: the form a parsed object is dumped back in.
  c.settings.extra =
      R"({"billing":"CPU=1.0,Mem=0.25G","engine":{"seed":3,"xi":0.01},"nodes":["a","b"]})";
  c.state = ClassState::converged;
  c.state_reason = "stopped by the budget of 12 trials";
  c.stop_rule = "budget";
  c.best_trial = 41;
  c.t_ref = 0.5;
  c.c_ref = std::nullopt;
  e.owner_name = "alice";
  e.trials_used = 3;
  e.trials = {trial(1, 40, TrialStatus::done, true), trial(2, 41, TrialStatus::done, true),
              trial(3, 42, TrialStatus::timeout, true), trial(4, 43, TrialStatus::failed, false),
              trial(5, 44, TrialStatus::pending, false)};
  e.best = e.trials[1];
  e.queue = {{"nodes=1,workers=5", TrialOrigin::model, "ei 0.3", 0.75, 0.125},
             {"nodes=2,workers=1", TrialOrigin::manual, "", std::nullopt, std::nullopt}};
  return e;
}

void expect_same(const Measurement &a, const Measurement &b, const std::string &where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(a.samples_per_s, b.samples_per_s);
  EXPECT_EQ(a.time_s, b.time_s);
  EXPECT_EQ(a.cost, b.cost);
  EXPECT_EQ(a.score, b.score);
  EXPECT_EQ(a.worker_cpu, b.worker_cpu);
  EXPECT_EQ(a.worker_mem_mb, b.worker_mem_mb);
  EXPECT_EQ(a.server_cpu, b.server_cpu);
  EXPECT_EQ(a.server_mem_mb, b.server_mem_mb);
  EXPECT_EQ(a.nodes, b.nodes);
}

void expect_same(const TrialRecord &a, const TrialRecord &b, const std::string &where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.step_id, b.step_id);
  EXPECT_EQ(a.created, b.created);
  EXPECT_EQ(a.started, b.started);
  EXPECT_EQ(a.ended, b.ended);
  ASSERT_EQ(a.measurement.has_value(), b.measurement.has_value());
  if (a.measurement) expect_same(*a.measurement, *b.measurement, where + ".measurement");
}

void expect_same(const ClassExport &a, const ClassExport &b) {
  EXPECT_EQ(a.cls.owner, b.cls.owner);
  EXPECT_EQ(a.cls.name, b.cls.name);
  EXPECT_EQ(a.cls.shared, b.cls.shared);
  EXPECT_EQ(a.cls.allow_users, b.cls.allow_users);
  EXPECT_EQ(a.cls.settings.space, b.cls.settings.space);
  EXPECT_EQ(a.cls.settings.gamma, b.cls.settings.gamma);
  EXPECT_EQ(a.cls.settings.budget, b.cls.settings.budget);
  EXPECT_EQ(a.cls.settings.mode, b.cls.settings.mode);
  EXPECT_EQ(a.cls.settings.probe_batches, b.cls.settings.probe_batches);
  EXPECT_EQ(a.cls.settings.metric, b.cls.settings.metric);
  EXPECT_EQ(a.cls.settings.extra, b.cls.settings.extra);
  EXPECT_EQ(a.cls.state, b.cls.state);
  EXPECT_EQ(a.cls.state_reason, b.cls.state_reason);
  EXPECT_EQ(a.cls.stop_rule, b.cls.stop_rule);
  EXPECT_EQ(a.cls.best_trial, b.cls.best_trial);
  EXPECT_EQ(a.cls.t_ref, b.cls.t_ref);
  EXPECT_EQ(a.cls.c_ref, b.cls.c_ref);
  EXPECT_EQ(a.owner_name, b.owner_name);
  EXPECT_EQ(a.trials_used, b.trials_used);
  ASSERT_EQ(a.best.has_value(), b.best.has_value());
  if (a.best) expect_same(*a.best, *b.best, "best");
  ASSERT_EQ(a.trials.size(), b.trials.size());
  for (size_t i = 0; i < a.trials.size(); ++i)
    expect_same(a.trials[i], b.trials[i], "trials[" + std::to_string(i) + "]");
  ASSERT_EQ(a.queue.size(), b.queue.size());
  for (size_t i = 0; i < a.queue.size(); ++i) {
    SCOPED_TRACE("queue[" + std::to_string(i) + "]");
    EXPECT_EQ(a.queue[i].config, b.queue[i].config);
    EXPECT_EQ(a.queue[i].origin, b.queue[i].origin);
    EXPECT_EQ(a.queue[i].reason, b.queue[i].reason);
    EXPECT_EQ(a.queue[i].predicted, b.queue[i].predicted);
    EXPECT_EQ(a.queue[i].stddev, b.queue[i].stddev);
  }
}

// The message parse_export refuses `doc` with ("" when it accepts it).
std::string refusal(const std::string &doc, Errc *code = nullptr) {
  try {
    parse_export(doc);
  } catch (const Error &e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Export, WriteThenParseGivesTheSameClass) {
  const ClassExport e = sample();
  const std::string text = export_json(e);
  const ClassExport back = parse_export(text);
  expect_same(e, back);
  EXPECT_EQ(export_json(back), text);
}

TEST(Export, RoundTripsAnEmptyClassAndAnUnsharedOne) {
  ClassExport e;
  e.cls.name = "empty";
  e.owner_name = "0";
  e.cls.settings.extra = "{}";
  const ClassExport back = parse_export(export_json(e));
  expect_same(e, back);
  EXPECT_EQ(json::parse(export_json(e)).count("allow_users"), 0u)
      << "allow_users is for shared classes only";

  ClassExport f = sample();
  f.cls.shared = false;
  f.cls.allow_users = false;
  f.best.reset();
  f.cls.best_trial.reset();
  f.cls.state = ClassState::stale;
  expect_same(f, parse_export(export_json(f)));
}

// What `autotune export` prints, pinned: keys sorted, two-space indent, nulls for what is unknown.
TEST(Export, WritesTheDocumentAutotuneExportPrints) {
  ClassExport e;
  e.cls.owner = 1000;
  e.cls.name = "c";
  e.cls.settings.space = "workers=1-2";
  e.cls.settings.extra = R"({"x": 1})";
  e.owner_name = "alice";
  e.trials_used = 1;
  TrialRecord t;
  t.seq = 1;
  t.id = 7;
  t.config = "nodes=1";
  t.status = TrialStatus::done;
  t.reason = "r";
  t.job_id = 99;
  t.created = 1700000000.5;
  t.ended = 1700000010;
  Measurement m;
  m.samples_per_s = 10;
  m.time_s = 0.5;
  m.cost = 2;
  m.score = 1;
  m.nodes = "n1";
  t.measurement = m;
  e.trials = {t};
  e.best = t;
  e.queue = {{"nodes=2", TrialOrigin::model, "ei", 0.5, std::nullopt}};
  const std::string trial_text =
      "{\n"
      "    \"config\": \"nodes=1\",\n"
      "    \"created\": 1700000000.5,\n"
      "    \"ended\": 1700000010.0,\n"
      "    \"id\": 7,\n"
      "    \"job_id\": 99,\n"
      "    \"measurement\": {\n"
      "      \"cost\": 2.0,\n"
      "      \"nodes\": \"n1\",\n"
      "      \"samples_per_s\": 10.0,\n"
      "      \"score\": 1.0,\n"
      "      \"server_cpu\": null,\n"
      "      \"server_mem_mb\": null,\n"
      "      \"time_s\": 0.5,\n"
      "      \"worker_cpu\": null,\n"
      "      \"worker_mem_mb\": null\n"
      "    },\n"
      "    \"origin\": \"initial\",\n"
      "    \"reason\": \"r\",\n"
      "    \"started\": null,\n"
      "    \"status\": \"done\",\n"
      "    \"step_id\": null,\n"
      "    \"trial\": 1\n"
      "  }";
  std::string in_list = trial_text;  // the same trial, one level deeper
  for (size_t p = 0; (p = in_list.find('\n', p)) != std::string::npos; p += 3)
    in_list.insert(p + 1, "  ");
  EXPECT_EQ(export_json(e),
            "{\n"
            "  \"best\": " +
                trial_text +
                ",\n"
                "  \"best_trial_id\": null,\n"
                "  \"c_ref\": null,\n"
                "  \"class\": \"c\",\n"
                "  \"owner\": \"alice\",\n"
                "  \"owner_uid\": 1000,\n"
                "  \"queue\": [\n"
                "    {\n"
                "      \"config\": \"nodes=2\",\n"
                "      \"origin\": \"model\",\n"
                "      \"predicted\": 0.5,\n"
                "      \"reason\": \"ei\",\n"
                "      \"stddev\": null\n"
                "    }\n"
                "  ],\n"
                "  \"settings\": {\n"
                "    \"budget\": 10,\n"
                "    \"extra\": {\n"
                "      \"x\": 1\n"
                "    },\n"
                "    \"gamma\": 0.5,\n"
                "    \"metric\": \"auto\",\n"
                "    \"mode\": \"jobs\",\n"
                "    \"probe_batches\": 20,\n"
                "    \"space\": \"workers=1-2\"\n"
                "  },\n"
                "  \"shared\": false,\n"
                "  \"state\": \"tuning\",\n"
                "  \"state_reason\": \"\",\n"
                "  \"stop_rule\": \"\",\n"
                "  \"t_ref\": null,\n"
                "  \"trials\": [\n"
                "    " +
                in_list +
                "\n"
                "  ],\n"
                "  \"trials_used\": 1\n"
                "}");
  // The short form (`autotune status --json`): no extra, best_trial_id, trials or queue.
  const json brief = class_to_json(e, false);
  for (const char *k : {"best_trial_id", "trials", "queue"}) EXPECT_EQ(brief.count(k), 0u) << k;
  EXPECT_EQ(brief["settings"].count("extra"), 0u);
  // A class whose extra is not JSON is exported with null there.
  e.cls.settings.extra = "not json";
  EXPECT_TRUE(json::parse(export_json(e))["settings"]["extra"].is_null());
}

TEST(Export, RefusesEachBadInputNamingTheField) {
  const json good = json::parse(export_json(sample()));
  const std::string whole_id = "allowed: a whole number from 0 to 9223372036854775807";
  struct Case {
    std::function<void(json &)> change;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](json &j) { j.erase("class"); }, "export: class: missing; allowed: a string"},
      {[](json &j) { j["class"] = 3; }, "export: class: 3 is not a string; allowed: a string"},
      {[](json &j) { j.erase("owner"); }, "export: owner: missing; allowed: a string"},
      {[](json &j) { j["owner_uid"] = -1; },
       "export: owner_uid: -1 is out of range; allowed: a whole number from 0 to 4294967295"},
      {[](json &j) { j["owner_uid"] = 4294967296ull; },
       "export: owner_uid: 4294967296 is out of range; allowed: a whole number from 0 to "
       "4294967295"},
      {[](json &j) { j["owner_uid"] = "1000"; },
       "export: owner_uid: '1000' is not a whole number; allowed: a whole number from 0 to "
       "4294967295"},
      {[](json &j) { j["shared"] = 1; },
       "export: shared: 1 is not a boolean; allowed: true or false"},
      {[](json &j) { j["allow_users"] = "yes"; },
       "export: allow_users: 'yes' is not a boolean; allowed: true or false"},
      {[](json &j) { j["state"] = "done"; },
       "export: state: 'done' is not a class state; allowed: tuning, converged, stale"},
      {[](json &j) { j.erase("state_reason"); },
       "export: state_reason: missing; allowed: a string"},
      {[](json &j) { j["stop_rule"] = nullptr; },
       "export: stop_rule: null is not a string; allowed: a string"},
      {[](json &j) { j["trials_used"] = 2.5; },
       "export: trials_used: 2.5 is not a whole number; allowed: a whole number from 0 to "
       "2147483647"},
      {[](json &j) { j["t_ref"] = "x"; },
       "export: t_ref: 'x' is not a number; allowed: a number or null"},
      {[](json &j) { j.erase("c_ref"); }, "export: c_ref: missing; allowed: a number or null"},
      {[](json &j) { j["best_trial_id"] = -4; },
       "export: best_trial_id: -4 is out of range; " + whole_id},
      {[](json &j) { j.erase("settings"); }, "export: settings: missing; allowed: a JSON object"},
      {[](json &j) { j["settings"] = "{}"; },
       "export: settings: '{}' is not an object; allowed: a JSON object"},
      {[](json &j) { j["settings"]["gamma"] = 1.5; },
       "export: settings.gamma: 1.5 is out of range; allowed: a number from 0 to 1"},
      {[](json &j) { j["settings"]["budget"] = "10"; },
       "export: settings.budget: '10' is not a whole number; allowed: a whole number from 0 to "
       "2147483647"},
      {[](json &j) { j["settings"]["mode"] = "batch"; },
       "export: settings.mode: 'batch' is not a mode; allowed: jobs, steps"},
      {[](json &j) { j["settings"]["metric"] = "speed"; },
       "export: settings.metric: 'speed' is not a metric; allowed: auto, time, throughput"},
      {[](json &j) { j["settings"].erase("probe_batches"); },
       "export: settings.probe_batches: missing; allowed: a whole number from 0 to 2147483647"},
      {[](json &j) { j["settings"]["space"] = json::array(); },
       "export: settings.space: [] is not a string; allowed: a string"},
      {[](json &j) { j["settings"]["extra"] = nullptr; },
       "export: settings.extra: null is not an object (an unreadable class, or the export of an "
       "older "
       "`autotune`); allowed: a JSON object: the class's engine options"},
      {[](json &j) { j["settings"].erase("extra"); },
       "export: settings.extra: missing; allowed: a JSON object: the class's engine options"},
      {[](json &j) { j["best"] = 41; },
       "export: best: 41 is not an object; allowed: a trial (a JSON object)"},
      {[](json &j) { j["best"]["job_id"] = 1.5; },
       "export: best.job_id: 1.5 is not a whole number; " + whole_id + " or null"},
      {[](json &j) { j.erase("trials"); }, "export: trials: missing; allowed: an array of trials"},
      {[](json &j) { j["trials"] = json::object(); },
       "export: trials: {} is not an array; allowed: an array of trials"},
      {[](json &j) { j["trials"][0] = 3; },
       "export: trials[0]: 3 is not an object; allowed: a trial (a JSON object)"},
      {[](json &j) { j["trials"][1]["status"] = "runing"; },
       "export: trials[1].status: 'runing' is not a trial status; allowed: pending, running, done, "
       "failed, timeout, "
       "cancelled"},
      {[](json &j) { j["trials"][2]["origin"] = 2; },
       "export: trials[2].origin: 2 is not a trial origin; allowed: initial, model, best, adjust, "
       "manual"},
      {[](json &j) { j["trials"][0].erase("reason"); },
       "export: trials[0].reason: missing; allowed: a string"},
      {[](json &j) { j["trials"][0]["trial"] = -1; },
       "export: trials[0].trial: -1 is out of range; allowed: a whole number from 0 to 2147483647"},
      {[](json &j) { j["trials"][3].erase("id"); }, "export: trials[3].id: missing; " + whole_id},
      {[](json &j) { j["trials"][4]["created"] = "today"; },
       "export: trials[4].created: 'today' is not a number; allowed: a number"},
      {[](json &j) { j["trials"][1]["step_id"] = true; },
       "export: trials[1].step_id: true is not a whole number; " + whole_id + " or null"},
      {[](json &j) { j["trials"][0]["measurement"] = json::array({1}); },
       "export: trials[0].measurement: [1] is not an object; allowed: a JSON object"},
      {[](json &j) { j["trials"][0]["measurement"]["samples_per_s"] = "fast"; },
       "export: trials[0].measurement.samples_per_s: 'fast' is not a number; allowed: a number"},
      {[](json &j) { j["trials"][0]["measurement"].erase("nodes"); },
       "export: trials[0].measurement.nodes: missing; allowed: a string"},
      {[](json &j) { j["trials"][1]["measurement"]["score"] = "low"; },
       "export: trials[1].measurement.score: 'low' is not a number; allowed: a number or null"},
      {[](json &j) { j["queue"] = nullptr; },
       "export: queue: null is not an array; allowed: an array of recommendations"},
      {[](json &j) { j["queue"][1] = "nodes=1"; },
       "export: queue[1]: 'nodes=1' is not an object; allowed: a recommendation (a JSON object)"},
      {[](json &j) { j["queue"][0]["origin"] = "guess"; },
       "export: queue[0].origin: 'guess' is not a trial origin; allowed: initial, model, best, "
       "adjust, manual"},
      {[](json &j) { j["queue"][0].erase("stddev"); },
       "export: queue[0].stddev: missing; allowed: a number or null"},
  };
  for (const Case &c : cases) {
    json j = good;
    c.change(j);
    Errc code{};
    const std::string got = refusal(j.dump(), &code);
    EXPECT_EQ(got, c.message) << j.dump().substr(0, 200);
    EXPECT_EQ(code, Errc::invalid_argument) << c.message;
  }
}

TEST(Export, RefusesWhatIsNotAnExport) {
  Errc code{};
  const std::string not_json = refusal("{\"class\": ", &code);
  EXPECT_EQ(not_json.rfind("export: not valid JSON (", 0), 0u) << not_json;
  EXPECT_EQ(code, Errc::corrupt);
  EXPECT_EQ(refusal("[]"), "export: [] is not an object; allowed: a class (a JSON object)");
  EXPECT_EQ(refusal("").rfind("export: not valid JSON (", 0), 0u);
  // The short form `autotune status --json` prints is not an export.
  ClassExport e = sample();
  EXPECT_EQ(refusal(class_to_json(e, false).dump()),
            "export: best_trial_id: missing; allowed: a whole number from 0 to 9223372036854775807 "
            "or null");
  // A long value is cut in the message.
  json j = json::parse(export_json(e));
  j["state"] = std::string(100, 's');
  EXPECT_EQ(refusal(j.dump()), "export: state: '" + std::string(56, 's') +
                                   "... is not a class state; allowed: tuning, converged, stale");
  // Unknown fields are ignored.
  j = json::parse(export_json(e));
  j["explanation"] = {{"winner", nullptr}};
  j["trials"][0]["future"] = 1;
  EXPECT_EQ(refusal(j.dump()), "");
}
