// The work the daemon's jobs do, one handler per job kind: generate a program (built-in or LLM
// generator), verify a sample through the whole chain (built-in or LLM translator) and store its
// categorized results, synthesize long-tail samples, check the retrain trigger. Handlers complete
// their job in the transaction that stores their results, so a crash at any instant leaves either
// everything or nothing of a job.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "daemon/resource_slots.h"
#include "daemon/verify/sample_verification.h"
#include "daemon/worker_pool.h"

namespace tailforge {

class Pipeline {
 public:
  virtual ~Pipeline() = default;
  // Workers to start: one per compile slot plus one per GPU slot.
  virtual int worker_count() const = 0;
  virtual std::map<std::string, JobHandler> handlers() = 0;
  // A verify job split for a remote worker (tailforge worker): its inputs, and storing the output
  // the worker on `host` posted, completing the job as `owner` in the same transaction.
  virtual Result<VerifyInput> verify_input(Database& db, const Job& job) = 0;
  virtual Status store_verify_output(Database& db, JobQueue& queue, const Job& job, const std::string& owner,
                                     const VerifyOutput& output, const std::string& host) = 0;
  // A job the daemon crashed on too often (daemon/crash_recorder.h), already dead in the queue: a
  // verify job's sample is failed with one stage, `stage`, whose reason is `reason`.
  virtual Status fail_crashed_job(Database& db, const Job& job, const std::string& stage, const std::string& reason) = 0;
};

// Loads everything the handlers need (generator catalog, translation rules, taxonomy, verifier
// options, toolchains, the LLM agents when agents.* is "llm") and sizes the resource slots.
// Errors name the file or key at fault.
Result<std::shared_ptr<Pipeline>> make_pipeline(const nlohmann::json& config, const std::string& db_path,
                                                ResourceSlots& slots);

}  // namespace tailforge
