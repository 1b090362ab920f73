// Test fixture generator: fills a real store with a class of measured trials, as ingest would
// leave it, for the tests of the `autotune` command.
//
//   store_fill DB UID CLASS N [--shared] [--tag TAG]
// creates class CLASS of UID with N done trials (configurations tagged with TAG in their memory
// sizes so tests can tell users' rows apart), scores 1.0, 0.9, 0.95, 0.8, ..., the best marked,
// the class converged by the budget.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "autotune/error.hpp"
#include "autotune/store.hpp"

using namespace autotune;

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: store_fill DB UID CLASS N [--shared] [--tag MB]\n");
    return 2;
  }
  bool shared = false;
  int tag = 256;
  for (int i = 5; i < argc; ++i) {
    if (std::string(argv[i]) == "--shared") shared = true;
    else if (std::string(argv[i]) == "--tag" && i + 1 < argc) tag = std::atoi(argv[++i]);
  }
  try {
    Store s(argv[1], {true, false, 10000});
    ClassSettings st;
    st.space = "workers=1-8,ps=1-2";
    st.gamma = 0.5;
    st.budget = std::atoi(argv[4]);
    ClassRecord c = s.ensure_class(static_cast<std::uint32_t>(std::atol(argv[2])), argv[3], st, shared);
    const int n = std::atoi(argv[4]);
    Decision d;
    double best = 1e9;
    for (int i = 1; i <= n; ++i) {
      const std::string cfg = "nodes=1,workers=" + std::to_string(i) + ",ps=1,cpus-per-worker=1,mem-per-worker=" +
                              std::to_string(tag) + "M,cpus-per-ps=1,mem-per-ps=256M";
      TrialRecord t = s.add_trial(c.id, cfg, i <= 2 ? TrialOrigin::initial : TrialOrigin::model, "fixture",
                                  TrialStatus::running, 100000 + tag * 1000 + i);
      Measurement m;
      m.samples_per_s = 1000.0 * i;
      m.time_s = 1.0 / i;
      m.cost = 0.5 + 0.1 * i;
      m.score = (i % 2 == 0) ? 1.0 - 0.1 * i : 1.0 - 0.05 * i;
      m.nodes = "n1";
      s.finish_trial(t.id, TrialStatus::done, m, 1.7e9 + i);
      if (*m.score < best) {
        best = *m.score;
        d.best_trial = t.id;
      }
    }
    d.state = ClassState::converged;
    d.stop_rule = "budget";
    d.state_reason = "stopped by the budget of " + std::to_string(n) + " trials";
    d.t_ref = 1.0;
    d.c_ref = 0.6;
    ClassRecord now = *s.find_class_by_id(c.id);
    s.apply_decision(c.id, now.version, d);
    std::printf("class %s: %d trials\n", argv[3], n);
  } catch (const Error &e) {
    std::fprintf(stderr, "store_fill: %s\n", e.what());
    return 1;
  }
  return 0;
}
