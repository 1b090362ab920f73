// Shared by the example programs: command-line flags (validated before MPI starts, so a bad flag
// gets one line from rank 0 and exit status 2 on every rank, never a hang), the Fashion-MNIST
// IDX reader (gzip, through zlib), multinomial logistic regression kernels, and the straggler
// delay injector.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace examples {

// This process's rank as the launcher tells it, before MPI_Init (0 when unknown).
int launcher_rank();

// A flag table: --name VALUE or --name=VALUE; --help prints `usage` and the table.
class Flags {
 public:
  Flags(std::string prog, std::string usage) : prog_(std::move(prog)), usage_(std::move(usage)) {}
  void add(const std::string &name, const std::string &value_name, std::string def,
           const std::string &help);
  // Parses argv (before MPI_Init); on --help prints the help (rank 0) and exits 0; on a bad flag
  // prints one line (rank 0) and exits 2 on every rank.
  void parse(int argc, char **argv);
  std::string str(const std::string &name) const;
  long long integer(const std::string &name, long long lo, long long hi) const;
  double real(const std::string &name, double lo, double hi) const;
  bool given(const std::string &name) const;
  // The message of an invalid value: rank 0 prints it, then every rank (all with the same flags)
  // initializes MPI if needed, waits for the others, finalizes and exits with status 2.
  [[noreturn]] void fail(const std::string &msg) const;

 private:
  struct Spec {
    std::string value_name, def, help, value;
    bool given = false;
  };
  std::string prog_, usage_;
  std::vector<std::string> order_;
  std::map<std::string, Spec> specs_;
};

// Staleness flag: a number >= 0, or "asp".  Returns ssp::kAsync for asp; -1 when malformed.
int parse_staleness(const std::string &v);

// The parameter-server flags the libssp examples share: --staleness, --servers,
// --logical-servers, --executors, --task-ms, --task-max, --tasks-per-clock, --fresh-reads and
// the straggler's three.
struct SspFlagHelp {
  std::string shards;             // what the logical servers hold, e.g. "model shards"
  std::string executors_default;  // --executors' default, e.g. "4 per worker"
  std::string task_ms;            // --task-ms' default
  std::string unit;               // what the straggler is slowed on, e.g. "batches"
  std::string work_unit;          // a micro-task's unit of work, e.g. "mini-batches"
};
struct SspFlags {
  int staleness = 2;
  int servers = -1;    // -1: $AUTOTUNE_PS, else 1
  int logical = 16;
  int executors = 0;   // 0: the program's default
  double task_ms = 5;
  std::uint64_t task_max = 0;  // 0: no bound
  int tasks_per_clock = 0;
  bool fresh_reads = true;
  int straggler = -1;  // -1: none
  double straggler_factor = 1;
  double straggler_delay_s = 0;
};
void add_ssp_flags(Flags &f, const SspFlagHelp &h);
// Validates them (before MPI_Init): a bad one fails through f.fail().
SspFlags ssp_flags(const Flags &f);

// A data set argument: a path (contains '/') as is, else /usr/share/datasets/NAME (where Debian's
// dataset-* packages install).
std::string dataset_dir(const std::string &arg);

struct Images {
  int n = 0;
  int dim = 0;                  // 784 for (Fashion-)MNIST
  std::vector<std::uint8_t> x;  // n x dim pixels
  std::vector<std::uint8_t> y;  // n labels 0..9
};
// Reads DIR/PREFIX-images-idx3-ubyte.gz and DIR/PREFIX-labels-idx1-ubyte.gz: all the images, or
// the first max_samples when it is above 0 (the rest are not decompressed).  Throws
// std::runtime_error naming the file and what is wrong.
Images load_idx(const std::string &dir, const std::string &prefix, int max_samples = 0);

// Multinomial logistic regression: model W is (dim + 1) x 10 (last row: bias), row-major.
constexpr int kClasses = 10;
// grad (same shape) += sum over samples of x (p - onehot(y)); returns the summed loss.
double lr_gradient(const Images &d, const std::uint32_t *idx, int n, const float *w, float *grad);
// Accuracy of W on the first `limit` samples of d.
double lr_accuracy(const Images &d, const float *w, int limit);

// Slows this process down: after each batch that took `batch_s`, owe (factor-1)*batch_s +
// delay_s of sleep, paid in sleeps of at least 1 ms (so short batches are slowed accurately).
class Straggler {
 public:
  Straggler(bool active, double factor, double delay_s)
      : active_(active), factor_(factor), delay_s_(delay_s) {}
  void after_batch(double batch_s);
  double slept_s() const { return slept_; }

 private:
  bool active_;
  double factor_, delay_s_;
  double owed_ = 0, slept_ = 0;
};

double now_s();

}  // namespace examples
