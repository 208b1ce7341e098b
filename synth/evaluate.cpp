#include "synth/evaluate.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "store/models.h"
#include "store/samples.h"
#include "synth/tracks.h"
#include "synth/training_text.h"
#include "verifier/stage_category.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

bool failed(const std::string& status) { return status == "fail" || status == "timeout" || status == "error"; }

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// The deepest check that ran: compare, run, compile, or only the answer.
std::string deepest_check(const std::vector<StageResult>& stages) {
  std::string deepest = "answer";
  for (const StageResult& stage : stages) {
    if (stage.status == "skipped") continue;
    if (ends_with(stage.name, "compare")) return "compare";
    if (ends_with(stage.name, ".run") || ends_with(stage.name, ".launch") || stage.name == "c2x86.io") {
      deepest = "run";
    } else if (deepest == "answer") {
      deepest = "compile";
    }
  }
  return deepest;
}

}  // namespace

Result<JudgedAnswer> evaluate_item(Database& db, ModelUnderTest& model, const ModelRecord& record,
                                   const EvalItem& item, const EvaluationSetup& setup) {
  Result<std::optional<Sample>> sample = find_sample(db, item.sample_id);
  if (!sample) return sample.error();
  if (!*sample) return make_error("evaluation item " + item.sample_id + " has no sample");
  std::optional<std::string> expected;
  if (item.reference_stdout_id) {
    Result<std::optional<std::string>> text = artifact_text(db, *item.reference_stdout_id);
    if (!text) return text.error();
    expected = *text;
  }

  // What the model reads: the sample's text, or the question its track asks instead (ptx2cuda:
  // the pair's Rolled-PTX, its text being the answer's reference).
  const Track* track = find_track(item.track);
  if (!track || !track->judge) return make_error("evaluation item " + item.sample_id + ": track '" + item.track + "' has no judge");
  std::string question = training_text((*sample)->text);  // never what tailforge added to it
  if (track->question) {
    Result<std::string> asked = track->question(db, **sample);
    if (!asked) return asked.error();
    question = *asked;
  }
  ModelAnswer answer = model.answer(db, question);
  JudgedAnswer judged;
  if (answer.unavailable) {
    judged.fault = EndpointFault{answer.category, answer.message, answer.retry_after_ms};
    return judged;
  }

  EvaluationRecord& e = judged.evaluation;
  e.model_id = record.id;
  e.sample_id = item.sample_id;
  e.track = item.track;
  nlohmann::json details = {{"answer_seconds", answer.seconds}, {"item_version", item.version}};
  if (!answer.prompt_hash.empty()) details["prompt_hash"] = answer.prompt_hash;
  if (!answer.ok) {
    e.ok = false;
    e.status = "fail";
    e.stage = "answer";
    e.category = answer.category;
    e.message = answer.message.substr(0, 2000);
    e.checked = "answer";
    e.seconds = answer.seconds;
    e.stages.push_back({"answer", "fail", answer.category, e.message, answer.seconds, false});
    e.details = details.dump();
    return judged;
  }
  judged.answer = answer.output;

  fs::path dir = fs::path(setup.work_dir) / ("eval-" + std::to_string(record.id) + "-" + item.sample_id.substr(0, 16));
  std::error_code ec;
  fs::create_directories(dir, ec);
  Result<std::vector<StageResult>> stages = track->judge({db, **sample, answer.output, expected, setup, dir.string(), record.name, answer.reasoning});
  if (!stages) return stages.error();
  ChainResult result;
  result.stages = std::move(*stages);
  fs::remove_all(dir, ec);

  e.stages.push_back({"answer", "ok", std::nullopt, std::nullopt, answer.seconds, false});
  e.seconds = answer.seconds;
  bool any_ok = false;
  for (const StageResult& stage : result.stages) {
    EvaluationStageRecord row{stage.name, stage.status, std::nullopt, std::nullopt, stage.seconds, stage.cached};
    e.seconds += stage.seconds;
    any_ok = any_ok || stage.ok();
    if (failed(stage.status)) {
      Categorization category = setup.taxonomy ? categorize_stage(*setup.taxonomy, stage, (*sample)->features)
                                               : Categorization{stage.name + ".uncategorized", stage.reason};
      row.category = category.category;
      row.message = category.message_line.substr(0, 2000);
      if (!e.stage) {
        e.stage = stage.name;
        e.status = stage.status == "timeout" ? "timeout" : stage.status == "error" ? "error" : "fail";
        e.category = row.category;
        e.message = row.message;
      }
    } else if (stage.status == "skipped" && !stage.reason.empty()) {
      row.message = stage.reason;
    }
    e.stages.push_back(std::move(row));
  }
  e.ok = !e.stage && any_ok;
  if (e.ok) {
    e.status = "ok";
  } else if (!e.stage) {
    e.stage = "chain";
    e.status = "error";
    e.category = "evaluate.nothing_ran";
    e.message = "no stage of the chain could run here";
  }
  e.checked = deepest_check(result.stages);
  details["stages_run"] = static_cast<int>(
      std::count_if(result.stages.begin(), result.stages.end(), [](const StageResult& s) { return s.status != "skipped"; }));
  e.details = details.dump();
  return judged;
}

Result<int64_t> pause_after_fault(Database& db, int64_t model_id, const EndpointFault& fault, double pause_seconds) {
  int64_t pause_ms = std::max<int64_t>(static_cast<int64_t>(pause_seconds * 1000), fault.retry_after_ms);
  int64_t resume = now_ms() + pause_ms;
  if (Status s = pause_model_evaluation(db, model_id, fault.category, fault.message, resume); !s) return s.error();
  return resume;
}

Result<bool> store_evaluation(Database& db, const ModelRecord& model, const JudgedAnswer& judged) {
  if (judged.fault) return make_error("model " + model.name + ": not judged: " + judged.fault->message);
  EvaluationRecord evaluation = judged.evaluation;
  if (judged.answer) {
    ArtifactRecord artifact{.stage = "evaluate",
                            .name = "answer:" + model.name,
                            .kind = "answer",
                            .content = *judged.answer,
                            .command = nlohmann::json::array({"model", model.name}).dump()};
    Result<std::string> id = insert_artifact(db, evaluation.sample_id, artifact);
    if (!id) return id.error();
    evaluation.output_id = *id;
  }
  return insert_evaluation(db, evaluation);
}

}  // namespace tailforge
