// The fuzz test of every parser of untrusted text: each parser meets a fixed set of hostile inputs
// (tests/fuzz/hostile_text.h) and must return, with a value or an error, within seconds. Below it,
// one regression check per crash the fuzzing found.
#include <doctest/doctest.h>

#include <algorithm>

#include "agents/translate/hipify_rules.h"
#include "daemon/http/http_replies.h"
#include "store/samples.h"
#include "synth/evaluate_ptx2cuda.h"
#include "test_support/temp_dir.h"
#include "tests/fuzz/hostile_text.h"
#include "tests/fuzz/untrusted_parsers.h"

using namespace tailforge;
using namespace tailforge::fuzz;

namespace {

// A guard against hangs and super-linear work, not a speed claim: the largest input (10 MB) takes
// about 2 s on an idle 2-core machine and near 5 s on a loaded one, while quadratic work on it
// would take hours.
constexpr double kSecondsPerInput = 30.0;

UntrustedParsers& parsers() {
  static TempDir dir;
  static std::unique_ptr<UntrustedParsers> started = [] {
    Result<std::unique_ptr<UntrustedParsers>> made = UntrustedParsers::start(dir.path());
    REQUIRE_MESSAGE(made.ok(), made.message());
    return std::move(*made);
  }();
  return *started;
}

}  // namespace

TEST_CASE("every parser of untrusted text returns on every hostile input, within seconds") {
  const std::vector<HostileInput> inputs = hostile_inputs();
  for (const UntrustedParser& parser : parsers().parsers()) {
    for (const HostileInput& input : inputs) {
      INFO(parser.name, " on ", input.name);
      double seconds = 0;
      CHECK_NOTHROW(seconds = run_parser(parser, input.text));
      CHECK(seconds < kSecondsPerInput);
    }
  }
}

// Regressions: one check per crash, hang or escaping exception the fuzzing found.

TEST_CASE("a Python literal nested deeper than 256 levels is an error, not a stack overflow") {
  Result<nlohmann::json> deep = python_literal_to_json(nested('[', ']', 1000000, true));
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.message().find("nested deeper than 256 levels") != std::string::npos);
  CHECK(python_literal_to_json(nested('(', ')', 200, true)).ok());
}

TEST_CASE("an ExeBench record nested too deeply is an error, and an fname that is no identifier is no regex") {
  nlohmann::json record = nlohmann::json::parse(
      "{\"fname\": \"f\", \"deep\": " + nested('[', ']', 100000, true) + "}", nullptr, false);
  REQUIRE(record.is_object());
  Result<CFunction> function = c_function_from_exebench(record);
  REQUIRE_FALSE(function.ok());
  CHECK(function.message().find("nests deeper than 256 levels") != std::string::npos);
  std::vector<std::string> tags;
  CHECK_NOTHROW(tags = c_feature_tags_of_source("int f(int x) { return f(x - 1); }", "f(("));
  CHECK(std::find(tags.begin(), tags.end(), "recursion") == tags.end());
  CHECK_NOTHROW(tags = c_feature_tags_of_source("int f(int x) { return f(x - 1); }", "f"));
  CHECK(std::find(tags.begin(), tags.end(), "recursion") != tags.end());
}

TEST_CASE("Rolled-PTX loops nested deeper than 64 levels, or running empty ranges forever, are errors") {
  Result<std::string> deep = unroll_rolled_ptx(nested_rolled_loops(100000));
  REQUIRE_FALSE(deep.ok());
  INFO(deep.message());
  CHECK(deep.message().find("nested deeper than 64 levels") != std::string::npos);
  // 10^12 iterations that emit nothing: the output cap alone never stops them.
  Result<std::string> empty = unroll_rolled_ptx(
      "for.size.1 i in range(0, 999999, 1):\nfor.size.1 j in range(0, 999999, 1):\n"
      "for.size.1 k in range(5, 0, 1):\nadd.s32 %r1, %r2, 1;\n");
  REQUIRE_FALSE(empty.ok());
  INFO(empty.message());
  CHECK(empty.message().find("loop iterations") != std::string::npos);
  CHECK(unroll_rolled_ptx("for.size.1 i in range(0, 2, 1):\nadd.s32 %r(1+i*1), 1;\n").value() ==
        "add.s32 %r1, 1;\nadd.s32 %r2, 1;\n");
}

TEST_CASE("a taxonomy duration past int64 is an error") {
  Result<TaxonomyQuery> query = taxonomy_query_from_args({{"since", "99999999999999999d"}}, 1000);
  REQUIRE_FALSE(query.ok());
  CHECK(query.message().find("too long") != std::string::npos);
  CHECK_FALSE(taxonomy_query_from_args({{"since", "99999999999999999999"}}).ok());
  CHECK(taxonomy_query_from_args({{"since", "2d"}}, 200000000).value().since_ms == 200000000 - 2 * 86400000);
}

TEST_CASE("a request body nested deeper than 64 levels is answered 400, not a stack overflow") {
  httplib::Client client("127.0.0.1", parsers().port());
  client.set_bearer_token_auth(parsers().token());
  std::string deep = "{\"name\": \"w\", \"capabilities\": {\"a\": " + nested('[', ']', 100000, true) + "}}";
  for (const char* path : {"/v1/workers/lease", "/v1/models"}) {
    INFO(path);
    httplib::Result answer = client.Post(path, deep, "application/json");
    REQUIRE(answer);
    CHECK(answer->status == 400);
    CHECK(answer->body.find("nested at most 64 levels") != std::string::npos);
  }
  CHECK(parse_json_body("{\"a\": " + nested('[', ']', 63, true) + "}").is_object());
  CHECK(parse_json_body("{\"a\": " + nested('[', ']', 64, true) + "}").is_discarded());
}

TEST_CASE("a ptx2cuda pair naming a launch buffer past int64, or past any launch, is an error") {
  Result<Database> db = Database::open(parsers().db_path());
  REQUIRE(db.ok());
  for (const char* index : {"99999999999999999999", "9999999999"}) {
    INFO(index);
    Sample pair{.track = "ptx2cuda", .origin = "synthesized", .language = "ptx", .text = std::string("// ") + index};
    Result<InsertOutcome> inserted = insert_sample_if_absent(*db, pair);
    REQUIRE(inserted.ok());
    pair.id = inserted->id;
    ArtifactRecord artifact{.stage = "ptx2cuda.capture", .name = std::string("launch_input:") + index, .kind = "text", .content = "x"};
    REQUIRE(insert_artifact(*db, pair.id, artifact).ok());
    Result<StoredLaunch> launch = stored_launch_of(*db, pair);
    REQUIRE_FALSE(launch.ok());
    CHECK(launch.message().find("more than 4096 buffers") != std::string::npos);
  }
}

TEST_CASE("the content addresses of a deeply nested document are collected without recursion") {
  CHECK(blob_addresses(nlohmann::json::parse(nested('[', ']', 1000000, true))).empty());
  nlohmann::json document = nlohmann::json::parse(std::string(1000, '[') + "{\"sha256\": \"ab\"}" + std::string(1000, ']'));
  CHECK(blob_addresses(document) == std::vector<std::string>{"ab"});
}

TEST_CASE("translating megabytes of identifiers takes seconds: lines are found by binary search, not counted") {
  Result<HipifyRules> rules = load_hipify_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json");
  REQUIRE(rules.ok());
  std::string source = repeated("abc 12 x=3.5e7 (y) [z] {w}\n", 4 * kMiB);
  auto start = std::chrono::steady_clock::now();
  TranslationResult translated = translate_cuda_to_hip(*rules, source);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < kSecondsPerInput);
  CHECK(translated.ok);
}
