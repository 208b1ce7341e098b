// The kernelopt track's training data as the loop and `export --track kernelopt` write it:
// ConCuR's curation over every measured candidate, less the evaluation set's side (the tasks that
// are evaluation items, and tasks whose question is a near-duplicate of an item's, held back), as
// a curated export (synth/kernelopt/export.h) with the summary the retrain trigger reads. The
// snapshot hash is that of the curated candidates' sample ids, so the trigger records one event
// per distinct curated set. Reads the store and writes the files, the curation run and the
// trained samples; it measures nothing (no candidate without a timed run can be chosen).
#pragma once

#include <cstdint>
#include <vector>

#include "synth/export.h"
#include "synth/kernelopt/curation.h"
#include "synth/kernelopt/export.h"
#include "synth/kernelopt/store.h"

namespace tailforge {

// What the curation reads of the stored candidates.
std::vector<MeasuredCandidate> curation_inputs(const std::vector<CandidateRecord>& records);

struct KerneloptTrainingRows {
  std::vector<KerneloptExportRow> rows;
  int64_t held_back = 0;  // curated candidates left out for the evaluation set's sake
};

// The rows of `curated` (a curation's choices), less the candidates of evaluation items' tasks
// and of tasks whose row input is a near-duplicate (synth.dedup) of an item's question.
Result<KerneloptTrainingRows> curated_training_rows(Database& db, const std::vector<CuratedSample>& curated,
                                                    const MinHashOptions& dedup);

// The hash an export now would have, without storing or writing anything.
Result<std::string> kernelopt_snapshot_hash(Database& db, const ExportOptions& options);

// Curates now, stores the curation run, writes the export to options.out_dir and records its
// candidates and their tasks as trained (so neither becomes an evaluation item).
Result<ExportSummary> export_kernelopt_snapshot(Database& db, const ExportOptions& options);

}  // namespace tailforge
