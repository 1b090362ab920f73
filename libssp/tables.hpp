// The tables of a Context as every part sees them (internal): name, element type, shape and the
// map of rows onto logical shards and server ranks, plus the element arithmetic the parts share.
//
// Owner: Context::Impl owns the list (create_table() appends, restore() remaps a table onto this
// run's servers).  The other parts only read it, by a table's id (its index); each keeps its own
// per-table state beside it: the worker its cache and increment buffer (worker.hpp), the server
// its shards (server.hpp).
//
// Thread safety: none; the Context's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shard_map.hpp"
#include "ssp/table.hpp"

namespace ssp {

struct TableShape {
  std::string name;
  ElemKind kind = ElemKind::f32;
  std::size_t esz = 4;  // bytes per element
  std::int64_t rows = 0, cols = 0;
  std::size_t rb = 0;  // bytes per row
  ShardMap map;
};

using Tables = std::vector<TableShape>;

// The table of handle `id`; Error(invalid_argument) when there is none.
const TableShape &table_at(const Tables &tables, int id);

std::size_t elem_size(ElemKind k);
// "float", "double", "int32", "int64" (the manifest's spelling).
const char *kind_name(ElemKind k);
// dst (aligned) += src (any alignment), n elements of kind k.
void add_elems(ElemKind k, char *dst, const char *src, std::size_t n);
// dst = a + b, n elements of kind k, all three aligned for the kind (one pass: a read of rows
// with unsent increments).
void sum_elems(ElemKind k, char *dst, const char *a, const char *b, std::size_t n);

// Throws Error(invalid_argument, "ssp: " + m).
[[noreturn]] void invalid(const std::string &m);

}  // namespace ssp
