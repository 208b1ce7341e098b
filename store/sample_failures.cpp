#include "store/sample_failures.h"

namespace tailforge {

Result<std::vector<FailureRecord>> failures_of_sample(Database& db, const std::string& sample_id) {
  Statement& select = db.cached(
      "SELECT verification_id, stage, category, message, evidence_file, evidence_line, track, origin, domain, agent,"
      " model_id, created_ms FROM failure WHERE sample_id = ?1 ORDER BY id");
  select.bind(1, sample_id);
  Result<std::vector<FailureRecord>> failures =
      collect_rows<FailureRecord>(select, [&sample_id](const Statement& row, FailureRecord& f) {
        f.sample_id = sample_id;
        read_row(row, f.verification_id, f.stage, f.category, f.message, f.evidence_file, f.evidence_line, f.track,
                 f.origin, f.domain, f.agent, f.model_id, f.created_ms);
      });
  if (!failures) return make_error("failures of sample " + sample_id + ": " + failures.message());
  return failures;
}

}  // namespace tailforge
