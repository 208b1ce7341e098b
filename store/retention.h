// Artifact retention: which stored artifacts (compiler and program outputs, model answers,
// recorded launches) may go when the store holds more than store.artifact_cap_mb, and taking
// them. The policy:
//   always kept  samples (their source and variables), every verdict, failure and diagnostic,
//                lineage, and every artifact linked to a sample that did not fail (verified and
//                pending ones: export, evaluation and the dashboard read them) or referenced by
//                the evaluation set or a model's evaluation (reference outputs, answers).
//   freed first  artifacts nothing references any more.
//   then         artifacts only failed samples link, oldest first: `tailforge verify` on the
//                stored source makes them again, and the failure rows keep what the taxonomy
//                shows.
// Over the cap, collection goes down to 90% of it; what the kept classes hold over it stays.
#pragma once

#include <cstdint>

#include "store/database.h"

namespace tailforge {

struct ArtifactClass {
  int64_t count = 0;
  int64_t bytes = 0;
};

struct ArtifactGcPlan {
  int64_t cap_bytes = 0;       // 0: no cap; only unreferenced artifacts are freed
  ArtifactClass total;
  ArtifactClass unreferenced;  // freed always
  ArtifactClass failed_only;   // freed oldest first while over the cap
  ArtifactClass kept;          // never freed
  ArtifactClass to_free;       // what collection frees now
  int64_t bytes_after() const { return total.bytes - to_free.bytes; }
};

// Bytes of all stored artifacts (an index scan; cheap enough to call every few seconds).
Result<int64_t> artifact_bytes(Database& db);

// What collection would free now under `cap_bytes`.
Result<ArtifactGcPlan> plan_artifact_gc(Database& db, int64_t cap_bytes);

// Plans again inside one write transaction and deletes what that plan frees (the links of failed
// samples to those artifacts, then the artifacts); returns the plan it carried out.
Result<ArtifactGcPlan> collect_artifacts(Database& db, int64_t cap_bytes);

}  // namespace tailforge
