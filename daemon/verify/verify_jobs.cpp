#include "daemon/verify/verify_jobs.h"

#include "daemon/planner.h"
#include "daemon/scaleout.h"
#include "daemon/verify/derived_pairs.h"
#include "daemon/verify/stage_records.h"
#include "store/samples.h"
#include "synth/kernelopt/store.h"
#include "synth/tracks.h"

namespace tailforge {

// Who translated a sample's CUDA, as its translation failures record it.
std::string VerifyJobs::translator_agent() const {
  return llm_translator_ ? "llm-translator:" + llm_translator_->model() : "builtin-hipify";
}

Status VerifyJobs::verify(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
  Result<std::string> sample_id = sample_id_of(job);
  if (!sample_id) return sample_id.error();
  Result<VerifyInput> input = read_verify_input(db, *sample_id);
  if (!input) return input.error();
  std::string llm_unavailable;  // why the LLM translator could not answer, when it could not
  Translator translate;
  if (llm_translator_) {
    translate = [this, &db, &llm_unavailable](const std::string& cuda) {
      TranslateOutcome outcome = llm_translator_->translate_cuda_to_hip(db, cuda);
      if (!outcome.ok && endpoint_fault(outcome.category)) llm_unavailable = outcome.message;
      return outcome;
    };
  }
  Result<VerifyOutput> output = verifier_.run(*input, &db, translate);
  if (!output) return output.error();
  // An endpoint outage says nothing about the sample: the job retries with backoff instead of
  // storing a translation failure.
  if (!llm_unavailable.empty()) return make_error("LLM translator unavailable: " + llm_unavailable);
  return store(db, queue, job, owner, *output, host_);
}

Result<VerifyInput> VerifyJobs::input(Database& db, const Job& job) {
  Result<std::string> sample_id = sample_id_of(job);
  if (!sample_id) return sample_id.error();
  return read_verify_input(db, *sample_id);
}

Status VerifyJobs::fail_crashed(Database& db, const Job& job, const std::string& stage, const std::string& reason) {
  if (job.kind != kVerifyJob) return {};
  Result<std::string> sample_id = sample_id_of(job);
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
  if (Status s = store_stage_results(db, sample, {crashed}, resources_.taxonomy, agent_of, host_); !s) return s;
  if (Status s = set_sample_status(db, sample.id, "failed"); !s) return s;
  return transaction.commit();
}

namespace {

// A verified kernelopt task: the task and its built-in candidates with their measurements.
Status store_kernel_task(Database& db, const VerifyOutput& output, const std::string& host) {
  if (!output.verified || !output.kernel_task || !output.kernel_task->task) return {};
  const KernelTask& task = *output.kernel_task->task;
  if (Result<bool> stored = store_kernelopt_task(db, task); !stored) return stored.error();
  for (const MeasuredKernel& measured : output.kernel_task->candidates) {
    Result<StoredCandidate> candidate = store_kernelopt_candidate(db, task, measured.candidate);
    if (!candidate) return candidate.error();
    if (Status s = record_kernelopt_measurement(db, *candidate, task, measured.measurement, host); !s) return s;
  }
  return {};
}

}  // namespace

// Stores a verification's stage results, verdict and pairs, and completes the job, in one
// transaction. The sample is read again: the output may come from a remote worker.
Status VerifyJobs::store(Database& db, JobQueue& queue, const Job& job, const std::string& owner,
                       const VerifyOutput& output, const std::string& host) {
  Result<std::string> sample_id = sample_id_of(job);
  if (!sample_id) return sample_id.error();
  if (!output.not_run.empty()) {
    return make_error(output.chain.track + " sample " + sample_id->substr(0, 12) + " not run: " + output.not_run);
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
  if (Status s = store_stage_results(db, sample, output.chain.stages, resources_.taxonomy, agent_of, host); !s) return s;
  if (Status s = set_sample_status(db, sample.id, output.verified ? "verified" : "failed"); !s) return s;
  if (Status s = store_derived_pairs(db, sample, output, resources_.taxonomy, host); !s) return s;
  if (Status s = store_kernel_task(db, output, host); !s) return s;
  if (Status s = queue.complete(job.id, owner); !s) return s;
  return transaction.commit();
}

Result<std::string> VerifyJobs::sample_id_of(const Job& job) {
  nlohmann::json payload = nlohmann::json::parse(job.payload, nullptr, false);
  if (!payload.is_object() || !payload.contains("sample_id") || !payload["sample_id"].is_string()) {
    return make_error("verify job payload needs sample_id: " + job.payload);
  }
  return payload["sample_id"].get<std::string>();
}

}  // namespace tailforge
