#include "agents/baseline/dictionary.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <string>
#include <vector>

#include "agents/generator/generator.h"
#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

const HipifyRules& oracle_rules() {
  static const HipifyRules rules = [] {
    auto loaded = load_hipify_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json");
    REQUIRE_MESSAGE(loaded.ok(), loaded.message());
    return *loaded;
  }();
  return rules;
}

const GeneratorCatalog& generator_catalog() {
  static const GeneratorCatalog catalog = [] {
    auto loaded = load_default_generator_catalog(TAILFORGE_SOURCE_DIR);
    REQUIRE_MESSAGE(loaded.ok(), loaded.message());
    return *loaded;
  }();
  return catalog;
}

// The built-in rule translator's HIP for a CUDA source; it must accept the source.
std::string oracle_hip(const std::string& cuda) {
  TranslationResult result = translate_cuda_to_hip(oracle_rules(), cuda);
  REQUIRE_MESSAGE(result.ok, result.message);
  return result.hip_source;
}

// Generated programs of batch `seed` (indices 0..count-1) the oracle translates, as pairs.
// The oracle's pairs for batch `seed`'s first `count` programs; with `classic_only`, of the domains
// that use no more of the CUDA API than plain buffers (the API domains bring hundreds of names,
// which a few dozen programs cannot all teach).
const std::vector<TrainingPair>& oracle_pairs(uint64_t seed, size_t count, bool classic_only = false) {
  static std::map<std::tuple<uint64_t, size_t, bool>, std::vector<TrainingPair>> cache;
  auto [it, added] = cache.try_emplace({seed, count, classic_only});
  if (added) {
    static const std::vector<std::string> api = generator_api_domains();
    for (size_t index = 0, taken = 0; taken < count; ++index) {
      GenerationRequest request = batch_request(seed, index);
      if (classic_only && std::find(api.begin(), api.end(), *request.domain) != api.end()) continue;
      ++taken;
      auto program = generate_program(generator_catalog(), request);
      REQUIRE_MESSAGE(program.ok(), program.message());
      TranslationResult hip = translate_cuda_to_hip(oracle_rules(), program->source);
      if (hip.ok) it->second.push_back({program->source, hip.hip_source});
    }
  }
  return it->second;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool same_tokens(const std::vector<RuleToken>& x, const std::vector<RuleToken>& y) {
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const RuleToken& a, const RuleToken& b) {
    return a.text == b.text && a.slot == b.slot && (a.slot == 0 || a.slot_kind == b.slot_kind);
  });
}

bool dictionary_has(const BaselineDictionary& dictionary, const TranslationRule& rule) {
  return std::any_of(dictionary.rules.begin(), dictionary.rules.end(), [&](const TranslationRule& kept) {
    return same_tokens(kept.from, rule.from) && same_tokens(kept.to, rule.to);
  });
}

// Every window of changes in the pair has a candidate the dictionary kept.
bool every_change_learned(const BaselineDictionary& dictionary, const TrainingPair& pair) {
  for (const auto& window : extract_rule_candidates(pair.source, pair.target, dictionary.options)) {
    if (std::none_of(window.begin(), window.end(),
                     [&](const TranslationRule& r) { return dictionary_has(dictionary, r); })) {
      return false;
    }
  }
  return true;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

TEST_CASE("joining the tokens of generated programs and their HIP gives back every byte") {
  std::vector<std::string> samples;
  for (const TrainingPair& pair : oracle_pairs(1, 20)) {
    samples.push_back(pair.source);
    samples.push_back(pair.target);
  }
  for (const std::string& text : samples) {
    CAPTURE(text.substr(0, 60));
    CHECK(join_tokens(tokenize_source(text)) == text);
  }
}

TEST_CASE("a window gives context-free and left-context candidates, slots and the next token's whitespace") {
  auto windows = extract_rule_candidates("  CHECK(cudaMemcpyToSymbol(c_coef, h, 16));\n",
                                         "  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_coef), h, 16));\n");
  REQUIRE(windows.size() == 1);
  REQUIRE(windows[0].size() == 3);  // two common tokens on the left: contexts 0, 1 and 2
  CHECK(describe_rule(windows[0][0]) == "cudaMemcpyToSymbol ( $1 => hipMemcpyToSymbol ( HIP_SYMBOL ( $1 )");
  CHECK(describe_rule(windows[0][2]) ==
        "CHECK ( cudaMemcpyToSymbol ( $1 => CHECK ( hipMemcpyToSymbol ( HIP_SYMBOL ( $1 )");
  CHECK(windows[0][0].from[2].slot_kind == TokenKind::identifier);
  CHECK_FALSE(windows[0][0].next_whitespace.has_value());

  windows = extract_rule_candidates("x = __shfl_xor_sync(0xffffffffu, v, o);", "x = __shfl_xor(v, o);");
  REQUIRE(windows.size() == 1);
  CHECK(describe_rule(windows[0][0]) == "__shfl_xor_sync ( 0xffffffffu , => __shfl_xor (");
  REQUIRE(windows[0][0].next_whitespace.has_value());
  CHECK(*windows[0][0].next_whitespace == "");

  // A pure insertion needs a token of context to stand on.
  windows = extract_rule_candidates("f(a);", "f(a); g();");
  REQUIRE(windows.size() == 1);
  CHECK(describe_rule(windows[0][0]) == "; => ; g ( ) ;");
}

TEST_CASE("trained on 120 generated programs, held-out programs whose every change was learned come out exactly") {
  const std::vector<TrainingPair>& training = oracle_pairs(1, 120, true);
  BaselineDictionary dictionary = learn_dictionary(training);
  CHECK(dictionary.training_rows == static_cast<int64_t>(training.size()));

  const std::vector<TrainingPair>& held_out = oracle_pairs(2, 100, true);
  size_t learned = 0, exact = 0, exact_when_learned = 0;
  for (const TrainingPair& pair : held_out) {
    std::string output = apply_dictionary(dictionary, pair.source).text;
    bool covered = every_change_learned(dictionary, pair);
    exact += output == pair.target;
    learned += covered;
    exact_when_learned += covered && output == pair.target;
    if (covered) CHECK(output == pair.target);
  }
  MESSAGE("held-out: " << exact << " of " << held_out.size() << " exact; " << learned << " had every change learned");
  // A construct needs min_support training rows: with 60 programs, whether __shfl_xor_sync and
  // cooperative groups had them depended on the domain mix (79 of 95 learned after two API domains
  // were added); with 120, the held-out windows left unlearned are single rare calls.
  CHECK(learned >= held_out.size() * 9 / 10);
  CHECK(exact_when_learned == learned);
  CHECK(exact * 100 >= held_out.size() * 95);
}

TEST_CASE("a construct seen in fewer than min_support rows stays untranslated until enough rows teach it") {
  std::vector<TrainingPair> training, with_construct;
  for (const TrainingPair& pair : oracle_pairs(1, 60)) {
    if (!contains(pair.source, "__shfl_up_sync")) training.push_back(pair);
  }
  for (uint64_t seed = 3; with_construct.size() < 4 && seed < 8; ++seed) {
    for (const TrainingPair& pair : oracle_pairs(seed, 60)) {
      if (contains(pair.source, "__shfl_up_sync") && with_construct.size() < 4) with_construct.push_back(pair);
    }
  }
  REQUIRE(with_construct.size() == 4);
  const TrainingPair& test = with_construct[3];

  std::vector<TrainingPair> seen_twice = training;
  seen_twice.insert(seen_twice.end(), with_construct.begin(), with_construct.begin() + 2);
  std::string before = apply_dictionary(learn_dictionary(seen_twice), test.source).text;
  CHECK(contains(before, "__shfl_up_sync(0xffffffffu,"));
  CHECK(before != test.target);

  std::vector<TrainingPair> seen_three_times = seen_twice;
  seen_three_times.push_back(with_construct[2]);
  std::string after = apply_dictionary(learn_dictionary(seen_three_times), test.source).text;
  CHECK_FALSE(contains(after, "__shfl_up_sync"));
  CHECK(after == test.target);
}

TEST_CASE("a slot learned from symbols a, b and c takes an unseen symbol, and a repeated row counts again") {
  auto pair_for = [](const std::string& symbol) {
    std::string cuda = "#include <cuda_runtime.h>\n__constant__ float " + symbol +
                       "[4];\nvoid load(const float* h) {\n  cudaMemcpyToSymbol(" + symbol + ", h, 16);\n}\n";
    return TrainingPair{cuda, oracle_hip(cuda)};
  };
  BaselineDictionary dictionary = learn_dictionary({pair_for("a"), pair_for("b"), pair_for("c")});
  TrainingPair unseen = pair_for("filter_taps");
  CHECK(contains(unseen.target, "hipMemcpyToSymbol(HIP_SYMBOL(filter_taps), h, 16)"));
  DictionaryOutput output = apply_dictionary(dictionary, unseen.source);
  CHECK(output.text == unseen.target);
  REQUIRE_FALSE(output.applied_rules.empty());
  CHECK(std::any_of(output.applied_rules.begin(), output.applied_rules.end(), [&](size_t r) {
    std::string rule = describe_rule(dictionary.rules[r]);  // with or without left context
    return contains(rule, "cudaMemcpyToSymbol ( $1 =>") && contains(rule, "hipMemcpyToSymbol ( HIP_SYMBOL ( $1 )");
  }));

  BaselineDictionary two_rows = learn_dictionary({pair_for("a"), pair_for("b")});
  CHECK(apply_dictionary(two_rows, unseen.source).text == unseen.source);
  BaselineDictionary repeated = learn_dictionary({pair_for("a"), pair_for("b"), pair_for("b")});
  CHECK(apply_dictionary(repeated, unseen.source).text == unseen.target);
}

TEST_CASE("the precision filter keeps the cooperative_groups include rewrite off the namespace alias") {
  std::vector<TrainingPair> training;
  for (std::string kernel : {"k1", "k2", "k3", "k4"}) {
    std::string cuda =
        "#include <cuda_runtime.h>\n#include <cmath>\n#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ "
        "void " +
        kernel + "() { cg::this_thread_block().sync(); }\n";
    training.push_back({cuda, oracle_hip(cuda)});
    CHECK(contains(training.back().target, "namespace cg = cooperative_groups;"));
  }
  std::string fresh =
      "#include <cuda_runtime.h>\n#include <cmath>\n#include <cooperative_groups.h>\n#include <cstdio>\nnamespace cg = "
      "cooperative_groups;\n";
  std::string expected = oracle_hip(fresh);
  BaselineDictionary dictionary = learn_dictionary(training);
  CHECK(apply_dictionary(dictionary, fresh).text == expected);
  for (const TranslationRule& rule : dictionary.rules) CHECK(rule.from.front().text != "cooperative_groups");

  LearnOptions no_filter;
  no_filter.min_precision = 0;
  std::string careless = apply_dictionary(learn_dictionary(training, no_filter), fresh).text;
  CHECK(contains(careless, "namespace cg = hip/hip_cooperative_groups;"));
}

TEST_CASE("strings and comments that mention cudaMalloc are left alone") {
  BaselineDictionary dictionary = learn_dictionary(oracle_pairs(1, 60));
  std::string cuda =
      "#include <cuda_runtime.h>\n#include <cmath>\n"
      "// cudaMalloc below may fail\n"
      "void f(float** p) {\n"
      "  if (cudaMalloc(p, 64) != cudaSuccess) printf(\"cudaMalloc failed\\n\"); /* cudaMalloc */\n"
      "}\n";
  std::string expected =
      "#include <hip/hip_runtime.h>\n#include <cmath>\n"
      "// cudaMalloc below may fail\n"
      "void f(float** p) {\n"
      "  if (hipMalloc(p, 64) != hipSuccess) printf(\"cudaMalloc failed\\n\"); /* cudaMalloc */\n"
      "}\n";
  CHECK(apply_dictionary(dictionary, cuda).text == expected);
  CHECK(oracle_hip(cuda) == expected);
}

TEST_CASE("a dictionary survives a JSON round trip exactly, and a malformed file names the JSON path") {
  BaselineDictionary dictionary = learn_dictionary(oracle_pairs(1, 60));
  REQUIRE(dictionary.rules.size() > 20);
  TempDir dir;
  std::string path = dir.file("dictionary.json");
  REQUIRE(save_dictionary(dictionary, path).ok());
  auto loaded = load_dictionary(path);
  REQUIRE_MESSAGE(loaded.ok(), loaded.message());
  CHECK(dictionary_to_json(*loaded).dump() == dictionary_to_json(dictionary).dump());
  CHECK(loaded->training_rows == dictionary.training_rows);
  for (size_t r = 0; r < dictionary.rules.size(); ++r) {
    CHECK(loaded->rules[r].precision == dictionary.rules[r].precision);
    CHECK(loaded->rules[r].next_whitespace == dictionary.rules[r].next_whitespace);
  }
  for (const TrainingPair& pair : oracle_pairs(2, 100)) {
    CHECK(apply_dictionary(*loaded, pair.source).text == apply_dictionary(dictionary, pair.source).text);
  }

  json broken = dictionary_to_json(dictionary);
  broken["rules"][3]["to"] = "hipMalloc";
  write_text(path, broken.dump());
  auto bad = load_dictionary(path);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message() == path + ": rules[3].to: expected an array");

  broken = dictionary_to_json(dictionary);
  broken["rules"][1]["from"][0] = json{{"slot", 1}, {"kind", "identifier"}};
  CHECK(dictionary_from_json(broken, "d.json").message() == "d.json: rules[1].from: must start with a literal token");
  broken = dictionary_to_json(dictionary);
  broken["format"] = "something-else/2";
  CHECK(contains(dictionary_from_json(broken, "d.json").message(), "d.json: format: expected"));
  write_text(path, "{ not json");
  CHECK(contains(load_dictionary(path).message(), path + ": invalid JSON"));
}

TEST_CASE("read_snapshot_pairs reads only the train file of alpaca, jsonl and sharegpt snapshots") {
  const std::string instruction = "Translate the following CUDA code to HIP. Keep the program's behaviour.";
  std::vector<TrainingPair> rows = {{"int a;\n\n// blank line above\n", "int b;\n"}, {"x", "y"}};
  TempDir dir;
  auto write_snapshot = [&](const std::string& format) {
    std::string folder = dir.file(format);
    std::filesystem::create_directories(folder);
    std::string extension = format == "jsonl" ? ".jsonl" : ".json";
    json records = json::array();
    std::string lines;
    for (const TrainingPair& row : rows) {
      json record =
          format == "sharegpt"
              ? json{{"conversations", json::array({{{"from", "human"}, {"value", instruction + "\n\n" + row.source}},
                                                    {{"from", "gpt"}, {"value", row.target}}})}}
              : json{{"instruction", instruction}, {"input", row.source}, {"output", row.target}};
      if (format == "jsonl") record["sample_id"] = "s-" + row.target;
      records.push_back(record);
      lines += record.dump() + "\n";
    }
    write_text(folder + "/train" + extension, format == "jsonl" ? lines : records.dump(1));
    write_text(folder + "/eval" + extension, "this eval file must never be read");
    write_text(
        folder + "/manifest.json",
        json{{"format", format}, {"files", {{"train", "train" + extension}, {"eval", "eval" + extension}}}}.dump());
    return folder;
  };
  for (const std::string format : {"alpaca", "jsonl", "sharegpt"}) {
    CAPTURE(format);
    auto pairs = read_snapshot_pairs(write_snapshot(format));
    REQUIRE_MESSAGE(pairs.ok(), pairs.message());
    REQUIRE(pairs->size() == rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      CHECK((*pairs)[i].source == rows[i].source);
      CHECK((*pairs)[i].target == rows[i].target);
    }
  }

  std::string folder = dir.file("alpaca");
  write_text(folder + "/train.json", R"([{"input": "a", "output": "b"}, {"input": 3, "output": "c"}])");
  CHECK(read_snapshot_pairs(folder).message() == folder + "/train.json: [1].input: expected a string");
  write_text(folder + "/manifest.json", R"({"format": "parquet", "files": {"train": "train.json"}})");
  CHECK(read_snapshot_pairs(folder).message() == folder + "/manifest.json: format: expected alpaca, sharegpt or jsonl");
  CHECK(contains(read_snapshot_pairs(dir.file("missing")).message(),
                 dir.file("missing") + "/manifest.json: cannot open"));
  folder = dir.file("jsonl");
  write_text(folder + "/train.jsonl", "{\"input\": \"a\", \"output\": \"b\"}\n{broken\n");
  CHECK(contains(read_snapshot_pairs(folder).message(), folder + "/train.jsonl: line 2: invalid JSON"));
}

TEST_CASE("learning a thousand pairs of about five thousand tokens each") {
  // Four held-out programs to a row, in a different mix per row, so no two rows are the same.
  std::vector<TrainingPair> pool = oracle_pairs(1, 60);
  const std::vector<TrainingPair>& more = oracle_pairs(2, 100);
  pool.insert(pool.end(), more.begin(), more.end());
  std::vector<TrainingPair> rows;
  size_t tokens = 0;
  for (size_t i = 0; i < 1000; ++i) {
    TrainingPair row;
    size_t pick = i % pool.size();
    for (size_t part = 0; part < 4; ++part) {
      row.source += pool[pick].source;
      row.target += pool[pick].target;
      pick = (pick + 1 + i / pool.size() + part * 7) % pool.size();
    }
    tokens += tokenize_source(row.source).tokens.size();
    rows.push_back(std::move(row));
  }
  auto start = std::chrono::steady_clock::now();
  BaselineDictionary dictionary = learn_dictionary(rows);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("learned " << rows.size() << " pairs (" << tokens / rows.size() << " source tokens each) in " << seconds
                     << " s: " << dictionary.rules.size() << " rules");
  CHECK(dictionary.training_rows == 1000);
  CHECK_FALSE(dictionary.rules.empty());
}
