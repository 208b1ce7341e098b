// The kernelopt track's rows: tasks, candidates (each also a sample of track "kernelopt", so a
// wrong or cheating candidate is a failure in the taxonomy like any other), every measurement
// of a candidate, and curation runs with their choices. Reads and writes only; measuring is
// verifier/kernelopt/measure.h, choosing is synth/kernelopt/curation.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "synth/kernelopt/curation.h"
#include "verifier/kernelopt/kernel_task.h"
#include "verifier/kernelopt/measure.h"

namespace tailforge {

// Inserts the task; a task of that name already stored is kept as it is (false).
Result<bool> store_kernelopt_task(Database& db, const KernelTask& task);
// Every stored task by name; `names` (when not empty) selects some.
Result<std::vector<KernelTask>> load_kernelopt_tasks(Database& db, const std::vector<std::string>& names = {});

struct StoredCandidate {
  int64_t id = 0;
  std::string sample_id;
  std::string operator_type;
  KernelCandidate candidate;
};

// Inserts the candidate (and its sample); one already stored for the task, text and model keeps
// its id. Runs inside the caller's transaction or its own.
Result<StoredCandidate> store_kernelopt_candidate(Database& db, const KernelTask& task, const KernelCandidate& candidate);

struct CandidateRecord {
  StoredCandidate stored;
  // The latest measurement; status empty when it was never measured.
  std::string status, category, detail, device;
  double speedup = 0, reference_ms = 0, candidate_ms = 0, reference_spread = 0, candidate_spread = 0;
  double roofline_ms = 0;  // the task's physical limit on the GPU that measured it; 0: unknown
  bool timed = false;
  // The limit over the candidate's time (right, timed, limit known), else 0.
  double roofline_fraction() const { return timed && candidate_ms > 0 ? roofline_ms / candidate_ms : 0; }
};

// Every candidate with its latest measurement, by task then id.
Result<std::vector<CandidateRecord>> load_kernelopt_candidates(Database& db);

// Stores one measurement in a transaction of its own (record_kernelopt_measurement: in the
// caller's); the candidate's sample becomes verified (right), failed (wrong, a cheat)
// or stays pending (skipped), and a failure row records the category.
Status store_kernelopt_measurement(Database& db, const StoredCandidate& candidate, const KernelTask& task,
                                   const KernelMeasurement& measurement, const std::string& host);
Status record_kernelopt_measurement(Database& db, const StoredCandidate& candidate, const KernelTask& task,
                                    const KernelMeasurement& measurement, const std::string& host);

// Stores a curation run and its choices; returns its id.
Result<int64_t> store_kernelopt_curation(Database& db, const CurationOptions& options, const CurationResult& result);

struct CuratedSample {
  int64_t candidate_id = 0;
  std::string rule, why;
};
// The choices of the newest curation run, in order; empty when none ran.
Result<std::vector<CuratedSample>> latest_kernelopt_curation(Database& db);

nlohmann::json curation_result_to_json(const CurationResult& result);

}  // namespace tailforge
