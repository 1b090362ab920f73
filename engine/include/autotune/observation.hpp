// One finished trial, as the engine sees it: which candidate, and its score or that it failed.
#pragma once

#include <cstddef>

namespace autotune {

struct Observation {
  std::size_t index = 0;  // into the CandidateSet
  double score = 0;       // the gamma objective (objective.hpp): finite and > 0 unless failed
  bool failed = false;    // failed or timed out: the candidate is infeasible

  static Observation ok(std::size_t index, double score) { return {index, score, false}; }
  static Observation failure(std::size_t index) { return {index, 0.0, true}; }
};

}  // namespace autotune
