// Reading rows by column position (store/database.h): read_row, collect_rows, first_row and the
// single-column helpers, over a table of their own in an in-memory database.
#include <doctest/doctest.h>

#include "store/database.h"

using namespace tailforge;

namespace {

struct Row {
  int64_t id = 0;
  std::string name;
  std::optional<std::string> note;
  std::optional<int64_t> count;
  double share = 0;
  std::optional<double> weight;
  bool flag = false;
};

void read_test_row(const Statement& row, Row& out) {
  read_row(row, out.id, out.name, out.note, out.count, out.share, out.weight, out.flag);
}

Database rows_database() {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db);
  REQUIRE(db->exec("CREATE TABLE t (id INTEGER, name TEXT, note TEXT, count INTEGER, share REAL, weight REAL,"
                   " flag INTEGER);"
                   "INSERT INTO t VALUES (1, 'a', 'first', 5, 0.5, 2.5, 1);"
                   "INSERT INTO t VALUES (2, 'b', NULL, NULL, 0.25, NULL, 0);"
                   "INSERT INTO t VALUES (3, 'a', '', 0, 0, 0, 7);"));
  return std::move(*db);
}

}  // namespace

TEST_CASE("read_row reads the columns in order, each as its field's type, NULL as an empty optional") {
  Database db = rows_database();
  Result<std::vector<Row>> rows = collect_rows<Row>(
      db.cached("SELECT id, name, note, count, share, weight, flag FROM t ORDER BY id"), read_test_row);
  REQUIRE(rows);
  REQUIRE(rows->size() == 3);
  const Row& first = (*rows)[0];
  CHECK(first.id == 1);
  CHECK(first.name == "a");
  CHECK(first.note == std::optional<std::string>("first"));
  CHECK(first.count == std::optional<int64_t>(5));
  CHECK(first.share == 0.5);
  CHECK(first.weight == std::optional<double>(2.5));
  CHECK(first.flag);
  const Row& second = (*rows)[1];
  CHECK_FALSE(second.note);
  CHECK_FALSE(second.count);
  CHECK_FALSE(second.weight);
  CHECK_FALSE(second.flag);
  const Row& third = (*rows)[2];  // empty and zero are values, not NULL; any nonzero is true
  CHECK(third.note == std::optional<std::string>(""));
  CHECK(third.count == std::optional<int64_t>(0));
  CHECK(third.weight == std::optional<double>(0));
  CHECK(third.flag);
}

TEST_CASE("first_row reads the first row or none, and collect_rows stops at `most`") {
  Database db = rows_database();
  Statement& by_name = db.cached("SELECT id, name, note, count, share, weight, flag FROM t WHERE name = ?1 ORDER BY id");
  Result<std::optional<Row>> found = first_row<Row>(by_name.bind(1, "a"), read_test_row);
  REQUIRE(found);
  REQUIRE(*found);
  CHECK((*found)->id == 1);
  // The statement was finished: bound again, it starts over.
  Result<std::optional<Row>> none = first_row<Row>(by_name.bind(1, "z"), read_test_row);
  REQUIRE(none);
  CHECK_FALSE(*none);
  Result<std::vector<Row>> two = collect_rows<Row>(
      db.cached("SELECT id, name, note, count, share, weight, flag FROM t ORDER BY id"), read_test_row, 2);
  REQUIRE(two);
  CHECK(two->size() == 2);
}

TEST_CASE("the single-column helpers: texts, the first text, one integer, counts by key") {
  Database db = rows_database();
  Result<std::vector<std::string>> names = text_rows(db.cached("SELECT name FROM t ORDER BY id"));
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"a", "b", "a"});
  Result<std::optional<std::string>> note = first_text(db.cached("SELECT note FROM t WHERE id = ?1").bind(1, 1));
  REQUIRE(note);
  CHECK(*note == std::optional<std::string>("first"));
  Result<std::optional<std::string>> missing = first_text(db.cached("SELECT note FROM t WHERE id = ?1").bind(1, 9));
  REQUIRE(missing);
  CHECK_FALSE(*missing);
  Result<int64_t> total = single_int64(db.cached("SELECT sum(count) FROM t"));
  REQUIRE(total);
  CHECK(*total == 5);
  Result<int64_t> of_none = single_int64(db.cached("SELECT max(count) FROM t WHERE id > 9"));  // NULL
  REQUIRE(of_none);
  CHECK(*of_none == 0);
  Result<std::map<std::string, int64_t>> counts = counts_by_key(db.cached("SELECT name, count(*) FROM t GROUP BY name"));
  REQUIRE(counts);
  CHECK(*counts == std::map<std::string, int64_t>{{"a", 2}, {"b", 1}});
}

TEST_CASE("a failing step is the helpers' error, and the statement is reset for the next use") {
  Database db = rows_database();
  // abs() of the smallest integer overflows: an error at the step, not at prepare.
  Statement& failing = db.cached("SELECT abs(-9223372036854775807 - 1)");
  Result<int64_t> value = single_int64(failing);
  REQUIRE_FALSE(value);
  CHECK(value.message().find("integer overflow") != std::string::npos);
  Result<std::vector<std::string>> texts = text_rows(failing);
  CHECK_FALSE(texts);
}
