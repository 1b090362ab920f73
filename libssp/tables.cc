// The table shapes of a Context and their element arithmetic (see tables.hpp).  Owns nothing:
// the shapes belong to Context::Impl; these are lookups and pure functions.  Thread safety: none
// needed (no state).
#include "tables.hpp"

#include <cstring>

#include "ssp/error.hpp"

namespace ssp {

namespace {

// The loops run in fixed blocks of kBlock elements: -O2's cost model vectorizes a loop only when
// no scalar remainder is needed, so a loop over n elements stayed scalar (6% of a worker's time
// on a dense model, in add_elems alone).  The buffers never overlap (__restrict).
constexpr std::size_t kBlock = 16;

template <class T>
void add_typed(char *__restrict dst, const char *__restrict src, std::size_t n) {
  T *__restrict d = reinterpret_cast<T *>(dst);
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    T v[kBlock];
    std::memcpy(v, src + i * sizeof(T), sizeof v);
    for (std::size_t j = 0; j < kBlock; ++j) d[i + j] += v[j];
  }
  for (; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    d[i] += v;
  }
}

template <class T>
void sum_typed(char *__restrict dst, const char *__restrict a, const char *__restrict b,
               std::size_t n) {
  T *__restrict d = reinterpret_cast<T *>(dst);
  const T *__restrict x = reinterpret_cast<const T *>(a);
  const T *__restrict y = reinterpret_cast<const T *>(b);
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (std::size_t j = 0; j < kBlock; ++j) d[i + j] = x[i + j] + y[i + j];
  for (; i < n; ++i) d[i] = x[i] + y[i];
}

}  // namespace

void sum_elems(ElemKind k, char *dst, const char *a, const char *b, std::size_t n) {
  switch (k) {
    case ElemKind::f32:
      sum_typed<float>(dst, a, b, n);
      break;
    case ElemKind::f64:
      sum_typed<double>(dst, a, b, n);
      break;
    case ElemKind::i32:
      sum_typed<std::int32_t>(dst, a, b, n);
      break;
    case ElemKind::i64:
      sum_typed<std::int64_t>(dst, a, b, n);
      break;
  }
}

const TableShape &table_at(const Tables &tables, int id) {
  if (id < 0 || id >= static_cast<int>(tables.size()))
    throw Error(Errc::invalid_argument, "ssp: table handle is not valid in this context");
  return tables[static_cast<std::size_t>(id)];
}

std::size_t elem_size(ElemKind k) { return (k == ElemKind::f32 || k == ElemKind::i32) ? 4 : 8; }

const char *kind_name(ElemKind k) {
  switch (k) {
    case ElemKind::f32:
      return "float";
    case ElemKind::f64:
      return "double";
    case ElemKind::i32:
      return "int32";
    case ElemKind::i64:
      return "int64";
  }
  return "?";
}

void add_elems(ElemKind k, char *dst, const char *src, std::size_t n) {
  switch (k) {
    case ElemKind::f32:
      add_typed<float>(dst, src, n);
      break;
    case ElemKind::f64:
      add_typed<double>(dst, src, n);
      break;
    case ElemKind::i32:
      add_typed<std::int32_t>(dst, src, n);
      break;
    case ElemKind::i64:
      add_typed<std::int64_t>(dst, src, n);
      break;
  }
}

void invalid(const std::string &m) { throw Error(Errc::invalid_argument, "ssp: " + m); }

}  // namespace ssp
