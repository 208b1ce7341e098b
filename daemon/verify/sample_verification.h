// A verify job's work without the store: the inputs (the sample and, for an imported tree, its
// bundle) and what the chain produced (stage results, and for a verified CUDA program its
// sass2rdna3 and ptx2cuda pairs). The daemon's own workers run it between reading the sample and
// storing the output; a remote `tailforge worker` runs it on its host with inputs and outputs
// sent over HTTP (daemon/cluster/verify_wire.h).
#pragma once

#include <optional>
#include <string>

#include "daemon/loaded_policies.h"
#include "daemon/verify/verify_io.h"
#include "verifier/chain.h"

namespace tailforge {

// Reads a verify job's sample and bundle.
Result<VerifyInput> read_verify_input(Database& db, const std::string& sample_id);

class SampleVerifier {
 public:
  // Everything passed must outlive the verifier. `toolchains`: the host's, or a masked copy
  // (tailforge worker --without).
  SampleVerifier(const LoadedPolicies& resources, std::string work_dir, ResourceGate* gate,
                 const Toolchains& toolchains)
      : resources_(resources), work_dir_(std::move(work_dir)), gate_(gate), toolchains_(toolchains) {}

  // Verifies in a scratch folder under the work directory (removed afterwards). `translate`
  // replaces the built-in translator (the LLM's) when set. `cache_db` holds the compile cache.
  Result<VerifyOutput> run(const VerifyInput& input, Database* cache_db, const Translator& translate = {}) const;

 private:
  Result<VerifyOutput> run_c2x86(const Sample& sample, Database* cache_db) const;
  Result<VerifyOutput> run_kernel_task(const Sample& sample, Database* cache_db) const;

  const LoadedPolicies& resources_;
  std::string work_dir_;
  ResourceGate* gate_;
  const Toolchains& toolchains_;
};

}  // namespace tailforge
