#include "store/retention.h"

#include <string>
#include <vector>

namespace tailforge {
namespace {

// Artifacts nothing needs: each with its size and whether a (failed) sample still links it,
// unreferenced ones first, then oldest first. `needed` is what the policy keeps.
const char* kCandidates = R"sql(
WITH needed(id) AS (
  SELECT sa.artifact_id FROM sample_artifact sa JOIN sample s ON s.id = sa.sample_id WHERE s.status <> 'failed'
  UNION SELECT reference_target_id FROM eval_item WHERE reference_target_id IS NOT NULL
  UNION SELECT reference_stdout_id FROM eval_item WHERE reference_stdout_id IS NOT NULL
  UNION SELECT output_id FROM evaluation WHERE output_id IS NOT NULL),
linked(id) AS (SELECT artifact_id FROM sample_artifact)
SELECT a.id, a.size, a.id IN linked AS failed_only FROM artifact a
WHERE a.id NOT IN needed
ORDER BY failed_only, a.created_ms, a.id
)sql";

Result<ArtifactGcPlan> make_plan(Database& db, int64_t cap_bytes, std::vector<std::string>* victims) {
  ArtifactGcPlan plan;
  plan.cap_bytes = cap_bytes > 0 ? cap_bytes : 0;
  {
    Statement& total = db.cached("SELECT count(*), coalesce(sum(size), 0) FROM artifact");
    if (!total.step()) return total.status().ok() ? make_error("artifact totals: no row") : total.status().error();
    plan.total = {total.int64(0), total.int64(1)};
    total.reset();
  }
  const bool over_cap = plan.cap_bytes > 0 && plan.total.bytes > plan.cap_bytes;
  const int64_t goal = plan.cap_bytes / 10 * 9;
  Statement& candidates = db.cached(kCandidates);
  int64_t left = plan.total.bytes;
  while (candidates.step()) {
    const int64_t size = candidates.int64(1);
    const bool failed_only = candidates.int64(2) != 0;
    ArtifactClass& group = failed_only ? plan.failed_only : plan.unreferenced;
    ++group.count;
    group.bytes += size;
    if (!failed_only || (over_cap && left > goal)) {
      ++plan.to_free.count;
      plan.to_free.bytes += size;
      left -= size;
      if (victims) victims->push_back(candidates.text(0));
    }
  }
  Status scanned = candidates.finish();
  if (!scanned) return scanned.error();
  plan.kept = {plan.total.count - plan.unreferenced.count - plan.failed_only.count,
               plan.total.bytes - plan.unreferenced.bytes - plan.failed_only.bytes};
  return plan;
}

}  // namespace

Result<int64_t> artifact_bytes(Database& db) {
  Statement& total = db.cached("SELECT coalesce(sum(size), 0) FROM artifact");
  if (!total.step()) return total.status().ok() ? make_error("artifact bytes: no row") : total.status().error();
  int64_t bytes = total.int64(0);
  total.reset();
  return bytes;
}

Result<ArtifactGcPlan> plan_artifact_gc(Database& db, int64_t cap_bytes) { return make_plan(db, cap_bytes, nullptr); }

Result<ArtifactGcPlan> collect_artifacts(Database& db, int64_t cap_bytes) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  std::vector<std::string> victims;
  Result<ArtifactGcPlan> plan = make_plan(db, cap_bytes, &victims);
  if (!plan) return plan.error();
  Statement& unlink = db.cached("DELETE FROM sample_artifact WHERE artifact_id = ?1");
  Statement& remove = db.cached("DELETE FROM artifact WHERE id = ?1");
  for (const std::string& id : victims) {
    if (Status s = unlink.bind(1, id).run(); !s) return s.error();
    if (Status s = remove.bind(1, id).run(); !s) return s.error();
  }
  if (Status s = transaction.commit(); !s) return s.error();
  return plan;
}

}  // namespace tailforge
