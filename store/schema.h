// The SQLite schema as an ordered list of migrations. Migration i (1-based) takes a database
// at user_version i-1 to i. Migrations are append-only: a released one is never edited.
#pragma once

#include <vector>

namespace tailforge {

struct Migration {
  int version;
  const char* sql;
};

const std::vector<Migration>& schema_migrations();

}  // namespace tailforge
