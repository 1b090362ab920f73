// Internal: a thin RAII layer over SQLite for the profile store.  Not a public header.
//
// Db owns a connection; Stmt owns a prepared statement; Txn is a scope guard that rolls back
// unless committed.  Every failure becomes an autotune::Error: SQLITE_BUSY/LOCKED -> Errc::busy,
// SQLITE_CORRUPT/NOTADB -> Errc::corrupt, SQLITE_CANTOPEN/PERM/READONLY -> Errc::permission or io,
// anything else -> Errc::io; the message names the database file.
//
// Prepared statements are cached per connection (keyed by their SQL) and reused: preparing is a
// large part of a short query's cost, and job_submit runs a handful of them per job.
//
// Thread safety: one Db per thread (SQLite's default serialized mode makes sharing safe, but the
// store never shares one).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace autotune::sql {

class Db;

class Stmt {
 public:
  Stmt(Db &db, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt &) = delete;
  Stmt &operator=(const Stmt &) = delete;

  // Bind by 1-based index.  nullopt binds NULL.
  Stmt &bind(int i, std::int64_t v);
  Stmt &bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt &bind(int i, double v);
  Stmt &bind(int i, std::string_view v);
  Stmt &bind(int i, const char *v) { return bind(i, std::string_view(v)); }
  Stmt &bind(int i, const std::string &v) { return bind(i, std::string_view(v)); }
  Stmt &bind_null(int i);
  template <typename T>
  Stmt &bind(int i, const std::optional<T> &v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  // Advance: true while a row is available.
  bool step();
  // Run to completion (for statements without rows).
  void run();
  void reset();

  bool is_null(int col) const;
  std::int64_t i64(int col) const;
  double dbl(int col) const;
  std::string text(int col) const;
  std::optional<std::int64_t> opt_i64(int col) const;
  std::optional<double> opt_dbl(int col) const;
  std::optional<std::string> opt_text(int col) const;

 private:
  Db &db_;
  sqlite3_stmt *st_ = nullptr;
};

class Db {
 public:
  enum class Mode { read_only, read_write, create };
  Db(const std::string &path, Mode mode, int busy_timeout_ms);
  ~Db();
  Db(const Db &) = delete;
  Db &operator=(const Db &) = delete;

  void exec(std::string_view sql);
  std::int64_t last_insert_id() const;
  int changes() const;
  sqlite3 *raw() const { return db_; }
  const std::string &path() const { return path_; }
  [[noreturn]] void fail(int rc, std::string_view what) const;

 private:
  friend class Stmt;
  // A prepared statement for `sql`: from the cache when one is idle, else newly prepared.
  sqlite3_stmt *acquire(std::string_view sql);
  // Back to the cache (reset), or finalized when the cache already has one for that SQL.
  void release(sqlite3_stmt *st);

  sqlite3 *db_ = nullptr;
  std::string path_;
  std::unordered_map<std::string, sqlite3_stmt *> idle_;
};

// BEGIN (DEFERRED for readers, IMMEDIATE for writers) ... COMMIT, or ROLLBACK on scope exit.
class Txn {
 public:
  enum class Kind { read, write };
  Txn(Db &db, Kind kind);
  ~Txn();
  Txn(const Txn &) = delete;
  Txn &operator=(const Txn &) = delete;
  void commit();

 private:
  Db &db_;
  bool open_ = false;
};

}  // namespace autotune::sql
