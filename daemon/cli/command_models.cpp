// Commands over the models under test: model add|retire|activate, models, eval.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "agents/model_check.h"
#include "base/clock.h"
#include "base/files.h"
#include "base/parallel.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/evaluation_jobs.h"
#include "daemon/loaded_policies.h"
#include "daemon/progress.h"
#include "daemon/resource_slots.h"
#include "store/evaluations.h"
#include "store/models.h"
#include "synth/eval_set.h"
#include "synth/model_registry.h"
#include "synth/model_report.h"
#include "synth/model_selection.h"
#include "synth/tracks.h"
#include "verifier/toolchains.h"

namespace tailforge {

namespace {

using nlohmann::json;

int models_usage(const std::string& message) {
  std::cerr << "tailforge: " << message << "\n";
  return 2;
}

// The model definition `model add` was given, as register_model reads it.
Result<json> definition_from_flags(const CommandLine& args) {
  json definition = {{"name", args.get("--name")}, {"kind", args.get("--kind", "openai")},
                     {"track", args.get("--track", "cuda2hip")}};
  if (args.has("--endpoint")) definition["endpoint"] = args.get("--endpoint");
  if (args.has("--model-id")) definition["model_id"] = args.get("--model-id");
  if (args.has("--api-key-env")) definition["api_key_env"] = args.get("--api-key-env");
  if (args.has("--ca-file")) definition["ca_file"] = args.get("--ca-file");
  if (args.has("--request-fields")) {
    json fields = json::parse(args.get("--request-fields"), nullptr, false);
    if (!fields.is_object()) return make_error("--request-fields needs a JSON object, got '" + args.get("--request-fields") + "'");
    definition["request_fields"] = fields;
  }
  if (args.has("--parent")) definition["parent"] = args.get("--parent");
  if (args.has("--command") && !args.rest.empty()) {
    return make_error("--command takes one string or the words after --, not both");
  }
  if (args.has("--command")) {
    Result<std::vector<std::string>> words = split_command_words(args.get("--command"));
    if (!words) return words.error();
    if (words->empty()) return make_error("--command is empty");
    definition["command"] = *words;
  } else if (!args.rest.empty()) {
    definition["command"] = args.rest;
  }
  if (args.has("--retrain-event")) definition["retrain_event"] = args.get_int("--retrain-event", 0);
  if (args.has("--timeout")) definition["timeout_seconds"] = args.get_int("--timeout", 0);
  return definition;
}

// Evaluates `items` with `model` on `threads` threads, each with its own connection. The first
// endpoint fault stops the run: nothing more is asked, the fault pauses the model's evaluation
// in the store (as the daemon's would), and what was not judged stays unjudged.
struct EvalCounts {
  std::atomic<int64_t> done{0}, ok{0}, failed{0}, unavailable{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::string last_error;
  std::optional<EndpointFault> fault;
};

void evaluate_items(const std::string& db_path, const ModelRecord& model, ModelUnderTest& caller,
                    const std::vector<EvalItem>& items, const EvaluationSetup& setup, int threads,
                    double pause_seconds, EvalCounts& counts) {
  for_each_index(items.size(), static_cast<size_t>(threads), [&]() -> IndexWork {
    Result<Database> opened = Database::open(db_path);
    if (!opened) {
      std::lock_guard lock(counts.mutex);
      counts.last_error = opened.message();
      return {};
    }
    auto db = std::make_shared<Database>(std::move(*opened));  // the work function's copies share it
    return [&, db](size_t i) {
      Result<JudgedAnswer> judged = evaluate_item(*db, caller, model, items[i], setup);
      Status stored;
      if (judged && judged->fault) {
        const EndpointFault& fault = *judged->fault;
        Result<int64_t> paused = pause_after_fault(*db, model.id, fault, pause_seconds);
        stored = paused ? Status() : Status(paused.error());
        counts.stop = true;
        std::lock_guard lock(counts.mutex);
        if (!counts.fault) counts.fault = fault;
      } else if (judged) {
        Transaction transaction(*db);
        Result<bool> inserted = transaction.begin_status() ? store_evaluation(*db, model, *judged)
                                                           : Result<bool>(transaction.begin_status().error());
        Result<bool> resumed = inserted ? end_model_pause(*db, model.id) : Result<bool>(inserted.error());
        stored = resumed ? transaction.commit() : Status(resumed.error());
      }
      if (!judged || !stored || judged->fault) {
        ++counts.unavailable;
        std::lock_guard lock(counts.mutex);
        counts.last_error = !judged ? judged.message() : !stored ? stored.message() : judged->fault->category + ": " + judged->fault->message;
      } else {
        ++(judged->evaluation.ok ? counts.ok : counts.failed);
      }
      ++counts.done;
      return !counts.stop;
    };
  });
}

}  // namespace

namespace {

// Prints a check's lines under a heading naming the model; true when it passed.
bool print_check(const ModelRecord& model, const ModelCheck& check) {
  std::cout << "model " << model.name << " (" << model.kind << ", " << model.track << ")"
            << (model.endpoint ? " at " + *model.endpoint : "") << ":\n";
  for (const std::string& line : check.lines) std::cout << "  " << line << "\n";
  return check.ok;
}

Result<ModelCheck> check_with_config(const CommandContext& context, const ModelRecord& model) {
  Result<std::unique_ptr<LoadedPolicies>> resources = load_policies(context.config);
  if (!resources) return resources.error();
  if (Status taken = check_model_track(model); !taken) return ModelCheck{false, {"failed: " + taken.message()}};
  return check_model(model, (*resources)->runtime(nullptr), std::string(find_track(model.track)->check_input));
}

}  // namespace

int command_model(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  std::string action = args.positionals.empty() ? "" : args.positionals[0];
  if (action == "retire" || action == "activate") {
    if (args.positionals.size() != 2) return models_usage("model " + action + " needs a model name");
    Result<Database> db = Database::open(context->db_path);
    if (!db) return report_failure(db.message());
    Result<bool> changed = set_model_active(*db, args.positionals[1], action == "activate");
    if (!changed) return report_failure(changed.message());
    if (!*changed) return report_failure("no model named '" + args.positionals[1] + "'");
    std::cout << "model " << args.positionals[1]
              << (action == "retire" ? " retired: no longer evaluated; its results stay\n"
                                     : " active: evaluated every cycle\n");
    return 0;
  }
  if (action == "check") {
    if (args.positionals.size() != 2) return models_usage("model check needs a model name");
    Result<Database> db = Database::open(context->db_path);
    if (!db) return report_failure(db.message());
    Result<std::optional<ModelRecord>> model = find_model(*db, args.positionals[1]);
    if (!model) return report_failure(model.message());
    if (!*model) return report_failure("no model named '" + args.positionals[1] + "' (tailforge models lists them)");
    Result<ModelCheck> check = check_with_config(*context, **model);
    if (!check) return report_failure(check.message());
    return print_check(**model, *check) ? 0 : 1;
  }
  if (action != "add" || args.positionals.size() != 1) {
    return models_usage("model needs an action: add (tailforge model add --name N --kind openai|command|builtin ...), "
                 "check NAME, retire NAME or activate NAME");
  }
  if (args.get("--name").empty()) return models_usage("model add needs --name");
  Result<json> definition = definition_from_flags(args);
  if (!definition) return models_usage(definition.message());
  // The model answers before it is registered, so that a wrong URL, key or model id is found now
  // rather than as a paused evaluation.
  if (!args.has("--no-check")) {
    Result<ModelRecord> defined = model_from_definition(*definition);
    if (!defined) return report_failure(defined.message());
    Result<ModelCheck> check = check_with_config(*context, *defined);
    if (!check) return report_failure(check.message());
    if (!print_check(*defined, *check)) {
      std::cerr << "tailforge: model " << defined->name << " not registered: fix the above, or pass --no-check to "
                << "register it anyway (its evaluation pauses while the endpoint fails)\n";
      return 1;
    }
  }
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<ModelRecord> model = register_model(*db, *definition);
  if (!model) return report_failure(model.message());
  std::cout << "model " << model->name << " (" << model->kind << ", " << model->track << ") registered as #"
            << model->id;
  if (model->retrain_event_id) std::cout << " for retrain event " << *model->retrain_event_id;
  std::cout << "; the daemon evaluates it from its next evaluation step, or run: tailforge eval --model "
            << model->name << "\n";
  std::string configured = context->config["synth"].value("model_under_test", std::string());
  Result<UnderTest> tested = model_under_test(*db, configured.empty() ? std::nullopt : std::optional(configured), model->track);
  if (tested && tested->model && tested->model->id == model->id) {
    std::cout << "it is the model under test of " << model->track << ": the tails follow its failures ("
              << tested->why << ")\n";
  }
  return 0;
}

int command_models(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<ModelsListing> listing = models_listing_from_config(context->config, data_dir());
  if (!listing) return report_failure(listing.message());
  if (args.has("--track")) listing->track = args.get("--track");
  Result<std::vector<ModelsReport>> reports = list_models_reports(*db, *listing);
  if (!reports) return report_failure(reports.message());
  if (args.has("--json")) {
    std::cout << models_listing_to_json(*reports, listing->track.has_value()).dump(2) << "\n";
  } else {
    std::cout << format_models_listing(*reports);
  }
  return 0;
}

int command_rejudge(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  Result<std::unique_ptr<LoadedPolicies>> resources = load_policies(context->config);
  if (!resources) return report_failure(resources.message());
  std::string track = args.get("--track", (*resources)->synth.track);
  if (!find_track(track)) return models_usage("rejudge --track must be one of " + track_names() + ", got '" + track + "'");
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<EvalSetRejudge> judged = rejudge_eval_set(*db, (*resources)->synth, track);
  if (!judged) return report_failure(judged.message());
  Result<std::vector<RetiredItem>> retired = retired_eval_items(*db, track);
  if (!retired) return report_failure(retired.message());
  if (args.has("--json")) {
    nlohmann::json list = nlohmann::json::array();
    for (const RetiredItem& item : *retired) {
      list.push_back({{"sample_id", item.sample_id}, {"version", item.version}, {"retired_ms", item.retired_ms},
                      {"reason", item.reason}});
    }
    std::cout << nlohmann::json{{"track", track},
                                {"judged", judged->judged},
                                {"retired_now", judged->retired},
                                {"retired_before", judged->retired_before},
                                {"active", judged->judged - judged->retired},
                                {"retired", list}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "evaluation set of " << track << ": " << judged->judged << " active items judged, " << judged->retired
            << " retired now as near-duplicates of trained samples (exact similarity), " << judged->retired_before
            << " retired before; " << judged->judged - judged->retired
            << " items are asked and counted\n";
  for (const RetiredItem& item : *retired) {
    std::cout << "  " << item.sample_id.substr(0, 12) << " v" << item.version << ": " << item.reason << "\n";
  }
  return 0;
}

int command_eval(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  if (args.get("--model").empty()) return models_usage("eval needs --model NAME");
  int64_t limit = args.get_int("--limit", -1);
  Result<std::unique_ptr<LoadedPolicies>> resources = load_policies(context->config);
  if (!resources) return report_failure(resources.message());
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<std::optional<ModelRecord>> model = find_model(*db, args.get("--model"));
  if (!model) return report_failure(model.message());
  if (!*model) return report_failure("no model named '" + args.get("--model") + "' (tailforge models lists them)");
  Result<EvalSetRefresh> refreshed = refresh_eval_set(*db, (*resources)->eval, (*resources)->synth, (*model)->track);
  if (!refreshed) return report_failure(refreshed.message());
  Result<std::vector<std::string>> missing = items_without_evaluation(*db, (*model)->id, (*model)->track);
  if (!missing) return report_failure(missing.message());
  std::vector<EvalItem> items;
  for (const std::string& id : *missing) {
    if (limit >= 0 && static_cast<int64_t>(items.size()) >= limit) break;
    Result<std::optional<EvalItem>> item = find_eval_item(*db, (*model)->track, id);
    if (!item) return report_failure(item.message());
    if (*item) items.push_back(**item);
  }

  std::string work_dir = context->db_path + ".work";
  std::error_code ec;
  std::filesystem::create_directories(work_dir, ec);
  if (ec) return report_failure("cannot create " + work_dir + ": " + ec.message());
  // Judging runs under the daemon's compile (and GPU) slots; asking an endpoint under
  // llm.max_concurrent_requests. With a thread per request in flight plus one per compile slot,
  // the server stays busy while earlier answers are verified.
  ResourceSlots slots;
  SlotSizes sizes = size_slots(context->config, detected_toolchains(), slots);
  SlotGate gate(slots);
  Result<std::unique_ptr<ModelUnderTest>> caller = make_model_under_test(**model, (*resources)->runtime(&gate));
  if (!caller) return report_failure(caller.message());
  int asking = (*model)->kind == "openai" ? (*resources)->llm.max_concurrent_requests : sizes.compile;
  int threads = std::clamp<int>(asking + sizes.compile, 1, 256);
  std::cerr << "evaluating " << (*model)->name << " on " << items.size() << " of " << refreshed->size
            << " items of evaluation set v" << refreshed->version << " (" << refreshed->size - missing->size()
            << " judged before): " << sizes.compile << " compile slots";
  if ((*model)->kind == "openai") std::cerr << ", up to " << asking << " requests in flight";
  std::cerr << "\n";

  EvalCounts counts;
  bool show = !args.has("--no-progress") && isatty(STDERR_FILENO);
  auto started = std::chrono::steady_clock::now();
  std::atomic<bool> finished{false};
  std::thread evaluating([&] {
    evaluate_items(context->db_path, **model, **caller, items, (*resources)->setup(&gate, work_dir), threads,
                   (*resources)->eval.endpoint_pause_seconds, counts);
    finished = true;
  });
  while (show && !finished) {
    double elapsed = seconds_since(started);
    int64_t done = counts.done;
    std::string eta = done > 0 ? format_duration(elapsed / static_cast<double>(done) *
                                                 static_cast<double>(static_cast<int64_t>(items.size()) - done))
                               : "?";
    std::cerr << "\r\033[K" << done << "/" << items.size() << " judged: " << counts.ok << " ok, " << counts.failed
              << " failed, " << counts.unavailable << " not judged; ETA " << eta << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  evaluating.join();
  if (show) std::cerr << "\r\033[K";

  Result<ModelsReport> report = models_report(*db, (*model)->track);
  if (!report) return report_failure(report.message());
  if (args.has("--json")) {
    json out = {{"model", (*model)->name}, {"judged", counts.ok + counts.failed}, {"ok", counts.ok.load()},
                {"failed", counts.failed.load()}, {"not_judged", counts.unavailable.load()},
                {"models", models_report_to_json(*report)}};
    if (!counts.last_error.empty()) out["last_error"] = counts.last_error;
    if (counts.fault) out["paused"] = {{"category", counts.fault->category}, {"message", counts.fault->message}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "judged " << counts.ok + counts.failed << " items: " << counts.ok << " ok, " << counts.failed
              << " failed\n\n"
              << format_models_table(*report);
  }
  int64_t not_judged = static_cast<int64_t>(items.size()) - counts.ok - counts.failed;
  if (counts.fault) {
    std::cerr << "tailforge: evaluation of " << (*model)->name << " paused: " << counts.fault->category << ": "
              << counts.fault->message << "\n"
              << "tailforge: " << not_judged << " items not judged (an endpoint fault is never a model failure); "
              << "tailforge model check " << (*model)->name << " tests the endpoint\n";
    return 1;
  }
  if (not_judged > 0) {
    std::cerr << "tailforge: " << not_judged << " items not judged; last error: " << counts.last_error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace tailforge
