// The kernelopt track's commands (ConCuR): `kernelopt run` stores the built-in tasks and
// candidates and measures every candidate not yet measured here; `kernelopt report` prints the
// fast_p figures per model; `kernelopt tasks` lists the tasks; `curate --track kernelopt` applies
// the ConCuR rules to the measurements and stores the choices; export and import of the track
// live in export_kernelopt / import_kernelopt below.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "agents/kernelopt/builtin_tasks.h"
#include "agents/kernelopt/generated_tasks.h"
#include "agents/kernelopt/model_candidates.h"
#include "agents/kernelopt/strategy_model.h"
#include "base/files.h"
#include "base/parallel.h"
#include "base/process.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/cli/trained_version.h"
#include "daemon/planner.h"
#include "daemon/scaleout.h"
#include "store/models.h"
#include "store/queue.h"
#include "store/samples.h"
#include "synth/kernelopt/curation.h"
#include "synth/kernelopt/export.h"
#include "synth/kernelopt/report.h"
#include "synth/kernelopt/snapshot.h"
#include "synth/kernelopt/task_samples.h"
#include "synth/kernelopt/store.h"
#include "synth/policy.h"
#include "verifier/options.h"

namespace tailforge {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string describe_measurement(const KernelMeasurement& measured) {
  if (measured.status == "ok" && measured.timed()) {
    const HarnessReport& report = *measured.report;
    int attempts = report.candidate->attempts;
    return fmt::format("ok {:.2f}x (reference {:.4f} ms ±{:.1f}%, candidate {:.4f} ms ±{:.1f}%{}{}; {} timed calls checked)",
                       measured.speedup(), report.reference->median_ms, 100 * report.reference->spread,
                       report.candidate->median_ms, 100 * report.candidate->spread,
                       attempts > 1 ? fmt::format(", timed {} times: the earlier spreads were over 5%", attempts) : "",
                       report.roofline_fraction() > 0 ? fmt::format(", {:.2f} of the roofline", report.roofline_fraction())
                                                      : "",
                       report.calls_checked);
  }
  if (measured.status == "ok") return "ok (not timed)";
  if (measured.status == "skipped") return "skipped: " + measured.detail;
  return measured.status + " " + measured.category + ": " + measured.detail;
}

std::vector<CandidateOutcome> outcomes_of(const std::vector<CandidateRecord>& records) {
  std::vector<CandidateOutcome> outcomes;
  for (const CandidateRecord& record : records) {
    const KernelCandidate& candidate = record.stored.candidate;
    outcomes.push_back({candidate.origin == "model" ? candidate.model : "builtin", candidate.task,
                        record.stored.operator_type, record.status.empty() ? "skipped" : record.status,
                        record.timed && record.status == "ok", record.speedup, record.category,
                        record.roofline_fraction()});
  }
  return outcomes;
}

// Stores the built-in tasks (or the named ones) and their built-in candidates.
Result<std::vector<KernelTask>> store_builtin_tasks(Database& db, const std::vector<std::string>& names) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  for (const KernelTask& task : builtin_kernel_tasks()) {
    if (!names.empty() && std::find(names.begin(), names.end(), task.name) == names.end()) continue;
    Result<bool> stored = store_kernelopt_task(db, task);
    if (!stored) return stored.error();
    for (const KernelCandidate& candidate : builtin_candidates(task)) {
      Result<StoredCandidate> kept = store_kernelopt_candidate(db, task, candidate);
      if (!kept) return kept.error();
    }
  }
  if (Status s = transaction.commit(); !s) return s.error();
  return load_kernelopt_tasks(db, names);
}

// Asks the registered kernelopt model for `samples` candidates per task and stores them.
Status store_model_candidates(const CommandContext& context, Database& db, const std::string& name,
                              const std::vector<KernelTask>& tasks, int samples) {
  Result<std::optional<ModelRecord>> model = find_model(db, name);
  if (!model) return model.error();
  if (!*model) return make_error("no model named '" + name + "' (tailforge model add --track kernelopt ...)");
  if (Status usable = check_kernelopt_model(**model); !usable) return usable;
  Result<LlmOptions> options = llm_options_from_json(context.config["llm"]);
  if (!options) return options.error();
  nlohmann::json parameters = nlohmann::json::parse((*model)->parameters, nullptr, false);
  options->base_url = (*model)->endpoint.value_or("");
  options->model = parameters.is_object() ? parameters.value("model_id", name) : name;
  Result<LlmPrompts> prompts = load_llm_prompts(data_path(options->prompts_path));
  if (!prompts) return prompts.error();
  int written = 0, failed = 0;
  for (const KernelTask& task : tasks) {
    ModelCandidates answers = ask_model_for_candidates(*options, *prompts, task, name, samples, &db);
    for (const std::string& failure : answers.failures) std::cerr << "  " << name << " on " << task.name << ": " << failure << "\n";
    failed += static_cast<int>(answers.failures.size());
    for (const KernelCandidate& candidate : answers.candidates) {
      Result<StoredCandidate> stored = store_kernelopt_candidate(db, task, candidate);
      if (!stored) return stored.error();
      ++written;
    }
  }
  std::cerr << "kernelopt: " << name << " wrote " << written << " candidates for " << tasks.size() << " tasks ("
            << failed << " answers without a kernel)\n";
  return {};
}

// Runs `work(i, connection)` for i in [0, count) on `threads` threads, each with its own
// connection to the store.
Status for_each_parallel(size_t count, int threads, const std::function<void(size_t, Database&)>& work,
                         const std::string& db_path) {
  std::mutex error_mutex;
  Status first_error;
  for_each_index(count, static_cast<size_t>(threads), [&]() -> IndexWork {
    Result<Database> opened = Database::open(db_path);
    if (!opened) {
      std::lock_guard lock(error_mutex);
      first_error = opened.error();
      return {};
    }
    auto own = std::make_shared<Database>(std::move(*opened));  // the work function's copies share it
    return [&work, own](size_t i) {
      work(i, *own);
      return true;
    };
  });
  return first_error;
}

// Measures one candidate in a scratch directory of its own (removed afterwards unless
// verifier.keep_scratch); compile_only stops after the compile, which the cache then keeps.
KernelMeasurement measure_in_scratch(const VerifierOptions& verifier, const Toolchains& toolchains, Database& db,
                                     bool compile_only, const KernelTask& task, const StoredCandidate& stored,
                                     const HarnessOptions& harness) {
  Result<std::string> scratch = make_scratch_directory(verifier, "tailforge-kernelopt");
  if (!scratch) {
    KernelMeasurement measurement;
    measurement.status = "error";
    measurement.category = "kernelopt.harness";
    measurement.detail = scratch.message();
    return measurement;
  }
  StageContext stage_context{verifier, toolchains, &db, nullptr, *scratch, {}};
  stage_context.compile_only = compile_only;
  KernelMeasurement measured = measure_candidate(stage_context, task, stored.candidate.source, harness);
  remove_scratch_directory(verifier, *scratch);
  return measured;
}

int kernelopt_run(const CommandContext& context, const CommandLine& args) {
  Result<VerifierOptions> verifier = verifier_options_from_json(context.config);
  if (!verifier) return report_failure(verifier.message());
  Result<Database> db = Database::open(context.db_path);
  if (!db) return report_failure(db.message());
  std::vector<std::string> names = split_list(args.get("--tasks"));
  Result<std::vector<KernelTask>> tasks = store_builtin_tasks(*db, names);
  if (!tasks) return report_failure(tasks.message());
  if (tasks->empty()) return report_failure("no kernelopt task matches --tasks " + args.get("--tasks"));
  std::map<std::string, KernelTask> task_by_name;
  for (const KernelTask& task : *tasks) task_by_name[task.name] = task;
  if (args.has("--model")) {
    int samples = static_cast<int>(args.get_int("--samples", 3));
    if (Status asked = store_model_candidates(context, *db, args.get("--model"), *tasks, samples); !asked) {
      return report_failure(asked.message());
    }
  }

  Result<std::vector<CandidateRecord>> records = load_kernelopt_candidates(*db);
  if (!records) return report_failure(records.message());
  const Toolchains& toolchains = detected_toolchains();
  bool gpu_here = toolchains.has_gpu("nvidia");
  bool again = args.has("--remeasure");
  std::vector<CandidateRecord> todo;
  for (const CandidateRecord& record : *records) {
    if (!task_by_name.count(record.stored.candidate.task)) continue;
    bool measured = !record.status.empty() && (record.status != "skipped" || !gpu_here);
    if (again || !measured) todo.push_back(record);
  }
  std::cerr << "kernelopt: " << tasks->size() << " tasks, " << todo.size() << " candidates to measure"
            << (gpu_here ? "" : " (no NVIDIA GPU here: compiled only, timing skipped)") << "\n";

  HarnessOptions harness;
  int jobs = static_cast<int>(args.get_int("--jobs", std::max(1u, std::thread::hardware_concurrency())));
  // Compiles first, all at once; then the timing runs one after another with nothing else on the
  // machine, since a busy CPU delays the launches of short kernels and widens their spread.
  if (gpu_here) {
    std::cerr << "kernelopt: compiling " << todo.size() << " programs with " << jobs << " jobs\n";
    Status compiled = for_each_parallel(todo.size(), jobs, [&](size_t i, Database& own) {
      const StoredCandidate& stored = todo[i].stored;
      measure_in_scratch(*verifier, toolchains, own, true, task_by_name.at(stored.candidate.task), stored, harness);
    }, context.db_path);
    if (!compiled) return report_failure(compiled.message());
  }
  std::atomic<int> failures{0};
  std::mutex print_mutex;
  std::string host = host_name();
  Status ran = for_each_parallel(todo.size(), gpu_here ? 1 : jobs, [&](size_t i, Database& own) {
    const StoredCandidate& stored = todo[i].stored;
    const KernelTask& task = task_by_name.at(stored.candidate.task);
    KernelMeasurement measured = measure_in_scratch(*verifier, toolchains, own, false, task, stored, harness);
    Status stored_ok = store_kernelopt_measurement(own, stored, task, measured, host);
    std::lock_guard lock(print_mutex);
    if (!stored_ok) {
      std::cerr << "tailforge: " << stored_ok.message() << "\n";
      ++failures;
    }
    std::cout << fmt::format("[{}/{}] {} {} (candidate {}): {}\n", i + 1, todo.size(), task.name,
                             stored.candidate.strategy, stored.id, describe_measurement(measured))
              << std::flush;
  }, context.db_path);
  if (!ran) return report_failure(ran.message());

  Result<std::vector<CandidateRecord>> after = load_kernelopt_candidates(*db);
  if (!after) return report_failure(after.message());
  std::cout << format_kernel_report(kernel_report(outcomes_of(*after)));
  return failures > 0 ? 1 : 0;
}

int kernelopt_report(const CommandContext& context, const CommandLine& args) {
  Result<Database> db = Database::open(context.db_path);
  if (!db) return report_failure(db.message());
  Result<std::vector<CandidateRecord>> records = load_kernelopt_candidates(*db);
  if (!records) return report_failure(records.message());
  std::vector<ModelKernelReport> report = kernel_report(outcomes_of(*records));
  std::set<std::string> devices;
  for (const CandidateRecord& record : *records) {
    if (!record.device.empty()) devices.insert(record.device);
  }
  if (args.has("--json")) {
    nlohmann::json json = kernel_report_to_json(report);
    json["devices"] = devices;
    std::cout << json.dump(2) << "\n";
    return 0;
  }
  if (!devices.empty()) {
    std::string list;
    for (const std::string& device : devices) list += (list.empty() ? "" : ", ") + device;
    std::cout << "measured on " << list << "\n";
  }
  std::cout << format_kernel_report(report);
  return 0;
}

// The built-in strategies' learner as a retrain command: the strategy table of a curated
// kernelopt export, registered as the next builtin-strategies-vN.
int kernelopt_train(const CommandContext& context, const CommandLine& args) {
  std::string snapshot = args.get("--snapshot", environment_value("TAILFORGE_SNAPSHOT_DIR"));
  if (snapshot.empty()) {
    std::cerr << "tailforge: kernelopt train needs --snapshot DIR (or $TAILFORGE_SNAPSHOT_DIR): a kernelopt export\n";
    return 2;
  }
  Result<std::vector<StrategyExample>> examples = read_strategy_examples(snapshot + "/manifest.json");
  if (!examples) return report_failure(examples.message());
  StrategyTable table = learn_strategies(*examples);
  std::cout << "learned the strategies of " << table.by_family.size() << " families and " << table.by_operator_type.size()
            << " operator types from " << examples->size() << " curated training rows\n";
  for (const auto& [family, strategy] : table.by_family) std::cout << "  " << family << ": " << strategy << "\n";
  for (const auto& [key, strategy] : table.by_family_size) std::cout << "  " << key << ": " << strategy << "\n";
  if (args.has("--no-register")) return 0;
  nlohmann::json definition = {{"kind", "builtin"}, {"track", "kernelopt"}, {"learned", strategy_table_json(table)}};
  return register_trained_version(args, context, "builtin-strategies-v", std::move(definition));
}

int kernelopt_tasks(const CommandContext& context, const CommandLine& args) {
  Result<Database> db = Database::open(context.db_path);
  if (!db) return report_failure(db.message());
  Result<std::vector<KernelTask>> stored = load_kernelopt_tasks(*db);
  if (!stored) return report_failure(stored.message());
  std::vector<KernelTask> tasks = *stored;
  if (tasks.empty()) tasks = builtin_kernel_tasks();  // not stored yet: what `kernelopt run` would store
  if (args.has("--json")) {
    nlohmann::json json = nlohmann::json::array();
    for (const KernelTask& task : tasks) {
      nlohmann::json inputs = nlohmann::json::array();
      for (const KernelBuffer& input : task.inputs) inputs.push_back({{"name", input.name}, {"elements", input.elements}});
      // read_bytes and flops: what the task's physical limit (the roofline) is computed from.
      json.push_back({{"name", task.name}, {"operator_type", task.operator_type}, {"domain", task.domain},
                      {"description", task.description}, {"origin", task.origin},
                      {"reference_language", task.reference_language}, {"inputs", inputs},
                      {"output", {{"name", task.output.name}, {"elements", task.output.elements}}},
                      {"tolerance", task.tolerance}, {"read_bytes", task.must_read_bytes()}, {"flops", task.flops}});
    }
    std::cout << json.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<28} {:<10} {:<8} {:>12} {:>12} {}\n", "task", "type", "origin", "read bytes", "FLOPs",
                           "description");
  for (const KernelTask& task : tasks) {
    std::cout << fmt::format("{:<28} {:<10} {:<8} {:>12} {:>12} {}\n", task.name, task.operator_type, task.origin,
                             task.must_read_bytes(), task.flops > 0 ? fmt::format("{:.4g}", task.flops) : "-",
                             task.description);
  }
  return 0;
}

}  // namespace

int command_kernelopt(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  std::string action = args.positionals.empty() ? "" : args.positionals[0];
  if (action == "run") return kernelopt_run(*context, args);
  if (action == "report") return kernelopt_report(*context, args);
  if (action == "tasks") return kernelopt_tasks(*context, args);
  if (action == "train") return kernelopt_train(*context, args);
  std::cerr << "tailforge: kernelopt needs run, report, tasks or train, got '" << action << "'\n";
  return 2;
}

int command_curate(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  CurationOptions options;
  options.high_speedup = args.get_number("--high-speedup", options.high_speedup);
  options.single_share = args.get_number("--single-share", options.single_share);
  if (auto cuts = args.get_number_pair("--difficulty")) options.difficulty_thresholds = *cuts;
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<std::vector<CandidateRecord>> records = load_kernelopt_candidates(*db);
  if (!records) return report_failure(records.message());
  std::map<int64_t, const CandidateRecord*> by_id;
  for (const CandidateRecord& record : *records) by_id[record.stored.id] = &record;
  CurationResult result = curate_kernelopt(curation_inputs(*records), options);
  Result<int64_t> id = store_kernelopt_curation(*db, options, result);
  if (!id) return report_failure(id.message());
  if (args.has("--json")) {
    nlohmann::json json = curation_result_to_json(result);
    json["curation_id"] = *id;
    std::cout << json.dump(2) << "\n";
    return 0;
  }
  std::cout << "curation " << *id << ": " << result.note << "\n";
  for (const CurationChoice& choice : result.chosen) {
    const CandidateRecord* record = by_id[choice.candidate_id];
    std::cout << fmt::format("  {:<24} {:<22} {:<24} {}\n", choice.task, record ? record->stored.candidate.strategy : "",
                             choice.rule, choice.why);
  }
  if (!result.skipped.empty()) std::cout << "not chosen:\n";
  for (const CurationSkip& skip : result.skipped) std::cout << fmt::format("  {:<24} {}\n", skip.task, skip.reason);
  std::cout << "difficulty (ARL: mean reasoning words over a task's candidates):\n";
  for (const TaskDifficulty& task : result.difficulty) {
    std::cout << fmt::format("  {:<24} {:<10} ARL {:>7.1f}  {:<6}  {}/{} right\n", task.task, task.operator_type,
                             task.arl, task.bucket, task.correct, task.candidates);
  }
  std::cout << "chosen by operator type:";
  for (const auto& [type, count] : result.chosen_by_operator_type) std::cout << " " << type << " " << count;
  std::cout << "\n";
  return 0;
}

int export_kernelopt(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  KerneloptExportOptions options;
  options.out_dir = args.get("--out");
  options.format = args.get("--format", "alpaca");
  if (options.out_dir.empty()) {
    std::cerr << "tailforge: export needs --out DIR\n";
    return 2;
  }
  for (const std::string& path : args.get_all("--decontaminate")) {  // named in the manifest wherever it is read
    std::error_code ec;
    options.decontaminate.push_back(std::filesystem::absolute(path, ec).lexically_normal().string());
  }
  Result<SynthPolicy> policy = synth_policy_from_config(context->config["synth"], data_dir());
  if (!policy) return report_failure(policy.message());
  options.dedup = policy->dedup;
  options.decontamination = policy->decontamination;
  options.eval_fraction = policy->eval_fraction;
  options.source_database = context->db_path;

  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<std::vector<CuratedSample>> curated = latest_kernelopt_curation(*db);
  if (!curated) return report_failure(curated.message());
  if (curated->empty()) {
    return report_failure("no curated kernelopt samples: run `tailforge kernelopt run` on a GPU host, then "
                          "`tailforge curate --track kernelopt`");
  }
  Result<KerneloptTrainingRows> rows = curated_training_rows(*db, *curated, options.dedup);
  if (!rows) return report_failure(rows.message());
  if (rows->held_back > 0) {
    std::cout << "held back " << rows->held_back
              << " curated candidates: their tasks are evaluation items, or near-duplicates of one\n";
  }
  Result<KerneloptExportSummary> summary = write_kernelopt_export(std::move(rows->rows), options);
  if (!summary) return report_failure(summary.message());
  std::cout << "exported " << summary->samples << " curated kernelopt samples (task -> reasoning + kernel) to "
            << options.out_dir << ": " << summary->train_samples << " train, " << summary->eval_samples
            << " held-out eval, " << summary->clusters << " near-duplicate clusters\n";
  for (const auto& [rule, count] : summary->by_rule) std::cout << "  " << rule << ": " << count << "\n";
  std::cout << "manifest: " << summary->manifest_path << "\n";
  print_export_checks(!options.decontaminate.empty(), summary->decontaminated, summary->eval_rows_with_near_duplicate,
                      summary->largest_eval_train_similarity, options.dedup.threshold, summary->card_path);
  return 0;
}

int generate_kernel_tasks(uint64_t count, uint64_t seed, const std::string& out_dir) {
  nlohmann::json tasks = nlohmann::json::array();
  for (uint64_t index = 0; index < count; ++index) {
    KernelTask task = generated_kernel_task(seed, index);
    std::string file = task.name + ".cu";
    if (Status s = write_text_file(out_dir + "/" + file, task.reference_source); !s) return report_failure(s.message());
    nlohmann::json entry = kernel_task_json(task);
    entry["reference_file"] = file;
    entry["features"] = kernel_task_features(task);
    tasks.push_back(std::move(entry));
  }
  if (Status s = write_text_file(out_dir + "/tasks.json", tasks.dump(2) + "\n"); !s) return report_failure(s.message());
  std::cout << "wrote " << count << " kernelopt tasks (seed " << seed << ") to " << out_dir
            << "/tasks.json and their references: tailforge import --track kernelopt " << out_dir << "/tasks.json\n";
  return 0;
}

namespace {

// One task of a task file (the import format); an error naming `at` and the field at fault.
Result<KernelTask> imported_task(const nlohmann::json& entry, const std::filesystem::path& folder, const std::string& at_index) {
  static const std::set<std::string> types = {kSingleOperator, kReductionOperator, kFusionOperator, kMatmulOperator,
                                              kStencilOperator};
  std::string at = at_index;
  KernelTask task;
  try {
    task.origin = "imported";
    task.name = entry.value("name", "");
    task.operator_type = entry.value("operator_type", "");
    task.domain = entry.value("domain", "imported");
    task.description = entry.value("description", "");
    task.tolerance = entry.value("tolerance", 1e-3);
    task.input_low = entry.value("input_low", -1.0f);
    task.input_high = entry.value("input_high", 1.0f);
    if (task.name.empty()) return make_error(at + ": needs a name");
    at += " (" + task.name + ")";
    if (!types.count(task.operator_type)) {
      return make_error(at + ": operator_type must be single, reduction, fusion, matmul or stencil, got '" +
                            task.operator_type + "'");
    }
    for (const nlohmann::json& input : entry.value("inputs", nlohmann::json::array())) {
      task.inputs.push_back({input.value("name", ""), input.value("elements", int64_t{0})});
      if (task.inputs.back().elements <= 0) return make_error(at + ": every input needs elements > 0");
    }
    nlohmann::json output = entry.value("output", nlohmann::json::object());
    task.output = {output.value("name", "out"), output.value("elements", int64_t{0})};
    if (task.inputs.empty() || task.output.elements <= 0) {
      return make_error(at + ": needs inputs [{name, elements}] and output {name, elements}");
    }
    std::string reference_file = entry.value("reference_file", "");
    if (!reference_file.empty()) {
      std::ifstream reference(folder / reference_file);
      if (!reference) return make_error(at + ": cannot read reference_file " + (folder / reference_file).string());
      std::stringstream text;
      text << reference.rdbuf();
      task.reference_source = text.str();
    } else {
      task.reference_source = entry.value("reference_source", "");
    }
    bool python = reference_file.size() > 3 && reference_file.compare(reference_file.size() - 3, 3, ".py") == 0;
    task.reference_language = entry.value("reference_language", python ? "pytorch" : "cuda");
    if (task.reference_language == "pytorch") {
      if (task.reference_source.find("class Model") == std::string::npos ||
          task.reference_source.find("def get_inputs") == std::string::npos) {
        return make_error(at + ": a PyTorch reference (KernelBench style) must define class Model and get_inputs()");
      }
    } else if (task.reference_language != "cuda") {
      return make_error(at + ": reference_language must be cuda or pytorch, got '" + task.reference_language + "'");
    } else if (task.reference_source.find("tf_launch") == std::string::npos) {
      return make_error(at + ": the reference (reference_source or reference_file) must define "
                                 "void tf_launch(const float* const* inputs, float* output, cudaStream_t stream)");
    }
    task.family = entry.value("family", "");  // a generated task's (generate --track kernelopt)
    task.recipe = entry.value("recipe", "");
    task.flops = entry.value("flops", 0.0);
    task.read_bytes = entry.value("read_bytes", int64_t{0});
    if (task.flops < 0 || task.read_bytes < 0) return make_error(at + ": flops and read_bytes must not be negative");
  } catch (const nlohmann::json::exception& e) {
    return make_error(at + ": a field has the wrong type (" + e.what() + ")");
  }
  return task;
}

}  // namespace

int import_kernelopt(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  if (args.positionals.size() != 1) {
    std::cerr << "tailforge: import --track kernelopt needs one task file (.json)\n";
    return 2;
  }
  std::string path = args.positionals[0];
  std::ifstream in(path);
  if (!in) return report_failure("cannot read " + path);
  nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  if (json.is_object() && json.contains("tasks")) json = json["tasks"];
  if (!json.is_array()) return report_failure(path + ": expected a JSON array of tasks (or {\"tasks\": [...]})");
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  int added = 0, kept = 0, index = 0, queued = 0;
  JobQueue queue(*db);
  for (const nlohmann::json& entry : json) {
    std::string at = path + ": task " + std::to_string(index++);
    if (!entry.is_object()) return report_failure(at + ": not an object");
    Result<KernelTask> read = imported_task(entry, folder, at);
    if (!read) return report_failure(read.message());
    const KernelTask& task = *read;
    Transaction transaction(*db);
    if (Status s = transaction.begin_status(); !s) return report_failure(s.message());
    Result<bool> stored = store_kernelopt_task(*db, task);
    if (!stored) return report_failure(stored.message());
    (*stored ? added : kept)++;
    // A CUDA-reference task also joins the daemon's loop: a sample verified by the next cycle,
    // then an evaluation item or training data like a generated task.
    if (task.reference_language == "cuda") {
      Result<InsertOutcome> inserted =
          insert_sample_if_absent(*db, kernel_task_sample(task, "imported", std::nullopt, kernel_task_features(task)));
      if (!inserted) return report_failure(inserted.message());
      NewJob verify{.kind = kVerifyJob, .payload = nlohmann::json{{"sample_id", inserted->id}}.dump(),
                    .idempotency_key = "verify:" + inserted->id};
      Result<EnqueueOutcome> enqueued = queue.enqueue(verify);
      if (!enqueued) return report_failure(enqueued.message());
      if (inserted->inserted) ++queued;
    }
    if (Status s = transaction.commit(); !s) return report_failure(s.message());
  }
  std::cout << "imported " << added << " kernelopt tasks from " << path << (kept ? " (" + std::to_string(kept) + " already stored, kept)" : "")
            << "\n";
  if (queued > 0) std::cout << queued << " CUDA-reference tasks queued for the daemon's next cycle (config/kernelopt.json)\n";
  return 0;
}

}  // namespace tailforge


