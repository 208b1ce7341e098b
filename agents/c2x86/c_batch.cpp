#include "agents/c2x86/c_batch.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "agents/c2x86/c_generator.h"
#include "base/files.h"
#include "base/parallel.h"
#include "verifier/c2x86/function_check.h"
#include "verifier/stage_runner.h"

namespace tailforge {
namespace fs = std::filesystem;
namespace {

const StageResult* find_check(const CBatchEntry& entry, const std::string& name) {
  for (const StageResult& stage : entry.checks)
    if (stage.name == name) return &stage;
  return nullptr;
}

// Records the expected outputs, then runs the track's checks on the oracle assembly.
void check_entry(CBatchEntry& entry, const VerifierOptions& verifier, const Toolchains& toolchains) {
  C2x86Check check = check_c_function(entry.function, {verifier, toolchains});
  entry.function.cases = check.cases;
  entry.checks = std::move(check.stages);
  auto ok = [&](const char* name) {
    const StageResult* stage = find_check(entry, name);
    return stage && stage->ok();
  };
  entry.compiled = ok("c2x86.oracle") && ok("c2x86.assemble") && ok("c2x86.link");
  const StageResult* jump = find_check(entry, "c2x86.jump_table");
  entry.jump_table = jump && jump->status == "fail";
  entry.io_passed = ok("c2x86.record") && ok("c2x86.io");
  entry.float_round_trip = check.float_round_trip;
  if (check.symbolic) {
    entry.symbolic_assembly = check.symbolic->text;
    entry.float_constants = check.symbolic->symbolized();
  }
  for (const StageResult& stage : entry.checks) {
    if (stage.ok()) continue;
    entry.failure = stage.name + " " + stage.status + ": " + stage.reason;
    break;
  }
}

nlohmann::json manifest_line(const CBatchEntry& entry, const std::string& stem, bool has_assembly) {
  nlohmann::json cases = nlohmann::json::array();
  for (const IoCase& io : entry.function.cases) cases.push_back({{"input", io.input}, {"expected", io.expected}});
  nlohmann::json checks = nlohmann::json::object();
  for (const StageResult& stage : entry.checks) checks[stage.name] = stage.status;
  nlohmann::json line = {{"file", entry.file},
                         {"driver", stem + "_driver.c"},
                         {"assembly", has_assembly ? nlohmann::json(stem + ".s") : nlohmann::json(nullptr)},
                         {"name", entry.function.name},
                         {"kind", entry.kind},
                         {"features", entry.function.features},
                         {"declarations", entry.function.declarations},
                         {"cases", cases},
                         {"checks", checks},
                         {"compiled", entry.compiled},
                         {"io_passed", entry.io_passed},
                         {"jump_table", entry.jump_table},
                         {"symbolic_assembly", has_assembly ? nlohmann::json(stem + ".symbolic.s") : nlohmann::json(nullptr)},
                         {"float_constants", entry.float_constants},
                         {"float_round_trip", entry.float_round_trip}};
  if (!entry.failure.empty()) line["failure"] = entry.failure;
  return line;
}

}  // namespace

Result<CBatch> write_c_batch(const CBatchOptions& options, const VerifierOptions& verifier,
                             const Toolchains& toolchains) {
  std::error_code error;
  fs::create_directories(options.out_dir, error);
  if (error) return make_error(options.out_dir + ": " + error.message());
  CBatch batch;
  const std::vector<std::string>& kinds = c_function_kinds();
  for (uint64_t index = 0; index < options.count; ++index) {
    Result<CFunction> function = generate_c_function({.seed = options.seed, .index = index});
    if (!function) return function.error();
    CBatchEntry entry;
    entry.function = std::move(*function);
    entry.kind = kinds[index % kinds.size()];
    entry.file = std::to_string(index) + "_" + entry.function.name + ".c";
    batch.entries.push_back(std::move(entry));
  }

  size_t jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  for_each_index(batch.entries.size(), jobs, [&]() -> IndexWork {
    return [&](size_t i) {
      check_entry(batch.entries[i], verifier, toolchains);
      return true;
    };
  });

  std::string manifest_path = options.out_dir + "/manifest.jsonl";
  std::ofstream manifest(manifest_path, std::ios::binary | std::ios::trunc);
  if (!manifest) return make_error(manifest_path + ": cannot open for writing");
  for (const CBatchEntry& entry : batch.entries) {
    std::string stem = entry.file.substr(0, entry.file.size() - 2);
    bool written = write_text_file(options.out_dir + "/" + entry.file, entry.function.function).ok() &&
                   write_text_file(options.out_dir + "/" + stem + "_driver.c", entry.function.driver).ok();
    const StageResult* oracle = find_check(entry, "c2x86.oracle");
    const Artifact* assembly = oracle ? oracle->artifact("x86_asm") : nullptr;
    if (assembly) {
      written = written && write_text_file(options.out_dir + "/" + stem + ".s", assembly->content).ok() &&
                write_text_file(options.out_dir + "/" + stem + ".symbolic.s", entry.symbolic_assembly).ok();
    }
    if (!written) return make_error(options.out_dir + ": cannot write " + entry.file + " (disk full?)");
    manifest << manifest_line(entry, stem, assembly != nullptr).dump() << "\n";
    batch.compiled += entry.compiled;
    batch.io_passed += entry.compiled && entry.io_passed;
    batch.jump_tables += entry.jump_table;
    batch.cases += entry.function.cases.size();
    for (const std::string& tag : entry.function.features) ++batch.features[tag];
    batch.float_constants += entry.float_constants;
    batch.with_float_constants += entry.float_constants > 0;
    batch.float_round_trips += entry.float_constants > 0 && entry.float_round_trip;
  }
  if (!manifest.flush()) return make_error(manifest_path + ": write failed (disk full?)");
  return batch;
}

}  // namespace tailforge
