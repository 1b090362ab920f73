// ssp::Worker: the worker side of a Context.
//
// Owns: this worker's clock; the smallest worker clock each server last reported (so that clock()
// asks only the servers that are behind the consistency bound); per table, the read cache (rows,
// the server's minimum clock each row was fetched at, the worker clock it was fetched in) and the
// buffer of increments not yet sent (rows, dirty marks, the dirty rows in order of first write);
// the bytes buffered; whether run()'s task loop is running.
//
// Reads go through the cache under the consistency policy (a miss fetches the aligned block of
// kFetchBlock rows around it; a table read whole in a clock is asked for again, whole, as soon as
// the next clock starts, and its reply stored when it arrives or at the first read, whichever
// comes first; with fresh_reads, a whole read whose rows are older than this worker's clock then
// asks for them again (kGetFresh, answered at once: the rows once every worker has reached this
// clock, else kNotYet), and a later read stores the answer if it has arrived, never waiting for
// it), the worker's own unsent increments are added in (read-my-writes);
// increments are sent batched per server at clock(), at barriers, or early past flush_bytes.
// run_tasks() is the worker loop of Context::run(): ask rank 0 for a micro-task, run it, report
// it, clock or checkpoint when told.  It tells the Profiler its clocks and samples.
//
// It reads the table shapes (tables.hpp) and the policy, which the Context owns; the Context calls
// it on worker ranks only.  Thread safety: none; the Context's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "profiling.hpp"
#include "protocol.hpp"
#include "shard_map.hpp"
#include "ssp/consistency.hpp"
#include "ssp/job.hpp"
#include "tables.hpp"
#include "transport.hpp"

namespace ssp {

class Worker {
 public:
  Worker(Transport &tx, const Tables &tables, const ConsistencyPolicy &policy, int servers,
         std::size_t flush_bytes, bool fresh_reads, Profiler &profiler);

  // The table just appended to `tables` (nothing cached or buffered yet).
  void add_table();
  // Drops table `id`'s cache and buffered increments (restore() remapped it).
  void reset_table(int id);
  // Restarts at `clock`, every server known to be there too (after a restore).
  void resume_at(std::int64_t clock);

  // Table::get_rows: rows [first, first+count) of table `id` into out[0 .. count*cols).
  void get(int id, std::int64_t first, std::int64_t count, char *out);
  // Table::get_rows_at: rows rows[0..n) into out[i*cols ..]; the misses in one fetch.
  void get_at(int id, const std::int64_t *rows, std::int64_t n, char *out);
  // Table::inc, Table::inc_rows: buffered.
  void inc(int id, std::int64_t row, std::int64_t col, const void *delta);
  void inc_rows(int id, std::int64_t first, std::int64_t count, const void *delta);

  std::int64_t clock() const { return clock_; }
  // Clocks of the other workers' updates the last get or get_at may have lacked: this clock minus
  // the oldest stamp among the rows it returned (0: every update of every earlier clock was in).
  std::int64_t read_lag() const { return read_lag_; }
  // Context::clock(): flush, next clock, block while further ahead than the policy allows.
  std::int64_t advance();
  // A barrier (BarrierKind) of phase `seq`: flush, announce it to every server, wait for the
  // acknowledgement(s); the cache is stale afterwards.
  void barrier(std::uint8_t kind, std::int64_t seq);
  // The task loop of run(): until rank 0 says the job is done or suspended.  Returns whether it
  // is done; counts the checkpoints taken in `checkpoints`.
  bool run_tasks(const Job &job, const TaskFn &fn, std::uint64_t *checkpoints);

 private:
  struct Cache {
    std::vector<char> rows;
    std::vector<std::int64_t> stamp, fetched_at;
    std::vector<char> pending;
    std::vector<std::uint8_t> dirty;
    std::vector<std::int64_t> dirty_rows;
    // The clock in which the table was last read whole (get of all its rows), and whether a
    // prefetch of it is on its way.
    std::int64_t read_whole_at = kNone;
    bool prefetching = false;
  };

  std::int64_t min_known() const;
  void note_min(int server, std::int64_t m);
  void ensure_cache(const TableShape &t, Cache &c);
  void ensure_pending(const TableShape &t, Cache &c);
  void mark_dirty(const TableShape &t, Cache &c, std::int64_t r);
  // Asks the servers for `pieces` of table `id` as of minimum clock `need` (a kGet, or a
  // kGetFresh: `type`); returns the servers asked (one message each).
  std::vector<int> send_get(int id, const std::vector<ShardMap::Piece> &pieces, std::uint8_t type,
                            std::int64_t need);
  // Stores a kGetReply from server `s` in its table's cache, stamped with this clock; its buffer
  // goes back to the transport.
  void take_get_reply(int s, Message &&m);
  // The next reply from server `s` that is not the answer to a prefetch (those are stored).
  Message reply_from(int s);
  // Asks again for the tables read whole in the clock just ended (replies taken by reply_from or
  // drain_prefetches).
  void prefetch();
  // Waits for every outstanding prefetch reply and stores it.
  void drain_prefetches();
  // Stores the prefetch replies that have arrived (never waits).
  void take_arrived();
  // fresh_reads: after a whole read of table `id` whose rows are older than this clock, asks
  // for them again (kGetFresh), unless a request is on its way or the last was answered kNotYet
  // less than kFreshRetryS ago.
  void ask_fresh(int id);
  void fetch(int id, const std::vector<ShardMap::Piece> &pieces);
  // Whether a cached row may be read under the policy.
  bool usable(const Cache &c, std::int64_t r) const;
  // Copies row r (cached, plus this worker's unsent increments) to out.
  void copy_row(const TableShape &t, const Cache &c, std::int64_t r, char *out) const;
  // read_lag_ of a read whose oldest row stamp is `oldest`.
  void note_lag(std::int64_t oldest);
  // Sends the buffered increments (and, with clock_after >= 0, the new clock to every server).
  // With refetch_whole, the tables read whole in this clock are left to the prefetch that
  // follows (their cached rows are marked stale instead of adding the increments to them).
  void flush(std::int64_t clock_after, bool refetch_whole = false);
  void invalidate_caches();

  Transport &tx_;
  const Tables &tables_;
  const ConsistencyPolicy &policy_;
  const int servers_;
  const std::size_t flush_bytes_;
  const bool fresh_reads_;
  Profiler &profiler_;

  std::int64_t clock_ = 0;
  std::int64_t read_lag_ = 0;
  std::vector<std::int64_t> known_min_;  // per server
  std::vector<int> prefetching_;         // per server: prefetch replies not yet received
  double fresh_asked_at_ = -1;           // wall time of the last kGetFresh (fresh_reads)
  std::vector<Cache> caches_;            // per table
  std::size_t dirty_bytes_ = 0;
  bool in_run_ = false;
};

}  // namespace ssp
