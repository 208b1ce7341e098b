#include <doctest/doctest.h>

#include "base/sha256.h"
#include "store/samples.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

Sample cuda_sample(const std::string& text) {
  Sample sample;
  sample.track = "cuda2hip";
  sample.origin = "template";
  sample.language = "cuda";
  sample.text = text;
  sample.features = {"atomics", "shared_memory"};
  return sample;
}

}  // namespace

TEST_CASE("sha256 of a known text is the standard digest") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("the same program is stored once, whatever its line endings and trailing blanks") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("samples.db"));
  REQUIRE(db.ok());
  Result<InsertOutcome> first = insert_sample_if_absent(*db, cuda_sample("int main() {\n  return 0;\n}\n"));
  Result<InsertOutcome> second = insert_sample_if_absent(*db, cuda_sample("int main() {  \r\n  return 0;\r\n}\r\n\r\n"));
  Result<InsertOutcome> other = insert_sample_if_absent(*db, cuda_sample("int main() {\n  return 1;\n}\n"));
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  REQUIRE(other.ok());
  CHECK(first->inserted);
  CHECK_FALSE(second->inserted);
  CHECK(first->id == second->id);
  CHECK(other->id != first->id);
  CHECK(first->id == sha256_hex("int main() {\n  return 0;\n}\n"));

  Result<std::optional<Sample>> found = find_sample(*db, first->id);
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK((*found)->features == std::vector<std::string>{"atomics", "shared_memory"});
  Result<Statement> tags = db->prepare("SELECT count(*) FROM sample_feature");
  REQUIRE(tags.ok());
  REQUIRE(tags->step());
  CHECK(tags->int64(0) == 4);
}

TEST_CASE("an artifact's content is stored once and linked per sample and stage") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  Result<InsertOutcome> a = insert_sample_if_absent(*db, cuda_sample("// a\n"));
  Result<InsertOutcome> b = insert_sample_if_absent(*db, cuda_sample("// b\n"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  ArtifactRecord ptx{.stage = "nvidia.ptx", .name = "ptx", .kind = "ptx", .content = ".version 8.0\n"};
  REQUIRE(insert_artifact(*db, a->id, ptx).ok());
  REQUIRE(insert_artifact(*db, b->id, ptx).ok());
  Result<Statement> stored = db->prepare("SELECT count(*) FROM artifact");
  REQUIRE(stored.ok());
  REQUIRE(stored->step());
  CHECK(stored->int64(0) == 1);
  Result<std::vector<ArtifactRecord>> of_b = artifacts_of(*db, b->id);
  REQUIRE(of_b.ok());
  REQUIRE(of_b->size() == 1);
  CHECK((*of_b)[0].content == ".version 8.0\n");
}

TEST_CASE("a second result for the same stage replaces the first") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  Result<InsertOutcome> s = insert_sample_if_absent(*db, cuda_sample("// v\n"));
  REQUIRE(s.ok());
  VerificationRecord v{.sample_id = s->id, .stage = "nvidia.ptx", .status = "fail", .diagnostics = "error"};
  Result<int64_t> first = upsert_verification(*db, v);
  v.status = "ok";
  Result<int64_t> second = upsert_verification(*db, v);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(*first == *second);
  Result<std::vector<VerificationRecord>> all = verifications_of(*db, s->id);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 1);
  CHECK((*all)[0].status == "ok");
}

TEST_CASE("lineage walks to ancestors and descendants") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  std::string seed = insert_sample_if_absent(*db, cuda_sample("// seed\n"))->id;
  std::string child = insert_sample_if_absent(*db, cuda_sample("// child\n"))->id;
  std::string grandchild = insert_sample_if_absent(*db, cuda_sample("// grandchild\n"))->id;
  REQUIRE(insert_lineage_edge(*db, {seed, child, "synthesized_from", "builtin", {}, {}, "tail: switch"}).ok());
  REQUIRE(insert_lineage_edge(*db, {child, grandchild, "mutated_from", "builtin", {}, {}, "mutation"}).ok());
  REQUIRE(insert_lineage_edge(*db, {child, grandchild, "mutated_from", "builtin", {}, {}, "mutation"}).ok());
  Result<std::vector<LineageEdge>> up = ancestors_of(*db, grandchild);
  REQUIRE(up.ok());
  REQUIRE(up->size() == 2);
  CHECK((*up)[0].parent_id == child);
  CHECK((*up)[1].parent_id == seed);
  CHECK((*up)[1].reason == "tail: switch");
  Result<std::vector<LineageEdge>> down = descendants_of(*db, seed);
  REQUIRE(down.ok());
  CHECK(down->size() == 2);
  CHECK_FALSE(insert_lineage_edge(*db, {seed, child, "invented", {}, {}, {}, {}}).ok());
}
