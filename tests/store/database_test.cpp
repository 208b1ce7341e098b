#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>

#include "store/cache.h"
#include "store/database.h"
#include "store/samples.h"
#include "store/schema.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

// Builds a database file at schema version `version` by applying the first migrations raw.
void write_database_at_version(const std::string& path, int version) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  for (const Migration& migration : schema_migrations()) {
    if (migration.version > version) break;
    REQUIRE(sqlite3_exec(raw, migration.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  std::string pragma = "PRAGMA user_version = " + std::to_string(version);
  REQUIRE(sqlite3_exec(raw, pragma.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
}

// Runs SQL on the file with plain sqlite3, as another program (or an older tailforge) would.
void exec_raw(const std::string& path, const char* sql) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
}

}  // namespace

TEST_CASE("a new database is created at the current schema version with WAL and foreign keys") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("new.db"));
  REQUIRE(db.ok());
  CHECK(db->schema_version() == current_schema_version());
  Result<Statement> mode = db->prepare("PRAGMA journal_mode");
  REQUIRE(mode.ok());
  REQUIRE(mode->step());
  CHECK(mode->text(0) == "wal");
  CHECK(query_int(*db, "PRAGMA foreign_keys") == 1);
}

TEST_CASE("an older database is migrated on open and keeps its rows") {
  TempDir dir;
  std::string path = dir.file("old.db");
  write_database_at_version(path, 1);
  exec_raw(path, "INSERT INTO sample (id, track, origin, language, text, created_ms)"
                 " VALUES ('abc', 'cuda2hip', 'template', 'cuda', 'int main(){}', 1)");
  Result<Database> db = Database::open(path);
  REQUIRE(db.ok());
  CHECK(db->schema_version() == current_schema_version());
  CHECK(query_int(*db, "SELECT count(*) FROM sample WHERE id = 'abc'") == 1);
  CHECK(query_int(*db, "SELECT count(*) FROM sqlite_master WHERE name = 'llm_call'") == 1);
}

TEST_CASE("migrating a version 2 file keeps its cache entries and gives them sizes") {
  TempDir dir;
  std::string path = dir.file("v2.db");
  write_database_at_version(path, 2);
  exec_raw(path, "INSERT INTO cache_entry (namespace, key, value, created_ms, hits)"
                 " VALUES ('compile', 'old', 'twelve bytes', 5, 3)");
  Result<Database> db = Database::open(path);
  REQUIRE_MESSAGE(db.ok(), db.message());
  CHECK(db->schema_version() == current_schema_version());
  CHECK(cache_bytes(*db, "compile").value() == 12);
  CHECK(cache_lookup(*db, "compile", "old") == std::optional<std::string>("twelve bytes"));
}

TEST_CASE("migrating a version 3 file keeps models, evaluations and retrain events, and adds what the loop needs") {
  TempDir dir;
  std::string path = dir.file("v3.db");
  write_database_at_version(path, 3);
  exec_raw(path,
           "INSERT INTO sample (id, track, origin, language, text, created_ms)"
           "  VALUES ('s1', 'cuda2hip', 'template', 'cuda', 'int main(){}', 1);"
           "INSERT INTO model (id, name, endpoint, created_ms) VALUES (7, 'cass-7b', 'http://127.0.0.1:8000', 2);"
           "INSERT INTO evaluation (model_id, sample_id, category, ok, created_ms)"
           "  VALUES (7, 's1', 'amd.asm.vgpr_bank', 0, 3);"
           "INSERT INTO retrain_event (cycle_id, reason, snapshot_hash, status, model_id, created_ms)"
           "  VALUES (NULL, '{}', 'hash', 'running', 7, 4);");
  Result<Database> db = Database::open(path);
  REQUIRE_MESSAGE(db.ok(), db.message());
  CHECK(db->schema_version() == current_schema_version());
  CHECK(query_int(*db, "SELECT count(*) FROM model WHERE name = 'cass-7b' AND kind = 'openai' AND active = 1") == 1);
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation WHERE status = 'fail' AND top_category = 'amd'"
                       " AND track = 'cuda2hip'") == 1);
  CHECK(query_int(*db, "SELECT count(*) FROM retrain_event WHERE status = 'running' AND attempts = 1"
                       " AND model_id = 7") == 1);
  CHECK(db->exec("UPDATE retrain_event SET status = 'interrupted'").ok());
  CHECK(query_int(*db, "SELECT count(*) FROM sqlite_master WHERE name IN ('eval_item', 'evaluation_stage',"
                       " 'trained_sample')") == 3);
}

TEST_CASE("a database from a newer tailforge is refused with a clear message") {
  TempDir dir;
  std::string path = dir.file("newer.db");
  write_database_at_version(path, current_schema_version());
  exec_raw(path, "PRAGMA user_version = 999");
  Result<Database> db = Database::open(path);
  REQUIRE_FALSE(db.ok());
  CHECK(db.message().find("schema version 999 is newer") != std::string::npos);
  CHECK(db.message().find(path) != std::string::npos);
}

TEST_CASE("a transaction that is not committed leaves nothing behind") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("tx.db"));
  REQUIRE(db.ok());
  {
    Transaction transaction(*db);
    REQUIRE(transaction.begin_status().ok());
    Sample sample{.track = "c2x86", .origin = "template", .language = "c", .text = "int f(void){return 1;}"};
    REQUIRE(insert_sample_if_absent(*db, sample).ok());
  }
  CHECK(query_int(*db, "SELECT count(*) FROM sample") == 0);
}

TEST_CASE("a bad statement is an error value naming the SQL") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  Result<Statement> bad = db->prepare("SELEKT 1");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("SELEKT 1") != std::string::npos);
  Status exec = db->exec("INSERT INTO nowhere VALUES (1)");
  CHECK_FALSE(exec.ok());
  CHECK(exec.message().find("nowhere") != std::string::npos);
}

TEST_CASE("version 14: an endpoint's 4xx or unreadable body stored as a model failure is judged again") {
  TempDir dir;
  std::string path = dir.file("v13.db");
  write_database_at_version(path, 13);
  exec_raw(path, R"sql(
    INSERT INTO sample (id, track, origin, language, text, created_ms) VALUES
      ('s1', 'cuda2hip', 'template', 'cuda', 'a', 1), ('s2', 'cuda2hip', 'template', 'cuda', 'b', 1),
      ('s3', 'cuda2hip', 'template', 'cuda', 'c', 1);
    INSERT INTO model (id, name, created_ms) VALUES (1, 'remote', 1);
    INSERT INTO evaluation (id, model_id, sample_id, track, ok, status, stage, category, created_ms) VALUES
      (1, 1, 's1', 'cuda2hip', 0, 'fail', 'answer', 'agent.llm.http_error', 1),
      (2, 1, 's2', 'cuda2hip', 0, 'fail', 'answer', 'agent.llm.malformed_response', 1),
      (3, 1, 's3', 'cuda2hip', 0, 'fail', 'amd.compile', 'amd.compile.undeclared_identifier', 1);
    INSERT INTO evaluation_stage (evaluation_id, position, stage, status) VALUES
      (1, 0, 'answer', 'fail'), (3, 0, 'answer', 'ok'), (3, 1, 'amd.compile', 'fail');
  )sql");
  Result<Database> db = Database::open(path);
  REQUIRE_MESSAGE(db.ok(), db.message());
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation") == 1);
  CHECK(query_int(*db, "SELECT id FROM evaluation") == 3);
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation_stage") == 2);
  CHECK(query_int(*db, "SELECT count(*) FROM model_pause") == 0);
}
