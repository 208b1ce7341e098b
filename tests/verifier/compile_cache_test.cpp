#include "verifier/compile_cache.h"

#include <doctest/doctest.h>

#include "store/cache.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

StageResult compiled_stage() {
  StageResult stage;
  stage.name = "nvidia.cubin.sm_80";
  stage.status = "ok";
  stage.seconds = 1.5;
  stage.diagnostics = "warning: line one\nline two";
  stage.exit_code = 0;
  stage.peak_rss_kb = 12345;
  stage.toolchain_version = "nvcc 13.0";
  stage.command = "nvcc -cubin k.cu";
  std::string binary("\x7f" "ELF\0\n\n\xff\x00 tail", 14);
  for (int i = 0; i < 64 * 1024; ++i) binary.push_back(static_cast<char>(i * 7));  // every byte value
  stage.artifacts.push_back({"cubin", "k.cubin", binary, stage.command, stage.toolchain_version, true});
  stage.artifacts.push_back({"stdout", "stdout", "text\nwith {\"json\"} in it\n", stage.command, "", false});
  stage.artifacts.push_back({"empty", "e", "", "", "", true});
  return stage;
}

}  // namespace

TEST_CASE("the compile cache gives back a stage with its raw artifacts byte for byte") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("cache.db")).value());
  StageResult stage = compiled_stage();
  CHECK_FALSE(compile_cache_get(db, "k").has_value());
  REQUIRE(compile_cache_put(db, "k", stage).ok());

  std::optional<StageResult> hit = compile_cache_get(db, "k");
  REQUIRE(hit.has_value());
  CHECK(hit->cached);
  CHECK(hit->name == stage.name);
  CHECK(hit->status == "ok");
  CHECK(hit->diagnostics == stage.diagnostics);
  CHECK(hit->exit_code == std::optional<int>(0));
  CHECK(hit->peak_rss_kb == 12345);
  REQUIRE(hit->artifacts.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(hit->artifacts[i].kind == stage.artifacts[i].kind);
    CHECK(hit->artifacts[i].content == stage.artifacts[i].content);
    CHECK(hit->artifacts[i].binary == stage.artifacts[i].binary);
  }
  // Raw bytes: the stored value is the contents plus a small header, not hex.
  int64_t content_bytes = 0;
  for (const auto& item : stage.artifacts) content_bytes += static_cast<int64_t>(item.content.size());
  CHECK(cache_bytes(db, "compile").value() < content_bytes + 1024);
}

TEST_CASE("a compile cache entry in an older format or cut short is a miss, and a store replaces it") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("cache.db")).value());
  REQUIRE(cache_store(db, "compile", "old", R"({"name":"x","status":"ok","artifacts":[]})").ok());
  CHECK_FALSE(compile_cache_get(db, "old").has_value());
  REQUIRE(compile_cache_put(db, "old", compiled_stage()).ok());
  CHECK(compile_cache_get(db, "old").has_value());

  REQUIRE(compile_cache_put(db, "cut", compiled_stage()).ok());
  std::string whole = cache_lookup(db, "compile", "cut").value();
  REQUIRE(cache_store(db, "compile", "cut", whole.substr(0, whole.size() - 3)).ok());
  CHECK_FALSE(compile_cache_get(db, "cut").has_value());
  REQUIRE(cache_store(db, "compile", "cut", whole + "extra").ok());
  CHECK_FALSE(compile_cache_get(db, "cut").has_value());
}
