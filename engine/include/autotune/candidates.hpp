// A finite set of candidates the engine chooses from, and their encoding as model inputs.
//
// Each candidate is described by feature columns, numeric or categorical.  The same class serves
// cluster configurations (from_candidates(): nodes, workers, ps, per-role CPUs/memory/GPUs and
// the node type) and generic tables of measured configurations (autotune replay).
//
// Encoding (the inputs of the Gaussian process), over the whole set, not only what was tried:
// - a numeric column whose values are all > 0 is taken on a log scale (counts, CPUs, memory:
//   doubling a resource is the same step whether it goes 1->2 or 16->32); a column whose
//   minimum is 0 (ps, GPUs) on log(1 + x); other numeric columns (or Scale::linear) linearly;
//   then min-max scaled to [0, 1];
// - a categorical column becomes one-hot columns scaled by 1/sqrt(2), so two different levels
//   are at distance 1, the same as the two ends of a numeric column;
// - a column with a single distinct value carries no information and is dropped, and so is a
//   numeric column whose encoding repeats an earlier one's.
// The columns of one feature share one length scale (groups()).
//
// Thread safety: immutable after construction; concurrent reads are safe.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <string>
#include <vector>

#include "autotune/space.hpp"

namespace autotune {

enum class Scale {
  automatic,    // numeric: log when all > 0, log1p when the minimum is 0, else linear
  linear,       // numeric, never logged
  categorical,  // labels
};

struct FeatureColumn {
  std::string name;
  Scale scale = Scale::automatic;
  std::vector<double> numbers;      // numeric: one per candidate
  std::vector<std::string> labels;  // categorical: one per candidate
};

class CandidateSet {
 public:
  CandidateSet() = default;
  // Preconditions (throws Error(invalid_argument)): at least one candidate, every column of the
  // same length, numeric values finite, names distinct.
  explicit CandidateSet(std::vector<FeatureColumn> columns);

  // The features of cluster configurations, all numeric: the counts (nodes, workers, ps), the
  // per-role resources (cpus-per-worker, mem-per-worker in MB, gpus-per-worker, cpus-per-ps,
  // mem-per-ps; the ps ones 0 without ps), the totals of the allocation (total-cpus, total-mem,
  // total-gpus: what the ranks get together, often what the run time depends on most, e.g. a
  // data set that fits in the total memory or not), and the node type by what it provides
  // (node-cpus, node-mem, node-gpus) rather than by name, so what is learnt on one type carries
  // over to a similar one.
  static CandidateSet from_candidates(const std::vector<Candidate> &candidates,
                                      const Inventory &inventory);

  std::size_t size() const { return size_; }
  const std::vector<FeatureColumn> &columns() const { return columns_; }

  // (size() x D) inputs in [0, 1] (one-hot columns in {0, 1/sqrt(2)}).  D may be 0 when every
  // column is constant.
  const Eigen::MatrixXd &encoded() const { return encoded_; }
  // (D): for each encoded column, its feature group in [0, feature_groups()).
  const std::vector<int> &groups() const { return groups_; }
  int feature_groups() const { return feature_groups_; }
  // The encoded columns of numeric features (ascending): the ones with an order to warp.
  const std::vector<int> &numeric_columns() const { return numeric_columns_; }
  // Whether a categorical feature varies (has one-hot columns).
  bool has_categorical() const {
    return numeric_columns_.size() < static_cast<std::size_t>(encoded_.cols());
  }
  // The names of the feature groups (the columns that vary).
  const std::vector<std::string> &group_names() const { return group_names_; }

  // "nodes=4,vm_family=c4,..." (numbers in their shortest text form).
  std::string label(std::size_t i) const;

 private:
  std::size_t size_ = 0;
  std::vector<FeatureColumn> columns_;
  Eigen::MatrixXd encoded_;
  std::vector<int> groups_;
  std::vector<int> numeric_columns_;
  int feature_groups_ = 0;
  std::vector<std::string> group_names_;
};

}  // namespace autotune
