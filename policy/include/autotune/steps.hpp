// In-allocation tuning (steps mode): the search a job runs inside its own allocation.
//
// A job submitted with an upper-bound allocation (`sbatch -N4 --exclusive --mem=0
// --autotune=CLASS --autotune-mode=steps`) profiles the first K batches of several
// configurations as short job steps, then runs the full training on the best one and gives back
// the nodes it does not need (autotune-run, tools/autotune_run.cc).  This module is the policy of
// that search, with no Slurm and no processes in it:
//
//  - the candidates are the class's candidates (tuner.hpp ClassProblem: its space, billing
//    weights and engine options, as fixed when the class was created) that fit the allocation:
//    the class's node types are replaced by one node type that is the allocation (its node count,
//    and the CPUs, memory and GPUs of its smallest node), so a configuration is a candidate when
//    Slurm's uniform request for it (config.hpp) fits every node it uses;
//  - the search warm-starts from the class's history (the trials `autotune export` lists):
//    measured trials of candidates that fit are observations, failed ones are never proposed
//    again, trials running elsewhere are pending;
//  - each step of the search is the tuner's pure decide() (tuner.hpp) on the class with the
//    allocation's node type and the history plus this job's trials, so the references, scores,
//    initial design, proposals and stopping rules are exactly the tuner's;
//  - the budget is the class's (the current epoch's), and trials of configurations that do not
//    fit the allocation do not count against it here.
//
// The winner is the candidate with the lowest mean score among measured trials of candidates that
// fit (history included).
//
// Thread safety: an AllocationSearch is a value owned by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/config.hpp"
#include "autotune/store.hpp"
#include "autotune/tuner.hpp"

namespace autotune {

// The resources a job holds.  CPUs, memory and GPUs are those of its smallest node.
struct Allocation {
  int nodes = 1;
  int cpus_per_node = 1;
  std::uint64_t mem_per_node_mb = 1;
  int gpus_per_node = 0;
  // "4 nodes x 2 CPUs, 4000 MB" (", 1 GPU" when it has GPUs).
  std::string describe() const;
};

// Slurm's compressed CPU counts (SLURM_JOB_CPUS_PER_NODE: "2(x3),1") per node, in order.
// Throws Error(invalid_argument) naming `field` for anything else.
std::vector<int> parse_cpus_per_node(std::string_view field, std::string_view text);

// Whether Slurm's request for `c` (config.hpp) fits `a`: at most a.nodes nodes, and on each the
// most tasks block placement puts there within the node's CPUs, memory and GPUs.
bool fits(const Configuration &c, const Allocation &a);

class AllocationSearch {
 public:
  // `cls` and `history` as `autotune export` gives them (TrialRecord ids must be distinct).
  // Throws Error(invalid_argument) when no configuration of the class's space fits `a` (the
  // message says why for one of them), Error(corrupt) for damaged class settings.
  AllocationSearch(const ClassRecord &cls, std::vector<TrialRecord> history, const Allocation &a,
                   ProposeFn propose);

  const Allocation &allocation() const { return alloc_; }
  // The class's problem with the allocation as its only node type: candidates fit it.
  const ClassProblem &problem() const { return problem_; }
  std::vector<Configuration> candidates() const;
  // Is `c` one of the candidates (in the class's space and fitting the allocation)?
  bool is_candidate(const Configuration &c) const;
  // Has `c` been tried (finished, in the history or here)?
  bool tried(const Configuration &c) const;

  // The class's trial budget for this epoch, and how much of it the history used on candidates.
  std::size_t budget() const { return problem_.stop.budget; }
  std::size_t used_before() const { return used_before_; }
  // Trials this search has recorded.
  std::size_t recorded() const { return recorded_; }

  struct Next {
    std::optional<Configuration> config;  // nullopt: the search stopped
    TrialOrigin origin = TrialOrigin::initial;  // initial (the spread-out first batch) or model
                                                // (expected improvement)
    std::string reason;  // why this configuration; or why the search stopped
    std::string stop_rule;  // budget | exhausted | improvement | ei | none ("" while it goes on)
  };
  // The engine's next configuration, or that the search stopped.
  Next next();

  // A finished trial of this search: measured (samples_per_s > 0), or failed / timed out.
  // Returns its score when it was measured and the class has references.
  std::optional<double> record(const Configuration &c, std::optional<double> samples_per_s,
                               bool timed_out);

  struct Best {
    Configuration config;
    double samples_per_s = 0;  // of its best trial
    double score = 0;          // mean over its trials
    bool here = false;         // measured by this search (else only in the history)
    int measured = 0;          // successful trials of it
  };
  // Every measured candidate, the lowest mean score first (ties: the configuration's text).
  std::vector<Best> ranked() const;
  std::optional<Best> best() const;

 private:
  void refresh();
  Allocation alloc_;
  ProposeFn propose_;
  ClassRecord local_;  // the class, with the allocation as its node type
  std::vector<TrialRecord> trials_;
  ClassProblem problem_;
  Decision last_;
  std::size_t used_before_ = 0, recorded_ = 0;
  std::int64_t next_id_ = 0;
  int next_seq_ = 0;
  double clock_ = 0;
};

}  // namespace autotune
