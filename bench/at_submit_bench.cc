// bench/at_submit_bench: the time of at_submit() -- what job_submit/autotune does per job inside
// slurmctld -- in this process, on a real store in a temporary directory, for a class that is
// tuning (take the next precomputed configuration) and one that has converged (the best, kept
// in memory while the store is unchanged).  Prints the median, p99 and max per call.
//
//   bench/at_submit_bench [--calls N] [--same-thread]
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "autotune/autotune.h"
#include "autotune/store.hpp"

namespace {

bool g_new_thread = true;

size_t inventory(void *, at_node_type *t, size_t max) {
  if (max < 1) return 0;
  t[0] = {"cpus2-mem4000", 4, 2, 4000, 0, ""};
  return 1;
}

std::vector<double> run(const char *cls, int calls, bool first_converges, const std::string &dir) {
  std::vector<std::string> env = {std::string("AUTOTUNE_CLASS=") + cls};
  std::vector<char *> envp;
  for (auto &e : env) envp.push_back(e.data());
  at_submit_request req{};
  req.uid = 1000;
  req.spank_env = envp.data();
  req.spank_env_count = envp.size();
  req.partition = "debug";
  req.inventory = inventory;
  at_submit_decision d;
  char err[1024];
  if (first_converges) {
    // One trial, measured, then the class converges on it (budget 1).
    std::vector<std::string> e2 = {std::string("AUTOTUNE_CLASS=") + cls, "AUTOTUNE_BUDGET=1"};
    std::vector<char *> p2;
    for (auto &e : e2) p2.push_back(e.data());
    req.spank_env = p2.data();
    req.spank_env_count = p2.size();
    if (at_submit(&req, &d, err, sizeof err) != AT_OK) { std::fprintf(stderr, "%s\n", err); std::exit(1); }
    autotune::Store s(autotune::Store::path_in(dir), {false, false, 1000});
    auto c = s.find_class(1000, cls);
    auto t = s.trials(c->id).front();
    autotune::Measurement m;
    m.samples_per_s = 1000;
    m.time_s = 0.001;
    m.cost = 0.002;
    s.finish_trial(t.id, autotune::TrialStatus::done, m, 1.0);
    autotune::Decision dec;
    dec.state = autotune::ClassState::converged;
    dec.best_trial = t.id;
    dec.t_ref = 0.001;
    dec.c_ref = 0.002;
    s.apply_decision(c->id, s.find_class_by_id(c->id)->version, dec);
    req.spank_env = envp.data();
    req.spank_env_count = envp.size();
  }
  std::vector<double> us;
  for (int i = 0; i < calls; ++i) {
    // slurmctld serves each RPC in a thread of its own: so does this loop (--same-thread: not).
    auto one = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      const int rc = at_submit(&req, &d, err, sizeof err);
      const auto t1 = std::chrono::steady_clock::now();
      if (rc != AT_OK) { std::fprintf(stderr, "at_submit: %s\n", err); std::exit(1); }
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    };
    if (g_new_thread) std::thread(one).join();
    else one();
  }
  return us;
}

void report(const char *what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-44s %6zu calls  median %7.1f us  p99 %7.1f us  max %8.1f us\n", what, v.size(), v[v.size() / 2],
              v[std::min(v.size() - 1, v.size() * 99 / 100)], v.back());
}

}  // namespace

int main(int argc, char **argv) {
  int calls = 2000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (a == "--same-thread") g_new_thread = false;
    else { std::fprintf(stderr, "usage: at_submit_bench [--calls N] [--same-thread]\n"); return 2; }
  }
  char tmpl[] = "/tmp/at-submit-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string conf = dir + "/autotune.conf";
  // The local cluster's settings (etc/cluster/autotune.conf.in).
  std::ofstream(conf) << "StateDir=" << dir << "\n"
                      << "DefaultSpace=nodes=1-4,workers=1-4,ps=1-2,cpus-per-worker=1-2,mem-per-worker=256M-512M,"
                         "mem-per-ps=256M\n"
                      << "SpaceLimits=nodes=1-4,workers=1-8,ps=0-4,cpus-per-worker=1-2,mem-per-worker=128M-2G,"
                         "cpus-per-ps=1-2,mem-per-ps=128M-2G\n";
  char err[512];
  if (at_submit_configure(conf.c_str(), err, sizeof err) != AT_OK) { std::fprintf(stderr, "%s\n", err); return 1; }
  run("warmup", 10, false, dir);
  report("tuning class (queue empty after 4 jobs)", run("tuning", calls, false, dir));
  report("converged class (runs the best; read only)", run("converged", calls, true, dir));
  char stats[256];
  at_submit_stats(stats, sizeof stats);
  std::printf("at_submit_stats: %s\n", stats);
  std::system(("rm -rf '" + dir + "'").c_str());
  return 0;
}
