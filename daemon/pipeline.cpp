#include "daemon/pipeline.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "agents/generator.h"
#include "agents/hipify.h"
#include "agents/tree_translate.h"
#include "daemon/c2x86_jobs.h"
#include "daemon/evaluation_jobs.h"
#include "daemon/kernel_pairs_store.h"
#include "daemon/ptx_pairs_store.h"
#include "daemon/sample_verification.h"
#include "daemon/scaleout.h"
#include "daemon/stage_records.h"
#include "daemon/llm_agents.h"
#include "daemon/llm_synthesis.h"
#include "daemon/planner.h"
#include "policies/categorizer.h"
#include "policies/config.h"
#include "policies/feature_tags.h"
#include "store/bundles.h"
#include "store/failures.h"
#include "store/samples.h"
#include "synth/c2x86_candidates.h"
#include "synth/evaluate.h"
#include "synth/policy.h"
#include "synth/retrain.h"
#include "synth/synthesizer.h"
#include "verifier/chain.h"
#include "verifier/sass2rdna3/kernel_pairs.h"
#include "verifier/stage_runner.h"
#include "synth/tracks.h"

namespace tailforge {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> merged_tags(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}



class DefaultPipeline : public Pipeline {
 public:
  DefaultPipeline(ResourceSlots& slots) : gate_(slots) {}

  Status load(const nlohmann::json& config, const std::string& db_path, ResourceSlots& slots) {
    const nlohmann::json& generator = config["generator"];
    Result<GeneratorCatalog> catalog = load_generator_catalog(
        data_path(generator["personas_file"].get<std::string>()), data_path(generator["templates_file"].get<std::string>()));
    if (!catalog) return catalog.error();
    catalog_ = std::move(*catalog);
    Result<std::unique_ptr<EvaluationResources>> shared = load_evaluation_resources(config);
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
    const Track* grown = find_track(shared_->synth.track);
    c_functions_ = grown && grown->generated == Track::Generated::c_functions;

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
    verifier_ = std::make_unique<SampleVerifier>(*shared_, work_dir_, &gate_, toolchains);
    evaluation_ = std::make_unique<EvaluationJobs>(shared_->eval, shared_->synth, shared_->setup(&gate_, work_dir_),
                                                   shared_->runtime(&gate_));
    return load_agents(config, db_path, slots);
  }

  // agents.generator / translator / synthesizer: "builtin", or "llm" for the OpenAI-compatible endpoint.
  Status load_agents(const nlohmann::json& config, const std::string& db_path, ResourceSlots& slots) {
    nlohmann::json agents = config.value("agents", nlohmann::json::object());
    llm_generator_ = agents.value("generator", "builtin") == "llm";
    llm_translator_ = agents.value("translator", "builtin") == "llm";
    llm_synthesizer_ = agents.value("synthesizer", "builtin") == "llm";
    if (c_functions_ && (llm_generator_ || llm_synthesizer_)) {
      return make_error(std::string("agents.") + (llm_generator_ ? "generator" : "synthesizer") +
                        ": the LLM agents write CUDA programs; the c2x86 track (synth policy) grows C functions with "
                        "the built-in generator and synthesizer: set it to \"builtin\"");
    }
    if (!llm_generator_ && !llm_translator_ && !llm_synthesizer_) return {};
    Result<Database> db = Database::open(db_path);
    if (!db) return db.error();
    Result<std::unique_ptr<LlmAgents>> llm = LlmAgents::create(config["llm"], *db, slots);
    if (!llm) return llm.error();
    llm_ = std::move(*llm);
    spdlog::info("agents: {} generator, {} translator; LLM {} at {}; {} synthesizer",
                 llm_generator_ ? "LLM" : "built-in", llm_translator_ ? "LLM" : "built-in", llm_->model(),
                 config["llm"]["base_url"].get<std::string>(), llm_synthesizer_ ? "LLM" : "built-in");
    return {};
  }

  int worker_count() const override { return workers_; }

  std::map<std::string, JobHandler> handlers() override {
    return {
        {kGenerateJob, [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return generate(db, q, j, o); }},
        {kVerifyJob, [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return verify(db, q, j, o); }},
        {kSynthesizeJob,
         [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return synthesize(db, q, j, o); }},
        {kRetrainJob, [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return retrain(db, q, j, o); }},
        {kEvaluateModelsJob,
         [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return evaluation_->plan(db, q, j, o); }},
        {kEvaluateJob,
         [this](Database& db, JobQueue& q, const Job& j, const std::string& o) { return evaluation_->evaluate(db, q, j, o); }},
    };
  }

 private:
  Status generate(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
    nlohmann::json payload = nlohmann::json::parse(job.payload, nullptr, false);
    if (!payload.is_object() || !payload.contains("cycle") || !payload.contains("index") || !payload.contains("seed")) {
      return make_error("generate job payload needs cycle, index and seed: " + job.payload);
    }
    int64_t cycle = payload["cycle"].get<int64_t>();
    Result<Sample> sample = c_functions_
                                ? generate_c2x86_sample(payload["seed"].get<uint64_t>(), payload["index"].get<uint64_t>(), cycle)
                                : cuda_sample(db, payload["seed"].get<uint64_t>(), payload["index"].get<size_t>(), cycle);
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

  // The built-in generator picks persona, template and values from the job's seed and index;
  // the LLM generator is asked the prompt that choice gives.
  Result<Sample> cuda_sample(Database& db, uint64_t seed, size_t index, int64_t cycle) {
    Result<GeneratedProgram> program = generate_program(catalog_, batch_request(seed, index));
    if (!program) return program.error();
    return llm_generator_ ? llm_sample(db, *program, cycle) : builtin_sample(*program, cycle);
  }

  // Who translated a sample's CUDA, as its translation failures record it.
  std::string translator_agent() const {
    return llm_translator_ ? "llm-translator:" + llm_->model() : "builtin-hipify";
  }

  Sample builtin_sample(const GeneratedProgram& program, int64_t cycle) const {
    Sample sample = sample_from_program(program, "template", cycle);
    nlohmann::json variables = program.variables;
    variables["cass_domain"] = classify_domain(domain_rules_, program.source);
    sample.variables = variables.dump();
    sample.model = "builtin-generator";
    sample.features = merged_tags(program.features, feature_tags(feature_rules_, "cuda", program.source));
    return sample;
  }

  // The LLM's program for the prompt of `choice`: persona, template and placeholder values are
  // the choice's; text, tags and prompt hash are the LLM program's.
  Result<Sample> llm_sample(Database& db, const GeneratedProgram& choice, int64_t cycle) {
    Result<LlmProgram> program = llm_->generate(db, choice.prompt_text);
    if (!program) return program.error();
    Sample sample = sample_from_program(choice, "llm", cycle);
    sample.text = program->source;
    sample.prompt_hash = program->prompt_hash;
    sample.model = llm_->model();
    nlohmann::json variables = {{"placeholders", choice.variables.value("placeholders", nlohmann::json::object())}};
    variables["cass_domain"] = classify_domain(domain_rules_, sample.text);
    sample.variables = variables.dump();
    sample.features = feature_tags(feature_rules_, "cuda", sample.text);
    return sample;
  }

  Status verify(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
    Result<std::string> sample_id = verify_sample_id(job);
    if (!sample_id) return sample_id.error();
    Result<VerifyInput> input = read_verify_input(db, *sample_id);
    if (!input) return input.error();
    std::string llm_unavailable;  // why the LLM translator could not answer, when it could not
    Translator translate;
    if (llm_translator_) {
      translate = [this, &db, &llm_unavailable](const std::string& cuda) {
        TranslateOutcome outcome = llm_->translate_cuda_to_hip(db, cuda);
        if (!outcome.ok && endpoint_fault(outcome.category)) llm_unavailable = outcome.message;
        return outcome;
      };
    }
    Result<VerifyOutput> output = verifier_->run(*input, &db, translate);
    if (!output) return output.error();
    // An endpoint outage says nothing about the sample: the job retries with backoff instead of
    // storing a translation failure.
    if (!llm_unavailable.empty()) return make_error("LLM translator unavailable: " + llm_unavailable);
    return store_verify_output(db, queue, job, owner, *output, host_);
  }

  Result<VerifyInput> verify_input(Database& db, const Job& job) override {
    Result<std::string> sample_id = verify_sample_id(job);
    if (!sample_id) return sample_id.error();
    return read_verify_input(db, *sample_id);
  }

  Status fail_crashed_job(Database& db, const Job& job, const std::string& stage, const std::string& reason) override {
    if (job.kind != kVerifyJob) return {};
    Result<std::string> sample_id = verify_sample_id(job);
    if (!sample_id) return sample_id.error();
    Result<std::optional<Sample>> found = find_sample(db, *sample_id);
    if (!found) return found.error();
    if (!found->has_value()) return {};
    const Sample& sample = **found;
    StageResult crashed;
    crashed.name = stage;
    crashed.status = "fail";
    crashed.reason = reason;
    Transaction transaction(db);
    if (!transaction.begin_status()) return transaction.begin_status();
    StageAgent agent_of = [&](const StageResult&) { return sample.model; };
    if (Status s = store_stage_results(db, sample, {crashed}, shared_->taxonomy, agent_of, host_); !s) return s;
    if (Status s = set_sample_status(db, sample.id, "failed"); !s) return s;
    return transaction.commit();
  }

  // Stores a verification's stage results, verdict and pairs, and completes the job, in one
  // transaction. The sample is read again: the output may come from a remote worker.
  Status store_verify_output(Database& db, JobQueue& queue, const Job& job, const std::string& owner,
                             const VerifyOutput& output, const std::string& host) override {
    Result<std::string> sample_id = verify_sample_id(job);
    if (!sample_id) return sample_id.error();
    if (!output.not_run.empty()) {
      return make_error("c2x86 sample " + sample_id->substr(0, 12) + " not run: " + output.not_run);
    }
    Result<std::optional<Sample>> found = find_sample(db, *sample_id);
    if (!found) return found.error();
    if (!found->has_value()) return make_error("verify job for unknown sample " + *sample_id);
    const Sample& sample = **found;
    Transaction transaction(db);
    if (!transaction.begin_status()) return transaction.begin_status();
    // The daemon's translator wrote what a translate stage checked, where it translates the track.
    const Track* track = find_track(sample.track);
    bool translated_here = track && track->verified_by == Track::Verified::chain_after_hip_translation;
    StageAgent agent_of = [&](const StageResult& stage) {
      return stage.name.rfind("translate.", 0) == 0 && translated_here ? std::optional(translator_agent()) : sample.model;
    };
    if (Status s = store_stage_results(db, sample, output.chain.stages, shared_->taxonomy, agent_of, host); !s) return s;
    if (Status s = set_sample_status(db, sample.id, output.verified ? "verified" : "failed"); !s) return s;
    if (output.kernel_pairs) {
      const KernelPairing& kernel_pairs = *output.kernel_pairs;
      Result<StoredDerivedSamples> pairs = store_kernel_pairs(db, sample, kernel_pairs, shared_->taxonomy, host);
      if (!pairs) return pairs.error();
      spdlog::debug("sample {}: {} kernel pairs ({} new, {} verified){}{}", sample.id.substr(0, 12),
                    kernel_pairs.pairs.size(), pairs->inserted, pairs->verified,
                    kernel_pairs.unmatched.empty() ? "" : ", unmatched " + std::to_string(kernel_pairs.unmatched.size()),
                    kernel_pairs.none_reason.empty() ? "" : ", none: " + kernel_pairs.none_reason);
    }
    if (output.ptx_pairs) {
      const PtxPairing& ptx_pairs = *output.ptx_pairs;
      Result<StoredDerivedSamples> pairs = store_ptx_pairs(db, sample, ptx_pairs, shared_->taxonomy, host);
      if (!pairs) return pairs.error();
      spdlog::debug("sample {}: {} ptx2cuda pairs ({} new, {} verified){}{}; capture {}", sample.id.substr(0, 12),
                    ptx_pairs.pairs.size(), pairs->inserted, pairs->verified,
                    ptx_pairs.unmatched.empty() ? "" : ", unmatched " + std::to_string(ptx_pairs.unmatched.size()),
                    ptx_pairs.none_reason.empty() ? "" : ", none: " + ptx_pairs.none_reason,
                    ptx_pairs.capture.status + (ptx_pairs.capture.reason.empty() ? "" : " (" + ptx_pairs.capture.reason + ")"));
    }
    if (Status s = queue.complete(job.id, owner); !s) return s;
    return transaction.commit();
  }

  static Result<std::string> verify_sample_id(const Job& job) {
    nlohmann::json payload = nlohmann::json::parse(job.payload, nullptr, false);
    if (!payload.is_object() || !payload.contains("sample_id") || !payload["sample_id"].is_string()) {
      return make_error("verify job payload needs sample_id: " + job.payload);
    }
    return payload["sample_id"].get<std::string>();
  }

  // The cycle's long-tail synthesis: detect tails, make N x candidates, enqueue their verification.
  Status synthesize(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
    Result<int64_t> cycle = cycle_of(job);
    if (!cycle) return cycle.error();
    uint64_t seed = static_cast<uint64_t>(cycle_seed(seed_, *cycle));
    // An LLM outage fails the job, which retries; what an earlier attempt stored is not stored twice.
    Result<SynthesisSummary> summary =
        llm_synthesizer_
            ? synthesize_for_cycle_with_llm(db, *llm_, {feature_rules_, domain_rules_, shared_->synth.language},
                                            shared_->synth, *cycle, seed)
            : c_functions_ ? synthesize_c2x86_for_cycle(db, shared_->synth, *cycle, seed)
                     : synthesize_for_cycle(db, catalog_, shared_->synth, *cycle, seed);
    if (!summary) return make_error("synthesis for cycle " + std::to_string(*cycle) + ": " + summary.message());
    std::string tails;
    for (const TailSynthesis& tail : summary->per_tail) {
      tails += " " + tail.entry.dimension + "/" + tail.entry.name + " (" + tail.entry.signal + ", +" +
               std::to_string(tail.inserted) + ")";
    }
    spdlog::info("cycle {}: synthesized {} ({} near-duplicates dropped, {} candidates not made) for{}", *cycle,
                 summary->inserted, summary->near_duplicates, summary->generation_failures,
                 tails.empty() ? " no tail" : tails);
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
  std::unique_ptr<EvaluationResources> shared_;  // rules, taxonomy, verifier and policies
  RetrainPolicy retrain_;
  int64_t seed_ = 1;
  GeneratorCatalog catalog_;
  FeatureRules feature_rules_;
  DomainRules domain_rules_;
  std::string work_dir_;
  std::string host_ = host_name();  // stored with the verifications this daemon runs
  int workers_ = 1;
  bool llm_generator_ = false;
  bool llm_translator_ = false;
  bool llm_synthesizer_ = false;
  bool c_functions_ = false;  // the synth policy's track generates C functions, not CUDA programs
  std::unique_ptr<LlmAgents> llm_;  // when an agent is "llm"
  std::unique_ptr<EvaluationJobs> evaluation_;
  std::unique_ptr<SampleVerifier> verifier_;
};

}  // namespace

Result<std::shared_ptr<Pipeline>> make_pipeline(const nlohmann::json& config, const std::string& db_path,
                                                ResourceSlots& slots) {
  auto pipeline = std::make_shared<DefaultPipeline>(slots);
  if (Status s = pipeline->load(config, db_path, slots); !s) return s.error();
  return std::shared_ptr<Pipeline>(pipeline);
}

}  // namespace tailforge
