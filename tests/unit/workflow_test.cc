// Workflow files: every refusal of the parser, the cut into stages, the critical path.
#include "autotune/workflow.hpp"

#include <gtest/gtest.h>

#include "autotune/error.hpp"

using namespace autotune;

namespace {

std::string error_of(const std::string &text, const std::vector<std::string> *problems = nullptr) {
  try {
    Workflow::parse(text, "wf.json", problems);
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    return e.what();
  }
  return "";
}

// A workflow of the given functions (JSON objects, comma-separated).
std::string wf(const std::string &functions, const std::string &extra = "") {
  return R"({"workflow": "nightly", )" + extra + R"("functions": [)" + functions + "]}";
}

const char kForkJoin[] = R"({"workflow": "nightly", "gamma": 0.3, "budget": 15,
  "functions": [
    {"name": "prep",    "after": [],                     "problem": "p1"},
    {"name": "train_a", "after": ["prep"],               "problem": "p2", "space": "nodes=1-4"},
    {"name": "train_b", "after": ["prep"],               "problem": "p3"},
    {"name": "eval",    "after": ["train_a", "train_b"], "problem": "p4"}]})";

}  // namespace

TEST(WorkflowParse, ReadsTheExampleOfTheIssue) {
  const Workflow w = Workflow::parse(kForkJoin);
  EXPECT_EQ(w.name, "nightly");
  EXPECT_DOUBLE_EQ(w.gamma, 0.3);
  EXPECT_EQ(w.budget, 15u);
  ASSERT_EQ(w.functions.size(), 4u);
  EXPECT_EQ(w.functions[3].name, "eval");
  EXPECT_EQ(w.functions[3].deps, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(w.functions[1].space_text, "nodes=1-4");
  ASSERT_TRUE(w.functions[1].space);
  EXPECT_FALSE(w.functions[0].space);
  EXPECT_EQ(w.functions[2].problem, "p3");
  EXPECT_EQ(Workflow::parse(w.to_json()), w);
}

TEST(WorkflowParse, Defaults) {
  const Workflow w = Workflow::parse(wf(R"({"name": "a"})"));
  EXPECT_DOUBLE_EQ(w.gamma, 0.5);
  EXPECT_EQ(w.budget, 12u);
  EXPECT_EQ(w.search, WorkflowStrategy::stage);
  EXPECT_EQ(w.to_json().find("search"), std::string::npos);
  EXPECT_TRUE(w.functions[0].after.empty());
}

TEST(WorkflowParse, Search) {
  const std::string a = R"({"name": "a"})";
  for (const char *name : {"stage", "function", "flat", "random"}) {
    const Workflow w = Workflow::parse(wf(a, std::string(R"("search": ")") + name + R"(", )"));
    EXPECT_STREQ(workflow_strategy_name(w.search), name);
    EXPECT_EQ(Workflow::parse(w.to_json()), w);
  }
  EXPECT_FALSE(Workflow::parse(wf(a, R"("search": "function", )")) == Workflow::parse(wf(a)));
  EXPECT_EQ(error_of(wf(a, R"("search": "greedy", )")),
            "wf.json: search: 'greedy' is not a workflow strategy; allowed: stage, function, flat, "
            "random");
  EXPECT_EQ(error_of(wf(a, R"("search": 1, )")),
            "wf.json: search: a number; allowed: one of stage, function, flat, random");
}

TEST(WorkflowParse, RefusesBadDocuments) {
  EXPECT_NE(error_of("{").find("wf.json: not valid JSON"), std::string::npos) << error_of("{");
  EXPECT_EQ(error_of("[1]"),
            "wf.json: the workflow file holds a list; allowed: an object with keys workflow, "
            "gamma, budget, search, functions");
  EXPECT_EQ(error_of(wf(R"({"name": "a"})", R"("gama": 0.5, )")),
            "wf.json: unknown key 'gama'; allowed: workflow, gamma, budget, search, functions");
  EXPECT_EQ(error_of(R"({"functions": [{"name": "a"}]})"),
            "wf.json: workflow: missing; the workflow needs a name");
  EXPECT_NE(error_of(R"({"workflow": "a b", "functions": [{"name": "a"}]})")
                .find("wf.json: workflow: the name 'a b' contains a space"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"workflow": 3, "functions": [{"name": "a"}]})").find("workflow: a number"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"workflow": "w"})"),
            "wf.json: functions: missing; the workflow needs at least one function");
  EXPECT_EQ(error_of(wf("")), "wf.json: functions: the list is empty; the DAG needs a function");
  EXPECT_EQ(error_of(R"({"workflow": "w", "functions": {}})"),
            "wf.json: functions: an object; allowed: a list of functions");
  std::string text(kMaxWorkflowText + 1, ' ');
  EXPECT_NE(error_of(text).find("at most 262144 are allowed (kMaxWorkflowText)"),
            std::string::npos);
}

TEST(WorkflowParse, RefusesBadGammaAndBudget) {
  const std::string a = R"({"name": "a"})";
  EXPECT_EQ(error_of(wf(a, R"("gamma": 1.5, )")),
            "wf.json: gamma: '1.5' is out of range; allowed: a number from 0 to 1");
  EXPECT_EQ(error_of(wf(a, R"("gamma": "0.5", )")),
            "wf.json: gamma: a string is out of range; allowed: a number from 0 to 1");
  EXPECT_EQ(error_of(wf(a, R"("gamma": -0.1, )")),
            "wf.json: gamma: '-0.1' is out of range; allowed: a number from 0 to 1");
  EXPECT_EQ(error_of(wf(a, R"("budget": 0, )")),
            "wf.json: budget: '0' is not allowed; allowed: a whole number of runs from 1 to "
            "10000 (kMaxWorkflowBudget)");
  EXPECT_NE(error_of(wf(a, R"("budget": 2.5, )")).find("budget: '2.5' is not allowed"),
            std::string::npos);
  EXPECT_NE(error_of(wf(a, R"("budget": 10001, )")).find("(kMaxWorkflowBudget)"),
            std::string::npos);
  EXPECT_EQ(Workflow::parse(wf(a, R"("budget": 20.0, )")).budget, 20u);
}

TEST(WorkflowParse, RefusesBadFunctions) {
  EXPECT_EQ(error_of(wf("3")),
            "wf.json: functions[0]: a number; allowed: an object with keys name, after, space, "
            "problem");
  EXPECT_EQ(error_of(wf(R"({"after": []})")), "wf.json: functions[0]: name: missing");
  EXPECT_NE(error_of(wf(R"({"name": ""})")).find("wf.json: functions[0]: name: the name is empty"),
            std::string::npos);
  EXPECT_EQ(
      error_of(wf(R"({"name": "a", "afterr": []})")),
      "wf.json: functions[0] 'a': unknown key 'afterr'; allowed: name, after, space, problem");
  EXPECT_EQ(error_of(wf(R"({"name": "a"}, {"name": "b"}, {"name": "a"})")),
            "wf.json: functions[2] 'a': name: 'a' is also the name of functions[0]; names must be "
            "distinct");
  EXPECT_EQ(error_of(wf(R"({"name": "a", "after": ["a"]})")),
            "wf.json: functions[0] 'a': after: the function runs after itself");
  EXPECT_EQ(error_of(wf(R"({"name": "a"}, {"name": "b", "after": ["a", "a"]})")),
            "wf.json: functions[1] 'b': after: 'a' is given twice");
  EXPECT_EQ(error_of(wf(R"({"name": "a"}, {"name": "b", "after": ["c"]})")),
            "wf.json: functions[1] 'b': after: 'c' is not a function of the workflow");
  EXPECT_EQ(error_of(wf(R"({"name": "a", "after": "b"}, {"name": "b"})")),
            "wf.json: functions[0] 'a': after: a string; allowed: a list of function names");
  EXPECT_EQ(error_of(wf(R"({"name": "a", "after": [1]})")),
            "wf.json: functions[0] 'a': after: a number in the list; allowed: function names");
  std::string many;
  for (int i = 0; i <= 64; ++i)
    many += (i ? "," : "") + ("{\"name\": \"f" + std::to_string(i) + "\"}");
  EXPECT_EQ(error_of(wf(many)),
            "wf.json: functions: 65 functions; at most 64 are allowed (kMaxWorkflowFunctions)");
}

TEST(WorkflowParse, RefusesCycles) {
  EXPECT_EQ(error_of(wf(R"({"name": "a", "after": ["b"]}, {"name": "b", "after": ["a"]})")),
            "wf.json: functions[1] 'b': after: 'a' closes a cycle (each runs after the next): "
            "a -> b -> a");
  EXPECT_EQ(error_of(wf(R"({"name": "s"}, {"name": "a", "after": ["s", "c"]},
                          {"name": "b", "after": ["a"]}, {"name": "c", "after": ["b"]})")),
            "wf.json: functions[2] 'b': after: 'a' closes a cycle (each runs after the next): "
            "a -> c -> b -> a");
}

TEST(WorkflowParse, RefusesBadSpacesAndProblems) {
  EXPECT_NE(error_of(wf(R"({"name": "a", "space": "nodes=0-4"})"))
                .find("wf.json: functions[0] 'a': space: nodes"),
            std::string::npos)
      << error_of(wf(R"({"name": "a", "space": "nodes=0-4"})"));
  EXPECT_NE(error_of(wf(R"({"name": "a", "space": "colour=red"})")).find("functions[0] 'a': space"),
            std::string::npos);
  EXPECT_EQ(error_of(wf(R"({"name": "a", "space": ""})")),
            "wf.json: functions[0] 'a': space: empty; leave the key out for the default space");
  EXPECT_EQ(error_of(wf(R"({"name": "a", "space": 4})")),
            "wf.json: functions[0] 'a': space: a number; allowed: a space as --autotune-space");
  EXPECT_NE(
      error_of(wf(R"({"name": "a", "space": "nodes=1-64,workers=1-256,cpus-per-worker=1-64"})"))
          .find("functions[0] 'a': space: the space has"),
      std::string::npos);
  EXPECT_EQ(
      error_of(wf(R"({"name": "a", "problem": ""})")),
      "wf.json: functions[0] 'a': problem: empty; allowed: the name of a problem of the table");
  EXPECT_EQ(error_of(wf(R"({"name": "a", "problem": 7})")),
            "wf.json: functions[0] 'a': problem: a number; allowed: the name of a problem of the "
            "table");
  EXPECT_EQ(error_of(wf(R"({"name": "a", "problem": ")" + std::string(257, 'p') + "\"}")),
            "wf.json: functions[0] 'a': problem: 257 characters; at most 256 are allowed "
            "(kMaxWorkflowProblemName)");
  EXPECT_NE(error_of(wf("{\"name\": \"" + std::string(65, 'f') + "\"}"))
                .find("wf.json: functions[0]: name: the name is 65 characters long"),
            std::string::npos);
  const std::vector<std::string> known{"p1", "p2"};
  EXPECT_EQ(
      error_of(wf(R"({"name": "a", "problem": "p3"})"), &known),
      "wf.json: functions[0] 'a': problem: 'p3' is not a problem of the table; known: p1, p2");
  EXPECT_EQ(error_of(wf(R"({"name": "a"})"), &known),
            "wf.json: functions[0] 'a': problem: missing; replay needs each function's problem in "
            "the table");
  EXPECT_EQ(error_of(wf(R"({"name": "a", "problem": "p2"})"), &known), "");
}

TEST(WorkflowParse, LoadNamesTheFile) {
  try {
    Workflow::load("/nonexistent/wf.json");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_STREQ(e.what(), "/nonexistent/wf.json: no such workflow file");
  }
}

TEST(WorkflowStages, ForkJoinIsExact) {
  const Workflow w = Workflow::parse(kForkJoin);
  const Stages s = cut_stages(w);
  EXPECT_EQ(s.level, (std::vector<std::size_t>{0, 1, 1, 2}));
  ASSERT_EQ(s.stage.size(), 3u);
  EXPECT_EQ(s.stage[1], (std::vector<std::size_t>{1, 2}));
  EXPECT_TRUE(s.exact);
  const std::vector<double> t{10, 30, 20, 5};
  EXPECT_DOUBLE_EQ(critical_path(w, t), 45);
  EXPECT_DOUBLE_EQ(staged_time(s, t), 45);
}

TEST(WorkflowStages, GeneralDagIsAnUpperBound) {
  // a -> b -> d, a -> c, c -> e, d -> e; c is on level 1 with b but d (level 2) does not run after
  // c.
  const Workflow w = Workflow::parse(wf(R"({"name": "a"}, {"name": "b", "after": ["a"]},
      {"name": "c", "after": ["a"]}, {"name": "d", "after": ["b"]},
      {"name": "e", "after": ["c", "d"]})"));
  const Stages s = cut_stages(w);
  EXPECT_EQ(s.level, (std::vector<std::size_t>{0, 1, 1, 2, 3}));
  EXPECT_FALSE(s.exact);
  // c is long: the critical path a-c-e = 1+10+1 = 12; staged: 1 + 10 + 1 + 1 = 13.
  const std::vector<double> t{1, 1, 10, 1, 1};
  EXPECT_DOUBLE_EQ(critical_path(w, t), 12);
  EXPECT_DOUBLE_EQ(staged_time(s, t), 13);
  // Stages follow the longest path, not the file order.
  const Workflow v = Workflow::parse(
      wf(R"({"name": "z", "after": ["y"]}, {"name": "y", "after": ["x"]}, {"name": "x"})"));
  EXPECT_EQ(cut_stages(v).level, (std::vector<std::size_t>{2, 1, 0}));
  EXPECT_TRUE(cut_stages(v).exact);
}
