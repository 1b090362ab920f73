#include "autotune/workflow.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "autotune/error.hpp"
#include "autotune/names.hpp"
#include "autotune/units.hpp"

namespace autotune {
namespace {

using nlohmann::json;

const char *type_name(const json &v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  return "an object";
}

// "FILE: functions[2] 'train_b': " -- the prefix of every message about one function.
std::string where(const std::string &source, std::size_t i, const std::string &name) {
  std::string s = source + ": functions[" + std::to_string(i) + "]";
  if (!name.empty()) s += " '" + name + "'";
  return s + ": ";
}

void check_name(const std::string &prefix, const std::string &key, const json &v,
                std::string *out) {
  if (!v.is_string())
    throw_invalid(prefix + key + ": " + type_name(v) + "; allowed: a name of 1-" +
                  std::to_string(kClassNameMax) + " characters from A-Z a-z 0-9 . _ -");
  *out = v.get<std::string>();
  try {
    validate_class_name(*out, key);
  } catch (const Error &e) {
    std::string m = e.what();
    // validate_class_name speaks of classes; here it is a workflow's or a function's name.
    const std::string cls = "the class name";
    if (auto p = m.find(cls); p != std::string::npos) m.replace(p, cls.size(), "the name");
    throw_invalid(prefix + m);
  }
}

}  // namespace

const char *workflow_strategy_name(WorkflowStrategy s) {
  switch (s) {
    case WorkflowStrategy::stage:
      return "stage";
    case WorkflowStrategy::function:
      return "function";
    case WorkflowStrategy::flat:
      return "flat";
    case WorkflowStrategy::random:
      return "random";
  }
  return "?";
}

WorkflowStrategy parse_workflow_strategy(std::string_view field, std::string_view name) {
  for (auto s : {WorkflowStrategy::stage, WorkflowStrategy::function, WorkflowStrategy::flat,
                 WorkflowStrategy::random})
    if (name == workflow_strategy_name(s)) return s;
  throw_invalid(std::string(field) + ": '" + std::string(name) +
                "' is not a workflow strategy; allowed: stage, function, flat, random");
}

Workflow Workflow::parse(std::string_view text, std::string_view source_view,
                         const std::vector<std::string> *known_problems) {
  const std::string source(source_view);
  if (text.size() > kMaxWorkflowText)
    throw_invalid(source + ": the workflow file is " + std::to_string(text.size()) +
                  " bytes; at most " + std::to_string(kMaxWorkflowText) +
                  " are allowed (kMaxWorkflowText)");
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception &e) {
    std::string m = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> from "parse
    // error".
    if (auto p = m.find("] "); p != std::string::npos) m = m.substr(p + 2);
    throw_invalid(source + ": not valid JSON: " + m);
  }
  if (!j.is_object())
    throw_invalid(source + ": the workflow file holds " + type_name(j) +
                  "; allowed: an object with keys workflow, gamma, budget, search, functions");
  const std::set<std::string> top_keys{"workflow", "gamma", "budget", "search", "functions"};
  for (const auto &[k, v] : j.items())
    if (!top_keys.count(k))
      throw_invalid(source + ": unknown key '" + k +
                    "'; allowed: workflow, gamma, budget, search, functions");
  Workflow w;
  const std::string top = source + ": ";
  if (!j.contains("workflow")) throw_invalid(top + "workflow: missing; the workflow needs a name");
  check_name(top, "workflow", j["workflow"], &w.name);
  if (j.contains("gamma")) {
    const json &g = j["gamma"];
    if (!g.is_number() || !(g.get<double>() >= 0 && g.get<double>() <= 1))
      throw_invalid(top + "gamma: " + (g.is_number() ? "'" + g.dump() + "'" : type_name(g)) +
                    " is out of range; allowed: a number from 0 to 1");
    w.gamma = g.get<double>();
  }
  if (j.contains("budget")) {
    const json &b = j["budget"];
    const bool integral = b.is_number_integer() ||
                          (b.is_number_float() && std::floor(b.get<double>()) == b.get<double>());
    if (!b.is_number() || !integral || !(b.get<double>() >= 1) ||
        !(b.get<double>() <= static_cast<double>(kMaxWorkflowBudget)))
      throw_invalid(top + "budget: " + (b.is_number() ? "'" + b.dump() + "'" : type_name(b)) +
                    " is not allowed; allowed: a whole number of runs from 1 to " +
                    std::to_string(kMaxWorkflowBudget) + " (kMaxWorkflowBudget)");
    w.budget = static_cast<std::size_t>(b.get<double>());
  }
  if (j.contains("search")) {
    const json &v = j["search"];
    if (!v.is_string())
      throw_invalid(top + "search: " + type_name(v) +
                    "; allowed: one of stage, function, flat, random");
    w.search = parse_workflow_strategy(top + "search", v.get<std::string>());
  }
  if (!j.contains("functions"))
    throw_invalid(top + "functions: missing; the workflow needs at least one function");
  const json &fs = j["functions"];
  if (!fs.is_array())
    throw_invalid(top + "functions: " + type_name(fs) + "; allowed: a list of functions");
  if (fs.empty()) throw_invalid(top + "functions: the list is empty; the DAG needs a function");
  if (fs.size() > kMaxWorkflowFunctions)
    throw_invalid(top + "functions: " + std::to_string(fs.size()) + " functions; at most " +
                  std::to_string(kMaxWorkflowFunctions) + " are allowed (kMaxWorkflowFunctions)");

  const std::set<std::string> fn_keys{"name", "after", "space", "problem"};
  for (std::size_t i = 0; i < fs.size(); ++i) {
    const json &f = fs[i];
    WorkflowFunction wf;
    if (!f.is_object())
      throw_invalid(where(source, i, "") + type_name(f) +
                    "; allowed: an object with keys name, after, space, problem");
    if (!f.contains("name")) throw_invalid(where(source, i, "") + "name: missing");
    check_name(where(source, i, ""), "name", f["name"], &wf.name);
    const std::string at = where(source, i, wf.name);
    for (const auto &[k, v] : f.items())
      if (!fn_keys.count(k))
        throw_invalid(at + "unknown key '" + k + "'; allowed: name, after, space, problem");
    for (std::size_t k = 0; k < w.functions.size(); ++k)
      if (w.functions[k].name == wf.name)
        throw_invalid(at + "name: '" + wf.name + "' is also the name of functions[" +
                      std::to_string(k) + "]; names must be distinct");
    if (f.contains("after")) {
      const json &a = f["after"];
      if (!a.is_array())
        throw_invalid(at + "after: " + type_name(a) + "; allowed: a list of function names");
      for (const auto &e : a) {
        if (!e.is_string())
          throw_invalid(at + "after: " + type_name(e) + " in the list; allowed: function names");
        const std::string d = e.get<std::string>();
        if (d == wf.name) throw_invalid(at + "after: the function runs after itself");
        if (std::find(wf.after.begin(), wf.after.end(), d) != wf.after.end())
          throw_invalid(at + "after: '" + d + "' is given twice");
        wf.after.push_back(d);
      }
    }
    if (f.contains("space")) {
      const json &s = f["space"];
      if (!s.is_string())
        throw_invalid(at + "space: " + type_name(s) + "; allowed: a space as --autotune-space");
      wf.space_text = s.get<std::string>();
      if (wf.space_text.empty())
        throw_invalid(at + "space: empty; leave the key out for the default space");
      try {
        SpaceSpec sp = SpaceSpec::parse(wf.space_text, "space");
        check_space_size(sp, 1, "space");
        wf.space = std::move(sp);
      } catch (const Error &e) {
        throw_invalid(at + e.what());
      }
    }
    if (f.contains("problem")) {
      const json &p = f["problem"];
      if (!p.is_string() || p.get<std::string>().empty())
        throw_invalid(at + "problem: " + (p.is_string() ? "empty" : type_name(p)) +
                      "; allowed: the name of a problem of the table");
      wf.problem = p.get<std::string>();
      if (wf.problem.size() > kMaxWorkflowProblemName)
        throw_invalid(at + "problem: " + std::to_string(wf.problem.size()) +
                      " characters; at most " + std::to_string(kMaxWorkflowProblemName) +
                      " are allowed (kMaxWorkflowProblemName)");
    }
    if (known_problems) {
      if (wf.problem.empty())
        throw_invalid(at + "problem: missing; replay needs each function's problem in the table");
      if (std::find(known_problems->begin(), known_problems->end(), wf.problem) ==
          known_problems->end()) {
        std::string list;
        for (std::size_t k = 0; k < known_problems->size() && k < 20; ++k)
          list += (k ? ", " : "") + (*known_problems)[k];
        if (known_problems->size() > 20) list += ", ...";
        throw_invalid(at + "problem: '" + wf.problem +
                      "' is not a problem of the table; known: " + list);
      }
    }
    w.functions.push_back(std::move(wf));
  }
  // Resolve "after" now that every name is known.
  for (std::size_t i = 0; i < w.functions.size(); ++i) {
    WorkflowFunction &wf = w.functions[i];
    for (const auto &d : wf.after) {
      const auto k = w.find(d);
      if (!k)
        throw_invalid(where(source, i, wf.name) + "after: '" + d +
                      "' is not a function of the workflow");
      wf.deps.push_back(*k);
    }
  }
  // Cycles: depth-first search; a grey node reached again closes a cycle.
  const std::size_t n = w.functions.size();
  std::vector<int> colour(n, 0);
  std::vector<std::size_t> stack;
  std::function<void(std::size_t)> visit = [&](std::size_t v) {
    colour[v] = 1;
    stack.push_back(v);
    for (auto d : w.functions[v].deps) {
      if (colour[d] == 1) {
        // The cycle: d ... v on the stack, then back to d ("v runs after d").
        auto it = std::find(stack.begin(), stack.end(), d);
        std::string cyc;
        for (auto p = it; p != stack.end(); ++p) cyc += w.functions[*p].name + " -> ";
        cyc += w.functions[d].name;
        throw_invalid(where(source, v, w.functions[v].name) + "after: '" + w.functions[d].name +
                      "' closes a cycle (each runs after the next): " + cyc);
      }
      if (colour[d] == 0) visit(d);
    }
    stack.pop_back();
    colour[v] = 2;
  };
  for (std::size_t v = 0; v < n; ++v)
    if (colour[v] == 0) visit(v);
  return w;
}

Workflow Workflow::load(const std::string &path, const std::vector<std::string> *known_problems) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    if (e == ENOENT) throw Error(Errc::not_found, path + ": no such workflow file");
    throw_io("reading workflow file " + path, e);
  }
  std::string text;
  char buf[8192];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxWorkflowText)
      throw_invalid(path + ": the workflow file is over " + std::to_string(kMaxWorkflowText) +
                    " bytes (kMaxWorkflowText)");
  }
  if (in.bad()) throw_io("reading workflow file " + path, errno);
  return parse(text, path, known_problems);
}

std::string Workflow::to_json() const {
  json j;
  j["workflow"] = name;
  j["gamma"] = gamma;
  j["budget"] = budget;
  if (search != WorkflowStrategy::stage) j["search"] = workflow_strategy_name(search);
  j["functions"] = json::array();
  for (const auto &f : functions) {
    json jf;
    jf["name"] = f.name;
    jf["after"] = f.after;
    if (!f.space_text.empty()) jf["space"] = f.space_text;
    if (!f.problem.empty()) jf["problem"] = f.problem;
    j["functions"].push_back(jf);
  }
  return j.dump();
}

std::optional<std::size_t> Workflow::find(std::string_view n) const {
  for (std::size_t i = 0; i < functions.size(); ++i)
    if (functions[i].name == n) return i;
  return std::nullopt;
}

bool Workflow::operator==(const Workflow &o) const {
  if (name != o.name || gamma != o.gamma || budget != o.budget || search != o.search ||
      functions.size() != o.functions.size())
    return false;
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const auto &a = functions[i], &b = o.functions[i];
    if (a.name != b.name || a.after != b.after || a.deps != b.deps ||
        a.space_text != b.space_text || !(a.space == b.space) || a.problem != b.problem)
      return false;
  }
  return true;
}

Stages cut_stages(const Workflow &w) {
  const std::size_t n = w.functions.size();
  Stages s;
  s.level.assign(n, 0);
  // Longest path from a source, by relaxing in a topological order (Kahn).
  std::vector<std::size_t> indeg(n, 0), order;
  std::vector<std::vector<std::size_t>> succ(n);
  for (std::size_t i = 0; i < n; ++i)
    for (auto d : w.functions[i].deps) {
      succ[d].push_back(i);
      ++indeg[i];
    }
  for (std::size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) order.push_back(i);
  for (std::size_t k = 0; k < order.size(); ++k)
    for (auto v : succ[order[k]])
      if (--indeg[v] == 0) order.push_back(v);
  if (order.size() != n) throw Error(Errc::internal, "cut_stages: the workflow has a cycle");
  for (auto v : order)
    for (auto d : w.functions[v].deps) s.level[v] = std::max(s.level[v], s.level[d] + 1);
  std::size_t levels = 0;
  for (auto l : s.level) levels = std::max(levels, l + 1);
  s.stage.assign(levels, {});
  for (std::size_t i = 0; i < n; ++i) s.stage[s.level[i]].push_back(i);
  s.exact = true;
  for (std::size_t k = 1; k < levels && s.exact; ++k)
    for (auto v : s.stage[k]) {
      const auto &deps = w.functions[v].deps;
      for (auto p : s.stage[k - 1])
        if (std::find(deps.begin(), deps.end(), p) == deps.end()) s.exact = false;
    }
  return s;
}

double critical_path(const Workflow &w, const std::vector<double> &time) {
  const std::size_t n = w.functions.size();
  if (time.size() != n) throw_invalid("critical_path: one time per function is needed");
  const Stages s = cut_stages(w);
  std::vector<double> finish(n, 0);
  double t = 0;
  // Stages are a topological order.
  for (const auto &st : s.stage)
    for (auto v : st) {
      double start = 0;
      for (auto d : w.functions[v].deps) start = std::max(start, finish[d]);
      finish[v] = start + time[v];
      t = std::max(t, finish[v]);
    }
  return t;
}

double staged_time(const Stages &s, const std::vector<double> &time) {
  double t = 0;
  for (const auto &st : s.stage) {
    double m = 0;
    for (auto v : st) m = std::max(m, time.at(v));
    t += m;
  }
  return t;
}

}  // namespace autotune
