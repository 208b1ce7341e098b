#include "daemon/pipeline.h"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "base/files.h"
#include "daemon/evaluation_jobs.h"
#include "daemon/llm_agents.h"
#include "daemon/loaded_policies.h"
#include "daemon/planner.h"
#include "daemon/sample_sources.h"
#include "daemon/verify/verify_jobs.h"
#include "policies/feature_tags.h"
#include "store/samples.h"
#include "synth/evaluate.h"
#include "synth/retrain.h"
#include "synth/synthesizer.h"
#include "synth/tracks.h"

namespace tailforge {

namespace fs = std::filesystem;

namespace {

class DefaultPipeline : public Pipeline {
 public:
  DefaultPipeline(ResourceSlots& slots) : gate_(slots) {}

  Status load(const nlohmann::json& config, const std::string& db_path, ResourceSlots& slots) {
    const nlohmann::json& generator = config["generator"];
    Result<GeneratorCatalog> catalog = load_generator_catalog(
        data_path(generator["personas_file"].get<std::string>()), data_path(generator["templates_file"].get<std::string>()));
    if (!catalog) return catalog.error();
    catalog_ = std::move(*catalog);
    Result<std::unique_ptr<LoadedPolicies>> shared = load_policies(config);
    if (!shared) return shared.error();
    shared_ = std::move(*shared);
    Result<FeatureRules> features = load_feature_rules(data_path(config["taxonomy"]["features_file"].get<std::string>()));
    if (!features) return features.error();
    feature_rules_ = std::move(*features);
    Result<DomainRules> domains = load_domain_rules(data_path(config["taxonomy"]["domains_file"].get<std::string>()));
    if (!domains) return domains.error();
    domain_rules_ = std::move(*domains);
    std::string work_dir = config["daemon"]["work_dir"].get<std::string>();
    work_dir_ = work_dir.empty() ? db_path + ".work" : work_dir;
    std::error_code ec;
    fs::create_directories(work_dir_, ec);
    if (ec) return make_error("daemon.work_dir: cannot create " + work_dir_ + ": " + ec.message());

    Result<RetrainPolicy> retrain = retrain_policy_from_json(config["retrain"], shared_->synth);
    if (!retrain) return retrain.error();
    retrain_ = std::move(*retrain);
    fs::path snapshots(retrain_.snapshot_dir);
    if (snapshots.is_relative()) {
      retrain_.snapshot_dir = (fs::absolute(db_path).parent_path() / snapshots).string();
    }
    retrain_.eval = shared_->eval;
    seed_ = config["daemon"]["seed"].get<int64_t>();

    const Toolchains& toolchains = detected_toolchains();
    SlotSizes sizes = size_slots(config, toolchains, slots);
    int compile_slots = sizes.compile, gpu_slots = sizes.gpu, gpus = sizes.nvidia_gpus;
    workers_ = compile_slots + gpu_slots;
    spdlog::info("resources: {} compile slots, {} GPU slots ({} NVIDIA GPUs)", compile_slots, gpu_slots, gpus);
    for (const StageAvailability& stage : stage_availability(toolchains, shared_->verifier.sandbox.mode)) {
      if (stage.stage == "nvidia.sass" && !stage.reason.empty()) {
        spdlog::info("sass2rdna3: no kernel pairs on this host: no SASS ({})", stage.reason);
      }
    }
    const Track* grown = find_track(shared_->synth.track);
    if (grown && grown->generated == Track::Generated::kernel_tasks && !toolchains.has_gpu("nvidia")) {
      spdlog::warn("kernelopt: no NVIDIA GPU on this host: tasks and candidates are built and inspected, their runs and "
                   "timing are skipped with the reason; timing needs a GPU, so no speedup is stored, nothing is "
                   "curated and no retrain fires until a GPU host measures them");
    }
    evaluation_ = std::make_unique<EvaluationJobs>(shared_->eval, shared_->synth, shared_->setup(&gate_, work_dir_),
                                                   shared_->runtime(&gate_));
    bool llm_translator = false;
    if (Status s = load_agents(config, db_path, slots, llm_translator); !s) return s;
    verify_ = std::make_unique<VerifyJobs>(*shared_, work_dir_, &gate_, toolchains, llm_translator ? llm_.get() : nullptr);
    return {};
  }

  // agents.generator / translator / synthesizer: "builtin", or "llm" for the OpenAI-compatible endpoint.
  Status load_agents(const nlohmann::json& config, const std::string& db_path, ResourceSlots& slots,
                     bool& llm_translator) {
    nlohmann::json agents = config.value("agents", nlohmann::json::object());
    bool llm_generator = agents.value("generator", "builtin") == "llm";
    llm_translator = agents.value("translator", "builtin") == "llm";
    bool llm_synthesizer = agents.value("synthesizer", "builtin") == "llm";
    SampleSourceSetup sources{catalog_, feature_rules_, domain_rules_, shared_->synth, nullptr, llm_generator,
                              llm_synthesizer};
    const Track* grown = find_track(shared_->synth.track);
    if (!llm_generator && !llm_translator && !llm_synthesizer) return make_source(grown, sources);
    // Checked before the LLM client is made: a source that cannot take the LLM's samples says so first.
    if (Result<std::unique_ptr<SampleSource>> checked = make_sample_source(grown, sources); !checked) return checked.error();
    Result<Database> db = Database::open(db_path);
    if (!db) return db.error();
    Result<std::unique_ptr<LlmAgents>> llm = LlmAgents::create(config["llm"], *db, slots);
    if (!llm) return llm.error();
    llm_ = std::move(*llm);
    spdlog::info("agents: {} generator, {} translator; LLM {} at {}; {} synthesizer",
                 llm_generator ? "LLM" : "built-in", llm_translator ? "LLM" : "built-in", llm_->model(),
                 config["llm"]["base_url"].get<std::string>(), llm_synthesizer ? "LLM" : "built-in");
    sources.llm = llm_.get();
    return make_source(grown, sources);
  }

  Status make_source(const Track* grown, const SampleSourceSetup& setup) {
    Result<std::unique_ptr<SampleSource>> source = make_sample_source(grown, setup);
    if (!source) return source.error();
    source_ = std::move(*source);
    return {};
  }

  int worker_count() const override { return workers_; }

  std::map<std::string, JobHandler> handlers() override {
    return {
        {kGenerateJob, [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return generate(db, q, j, o); }},
        {kVerifyJob,
         [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return verify_->verify(db, q, j, o); }},
        {kSynthesizeJob,
         [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return synthesize(db, q, j, o); }},
        {kRetrainJob, [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return retrain(db, q, j, o); }},
        {kEvaluateModelsJob,
         [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return evaluation_->plan(db, q, j, o); }},
        {kEvaluateJob,
         [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return evaluation_->evaluate(db, q, j, o); }},
    };
  }

  Result<VerifyInput> verify_input(Database& db, const Job& job) override { return verify_->input(db, job); }

  Status store_verify_output(Database& db, JobQueue& queue, const Job& job, const std::string& owner,
                             const VerifyOutput& output, const std::string& host) override {
    return verify_->store(db, queue, job, owner, output, host);
  }

  Status fail_crashed_job(Database& db, const Job& job, const std::string& stage, const std::string& reason) override {
    return verify_->fail_crashed(db, job, stage, reason);
  }

 private:
  Status generate(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
    nlohmann::json payload = nlohmann::json::parse(job.payload, nullptr, false);
    if (!payload.is_object() || !payload.contains("cycle") || !payload.contains("index") || !payload.contains("seed")) {
      return make_error("generate job payload needs cycle, index and seed: " + job.payload);
    }
    int64_t cycle = payload["cycle"].get<int64_t>();
    Result<Sample> sample = source_->generate(db, payload["seed"].get<uint64_t>(), payload["index"].get<uint64_t>(), cycle);
    if (!sample) return make_error("generating: " + sample.message());

    Transaction transaction(db);
    if (!transaction.begin_status()) return transaction.begin_status();
    Result<InsertOutcome> inserted = insert_sample_if_absent(db, *sample);
    if (!inserted) return inserted.error();
    if (inserted->inserted) {
      NewJob verify{.kind = kVerifyJob,
                    .payload = nlohmann::json{{"sample_id", inserted->id}, {"cycle", cycle}}.dump(),
                    .idempotency_key = "verify:" + inserted->id,
                    .priority = job.priority};
      if (Result<EnqueueOutcome> enqueued = queue.enqueue(verify); !enqueued) return enqueued.error();
    }
    if (Status s = queue.complete(job.id, owner); !s) return s;
    return transaction.commit();
  }

  // The cycle's long-tail synthesis: detect tails, make N x candidates, enqueue their verification.
  Status synthesize(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
    Result<int64_t> cycle = cycle_of(job);
    if (!cycle) return cycle.error();
    uint64_t seed = static_cast<uint64_t>(cycle_seed(seed_, *cycle));
    // An LLM outage fails the job, which retries; what an earlier attempt stored is not stored twice.
    Result<SynthesisSummary> summary = source_->synthesize(db, *cycle, seed);
    if (!summary) return make_error("synthesis for cycle " + std::to_string(*cycle) + ": " + summary.message());
    std::string tails;
    for (const TailSynthesis& tail : summary->per_tail) {
      tails += " " + tail.entry.dimension + "/" + tail.entry.name + " (" + tail.entry.signal + ", +" +
               std::to_string(tail.inserted) + ")";
    }
    std::string passed;
    if (!summary->passed_over.empty()) {
      passed = "; passed over " + std::to_string(summary->passed_over.size()) + " tails no program of the source writes (";
      for (size_t i = 0; i < summary->passed_over.size() && i < 4; ++i) passed += (i ? ", " : "") + summary->passed_over[i];
      passed += summary->passed_over.size() > 4 ? ", ...)" : ")";
    }
    spdlog::info("cycle {}: synthesized {} ({} near-duplicates dropped, {} candidates not made) for{}{}", *cycle,
                 summary->inserted, summary->near_duplicates, summary->generation_failures,
                 tails.empty() ? " no tail" : tails, passed);
    spdlog::debug("cycle {}: synthesis {}", *cycle, synthesis_summary_to_json(*summary).dump());
    return queue.complete(job.id, owner);
  }

  // The retrain trigger: a snapshot and the retrain command when a threshold is crossed; an
  // event a crash interrupted is rerun or closed first.
  Status retrain(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
    Result<int64_t> cycle = cycle_of(job);
    if (!cycle) return cycle.error();
    Result<std::vector<RetrainOutcome>> resumed = resume_interrupted_retrains(db, retrain_);
    if (!resumed) return make_error("resuming interrupted retrain events: " + resumed.message());
    for (const RetrainOutcome& event : *resumed) log_retrain(*cycle, event);
    Result<std::optional<RetrainOutcome>> outcome = maybe_trigger_retrain(db, retrain_, *cycle);
    if (!outcome) return make_error("retrain trigger for cycle " + std::to_string(*cycle) + ": " + outcome.message());
    if (outcome->has_value()) log_retrain(*cycle, **outcome);
    return queue.complete(job.id, owner);
  }

  static void log_retrain(int64_t cycle, const RetrainOutcome& event) {
    nlohmann::json reason = nlohmann::json::parse(event.reason, nullptr, false);
    std::string conditions;
    if (reason.is_object() && reason.contains("conditions")) {
      for (const nlohmann::json& condition : reason["conditions"]) {
        conditions += (conditions.empty() ? "" : ", ") + condition.value("condition", std::string("?"));
      }
    }
    spdlog::info("cycle {}: retrain event {} {} after {} attempt(s) ({:.1f} s) for {}: parent {}, new model {}", cycle,
                 event.event_id, event.status, event.attempts, event.seconds, conditions.empty() ? "?" : conditions,
                 event.parent_model.value_or("none"), event.model.value_or("none registered"));
    if (!event.note.empty()) spdlog::warn("cycle {}: retrain event {}: {}", cycle, event.event_id, event.note);
    spdlog::debug("cycle {}: retrain event {}: snapshot {}, reason {}, output:\n{}", cycle, event.event_id,
                  event.snapshot_dir, event.reason, event.output);
  }

  static Result<int64_t> cycle_of(const Job& job) {
    nlohmann::json payload = nlohmann::json::parse(job.payload, nullptr, false);
    if (!payload.is_object() || !payload.contains("cycle") || !payload["cycle"].is_number_integer()) {
      return make_error(job.kind + " job payload needs cycle: " + job.payload);
    }
    return payload["cycle"].get<int64_t>();
  }

  SlotGate gate_;
  std::unique_ptr<LoadedPolicies> shared_;  // rules, taxonomy, verifier and policies
  RetrainPolicy retrain_;
  int64_t seed_ = 1;
  GeneratorCatalog catalog_;
  FeatureRules feature_rules_;
  DomainRules domain_rules_;
  std::string work_dir_;
  int workers_ = 1;
  std::unique_ptr<LlmAgents> llm_;  // when an agent is "llm"
  std::unique_ptr<SampleSource> source_;  // the grown track's generated samples and synthesis
  std::unique_ptr<EvaluationJobs> evaluation_;
  std::unique_ptr<VerifyJobs> verify_;
};

}  // namespace

Result<std::shared_ptr<Pipeline>> make_pipeline(const nlohmann::json& config, const std::string& db_path,
                                                ResourceSlots& slots) {
  auto pipeline = std::make_shared<DefaultPipeline>(slots);
  if (Status s = pipeline->load(config, db_path, slots); !s) return s.error();
  return std::shared_ptr<Pipeline>(pipeline);
}

}  // namespace tailforge
