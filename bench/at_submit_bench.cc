// bench/at_submit_bench: the time of at_submit() -- what job_submit/autotune does per job inside
// slurmctld -- in this process, on a real store in a temporary directory, for a class that is
// tuning (take the next precomputed configuration) and one that has converged (the best, kept
// in memory while the store is unchanged).  Prints the median, p99 and max per call.
//
// --worst: then the worst --autotune* values found for job_submit's bounds (engine/space.hpp:
// kMaxSpaceText, kMaxDimValues, kMaxCombinations; capi/submit.cc: option lengths), each submitted
// as a new class (the path that enumerates the space) on a site without SpaceLimits or
// DefaultSpace and a partition of one large node type, whether refused or accepted.
//
//   bench/at_submit_bench [--calls N] [--same-thread] [--worst] [--worst-calls N]
#include <sys/stat.h>
#include <time.h>
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
  std::printf("%-50s %6zu calls  median %7.1f us  p99 %7.1f us  max %8.1f us\n", what, v.size(), v[v.size() / 2],
              v[std::min(v.size() - 1, v.size() * 99 / 100)], v.back());
}

// ---- --worst -----------------------------------------------------------------------------------

size_t big_inventory(void *, at_node_type *t, size_t max) {
  if (max < 1) return 0;
  t[0] = {"big", 4096, 256, 1u << 20, 8, ""};  // 4096 nodes of 256 CPUs, 1 TiB, 8 GPUs
  return 1;
}

struct WorstCase {
  std::string what;
  std::vector<std::string> env;  // AUTOTUNE_CLASS is added per call (a new class each time)
  std::size_t padding = 0;       // that many unrelated environment entries before the others
};

std::string repeat_join(const std::string &item, const std::string &sep, std::size_t max_len) {
  std::string out = item;
  while (out.size() + sep.size() + item.size() <= max_len) out += sep + item;
  return out;
}

double thread_cpu_us() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

void run_worst(const WorstCase &w, int calls, int index) {
  std::vector<double> us, cpu;
  std::string outcome;
  std::vector<std::string> pad;
  for (std::size_t i = 0; i < w.padding; ++i) pad.push_back("SLURM_PAD_" + std::to_string(i) + "=x");
  for (int i = 0; i < calls; ++i) {
    std::vector<std::string> env = pad;
    env.insert(env.end(), w.env.begin(), w.env.end());
    const bool has_class = std::any_of(w.env.begin(), w.env.end(),
                                       [](const std::string &e) { return e.rfind("AUTOTUNE_CLASS=", 0) == 0; });
    if (!has_class) env.push_back("AUTOTUNE_CLASS=worst" + std::to_string(index) + "-" + std::to_string(i));
    std::vector<char *> envp;
    for (auto &e : env) envp.push_back(e.data());
    at_submit_request req{};
    req.uid = 1000;
    req.spank_env = envp.data();
    req.spank_env_count = envp.size();
    req.partition = "big";
    req.inventory = big_inventory;
    at_submit_decision d;
    char err[1024];
    auto one = [&] {
      const double c0 = thread_cpu_us();
      const auto t0 = std::chrono::steady_clock::now();
      const int rc = at_submit(&req, &d, err, sizeof err);
      const auto t1 = std::chrono::steady_clock::now();
      cpu.push_back(thread_cpu_us() - c0);
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (i == 0) outcome = rc == AT_OK ? std::string("accepted: ") + d.admin_comment : std::string("refused: ") + err;
    };
    if (g_new_thread) std::thread(one).join();
    else one();
  }
  report(w.what.c_str(), us);
  report("  (thread CPU time)", cpu);
  if (outcome.size() > 150) outcome = outcome.substr(0, 147) + "...";
  std::printf("    %s\n", outcome.c_str());
}

void worst(const std::string &dir, int calls) {
  const std::string conf = dir + "/worst.conf";
  // A site that sets neither SpaceLimits nor DefaultSpace: nothing narrows the user's space.
  std::ofstream(conf) << "StateDir=" << dir << "/worst\n";
  char err[512];
  if (at_submit_configure(conf.c_str(), err, sizeof err) != AT_OK) { std::fprintf(stderr, "%s\n", err); std::exit(1); }
  const std::string digits(4000, '0');
  std::vector<WorstCase> cases = {
      {"space: 10000 combinations, all feasible", {"AUTOTUNE_SPACE=nodes=1-4,workers=4-253,mem-per-worker=1M-10M:1M"}},
      {"space: 10000 combinations, none feasible",
       {"AUTOTUNE_SPACE=nodes=1-4,workers=4-253,cpus-per-worker=257,mem-per-worker=1M-10M:1M"}},
      {"space: 10000 combinations with ps, all feasible",
       {"AUTOTUNE_SPACE=nodes=1-2,workers=2-11,ps=1-5,cpus-per-ps=1-10,mem-per-ps=1M-10M:1M"}},
      {"space: 4096^8 combinations",
       {"AUTOTUNE_SPACE=nodes=1-4096,workers=1-4096,ps=1-4096,cpus-per-worker=1-4096,mem-per-worker=1M-4096M:1M,"
        "gpus-per-worker=0-64,cpus-per-ps=1-4096,mem-per-ps=1M-4096M:1M"}},
      {"space: a range of 10^6 values", {"AUTOTUNE_SPACE=workers=1-1000000"}},
      {"space: memory range of 2^30 values", {"AUTOTUNE_SPACE=mem-per-worker=1M-1073741824M:1M"}},
      {"space: 4096-character set (819 values)", {"AUTOTUNE_SPACE=" + [] {
         std::string v = "nodes=";
         for (int i = 1; v.size() + std::to_string(i).size() + 1 <= 4096; ++i) v += (i > 1 ? "|" : "") + std::to_string(i);
         return v;
       }()}},
      {"space: 4096 characters of repeated keys", {"AUTOTUNE_SPACE=" + repeat_join("nodes=1", ",", 4096)}},
      {"space: 4096-character memory mantissa", {"AUTOTUNE_SPACE=mem-per-worker=1." + digits + "G"}},
      {"space: 1 MiB of text", {"AUTOTUNE_SPACE=" + repeat_join("nodes=1", ",", 1 << 20)}},
      {"gamma: 64-character mantissa", {"AUTOTUNE_GAMMA=0." + std::string(62, '5')}},
      {"gamma: 1 MiB mantissa", {"AUTOTUNE_GAMMA=0." + std::string(1 << 20, '5')}},
      {"budget: 1 MiB of digits", {"AUTOTUNE_BUDGET=" + std::string(1 << 20, '9')}},
      {"mode: 1 MiB", {"AUTOTUNE_MODE=" + std::string(1 << 20, 'j')}},
      {"probe batches: 1 MiB of digits", {"AUTOTUNE_PROBE_BATCHES=" + std::string(1 << 20, '1')}},
      {"class: 1 MiB name", {"AUTOTUNE_CLASS=" + std::string(1 << 20, 'c')}},
      {"100000 other environment entries", {}, 100000},
  };
  const char *only = std::getenv("AT_SUBMIT_BENCH_ONLY");  // run only the cases whose name has this
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (!only || cases[i].what.find(only) != std::string::npos) run_worst(cases[i], calls, static_cast<int>(i));
}

}  // namespace

int main(int argc, char **argv) {
  int calls = 2000, worst_calls = 200;
  bool with_worst = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (a == "--same-thread") g_new_thread = false;
    else if (a == "--worst") with_worst = true;
    else if (a == "--worst-calls" && i + 1 < argc) worst_calls = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: at_submit_bench [--calls N] [--same-thread] [--worst] [--worst-calls N]\n");
      return 2;
    }
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
  if (with_worst) {
    std::printf("\nworst --autotune* values, each a new class (%d calls each):\n", worst_calls);
    worst(dir, worst_calls);
  }
  std::system(("rm -rf '" + dir + "'").c_str());
  return 0;
}
