// ssp::Context: a staleness-bounded parameter server over an MPI communicator.
//
// Roles: the first `servers` ranks of the communicator are parameter servers (they hold the
// tables' shards; rank 0 also runs the micro-task scheduler and writes the profiling result), the
// other ranks are workers.  Servers do their work inside the collective calls below (barrier(),
// run(), checkpoint(), pull_all(), finish()): they serve the workers until every worker has
// arrived at the same call.
//
// MPI hygiene (after horovod's mpi_context): if MPI is not initialized the Context initializes it
// (MPI_THREAD_FUNNELED) and finalizes it when destroyed; otherwise it leaves MPI as it found it.
// It always works on its own duplicate of the communicator, so its messages never mix with the
// application's.  With MPI_THREAD_SINGLE or FUNNELED it must be used from MPI's main thread
// (checked).  The Context is not thread-safe: use it from one thread.
//
// A complete program (mpicxx app.cc $(pkg-config --cflags --libs ssp); mpirun -np 4 ./app):
//
//   #include <ssp/ssp.hpp>
//   int main() {
//     ssp::Options o; o.staleness = 2; o.servers = 1;
//     ssp::Context ctx(MPI_COMM_WORLD, o);            // collective
//     auto w = ctx.table<double>("w", 100, 4);        // collective
//     if (ctx.is_worker()) {
//       for (int c = 0; c < 10; ++c) {
//         auto row = w.get(ctx.worker_index());       // sees updates of clocks <= c-3, own writes
//         w.inc(ctx.worker_index(), 0, 1.0);
//         ctx.clock();
//       }
//     }
//     ctx.barrier();                                  // servers serve until all workers arrive
//     auto all = w.pull_all();                        // every rank: the final table
//   }                                                 // ~Context: finish(), MPI_Finalize if ours
//
// Errors: Error(invalid_argument) for bad options, shapes, jobs (on every rank alike);
// Error(corrupt|not_found|io) from snapshots; Error(internal) for protocol violations.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ssp/consistency.hpp"
#include "ssp/error.hpp"
#include "ssp/job.hpp"
#include "ssp/options.hpp"
#include "ssp/snapshot.hpp"
#include "ssp/table.hpp"

namespace ssp {

enum class Role { server, worker };

// What restore() found.
struct SnapshotInfo {
  std::string id;          // e.g. "c000000000120"
  std::int64_t clock = 0;  // every worker resumes at this clock
  int workers = 0;         // the rank counts it was taken with
  int servers = 0;
  bool has_job = false;   // it holds a suspended job (scheduler and executors)
  int job_executors = 0;  // that job's shape, which a resumed Job must repeat
  std::uint64_t job_units = 0;
  int job_epochs = 0;
};

class Context {
 public:
  // Collective over `comm`.  Throws Error(invalid_argument) for bad options on every rank (after
  // finalizing MPI if it initialized it).
  explicit Context(MPI_Comm comm = MPI_COMM_WORLD, const Options &options = Options{});
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  int rank() const;  // in the communicator
  int size() const;
  Role role() const;
  bool is_server() const { return role() == Role::server; }
  bool is_worker() const { return role() == Role::worker; }
  int servers() const;
  int workers() const;
  int worker_index() const;  // 0..workers()-1 on workers, -1 on servers
  int server_index() const;  // 0..servers()-1 on servers, -1 on workers
  const ConsistencyPolicy &policy() const;
  // A communicator of the worker ranks only (MPI_COMM_NULL on servers), for the application's
  // own collectives among workers.
  MPI_Comm worker_comm() const;

  // Creates a table.  Collective: every rank, same order, same arguments (checked).
  template <class T>
  Table<T> table(const std::string &name, std::int64_t rows, std::int64_t cols) {
    return Table<T>(this, create_table(name, rows, cols, elem_kind<T>()));
  }

  // Workers: flush buffered increments, move to the next clock, block while more than
  // `staleness` clocks ahead of the slowest worker.  Returns the new clock.
  std::int64_t clock();
  // This worker's clock.
  std::int64_t current_clock() const;
  // Workers: how many clocks of the other workers' updates the last get_rows or get_rows_at may
  // have lacked: this worker's clock minus the oldest clock the rows it returned were complete
  // to (0: they held every update of every earlier clock; never more than the policy's staleness
  // allows).  For staleness-aware steps: a program may scale down a step computed from a stale
  // read (examples/classifier.cc, --lag-damping).
  std::int64_t read_lag() const;
  // Collective: workers flush; servers serve until every worker has arrived; afterwards every
  // update made before the barrier is visible to every read.
  void barrier();
  // Collective: runs `job`'s micro-tasks on the workers (see job.hpp); servers serve and rank 0
  // schedules.  Resumes a job suspended by stop_at_clock or restored from a snapshot.
  RunResult run(const Job &job, const TaskFn &fn);
  // Collective, outside run(): a consistent checkpoint of the tables (and of a suspended job).
  // Returns the snapshot id.
  std::string checkpoint(SnapshotStore &store);
  // Collective, before training: loads the newest snapshot in `store` into the tables (which must
  // exist with the same names, types and shapes) on this run's ranks, whatever their number: the
  // logical shards and executors are remapped, nothing is re-partitioned.  A suspended job in the
  // snapshot is resumed by the next run().
  SnapshotInfo restore(const SnapshotStore &store);
  // Workers: count samples processed (for throughput reports; run() counts by itself).
  void count_samples(std::uint64_t n);
  // Collective: barrier, then the final profiling result (AUTOTUNE_RESULT); called by the
  // destructor when not called before.
  void finish();

  struct Impl;

 private:
  template <class T>
  friend class Table;
  int create_table(const std::string &name, std::int64_t rows, std::int64_t cols, ElemKind kind);
  void table_get(int id, std::int64_t first, std::int64_t count, void *out);
  void table_get_at(int id, const std::int64_t *rows, std::int64_t n, void *out);
  void table_inc(int id, std::int64_t row, std::int64_t col, const void *delta);
  void table_inc_rows(int id, std::int64_t first, std::int64_t count, const void *delta);
  void table_pull_all(int id, void *out);
  std::int64_t table_rows(int id) const;
  std::int64_t table_cols(int id) const;
  const std::string &table_name(int id) const;

  std::unique_ptr<Impl> impl_;
};

template <class T>
std::int64_t Table<T>::rows() const {
  return ctx_->table_rows(id_);
}
template <class T>
std::int64_t Table<T>::cols() const {
  return ctx_->table_cols(id_);
}
template <class T>
const std::string &Table<T>::name() const {
  return ctx_->table_name(id_);
}
template <class T>
void Table<T>::get_rows(std::int64_t first, std::int64_t count, T *out) {
  ctx_->table_get(id_, first, count, out);
}
template <class T>
void Table<T>::get_rows_at(const std::int64_t *rows, std::int64_t n, T *out) {
  ctx_->table_get_at(id_, rows, n, out);
}
template <class T>
void Table<T>::inc(std::int64_t row, std::int64_t col, T delta) {
  ctx_->table_inc(id_, row, col, &delta);
}
template <class T>
void Table<T>::inc_rows(std::int64_t first, std::int64_t count, const T *delta) {
  ctx_->table_inc_rows(id_, first, count, delta);
}
template <class T>
std::vector<T> Table<T>::pull_all() {
  std::vector<T> v(static_cast<std::size_t>(rows() * cols()));
  ctx_->table_pull_all(id_, v.data());
  return v;
}

}  // namespace ssp
