// A model of a data-parallel job's run time by its form, with a posterior over its parameters.
//
// On N nodes with V vCPUs and M GiB of memory in all, the run time is modelled as
//   T = (serial + work / V^efficiency + per_node x N)            Amdahl's law, plus an overhead
//       x spill x sqrt(data / M)            when M is below the data set (it spills to disk)
//       x (1 + 0.3 (need - M/V) / need)     when the memory per vCPU is below a need
// and the job fails when M is below a share of the data set: eight parameters per workload.  The
// model knows this form, not the workload's values: a particle posterior (sequential Monte Carlo,
// Metropolis moves) over the eight, drawn from broad ranges set once for any such job (serial
// 1 s - 3 h, work 100 - 10^7 vCPU-seconds, efficiency 0.3 - 1, per-node overhead 0.01 - 100 s,
// data set 5 - 5000 GiB, spill 1 - 6, need 0.25 - 16 GiB per vCPU, failing share 0 - 1), and a
// log-normal noise of sd 0.1 on each measured run time.  A trial that runs where a particle
// predicts it fails, or fails where it predicts it runs, weighs that particle by exp(-20).
//
// bench/structured-search measures the same search in Python; bench/README.md, "A search that
// models the run time by its structure", says where the form holds and where it does not (a
// workload that fails on few nodes whatever their memory).
//
// Thread safety: functions only; each call owns its state.
#ifndef AUTOTUNE_RUN_TIME_MODEL_HPP
#define AUTOTUNE_RUN_TIME_MODEL_HPP

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotune/candidates.hpp"
#include "autotune/design.hpp"  // RunTimeColumns

namespace autotune {

// Each candidate's node count, vCPUs and GiB in all.
struct Allocations {
  std::vector<double> nodes, cpus, mem_gib;
  std::size_t size() const { return nodes.size(); }
};

// The allocations of `cs`'s candidates, or nullopt when a named column is missing, categorical,
// or has a value that is not > 0.
std::optional<Allocations> allocations_of(const CandidateSet &cs, const RunTimeColumns &columns);
// Why allocations_of() gives nullopt, naming the column or configuration ("" when it does not).
std::string allocations_error(const CandidateSet &cs, const RunTimeColumns &columns);

struct Particles;  // run_time_model.cc

// The posterior, as `draws` particles of equal weight (resampled), and its leave-one-out
// predictions of the trials it was given.  Copies share the draws; immutable.
class RunTimePosterior {
 public:
  std::size_t draws() const;
  // Every draw's log run time at `candidate` and whether it runs there (arrays of draws()).
  void predict(std::size_t candidate, double *log_time, char *runs) const;
  // At each candidate i with skip[i] == 0, the sum over the draws that run there of
  // max(best - T x factor[i], 0), T the draw's run time at i: draws() times the expected
  // improvement on `best` of a score that is the run time times a factor.  0 where skip[i] != 0.
  // Throws Error(invalid_argument) unless factor and skip have one entry per candidate.
  std::vector<double> improvement(const std::vector<double> &factor, double best,
                                  const std::vector<char> &skip) const;
  // At each trial that ran, in order: its log run time predicted by the posterior without it
  // (importance-weighted leave-one-out, truncated; among the particles that predict it runs;
  // NaN when none does).
  const std::vector<double> &loo() const { return loo_; }
  // How many of the trials the posterior does not explain: a failure that most of its weight
  // predicts to run, or a run that most of it predicts to fail (the form cannot hold them all).
  std::size_t unexplained() const { return unexplained_; }

 private:
  friend RunTimePosterior run_time_posterior(const Allocations &, const std::vector<std::size_t> &,
                                             const std::vector<double> &, std::uint64_t,
                                             std::size_t, std::size_t);
  std::shared_ptr<const Particles> draws_;
  std::shared_ptr<const Allocations> allocations_;
  std::vector<double> loo_;
  std::size_t unexplained_ = 0;
};

// The posterior given the trials: `index` the candidates tried, `log_time` their log run times
// (NaN: the trial failed), in the order they ran.  `particles` from 64 to 100,000, `draws` from
// 1 to particles.  The same arguments give the same result.  A call whose trials begin with the
// previous call's in the same thread (the next step of a search) resumes from its particles.
RunTimePosterior run_time_posterior(const Allocations &a, const std::vector<std::size_t> &index,
                                    const std::vector<double> &log_time, std::uint64_t seed,
                                    std::size_t particles, std::size_t draws);

}  // namespace autotune

#endif
