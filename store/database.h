// A SQLite connection with RAII statements and transactions, opened with the project's
// pragmas (WAL, foreign keys, busy timeout) and migrated to the current schema on open, and the
// helpers every store module reads its rows with (read_row, collect_rows, first_row).
// One Database per thread: a connection is not shared between threads.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace tailforge {

class Database;

// A prepared statement. Bind parameters are 1-based; column indexes are 0-based.
class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind_blob(int index, std::string_view bytes);
  Statement& bind_null(int index);
  // Binds text, or NULL when the optional is empty.
  Statement& bind(int index, const std::optional<std::string>& text);
  Statement& bind(int index, const std::optional<int64_t>& value);

  // Advances: true while a row is available; false at the end. An error is kept in status().
  bool step();
  // Runs to completion, returning an error naming the SQL on failure.
  Status run();
  void reset();
  // After stepping: the status of the steps taken, then reset() for the next binding.
  Status finish();

  bool is_null(int column) const;
  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::optional<std::string> optional_text(int column) const;
  std::optional<int64_t> optional_int64(int column) const;

  const Status& status() const { return status_; }

 private:
  friend class Database;
  Statement(sqlite3* db, sqlite3_stmt* statement);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* statement_ = nullptr;
  Status status_;
};

// Reading rows by column position. read_row(row, a, b, c) reads columns 0, 1 and 2 into a, b and
// c, each as its type asks: std::string, int64_t, double, bool (nonzero), or an optional of one of
// them (empty for NULL). A record is then read from its SELECT in one call.
void read_column(const Statement& row, int column, std::string& out);
void read_column(const Statement& row, int column, int64_t& out);
void read_column(const Statement& row, int column, double& out);
void read_column(const Statement& row, int column, bool& out);
template <typename T>
void read_column(const Statement& row, int column, std::optional<T>& out) {
  if (row.is_null(column)) {
    out.reset();
    return;
  }
  T value{};
  read_column(row, column, value);
  out = std::move(value);
}

template <typename... Fields>
void read_row(const Statement& row, Fields&... fields) {
  int column = 0;
  (read_column(row, column++, fields), ...);
}

// Steps a bound statement through its rows (`most` of them at most), reading each into a new
// Record with `read_record(row, record)` (a lambda around read_row, mostly), then finish()es it:
// the records, or the error of a step.
template <typename Record, typename ReadRecord>
Result<std::vector<Record>> collect_rows(Statement& select, ReadRecord read_record, size_t most = SIZE_MAX) {
  std::vector<Record> records;
  while (records.size() < most && select.step()) read_record(select, records.emplace_back());
  if (Status s = select.finish(); !s) return s.error();
  return records;
}

// The first row of a bound statement read as collect_rows reads each, or none.
template <typename Record, typename ReadRecord>
Result<std::optional<Record>> first_row(Statement& select, ReadRecord read_record) {
  Result<std::vector<Record>> first = collect_rows<Record>(select, read_record, 1);
  if (!first) return first.error();
  if (first->empty()) return std::optional<Record>();
  return std::optional<Record>(std::move(first->front()));
}

// Column 0 of every row as text.
Result<std::vector<std::string>> text_rows(Statement& select);
// Column 0 of the first row as text, if there is a row.
Result<std::optional<std::string>> first_text(Statement& select);
// Column 0 of the first row as an integer: 0 when there is no row or it is NULL (a count, a max).
Result<int64_t> single_int64(Statement& select);
// (key, count) rows as a map.
Result<std::map<std::string, int64_t>> counts_by_key(Statement& select);

// The newest schema version this build knows. Older files are migrated on open;
// newer ones are refused.
int current_schema_version();

class Database {
 public:
  // Opens (creating if absent) and migrates the database at `path`. ":memory:" works too.
  static Result<Database> open(const std::string& path);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more statements that return no rows.
  Status exec(std::string_view sql);
  // Prepares one statement; the error names the SQL and SQLite's message.
  Result<Statement> prepare(std::string_view sql);
  // Statement cache: prepared once per connection, reset before each use.
  Statement& cached(const char* sql);

  int64_t last_insert_rowid() const;
  int changes() const;
  int schema_version();
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }

 private:
  Database(sqlite3* db, std::string path);
  Status migrate();

  sqlite3* db_ = nullptr;
  std::string path_;
  struct StatementCache;
  std::unique_ptr<StatementCache> cache_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() succeeded.
class Transaction {
 public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  const Status& begin_status() const { return begin_status_; }
  Status commit();

 private:
  Database& db_;
  Status begin_status_;
  bool done_ = false;
};

// Milliseconds since the Unix epoch, the unit of every *_ms column.
int64_t now_ms();

// Bounds what SQLite keeps in memory (page caches of every connection, statements) for the whole
// process: past `bytes` it reuses cache pages instead of allocating more (sqlite3_soft_heap_limit64).
void limit_sqlite_memory(int64_t bytes);

}  // namespace tailforge
