// The configuration space: which configurations a class may try.
//
// A space spec is what users write in --autotune-space and admins in autotune.conf
// (DefaultSpace, SpaceLimits): comma-separated DIMENSION=VALUES items, one per dimension, with the
// dimension names of config.hpp:
//
//   nodes=1-4,workers=2-16:2,ps=0|1,cpus-per-worker=1-8:x2,mem-per-worker=512M-4G
//
// VALUES is one of
//   4          a single value
//   1-8        a range: every integer for counts and CPUs; for memory, powers-of-two steps from the
//              low end (256M-2G = 256M, 512M, 1G, 2G; the high end is included only when reached)
//   2-16:2     a range with a linear step (memory steps are sizes: 1G-4G:512M)
//   1-16:x2    a range with a geometric factor (an integer >= 2)
//   1|2|4|8    an explicit set (each element a single value)
// Memory values use the size syntax of units.hpp (a bare number is in megabytes).  A dimension
// that is not given takes its default: nodes=1, workers=one per node, ps=0, cpus-per-worker=1,
// mem-per-worker=256M, gpus-per-worker=0, cpus-per-ps=1, mem-per-ps=256M.
//
// Feasibility (enumerate()): a configuration runs on exactly `nodes` nodes of one node type of the
// inventory.  Ranks are placed by BALANCED BLOCK placement, workers first: ranks are numbered
// workers 0..W-1 then parameter servers W..W+S-1; with R = W+S ranks on N nodes, node i (0-based)
// takes the next floor(R/N) + (i < R mod N ? 1 : 0) consecutive ranks.  (This is Slurm's block
// distribution of `srun -N N -n R --distribution=block`; the launcher places ranks the same way.)
// Every node gets at least one rank (N <= R), and on every node the sum of the CPUs, memory and
// GPUs of its ranks fits the node type's.
//
// Thread safety: SpaceSpec and Inventory are values; the functions are pure.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/config.hpp"

namespace autotune {

enum class Dim : int {
  nodes = 0,
  workers,
  ps,
  cpus_per_worker,
  mem_per_worker,
  gpus_per_worker,
  cpus_per_ps,
  mem_per_ps,
};
inline constexpr int kDimCount = 8;

// "nodes", "workers", "ps", ... (the kDim* names of config.hpp).
const char *dim_name(Dim d);
// Memory dimensions hold megabytes and take sizes.
bool dim_is_memory(Dim d);
// The allowed range of a dimension's values, for validation.
std::uint64_t dim_min(Dim d);
std::uint64_t dim_max(Dim d);

// The values of one dimension, sorted ascending and distinct (memory in MB).
using DimValues = std::vector<std::uint64_t>;

// Bounds on what a space may ask for, so that job_submit (inside slurmctld) does bounded work for
// any --autotune-space: at most kMaxSpaceText characters of text, kMaxDimValues values per
// dimension (counted before a range is expanded), and kMaxCombinations combinations before
// feasibility (node types x the product of the dimensions' value counts, counted before anything
// is enumerated).  Each is refused with a message naming the limit and what the space asked for.
inline constexpr std::size_t kMaxSpaceText = 4096;
inline constexpr std::size_t kMaxDimValues = 4096;
inline constexpr std::uint64_t kMaxCombinations = 10000;
// What kMaxCombinations was before it bounded job_submit's work: the spaces of classes stored
// since are walked with it (outside slurmctld: ingest's refit, autotune show).
inline constexpr std::uint64_t kMaxStoredCombinations = 2000000;
// The longest text of a space a class keeps: format() writes every value out, so a space given
// in kMaxSpaceText characters of ranges (kMaxDimValues values per dimension) can be longer.
inline constexpr std::size_t kMaxStoredSpaceText = 1 << 20;

class SpaceSpec {
 public:
  // Parses the syntax above.  Throws Error(invalid_argument) with "FIELD: DIMENSION: ..." naming
  // the dimension, quoting the value and saying what is allowed; a text longer than `max_text`
  // (kMaxSpaceText for what a user or the site writes, kMaxStoredSpaceText for a class's stored
  // format()) and a dimension of more than kMaxDimValues values are refused before anything is
  // allocated for them.
  static SpaceSpec parse(std::string_view text, std::string_view field = "--autotune-space",
                         std::size_t max_text = kMaxSpaceText);

  bool has(Dim d) const { return dims_[static_cast<int>(d)].has_value(); }
  // The given values; precondition has(d).
  const DimValues &given(Dim d) const { return *dims_[static_cast<int>(d)]; }
  void set(Dim d, DimValues v);  // sorts and deduplicates; precondition: !v.empty()
  void clear(Dim d) { dims_[static_cast<int>(d)].reset(); }
  bool empty() const;

  // Canonical text: the given dimensions in config.hpp order, each as an explicit set
  // ("nodes=1|2|4,mem-per-worker=512M|1G").  parse(format(), field, kMaxStoredSpaceText) == *this.
  std::string format() const;
  bool operator==(const SpaceSpec &o) const { return dims_ == o.dims_; }

 private:
  std::array<std::optional<DimValues>, kDimCount> dims_;
};

// The space a job searches: each dimension from `user` when given, else from `defaults`
// (DefaultSpace), else the built-in default.  Every user value must lie within the range
// [min, max] of the same dimension in `limits` (SpaceLimits) when limits has it; otherwise throws
// Error(invalid_argument): "FIELD: nodes: 1-64 is outside the site's limits 1-16 (SpaceLimits)".
// Default values outside the limits are dropped (a site whose DefaultSpace lies entirely outside
// its SpaceLimits is rejected when autotune.conf is loaded).
SpaceSpec restrict_space(const SpaceSpec &user, const SpaceSpec &defaults, const SpaceSpec &limits,
                         std::string_view field = "--autotune-space");

// How many combinations enumerate() would look at for `space` on `node_types` node types (the
// built-in default for a dimension not given; with ps = 0 the server dimensions collapse).  A
// double: it may exceed every integer type for a space that is refused anyway.
double space_combinations(const SpaceSpec &space, std::size_t node_types = 1);
// Throws Error(invalid_argument) "FIELD: the space has N combinations (...); at most
// LIMIT are allowed ..." when space_combinations() exceeds `limit`.
void check_space_size(const SpaceSpec &space, std::size_t node_types = 1,
                      std::string_view field = "--autotune-space",
                      double limit = static_cast<double>(kMaxCombinations));

// One kind of node of the cluster.
struct NodeType {
  std::string name;
  int count = 1;             // nodes of this type
  int cpus = 1;              // per node
  std::uint64_t mem_mb = 0;  // per node
  int gpus = 0;              // per node
  std::vector<std::string> features;
  double billing_weight = 1.0;  // billing rate of one node (per second of use)
};

struct Inventory {
  std::vector<NodeType> types;
  // Throws Error(invalid_argument) for an empty inventory, duplicate names, count/cpus < 1,
  // mem_mb < 1, gpus < 0 or a negative billing weight.
  void validate() const;
};

// Which ranks go on each node (the placement rule above).
struct Placement {
  std::vector<int> workers;  // per node
  std::vector<int> servers;  // per node
};
// Precondition: c.validate() holds (1 <= nodes <= ranks).
Placement place(const Configuration &c);

// Whether `c` fits on `t` by the rule above: the verdict of infeasible_reason(c, t).empty(), in
// constant time and without allocating (only the first node of each run of nodes with the same
// rank count and roles is looked at; the other nodes of a run carry the same load).
bool fits(const Configuration &c, const NodeType &t);

// Empty when `c` fits on `t` by the rule above, else why not ("needs 3 nodes, type 'small' has 2",
// "node 0 needs 12 CPUs, type 'small' has 8", ...).
std::string infeasible_reason(const Configuration &c, const NodeType &t);

struct Candidate {
  Configuration config;
  std::size_t node_type = 0;  // index into Inventory::types
  double billing_rate = 0;    // node type's billing weight x nodes: the cost of one second
};

struct EnumerateOptions {
  std::vector<std::string> required_features;  // node types must have all of them
  std::size_t max_candidates = 20000;
  // The combinations refused before anything is enumerated.  A class keeps the space it was
  // created with: one stored before kMaxCombinations was lowered is walked with
  // kMaxStoredCombinations (outside slurmctld: ingest, autotune show).
  double max_combinations = static_cast<double>(kMaxCombinations);
};


// Every feasible (configuration, node type) of the space, in a fixed order (node types in
// inventory order, then dimensions in config.hpp order, each ascending).  When ps = 0 the server
// dimensions are irrelevant and take their smallest value.  Throws Error(invalid_argument) when
// the space has more than kMaxCombinations combinations (checked before enumerating anything) or
// more than max_candidates feasible ones, and when nothing is feasible (the message gives the
// reason for one rejected configuration).  Its work is bounded by kMaxCombinations constant-time
// checks (fits()).
std::vector<Candidate> enumerate(const SpaceSpec &space, const Inventory &inventory,
                                 const EnumerateOptions &options = {});

// The same walk in the same order, handing each feasible candidate to `visit` instead of keeping
// it (no memory in proportion to the space; options.max_candidates does not apply).  Returns how
// many it visited; throws as enumerate() does when the space has too many combinations or nothing
// is feasible.
std::size_t enumerate_each(const SpaceSpec &space, const Inventory &inventory, const EnumerateOptions &options,
                           const std::function<void(const Candidate &)> &visit);

}  // namespace autotune
