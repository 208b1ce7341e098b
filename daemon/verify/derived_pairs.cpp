#include "daemon/verify/derived_pairs.h"

#include <spdlog/spdlog.h>

#include "base/files.h"
#include "daemon/verify/kernel_pairs_store.h"
#include "daemon/verify/ptx_pairs_store.h"
#include "daemon/verify/stage_records.h"
#include "verifier/stage_runner.h"

namespace tailforge {

namespace {

std::string unmatched_and_none(size_t unmatched, const std::string& none_reason) {
  return (unmatched == 0 ? "" : ", unmatched " + std::to_string(unmatched)) +
         (none_reason.empty() ? "" : ", none: " + none_reason);
}

}  // namespace

void derive_pairs(const std::string& program_file, const ChainOptions& options, const std::string& work_dir,
                  VerifyOutput& output) {
  output.kernel_pairs = pair_kernels(output.chain, options, work_dir + "/kernels");
  // The captures and replays run in the sandbox: in a scratch directory, which its user reaches
  // wherever the daemon's work folder is (a database in a private home folder, say).
  Result<std::string> scratch = make_scratch_directory(options.verifier, "tailforge-ptx2cuda");
  if (!scratch) {
    output.ptx_pairs = PtxPairing{};
    output.ptx_pairs->none_reason = scratch.message();
    return;
  }
  output.ptx_pairs = pair_ptx_kernels(read_text_file_or_empty(program_file), output.chain, options, *scratch);
  remove_scratch_directory(options.verifier, *scratch);
}

Status store_derived_pairs(Database& db, const Sample& program, const VerifyOutput& output, const Taxonomy& taxonomy,
                           const std::string& host) {
  std::string id = program.id.substr(0, 12);
  if (output.kernel_pairs) {
    const KernelPairing& pairing = *output.kernel_pairs;
    Result<StoredDerivedSamples> stored = store_kernel_pairs(db, program, pairing, taxonomy, host);
    if (!stored) return stored.error();
    spdlog::debug("sample {}: {} kernel pairs ({} new, {} verified){}", id, pairing.pairs.size(), stored->inserted,
                  stored->verified, unmatched_and_none(pairing.unmatched.size(), pairing.none_reason));
  }
  if (output.ptx_pairs) {
    const PtxPairing& pairing = *output.ptx_pairs;
    // The capture run, where it ran, is the program's stage: its seconds count with the others'.
    // Its failure leaves ptx2cuda without launches but says nothing against the program, so it
    // gets no failure record (the pairs it could not test carry the reason).
    if (pairing.capture.status != "skipped" && !pairing.capture.name.empty()) {
      if (Result<int64_t> row = upsert_verification(db, verification_record_of(program, pairing.capture, host)); !row) {
        return row.error();
      }
    }
    Result<StoredDerivedSamples> stored = store_ptx_pairs(db, program, pairing, taxonomy, host);
    if (!stored) return stored.error();
    spdlog::debug("sample {}: {} ptx2cuda pairs ({} new, {} verified){}; capture {}", id, pairing.pairs.size(),
                  stored->inserted, stored->verified, unmatched_and_none(pairing.unmatched.size(), pairing.none_reason),
                  pairing.capture.status + (pairing.capture.reason.empty() ? "" : " (" + pairing.capture.reason + ")"));
  }
  return {};
}

}  // namespace tailforge
