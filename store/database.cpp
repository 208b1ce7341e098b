#include "store/database.h"

#include <chrono>
#include <thread>
#include <unordered_map>

#include "store/schema.h"

namespace tailforge {

namespace {

std::string sqlite_error(sqlite3* db, std::string_view what) {
  return std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
}

}  // namespace

void limit_sqlite_memory(int64_t bytes) { sqlite3_soft_heap_limit64(bytes); }

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int current_schema_version() { return schema_migrations().back().version; }

// ---- Statement ----

Statement::Statement(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), statement_(other.statement_), status_(std::move(other.status_)) {
  other.statement_ = nullptr;
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(statement_);
    db_ = other.db_;
    statement_ = other.statement_;
    status_ = std::move(other.status_);
    other.statement_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Statement& Statement::bind(int index, std::string_view text) {
  sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int index, int64_t value) {
  sqlite3_bind_int64(statement_, index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(statement_, index, value);
  return *this;
}

Statement& Statement::bind_blob(int index, std::string_view bytes) {
  sqlite3_bind_blob(statement_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(statement_, index);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::string>& text) {
  return text ? bind(index, *text) : bind_null(index);
}

Statement& Statement::bind(int index, const std::optional<int64_t>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

bool Statement::step() {
  if (!statement_) {
    if (status_.ok()) status_ = make_error("step on an unprepared statement");
    return false;
  }
  int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) {
    status_ = make_error(sqlite_error(db_, std::string("sqlite step of '") + sqlite3_sql(statement_) + "'"));
  }
  return false;
}

Status Statement::run() {
  while (step()) {
  }
  return finish();
}

Status Statement::finish() {
  Status result = status_;
  reset();
  return result;
}

void Statement::reset() {
  if (!statement_) return;
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  status_ = Status();
}

bool Statement::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
int64_t Statement::int64(int column) const { return sqlite3_column_int64(statement_, column); }
double Statement::real(int column) const { return sqlite3_column_double(statement_, column); }

std::string Statement::text(int column) const {
  const void* data = sqlite3_column_blob(statement_, column);
  int size = sqlite3_column_bytes(statement_, column);
  return data ? std::string(static_cast<const char*>(data), size) : std::string();
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

std::optional<int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

// ---- Reading rows ----

void read_column(const Statement& row, int column, std::string& out) { out = row.text(column); }
void read_column(const Statement& row, int column, int64_t& out) { out = row.int64(column); }
void read_column(const Statement& row, int column, double& out) { out = row.real(column); }
void read_column(const Statement& row, int column, bool& out) { out = row.int64(column) != 0; }

Result<std::vector<std::string>> text_rows(Statement& select) {
  return collect_rows<std::string>(select, [](const Statement& row, std::string& text) { text = row.text(0); });
}

Result<std::optional<std::string>> first_text(Statement& select) {
  return first_row<std::string>(select, [](const Statement& row, std::string& text) { text = row.text(0); });
}

Result<int64_t> single_int64(Statement& select) {
  int64_t value = select.step() ? select.int64(0) : 0;
  if (Status s = select.finish(); !s) return s.error();
  return value;
}

Result<std::map<std::string, int64_t>> counts_by_key(Statement& select) {
  std::map<std::string, int64_t> counts;
  while (select.step()) counts[select.text(0)] = select.int64(1);
  if (Status s = select.finish(); !s) return s.error();
  return counts;
}

// ---- Database ----

struct Database::StatementCache {
  std::unordered_map<const char*, Statement> statements;
};

Database::Database(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), cache_(std::make_unique<StatementCache>()) {}

Database::Database(Database&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), cache_(std::move(other.cache_)) {
  other.db_ = nullptr;
}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    cache_.reset();
    sqlite3_close(db_);
    db_ = other.db_;
    path_ = std::move(other.path_);
    cache_ = std::move(other.cache_);
    other.db_ = nullptr;
  }
  return *this;
}

Database::~Database() {
  cache_.reset();  // statements must be finalized before the connection closes
  sqlite3_close(db_);
}

Result<Database> Database::open(const std::string& path) {
  sqlite3* handle = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &handle, flags, nullptr) != SQLITE_OK) {
    std::string message = sqlite_error(handle, "cannot open database " + path);
    sqlite3_close(handle);
    return make_error(message);
  }
  Database db(handle, path);
  sqlite3_busy_timeout(handle, 10000);
  if (Status s = db.exec("PRAGMA foreign_keys = ON"); !s) return s.error();
  if (path != ":memory:") {
    // Switching to WAL takes an exclusive lock and does not wait on the busy handler: a process
    // creating or migrating the same file at this moment makes it fail with "database is locked".
    // It is tried again for as long as the busy timeout.
    Status wal = db.exec("PRAGMA journal_mode = WAL");
    for (int waited_ms = 0; !wal && wal.message().find("locked") != std::string::npos && waited_ms < 10000;
         waited_ms += 20) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      wal = db.exec("PRAGMA journal_mode = WAL");
    }
    if (!wal) return make_error(path + ": " + wal.message());
    if (Status s = db.exec("PRAGMA synchronous = NORMAL"); !s) return s.error();
    // Checkpoint every ~40 MiB of WAL instead of 4 MiB: content-addressed ids dirty random
    // B-tree pages, and each checkpoint copies them into the database file again.
    if (Status s = db.exec("PRAGMA wal_autocheckpoint = 10000"); !s) return s.error();
  }
  if (Status s = db.migrate(); !s) return make_error(path + ": " + s.message());
  return db;
}

Status Database::exec(std::string_view sql) {
  std::string owned(sql);
  char* message = nullptr;
  if (sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    std::string head = owned.substr(0, 80);
    return make_error("sqlite: " + text + " (in '" + head + (owned.size() > 80 ? "...'" : "'") + ")");
  }
  return {};
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr) != SQLITE_OK) {
    return make_error(sqlite_error(db_, "sqlite prepare of '" + std::string(sql) + "'"));
  }
  return Statement(db_, statement);
}

Statement& Database::cached(const char* sql) {
  auto it = cache_->statements.find(sql);
  if (it == cache_->statements.end()) {
    Result<Statement> prepared = prepare(sql);
    Statement statement;
    if (prepared) {
      statement = std::move(prepared.value());
    } else {
      statement.status_ = prepared.error();
    }
    it = cache_->statements.emplace(sql, std::move(statement)).first;
  } else {
    it->second.reset();
  }
  return it->second;
}

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Database::changes() const { return sqlite3_changes(db_); }

int Database::schema_version() {
  Result<Statement> statement = prepare("PRAGMA user_version");
  if (!statement || !statement->step()) return -1;
  return static_cast<int>(statement->int64(0));
}

Status Database::migrate() {
  int version = schema_version();
  int newest = current_schema_version();
  if (version > newest) {
    return make_error("schema version " + std::to_string(version) + " is newer than this tailforge (" +
                      std::to_string(newest) + "); upgrade tailforge or use another database");
  }
  for (const Migration& migration : schema_migrations()) {
    if (migration.version <= version) continue;
    Transaction transaction(*this);
    if (!transaction.begin_status()) return transaction.begin_status();
    // Another process opening the same file may have migrated it while this one waited for
    // the write lock: read the version again under the lock.
    version = schema_version();
    if (migration.version <= version) continue;
    if (Status s = exec(migration.sql); !s) {
      return make_error("migration to schema version " + std::to_string(migration.version) + " failed: " + s.message());
    }
    if (Status s = exec("PRAGMA user_version = " + std::to_string(migration.version)); !s) return s;
    if (Status s = transaction.commit(); !s) return s;
  }
  return {};
}

// ---- Transaction ----

Transaction::Transaction(Database& db) : db_(db), begin_status_(db.exec("BEGIN IMMEDIATE")) {
  if (!begin_status_) done_ = true;
}

Transaction::~Transaction() {
  if (!done_) (void)db_.exec("ROLLBACK");
}

Status Transaction::commit() {
  if (done_) return make_error("commit of a finished transaction");
  Status s = db_.exec("COMMIT");
  if (s) done_ = true;
  return s;
}

}  // namespace tailforge
