// Reading a test's database: a number (the first column of the first row of `sql`), or the
// first column of every row as text, one line each. A query that does not prepare (or, for a
// number, returns no row) fails the test, naming the query.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "store/database.h"

namespace tailforge {

inline int64_t query_int(Database& db, const std::string& sql) {
  Result<Statement> statement = db.prepare(sql);
  REQUIRE_MESSAGE(statement.ok(), sql);
  REQUIRE_MESSAGE(statement->step(), sql);
  return statement->int64(0);
}

inline std::string query_text(Database& db, const std::string& sql) {
  Result<Statement> statement = db.prepare(sql);
  REQUIRE_MESSAGE(statement.ok(), sql);
  std::string out;
  while (statement->step()) out += statement->text(0) + "\n";
  return out;
}

}  // namespace tailforge
