// Helper of tests/unit/store_concurrency.sh: drives a real store file from many processes.
//
//   store_stress init DB                 create the store and class (uid 1000, "stress")
//   store_stress record DB JOB           record one measured trial for Slurm job JOB
//   store_stress loop DB FIRST           record trials for jobs FIRST, FIRST+1, ... forever,
//                                        printing each job on stdout once its trial is done
//   store_stress check DB EXPECTED|-     verify integrity; with EXPECTED, exactly that many
//                                        trials, each done with its one measurement
//   store_stress list DB                 one line per trial: "JOB done|running"
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "autotune/error.hpp"
#include "autotune/store.hpp"

using namespace autotune;

namespace {
const char *kCfg = "nodes=1,workers=1,ps=1,cpus-per-worker=1,mem-per-worker=256M,cpus-per-ps=1,mem-per-ps=256M";

void record(Store &s, std::int64_t class_id, std::int64_t job) {
  // What ingest does for a job: find or create the job's trial, then finish it once.
  std::optional<TrialRecord> t = s.trial_by_job(job, std::nullopt);
  if (!t) {
    try {
      t = s.add_trial(class_id, kCfg, TrialOrigin::model, "stress", TrialStatus::running, job);
    } catch (const Error &e) {
      if (e.code() != Errc::invalid_argument) throw;  // lost the race: the other one created it
      t = s.trial_by_job(job, std::nullopt);
    }
  }
  Measurement m;
  m.samples_per_s = static_cast<double>(job);
  m.time_s = 1.0;
  m.cost = 2.0;
  m.raw = std::string(2000, 'x');  // make each write span several pages
  s.finish_trial(t->id, TrialStatus::done, m, 1.0);
}
}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: store_stress init|record|loop|check|list DB [ARG]\n");
    return 2;
  }
  const std::string cmd = argv[1], db = argv[2];
  try {
    if (cmd == "init") {
      Store s(db, {true, false, 30000});
      s.ensure_class(1000, "stress", ClassSettings{});
      return 0;
    }
    Store s(db, {false, false, 60000});
    const std::int64_t class_id = s.find_class(1000, "stress")->id;
    if (cmd == "record") {
      record(s, class_id, std::atoll(argv[3]));
      return 0;
    }
    if (cmd == "loop") {
      for (std::int64_t job = std::atoll(argv[3]);; ++job) {
        record(s, class_id, job);
        std::printf("%lld\n", static_cast<long long>(job));
        std::fflush(stdout);
      }
    }
    if (cmd == "list") {
      for (const auto &t : s.trials(class_id))
        std::printf("%lld %s\n", static_cast<long long>(t.job_id.value_or(-1)),
                    t.status == TrialStatus::done ? "done" : t.status == TrialStatus::running ? "running" : "other");
      return 0;
    }
    if (cmd == "check") {
      const std::string integrity = s.integrity_check();
      if (integrity != "ok") {
        std::printf("integrity: %s\n", integrity.c_str());
        return 1;
      }
      auto trials = s.trials(class_id);
      int bad = 0;
      for (const auto &t : trials) {
        // A trial is either still running (its writer died between the two transactions) or done
        // with exactly its own measurement.
        if (t.status == TrialStatus::done &&
            (!t.measurement || t.measurement->samples_per_s != static_cast<double>(*t.job_id))) {
          std::printf("trial %lld: done without its measurement\n", static_cast<long long>(t.id));
          ++bad;
        }
      }
      std::printf("trials=%zu\n", trials.size());
      if (argc > 3 && std::string(argv[3]) != "-") {
        const size_t expected = static_cast<size_t>(std::atoll(argv[3]));
        size_t done = 0;
        for (const auto &t : trials) done += t.status == TrialStatus::done;
        if (trials.size() != expected || done != expected) {
          std::printf("expected %zu done trials, found %zu trials (%zu done)\n", expected, trials.size(), done);
          return 1;
        }
      }
      return bad ? 1 : 0;
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "store_stress %s: %s\n", cmd.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "store_stress: unknown command %s\n", cmd.c_str());
  return 2;
}
