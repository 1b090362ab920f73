// Table<T>: a dense rows x cols matrix of T held by the parameter servers, read and updated by
// workers under the Context's consistency policy.
//
// Shapes: rows >= 1, cols >= 1, row-major; a row is `cols` contiguous values.  T is float, double,
// std::int32_t or std::int64_t.  The rows are cut into logical-server shards (contiguous row
// ranges, see Options::logical_servers) that live on the server ranks.
//
// Workers:
//   get(row) / get_rows(first, n, out)   read through the worker's cache: a cached row is used
//       while the policy allows (ConsistencyPolicy::cache_usable), else it is fetched from its
//       server, which answers once its minimum clock is high enough (a miss in a read of fewer
//       than 64 rows fetches the aligned 64-row block around it in one round trip).  The worker's
//       own increments not yet sent are added in (read-my-writes).  A table read whole in a
//       clock is fetched again, whole, as the next clock starts (prefetch), so that a dense
//       model's first read of the clock seldom waits for the server.
//   get_rows_at(rows, n, out)   reads n rows anywhere in the table (a sparse model's rows of a
//       mini-batch; repeats allowed) in out[i*cols ..]: the rows that miss the cache are
//       fetched in one round trip per server, not one per row (a read of fewer than 8 rows
//       fetches their aligned 64-row blocks, as get_rows does for a short read).
//   inc(row, col, d) / inc_row / inc_rows  add to a local buffer; sent batched per server at
//       clock(), at barriers, or early once Options::flush_bytes is exceeded.
// Every rank (collective):
//   pull_all()   a barrier, then the whole table on every rank (row-major), for evaluation and
//                checks outside the training loop.
//
//   auto w = ctx.table<float>("w", 785, 10);      // collective, same order on every rank
//   if (ctx.is_worker()) {
//     std::vector<float> m(785 * 10);
//     w.get_rows(0, 785, m.data());
//     w.inc(3, 1, -0.01f);
//     ctx.clock();
//   }
//   auto all = w.pull_all();                        // every rank
//
// Thread safety: none; use a Context and its tables from one thread.  A Table is a cheap handle
// valid while its Context lives.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace ssp {

class Context;

enum class ElemKind : std::uint8_t { f32 = 1, f64 = 2, i32 = 3, i64 = 4 };

template <class T>
constexpr ElemKind elem_kind() {
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value ||
                    std::is_same<T, std::int32_t>::value || std::is_same<T, std::int64_t>::value,
                "ssp::Table<T>: T must be float, double, std::int32_t or std::int64_t");
  return std::is_same<T, float>::value          ? ElemKind::f32
         : std::is_same<T, double>::value       ? ElemKind::f64
         : std::is_same<T, std::int32_t>::value ? ElemKind::i32
                                                : ElemKind::i64;
}

template <class T>
class Table {
 public:
  Table() = default;
  std::int64_t rows() const;
  std::int64_t cols() const;
  const std::string &name() const;

  // Reads one row into out[0..cols) / returns it.  Workers only.
  void get(std::int64_t row, T *out) { get_rows(row, 1, out); }
  std::vector<T> get(std::int64_t row) {
    std::vector<T> v(static_cast<std::size_t>(cols()));
    get_rows(row, 1, v.data());
    return v;
  }
  // Reads rows [first, first+count) into out[0 .. count*cols).  Workers only.
  void get_rows(std::int64_t first, std::int64_t count, T *out);
  // Reads rows rows[0..n) (any order, repeats allowed) into out[0 .. n*cols).  Workers only.
  void get_rows_at(const std::int64_t *rows, std::int64_t n, T *out);

  // Buffered increments.  Workers only.
  void inc(std::int64_t row, std::int64_t col, T delta);
  void inc_row(std::int64_t row, const T *delta) { inc_rows(row, 1, delta); }
  void inc_rows(std::int64_t first, std::int64_t count, const T *delta);

  // Collective on every rank of the Context: barrier, then the whole table, row-major.
  std::vector<T> pull_all();

 private:
  friend class Context;
  Table(Context *ctx, int id) : ctx_(ctx), id_(id) {}
  Context *ctx_ = nullptr;
  int id_ = -1;
};

}  // namespace ssp
