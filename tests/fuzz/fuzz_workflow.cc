// Workflow files (`autotune workflow define FILE`, `autotune replay --workflow FILE`):
// Workflow::parse.  Every file it accepts is a DAG whose canonical JSON parses back to the same
// workflow, whose stages put every function after the functions it runs after, and whose staged
// time is never below its critical path.
#include <algorithm>
#include <vector>

#include "autotune/workflow.hpp"
#include "fuzz.hpp"

using namespace autotune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  Workflow w;
  if (fuzz::refused([&] { w = Workflow::parse(fuzz::as_text(data, size), "fuzz.json"); })) return 0;
  FUZZ_CHECK(!w.functions.empty() && w.functions.size() <= kMaxWorkflowFunctions, "function count out of bounds");
  Workflow back;
  FUZZ_CHECK(!fuzz::refused([&] { back = Workflow::parse(w.to_json(), "round trip"); }),
             "the canonical JSON is refused: " + w.to_json());
  FUZZ_CHECK(back == w, "the canonical JSON parses to another workflow: " + w.to_json());
  const Stages s = cut_stages(w);
  FUZZ_CHECK(s.level.size() == w.functions.size(), "a function without a stage");
  std::size_t in_stages = 0;
  for (const auto &st : s.stage) in_stages += st.size();
  FUZZ_CHECK(in_stages == w.functions.size(), "stages do not hold every function once");
  std::vector<double> t(w.functions.size());
  for (std::size_t i = 0; i < w.functions.size(); ++i) {
    FUZZ_CHECK(w.find(w.functions[i].name) == i, "find() does not return the function");
    for (auto d : w.functions[i].deps)
      FUZZ_CHECK(s.level[d] < s.level[i], "a function's stage is not after a function it runs after");
    t[i] = 1.0 + static_cast<double>((i * 7919) % 13);
  }
  FUZZ_CHECK(staged_time(s, t) >= critical_path(w, t) - 1e-9, "the staged time is below the critical path");
  if (s.exact) FUZZ_CHECK(staged_time(s, t) <= critical_path(w, t) + 1e-9, "an exact cut over-counts the time");
  return 0;
}
