// The export of a class: the JSON document `autotune export CLASS` prints (and `autotune show
// --json` extends), which autotune-run's steps mode reads back to warm-start from the class's
// history.  One writer and one parser, so the two sides cannot drift apart.
//
//   {"class": "mnist", "owner": "alice", "owner_uid": 1000, "shared": false,
//    "allow_users": false,                              (shared classes only)
//    "state": "tuning"|"converged"|"stale", "state_reason": "...", "stop_rule": "budget"|"",
//    "trials_used": 6,
//    "settings": {"space": "...", "gamma": 0.5, "budget": 10, "mode": "jobs"|"steps",
//                 "probe_batches": 20,
//                 "extra": {...}},                      (full only: the engine options, as JSON)
//    "t_ref": 1.0|null, "c_ref": 0.6|null,
//    "best": TRIAL|null,
//    "best_trial_id": 6|null,                           (full only)
//    "trials": [TRIAL, ...],                            (full only, in order)
//    "queue": [{"config": "...", "origin": "model", "reason": "...",
//               "predicted": 0.7|null, "stddev": 0.1|null}, ...]}     (full only)
//
//   TRIAL = {"trial": 1, "id": 17, "config": "nodes=1,...", "status": "done", "origin": "initial",
//            "reason": "...", "job_id": 123|null, "step_id": 2|null, "created": 1.7e9,
//            "started": 1.7e9|null, "ended": 1.7e9|null,
//            "measurement": {"samples_per_s": 1000.0, "time_s": 1.0, "cost": 0.6,   (when measured)
//                            "score": 0.9|null, "worker_cpu": null, "worker_mem_mb": null,
//                            "server_cpu": null, "server_mem_mb": null, "nodes": "n1"}}
//
// Keys are written in sorted order (nlohmann::json's default object), two-space indented.
// Not exported: the class's id, version and timestamps, trials' class_id and a measurement's raw
// result document.
//
// Thread safety: the functions are pure; call them from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "autotune/store.hpp"

namespace autotune {

struct ClassExport {
  ClassRecord cls;                  // id, version, created and updated are 0 when parsed
  std::string owner_name;           // "owner": the owner's user name (or the uid as text)
  int trials_used = 0;              // trials that count against the budget
  std::optional<TrialRecord> best;  // the class's best trial so far
  std::vector<TrialRecord> trials;  // class_id 0 and measurements without raw when parsed
  std::vector<Recommendation> queue;
};

// The class as JSON; with `full`, also settings.extra (null when it is not JSON),
// best_trial_id, the trials and the queue.  `autotune status --json` prints the short form.
nlohmann::json class_to_json(const ClassExport &e, bool full);
// One trial as the export writes it.
nlohmann::json trial_to_json(const TrialRecord &t);

// The text of `autotune export`: class_to_json(e, true) indented by two spaces, without a final
// newline.
std::string export_json(const ClassExport &e);

// Parses the full export.  Every field the writer writes must be there with its type ("allow_users"
// and a trial's "measurement" may be left out); unknown fields are ignored.  Throws
// Error(corrupt) for text that is not JSON and Error(invalid_argument) naming the field and what
// is allowed, e.g. "export: trials[2].status: 'runing' is not a trial status; allowed: pending,
// running, done, failed, timeout, cancelled".  settings.extra must be a JSON object (it is null
// in the export of a class whose settings are unreadable).
ClassExport parse_export(std::string_view text);

}  // namespace autotune
