// The kernelopt track's tables as rows: tasks, candidates, measurements, curation runs and their
// choices. SQL only; what the rows mean (a task's buffers, a harness report, the ConCuR rules)
// is the track's own code (synth/kernelopt/store.h turns its types into these rows and back).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct KerneloptTaskRow {
  std::string name, operator_type, domain, description;
  std::string spec = "{}";  // JSON text: buffers, input range, tolerance, reference language
  std::string reference_source, origin;
};

// Inserts the task; a task of that name already stored is kept as it is (false).
Result<bool> insert_kernelopt_task(Database& db, const KerneloptTaskRow& task);
// Every stored task, by name.
Result<std::vector<KerneloptTaskRow>> kernelopt_task_rows(Database& db);

struct KerneloptCandidateRow {
  std::string sample_id, task, strategy, origin, model, reasoning;
  int64_t reasoning_length = 0;
};

// Inserts the candidate (its sample must exist); one already stored for the task, sample and
// model keeps its row. Returns the row's id either way.
Result<int64_t> insert_kernelopt_candidate(Database& db, const KerneloptCandidateRow& candidate);

// A candidate with its task's operator type, its kernel (the sample's text) and its latest
// measurement (status empty and figures unset when never measured; a figure is unset when the
// measurement has none, e.g. no timing).
struct KerneloptCandidateRecordRow {
  int64_t id = 0;
  std::string operator_type, source;
  KerneloptCandidateRow candidate;
  std::string status, category, detail, device;
  std::optional<double> speedup, reference_ms, candidate_ms, reference_spread, candidate_spread, roofline_ms;
};
// Every candidate, by task then id.
Result<std::vector<KerneloptCandidateRecordRow>> kernelopt_candidate_rows(Database& db);

struct KerneloptMeasurementRow {
  int64_t candidate_id = 0;
  std::string status, category, detail;
  std::optional<double> reference_ms, reference_spread, candidate_ms, candidate_spread, speedup, max_error;
  std::optional<double> roofline_ms;
  std::string device;
  std::optional<int64_t> sm_clock_khz, memory_clock_khz;
  std::string host;
};
// Appends one measurement (measured now).
Status insert_kernelopt_measurement(Database& db, const KerneloptMeasurementRow& measurement);

struct KerneloptChoiceRow {
  int64_t candidate_id = 0;
  std::string rule, why;
};
// Stores a curation run (its options and result as JSON text) and its choices in order, in one
// transaction; returns the run's id.
Result<int64_t> insert_kernelopt_curation(Database& db, const std::string& options_json, const std::string& result_json,
                                          const std::vector<KerneloptChoiceRow>& choices);
// The choices of the newest curation run, in order; empty when none ran.
Result<std::vector<KerneloptChoiceRow>> latest_kernelopt_choices(Database& db);

}  // namespace tailforge
