// The daemon's verify jobs: read the sample (and its bundle), run it through its track's checks
// (daemon/verify/sample_verification.h) with the built-in or the LLM translator, and store the stage
// results, the verdict and the derived tracks' pairs, completing the job in the same transaction.
// A remote worker's verification arrives at `store` with the host that ran it.
#pragma once

#include <string>

#include "daemon/llm_agents.h"
#include "daemon/loaded_policies.h"
#include "daemon/scaleout.h"
#include "daemon/verify/sample_verification.h"
#include "store/queue.h"

namespace tailforge {

class VerifyJobs {
 public:
  // `llm_translator`: the LLM agents, when agents.translator is "llm" (else the rule translator
  // answers). Everything passed must outlive the jobs.
  VerifyJobs(const LoadedPolicies& resources, const std::string& work_dir, ResourceGate* gate,
             const Toolchains& toolchains, LlmAgents* llm_translator)
      : resources_(resources), verifier_(resources, work_dir, gate, toolchains), llm_translator_(llm_translator) {}

  // Verifies the job's sample here and stores the output. An LLM translator that cannot answer
  // now fails the job (it retries) rather than storing a translation failure.
  Status verify(Database& db, JobQueue& queue, const Job& job, const std::string& owner);
  // A verify job's inputs, for a remote worker.
  Result<VerifyInput> input(Database& db, const Job& job);
  // Stores a verification's stage results, verdict and pairs, and completes the job as `owner`,
  // in one transaction. The sample is read again: the output may come from a remote worker.
  Status store(Database& db, JobQueue& queue, const Job& job, const std::string& owner, const VerifyOutput& output,
               const std::string& host);
  // A verify job the daemon crashed on too often: its sample fails with one stage, `stage`.
  Status fail_crashed(Database& db, const Job& job, const std::string& stage, const std::string& reason);

 private:
  std::string translator_agent() const;
  static Result<std::string> sample_id_of(const Job& job);

  const LoadedPolicies& resources_;
  SampleVerifier verifier_;
  LlmAgents* llm_translator_;
  std::string host_ = host_name();  // stored with the verifications run here
};

}  // namespace tailforge
