// What a model reads and writes carries nothing tailforge added: the provenance line earlier
// generators wrote is gone from training_text, from every export format's rows (for a store
// written by such a generator) and stays in the manifest, keyed by the row's sample.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "store/samples.h"
#include "synth/export.h"
#include "synth/training_text.h"
#include "test_support/read_whole_file.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

const char kOldProvenance[] = "// tailforge generated program: domain stencil_1d, template science.stencil_1d, seed 1009\n";


}  // namespace

TEST_CASE("training_text removes exactly the provenance lines, wherever a tool moved them") {
  std::string program = "#include <cstdio>\n// a comment of the program's own: seed the RNG\nint main() { return 0; }\n";
  CHECK(training_text(program) == program);
  CHECK(training_text(kOldProvenance + program) == program);
  // A translator put its include first: the line is second.
  CHECK(training_text("#include <hip/hip_runtime.h>\n" + std::string(kOldProvenance) + program) ==
        "#include <hip/hip_runtime.h>\n" + program);
  CHECK(training_text("  " + std::string(kOldProvenance) + "x") == "x");
  CHECK(training_text(std::string(kOldProvenance, sizeof kOldProvenance - 2)) == "");  // no newline at the end
  // The phrase inside a line of code is the program's, not a marker.
  std::string quoted = "printf(\"// tailforge generated program: x\");\n";
  CHECK(training_text(quoted) == quoted);
  CHECK_FALSE(has_tailforge_marker(quoted));
  CHECK(has_tailforge_marker(program + "  " + kOldProvenance));
  CHECK_FALSE(has_tailforge_marker(program));
  // Untrusted sizes: one 5 MB line, a million short lines.
  std::string huge(5'000'000, 'x');
  CHECK(training_text(huge) == huge);
  std::string many;
  for (int i = 0; i < 1'000'000; ++i) many += i % 1000 ? "a\n" : kOldProvenance;
  CHECK(training_text(many).size() == 999'000 * 2);
}

TEST_CASE("an export of a store an earlier generator wrote has no provenance in any format; the manifest keeps it") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("old.db")).value());
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  policy.eval_fraction = 0.5;
  for (int i = 0; i < 12; ++i) {
    Sample sample;
    sample.track = "cuda2hip";
    sample.origin = "template";
    sample.language = "cuda";
    std::string n = std::to_string(i);
    sample.text = kOldProvenance + std::string("__global__ void scale_") + n + "(float* x" + n + ") { x" + n +
                  "[threadIdx.x] *= " + n + ".5f; }\nint main_" + n + "() { return " + n + "; }\n";
    sample.template_id = "science.stencil_1d";
    sample.seed = 1009 + i;
    sample.domain = "stencil_1d";
    sample.status = "verified";
    std::string id = insert_sample_if_absent(db, sample).value().id;
    // The translation kept the comment, below the include it added.
    std::string hip = "#include <hip/hip_runtime.h>\n" + sample.text;
    REQUIRE(insert_artifact(db, id, {"translate.hip", "hip", "hip", hip}).ok());
  }
  for (const char* format : {"alpaca", "sharegpt", "jsonl"}) {
    CAPTURE(format);
    ExportOptions options{.track = "cuda2hip", .format = format, .out_dir = dir.file(format), .policy = policy};
    Result<ExportSummary> summary = export_dataset(db, options);
    REQUIRE_MESSAGE(summary.ok(), summary.message());
    REQUIRE(summary->train_samples + summary->eval_samples == 12);
    std::string extension = std::string(format) == "jsonl" ? ".jsonl" : ".json";
    for (const char* split : {"train", "eval"}) {
      std::string rows = read_whole_file(dir.file(std::string(format) + "/" + split + extension));
      CHECK(rows.find("tailforge") == std::string::npos);
      CHECK(rows.find("seed") == std::string::npos);
      CHECK(rows.find("science.stencil_1d") == std::string::npos);
      CHECK(rows.find("__global__ void scale_") != std::string::npos);
    }
    json manifest = json::parse(read_whole_file(summary->manifest_path));
    REQUIRE(manifest["samples"].size() == 12);
    for (const json& listed : manifest["samples"]) {
      CHECK(listed["template"] == "science.stencil_1d");
      CHECK(listed["seed"].get<int64_t>() >= 1009);
    }
  }
}
