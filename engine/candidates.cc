#include "autotune/candidates.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

CandidateSet::CandidateSet(std::vector<FeatureColumn> columns) : columns_(std::move(columns)) {
  if (columns_.empty()) throw_invalid("candidate set: no feature columns");
  std::set<std::string> names;
  for (const auto &c : columns_) {
    if (!names.insert(c.name).second)
      throw_invalid("candidate set: column '" + c.name + "' given twice");
    const size_t n = c.scale == Scale::categorical ? c.labels.size() : c.numbers.size();
    if (&c == &columns_.front()) size_ = n;
    if (n != size_) throw_invalid("candidate set: column '" + c.name + "' has another length");
    if (c.scale != Scale::categorical)
      for (double v : c.numbers)
        if (!std::isfinite(v))
          throw_invalid("candidate set: column '" + c.name + "' has a non-finite value");
  }
  if (size_ == 0) throw_invalid("candidate set: no candidates");

  // Encode column by column into a list of encoded columns.
  std::vector<Eigen::VectorXd> cols;
  std::vector<bool> numeric_col;
  for (const auto &c : columns_) {
    if (c.scale == Scale::categorical) {
      std::map<std::string, int> levels;
      for (const auto &l : c.labels) levels.emplace(l, 0);
      if (levels.size() < 2) continue;
      int k = 0;
      for (auto &lv : levels) lv.second = k++;
      const double h = 1.0 / std::sqrt(2.0);
      for (int j = 0; j < k; ++j) {
        Eigen::VectorXd v(size_);
        for (size_t i = 0; i < size_; ++i) v[i] = levels[c.labels[i]] == j ? h : 0.0;
        cols.push_back(v);
        numeric_col.push_back(false);
        groups_.push_back(feature_groups_);
      }
    } else {
      const auto [mn, mx] = std::minmax_element(c.numbers.begin(), c.numbers.end());
      if (*mn == *mx) continue;
      Eigen::VectorXd v(size_);
      for (size_t i = 0; i < size_; ++i) {
        const double x = c.numbers[i];
        if (c.scale == Scale::linear || *mn < 0)
          v[i] = x;
        else if (*mn > 0)
          v[i] = std::log(x);
        else
          v[i] = std::log1p(x);
      }
      const double lo = v.minCoeff(), hi = v.maxCoeff();
      v = (v.array() - lo) / (hi - lo);
      // A column that repeats an earlier numeric one (e.g. memory per node when each node type
      // has its own CPU count) adds nothing but a length scale to fit.
      bool repeat = false;
      for (size_t k = 0; k < cols.size() && !repeat; ++k)
        repeat = numeric_col[k] && (cols[k] - v).cwiseAbs().maxCoeff() < 1e-12;
      if (repeat) continue;
      numeric_columns_.push_back(static_cast<int>(cols.size()));
      cols.push_back(v);
      numeric_col.push_back(true);
      groups_.push_back(feature_groups_);
    }
    group_names_.push_back(c.name);
    ++feature_groups_;
  }
  encoded_.resize(static_cast<Eigen::Index>(size_), static_cast<Eigen::Index>(cols.size()));
  for (size_t j = 0; j < cols.size(); ++j) encoded_.col(static_cast<Eigen::Index>(j)) = cols[j];
}

CandidateSet CandidateSet::from_candidates(const std::vector<Candidate> &candidates,
                                           const Inventory &inventory) {
  const char *names[] = {kDimNodes,        kDimWorkers,       kDimServers,       kDimCpusPerWorker,
                         kDimMemPerWorker, kDimGpusPerWorker, kDimCpusPerServer, kDimMemPerServer,
                         "total-cpus",     "total-mem",       "total-gpus",      "node-cpus",
                         "node-mem",       "node-gpus"};
  std::vector<FeatureColumn> cols(std::size(names));
  for (size_t i = 0; i < cols.size(); ++i) cols[i].name = names[i];
  for (const auto &c : candidates) {
    if (c.node_type >= inventory.types.size())
      throw_invalid("candidate set: node type index out of range");
    const NodeType &t = inventory.types[c.node_type];
    const Configuration &k = c.config;
    const double w = k.counts.workers, s = k.counts.servers;
    const double cps = s > 0 ? k.server.cpus : 0,
                 mps = s > 0 ? static_cast<double>(k.server.mem_mb) : 0;
    const double v[] = {static_cast<double>(k.counts.nodes),
                        w,
                        s,
                        static_cast<double>(k.worker.cpus),
                        static_cast<double>(k.worker.mem_mb),
                        static_cast<double>(k.worker.gpus),
                        cps,
                        mps,
                        w * k.worker.cpus + s * cps,
                        w * static_cast<double>(k.worker.mem_mb) + s * mps,
                        w * k.worker.gpus,
                        static_cast<double>(t.cpus),
                        static_cast<double>(t.mem_mb),
                        static_cast<double>(t.gpus)};
    for (size_t i = 0; i < cols.size(); ++i) cols[i].numbers.push_back(v[i]);
  }
  return CandidateSet(std::move(cols));
}

std::string CandidateSet::label(std::size_t i) const {
  std::string s;
  for (const auto &c : columns_) {
    if (!s.empty()) s += ',';
    s += c.name + "=" + (c.scale == Scale::categorical ? c.labels[i] : format_double(c.numbers[i]));
  }
  return s;
}

}  // namespace autotune
