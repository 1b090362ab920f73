// The profile store's workflows, runs and per-function records (schema 4; workflow_store.hpp).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "autotune/error.hpp"
#include "autotune/store.hpp"
#include "sqlite.hpp"

namespace autotune {

using sql::Db;
using sql::Stmt;
using sql::Txn;

namespace {

double now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t e = s.find(sep, pos);
    if (e == std::string::npos) e = s.size();
    out.push_back(s.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

const char kWorkflowCols[] =
    "id, owner, name, definition, functions, gamma, budget, state, state_reason, best_run, t_ref, c_ref, "
    "proposal, created, updated";

WorkflowRecord read_workflow(const Stmt &s) {
  WorkflowRecord w;
  w.id = s.i64(0);
  w.owner = static_cast<std::uint32_t>(s.i64(1));
  w.name = s.text(2);
  w.definition = s.text(3);
  w.functions = parse_workflow_functions(s.text(4));
  w.gamma = s.dbl(5);
  w.budget = static_cast<int>(s.i64(6));
  w.state = s.text(7);
  w.state_reason = s.text(8);
  if (auto b = s.opt_i64(9)) w.best_run = static_cast<int>(*b);
  w.t_ref = s.opt_dbl(10);
  w.c_ref = s.opt_dbl(11);
  w.proposal = s.text(12);
  w.created = s.dbl(13);
  w.updated = s.dbl(14);
  return w;
}

const char kRunCols[] =
    "id, workflow_id, seq, state, proposal, created, started, ended, time_s, cost, score, span_s, tier";

WorkflowRunRecord read_run(const Stmt &s) {
  WorkflowRunRecord r;
  r.id = s.i64(0);
  r.workflow_id = s.i64(1);
  r.seq = static_cast<int>(s.i64(2));
  r.state = s.text(3);
  r.proposal = s.text(4);
  r.created = s.dbl(5);
  r.started = s.opt_dbl(6);
  r.ended = s.opt_dbl(7);
  r.time_s = s.opt_dbl(8);
  r.cost = s.opt_dbl(9);
  r.score = s.opt_dbl(10);
  r.span_s = s.opt_dbl(11);
  r.tier = s.text(12);
  return r;
}

const char kFunctionCols[] =
    "run_id, function, class_id, trial_seq, job_id, config, status, started, ended, time_s, cost, "
    "predicted_time, predicted_cost, reason";

WorkflowFunctionRun read_function(const Stmt &s) {
  WorkflowFunctionRun f;
  f.run_id = s.i64(0);
  f.function = s.text(1);
  f.class_id = s.opt_i64(2);
  if (auto t = s.opt_i64(3)) f.trial_seq = static_cast<int>(*t);
  f.job_id = s.opt_i64(4);
  f.config = s.text(5);
  f.status = s.text(6);
  f.started = s.opt_dbl(7);
  f.ended = s.opt_dbl(8);
  f.time_s = s.opt_dbl(9);
  f.cost = s.opt_dbl(10);
  f.predicted_time = s.opt_dbl(11);
  f.predicted_cost = s.opt_dbl(12);
  f.reason = s.text(13);
  return f;
}

}  // namespace

std::string format_workflow_functions(const std::vector<WorkflowFunctionDef> &fs) {
  std::string out;
  for (const auto &f : fs) {
    std::string after;
    for (const auto &a : f.after) after += (after.empty() ? "" : ",") + a;
    out += f.name + "\t" + after + "\t" + f.space + "\n";
  }
  return out;
}

std::vector<WorkflowFunctionDef> parse_workflow_functions(const std::string &text) {
  std::vector<WorkflowFunctionDef> out;
  for (const std::string &line : split(text, '\n')) {
    if (line.empty()) continue;
    const auto cols = split(line, '\t');
    if (cols.size() != 3 || cols[0].empty())
      throw Error(Errc::corrupt, "a workflow's functions in the store are malformed: '" + line + "'");
    WorkflowFunctionDef f;
    f.name = cols[0];
    if (!cols[1].empty()) f.after = split(cols[1], ',');
    f.space = cols[2];
    out.push_back(std::move(f));
  }
  return out;
}

std::string format_workflow_proposal(const std::vector<WorkflowAssignment> &as) {
  auto num = [](const std::optional<double> &v) {
    if (!v) return std::string();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", *v);
    return std::string(buf);
  };
  auto clean = [](std::string s) {
    for (char &ch : s)
      if (ch == '\t' || ch == '\n') ch = ' ';
    return s;
  };
  std::string out;
  for (const auto &a : as)
    out += clean(a.function) + "\t" + clean(a.config) + "\t" + clean(a.origin) + "\t" + num(a.time) + "\t" +
           num(a.cost) + "\t" + clean(a.why) + "\n";
  return out;
}

std::vector<WorkflowAssignment> parse_workflow_proposal(const std::string &text) {
  std::vector<WorkflowAssignment> out;
  auto num = [](const std::string &s) -> std::optional<double> {
    if (s.empty()) return std::nullopt;
    char *end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (!end || *end) throw Error(Errc::corrupt, "a workflow proposal in the store has a bad number '" + s + "'");
    return v;
  };
  for (const std::string &line : split(text, '\n')) {
    if (line.empty()) continue;
    const auto cols = split(line, '\t');
    if (cols.size() != 6 || cols[0].empty() || cols[1].empty())
      throw Error(Errc::corrupt, "a workflow proposal in the store is malformed: '" + line + "'");
    WorkflowAssignment a;
    a.function = cols[0];
    a.config = cols[1];
    a.origin = cols[2];
    a.time = num(cols[3]);
    a.cost = num(cols[4]);
    a.why = cols[5];
    out.push_back(std::move(a));
  }
  return out;
}

const WorkflowFunctionDef *WorkflowRecord::function(const std::string &n) const {
  for (const auto &f : functions)
    if (f.name == n) return &f;
  return nullptr;
}

WorkflowRecord Store::define_workflow(std::uint32_t owner, const WorkflowRecord &w) {
  Db &db = *db_;
  {
    Txn txn(db, Txn::Kind::write);
    Stmt s(db, std::string("SELECT ") + kWorkflowCols + " FROM workflows WHERE owner = ?1 AND name = ?2");
    s.bind(1, static_cast<std::int64_t>(owner)).bind(2, w.name);
    if (s.step()) {
      WorkflowRecord old = read_workflow(s);
      if (old.definition != w.definition)
        throw_invalid("workflow " + w.name + " is already defined with another definition (" +
                      std::to_string(workflow_runs(old.id).size()) + " runs recorded); `autotune workflow forget " +
                      w.name + "` first to start it over");
      return old;
    }
    const double t = now();
    Stmt ins(db,
             "INSERT INTO workflows (owner, name, definition, functions, gamma, budget, state, state_reason, "
             "proposal, created, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'tuning', ?7, ?8, ?9, ?9)");
    ins.bind(1, static_cast<std::int64_t>(owner))
        .bind(2, w.name)
        .bind(3, w.definition)
        .bind(4, format_workflow_functions(w.functions))
        .bind(5, w.gamma)
        .bind(6, w.budget)
        .bind(7, w.state_reason)
        .bind(8, w.proposal)
        .bind(9, t);
    ins.run();
    txn.commit();
  }
  return *find_workflow(owner, w.name);
}

std::optional<WorkflowRecord> Store::find_workflow(std::uint32_t owner, std::string_view name) {
  Stmt s(*db_, std::string("SELECT ") + kWorkflowCols + " FROM workflows WHERE owner = ?1 AND name = ?2");
  s.bind(1, static_cast<std::int64_t>(owner)).bind(2, name);
  if (!s.step()) return std::nullopt;
  return read_workflow(s);
}

std::optional<WorkflowRecord> Store::find_workflow_by_id(std::int64_t id) {
  Stmt s(*db_, std::string("SELECT ") + kWorkflowCols + " FROM workflows WHERE id = ?1");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_workflow(s);
}

std::vector<WorkflowRecord> Store::list_workflows(std::optional<std::uint32_t> owner) {
  std::vector<WorkflowRecord> out;
  Stmt s(*db_, std::string("SELECT ") + kWorkflowCols +
                   " FROM workflows WHERE ?1 IS NULL OR owner = ?1 ORDER BY owner, name");
  if (owner) s.bind(1, static_cast<std::int64_t>(*owner));
  else s.bind_null(1);
  while (s.step()) out.push_back(read_workflow(s));
  return out;
}

bool Store::forget_workflow(std::uint32_t owner, std::string_view name) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_, "DELETE FROM workflows WHERE owner = ?1 AND name = ?2")
      .bind(1, static_cast<std::int64_t>(owner))
      .bind(2, name)
      .run();
  const bool removed = db_->changes() > 0;
  txn.commit();
  return removed;
}

WorkflowRunRecord Store::join_workflow_run(std::int64_t workflow_id, const std::string &function) {
  Db &db = *db_;
  Txn txn(db, Txn::Kind::write);
  std::optional<WorkflowRunRecord> open;
  {
    Stmt s(db, std::string("SELECT ") + kRunCols + " FROM workflow_runs WHERE workflow_id = ?1 AND state = 'open'");
    s.bind(1, workflow_id);
    if (s.step()) open = read_run(s);
  }
  if (open) {
    Stmt has(db, "SELECT 1 FROM workflow_functions WHERE run_id = ?1 AND function = ?2");
    has.bind(1, open->id).bind(2, function);
    if (!has.step()) {
      txn.commit();
      return *open;
    }
    // A second job of this function: the next run begins.
    Stmt(db, "UPDATE workflow_runs SET state = 'closed' WHERE id = ?1").bind(1, open->id).run();
  }
  int seq = 1;
  {
    Stmt s(db, "SELECT IFNULL(MAX(seq), 0) + 1 FROM workflow_runs WHERE workflow_id = ?1");
    s.bind(1, workflow_id);
    s.step();
    seq = static_cast<int>(s.i64(0));
  }
  std::string proposal;
  {
    Stmt s(db, "SELECT proposal FROM workflows WHERE id = ?1");
    s.bind(1, workflow_id);
    if (!s.step()) throw Error(Errc::not_found, "workflow " + std::to_string(workflow_id) + " is gone");
    proposal = s.text(0);
  }
  Stmt(db, "INSERT INTO workflow_runs (workflow_id, seq, state, proposal, created) VALUES (?1, ?2, 'open', ?3, ?4)")
      .bind(1, workflow_id)
      .bind(2, seq)
      .bind(3, proposal)
      .bind(4, now())
      .run();
  const std::int64_t id = db.last_insert_id();
  Stmt s(db, std::string("SELECT ") + kRunCols + " FROM workflow_runs WHERE id = ?1");
  s.bind(1, id);
  s.step();
  WorkflowRunRecord r = read_run(s);
  txn.commit();
  return r;
}

void Store::add_workflow_function(const WorkflowFunctionRun &f) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_,
       "INSERT OR REPLACE INTO workflow_functions (run_id, function, class_id, trial_seq, job_id, config, status, "
       "predicted_time, predicted_cost, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
      .bind(1, f.run_id)
      .bind(2, f.function)
      .bind(3, f.class_id)
      .bind(4, f.trial_seq ? std::optional<std::int64_t>(*f.trial_seq) : std::nullopt)
      .bind(5, f.job_id)
      .bind(6, f.config)
      .bind(7, f.status)
      .bind(8, f.predicted_time)
      .bind(9, f.predicted_cost)
      .bind(10, f.reason)
      .run();
  txn.commit();
}

std::vector<WorkflowRunRecord> Store::workflow_runs(std::int64_t workflow_id) {
  std::vector<WorkflowRunRecord> out;
  Stmt s(*db_, std::string("SELECT ") + kRunCols + " FROM workflow_runs WHERE workflow_id = ?1 ORDER BY seq");
  s.bind(1, workflow_id);
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::vector<WorkflowFunctionRun> Store::workflow_functions(std::int64_t run_id) {
  std::vector<WorkflowFunctionRun> out;
  Stmt s(*db_, std::string("SELECT ") + kFunctionCols + " FROM workflow_functions WHERE run_id = ?1 ORDER BY function");
  s.bind(1, run_id);
  while (s.step()) out.push_back(read_function(s));
  return out;
}

bool Store::finish_workflow_function(const WorkflowFunctionRun &f) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_,
       "UPDATE workflow_functions SET status = ?3, job_id = ?4, started = ?5, ended = ?6, time_s = ?7, cost = ?8, "
       "reason = CASE WHEN ?9 = '' THEN reason WHEN reason = '' THEN ?9 ELSE reason || '; ' || ?9 END "
       "WHERE run_id = ?1 AND function = ?2 AND status = 'pending'")
      .bind(1, f.run_id)
      .bind(2, f.function)
      .bind(3, f.status)
      .bind(4, f.job_id)
      .bind(5, f.started)
      .bind(6, f.ended)
      .bind(7, f.time_s)
      .bind(8, f.cost)
      .bind(9, f.reason)
      .run();
  const bool changed = db_->changes() > 0;
  txn.commit();
  return changed;
}

void Store::finish_workflow_run(const WorkflowRunRecord &r) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_,
       "UPDATE workflow_runs SET state = ?2, started = ?3, ended = ?4, time_s = ?5, cost = ?6, score = ?7, "
       "span_s = ?8 WHERE id = ?1")
      .bind(1, r.id)
      .bind(2, r.state)
      .bind(3, r.started)
      .bind(4, r.ended)
      .bind(5, r.time_s)
      .bind(6, r.cost)
      .bind(7, r.score)
      .bind(8, r.span_s)
      .run();
  txn.commit();
}

void Store::set_workflow_run_tier(std::int64_t run_id, const std::string &tier_json) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_, "UPDATE workflow_runs SET tier = ?2 WHERE id = ?1").bind(1, run_id).bind(2, tier_json).run();
  txn.commit();
}

void Store::set_workflow_plan(std::int64_t workflow_id, const WorkflowPlan &p) {
  Txn txn(*db_, Txn::Kind::write);
  Stmt(*db_,
       "UPDATE workflows SET state = ?2, state_reason = ?3, best_run = ?4, t_ref = ?5, c_ref = ?6, proposal = ?7, "
       "updated = ?8 WHERE id = ?1")
      .bind(1, workflow_id)
      .bind(2, p.state)
      .bind(3, p.state_reason)
      .bind(4, p.best_run ? std::optional<std::int64_t>(*p.best_run) : std::nullopt)
      .bind(5, p.t_ref)
      .bind(6, p.c_ref)
      .bind(7, p.proposal)
      .bind(8, now())
      .run();
  txn.commit();
}

}  // namespace autotune
