// Reading a number out of a test's database: the first column of the first row of `sql`.
// A query that does not prepare or returns no row fails the test, naming the query.
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

}  // namespace tailforge
