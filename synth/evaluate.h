// Judging a model under test on one evaluation item: the model answers the item's source, and
// the answer goes through the same verifier chain as any sample (for cuda2hip: the gfx1100
// compile, assemble and code object, the HIP-on-NVIDIA build, and where a GPU exists the run,
// in the sandbox, compared with the item's reference output; for ptx2cuda the model reads the
// pair's Rolled-PTX and its kernel is judged on the pair's recorded launch, evaluate_ptx2cuda.h;
// for c2x86 the assembly is interpreted, assembled, linked and IO-tested, evaluate_c2x86.h).
// The verdict is one evaluation:
// the first failing stage and its category, with every stage as detail. Stores only what the
// caller asks (store_evaluation), so the daemon can complete the job in the same transaction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/model_runner.h"
#include "policies/categorizer.h"
#include "store/evaluations.h"
#include "synth/evaluation_setup.h"
#include "verifier/chain.h"

namespace tailforge {

// Why the model's endpoint could not answer (llm_client.h's endpoint_fault): nothing is judged.
struct EndpointFault {
  std::string category;     // agent.llm.<reason>
  std::string message;      // names the URL, the HTTP status and the server's message
  int retry_after_ms = -1;  // a 429's Retry-After
};

// A judged answer, ready to store, or the endpoint's fault that kept the item from being judged.
struct JudgedAnswer {
  EvaluationRecord evaluation;
  std::optional<std::string> answer;  // the model's output, stored as an artifact of the item
  std::optional<EndpointFault> fault;  // set: not judged; nothing to store, ask again later
};

// Asks `model` and judges its answer; an endpoint fault comes back as `fault`, never as a
// judged failure. An error means the item or the work folder could not be read or written.
Result<JudgedAnswer> evaluate_item(Database& db, ModelUnderTest& model, const ModelRecord& record,
                                   const EvalItem& item, const EvaluationSetup& setup);

// Pauses the model's evaluation after an endpoint fault (store/models.h): for `pause_seconds`,
// or the fault's Retry-After when that is longer. Returns when the pause ends (Unix ms).
Result<int64_t> pause_after_fault(Database& db, int64_t model_id, const EndpointFault& fault, double pause_seconds);

// Stores the answer (artifact "answer:<model>" of the item) and the evaluation; false when the
// model already had an evaluation of the item. Use inside the caller's transaction.
Result<bool> store_evaluation(Database& db, const ModelRecord& model, const JudgedAnswer& judged);

}  // namespace tailforge
