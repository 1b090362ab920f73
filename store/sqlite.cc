#include "sqlite.hpp"

#include "autotune/error.hpp"

namespace autotune::sql {

[[noreturn]] void Db::fail(int rc, std::string_view what) const {
  const int base = rc & 0xff;
  const std::string msg = path_ + ": " + std::string(what) + ": " +
                          (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
  switch (base) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: throw Error(Errc::busy, msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: throw Error(Errc::corrupt, path_ + ": not a profile store or damaged (" + sqlite3_errstr(rc) + ")");
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH: throw Error(Errc::permission, msg);
    case SQLITE_CANTOPEN: throw Error(Errc::io, msg);
    case SQLITE_FULL: throw Error(Errc::no_space, msg);
    case SQLITE_CONSTRAINT: throw Error(Errc::invalid_argument, msg);
    default: throw Error(Errc::io, msg);
  }
}

Db::Db(const std::string &path, Mode mode, int busy_timeout_ms) : path_(path) {
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (mode) {
    case Mode::read_only: flags |= SQLITE_OPEN_READONLY; break;
    case Mode::read_write: flags |= SQLITE_OPEN_READWRITE; break;
    case Mode::create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    if ((rc & 0xff) == SQLITE_CANTOPEN) throw Error(Errc::not_found, path + ": cannot open the profile store (" + msg + ")");
    fail(rc, "open");
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
}

Db::~Db() {
  for (auto &[sql, st] : idle_) sqlite3_finalize(st);
  sqlite3_close_v2(db_);
}

sqlite3_stmt *Db::acquire(std::string_view sql) {
  auto it = idle_.find(std::string(sql));
  if (it != idle_.end()) {
    sqlite3_stmt *st = it->second;
    idle_.erase(it);
    return st;
  }
  sqlite3_stmt *st = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &st,
                                    nullptr);
  if (rc != SQLITE_OK) fail(rc, "prepare");
  return st;
}

void Db::release(sqlite3_stmt *st) {
  if (!st) return;
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  const char *sql = sqlite3_sql(st);
  if (sql && idle_.emplace(sql, st).second) return;
  sqlite3_finalize(st);
}

void Db::exec(std::string_view sql) {
  char *err = nullptr;
  const std::string s(sql);
  const int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) fail(rc, "exec");
}

std::int64_t Db::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
int Db::changes() const { return sqlite3_changes(db_); }

Stmt::Stmt(Db &db, std::string_view sql) : db_(db), st_(db.acquire(sql)) {}

Stmt::~Stmt() { db_.release(st_); }

Stmt &Stmt::bind(int i, std::int64_t v) {
  const int rc = sqlite3_bind_int64(st_, i, v);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
  return *this;
}
Stmt &Stmt::bind(int i, double v) {
  const int rc = sqlite3_bind_double(st_, i, v);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
  return *this;
}
Stmt &Stmt::bind(int i, std::string_view v) {
  const int rc = sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
  return *this;
}
Stmt &Stmt::bind_null(int i) {
  const int rc = sqlite3_bind_null(st_, i);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
  return *this;
}

bool Stmt::step() {
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(rc, "step");
}

void Stmt::run() {
  while (step()) {
  }
}

void Stmt::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
std::int64_t Stmt::i64(int col) const { return sqlite3_column_int64(st_, col); }
double Stmt::dbl(int col) const { return sqlite3_column_double(st_, col); }
std::string Stmt::text(int col) const {
  const unsigned char *t = sqlite3_column_text(st_, col);
  return t ? std::string(reinterpret_cast<const char *>(t), static_cast<size_t>(sqlite3_column_bytes(st_, col))) : std::string();
}
std::optional<std::int64_t> Stmt::opt_i64(int col) const {
  if (is_null(col)) return std::nullopt;
  return i64(col);
}
std::optional<double> Stmt::opt_dbl(int col) const {
  if (is_null(col)) return std::nullopt;
  return dbl(col);
}
std::optional<std::string> Stmt::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}

Txn::Txn(Db &db, Kind kind) : db_(db) {
  db_.exec(kind == Kind::write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  open_ = true;
}

Txn::~Txn() {
  if (open_) sqlite3_exec(db_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Txn::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace autotune::sql
