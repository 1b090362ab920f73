// The gamma objective: one number per trial that trades time against cost.
//
//   score = (1 - gamma) * T / T_ref + gamma * C / C_ref          (lower is better)
//
// T is the measured time (per sample or per job, whichever the class uses, consistently), C the
// cost of the run: billing rate x nodes x T, where the caller supplies the billing rate (Slurm's
// billing TRES weight of the node type, per node and per second).  gamma = 0 ranks by time only
// (fastest), gamma = 1 by cost only (cheapest).
//
// The references T_ref and C_ref are fixed once per class, from its first successful trial, and
// never change afterwards: a score therefore never moves when later trials are added, and 1.0 means
// "as good as the first configuration tried".  (Normalizing by the maximum over what happened to be
// tried would make every score depend on the worst trial, and the ranking of two configurations
// could flip when a third is measured.)
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

namespace autotune {

struct Reference {
  double time = 0;  // T_ref > 0
  double cost = 0;  // C_ref > 0
  bool valid() const { return time > 0 && cost > 0; }
};

// The reference of a class from its first successful trial.  Throws Error(invalid_argument) unless
// time > 0 and cost > 0.
Reference make_reference(double time, double cost);

// C = billing_rate * nodes * time.  billing_rate >= 0, nodes >= 1, time >= 0.
double run_cost(double billing_rate, int nodes, double time);

// The score above.  Preconditions (throws Error(invalid_argument) otherwise): gamma in [0, 1],
// ref.valid(), time >= 0, cost >= 0.
double score(double time, double cost, const Reference &ref, double gamma);

// Parses a user-supplied gamma ("0.3"); the message names `field` and says "from 0 to 1".
double parse_gamma(std::string_view field, std::string_view value);

}  // namespace autotune
