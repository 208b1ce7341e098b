#include "store/sample_failures.h"

namespace tailforge {

Result<std::vector<FailureRecord>> failures_of_sample(Database& db, const std::string& sample_id) {
  Statement& select = db.cached(
      "SELECT verification_id, stage, category, message, evidence_file, evidence_line, track, origin, domain, agent,"
      " model_id, created_ms FROM failure WHERE sample_id = ?1 ORDER BY id");
  select.bind(1, sample_id);
  std::vector<FailureRecord> failures;
  while (select.step()) {
    failures.push_back({.sample_id = sample_id,
                        .verification_id = select.optional_int64(0),
                        .stage = select.text(1),
                        .category = select.text(2),
                        .message = select.text(3),
                        .evidence_file = select.optional_text(4),
                        .evidence_line = select.optional_int64(5),
                        .track = select.text(6),
                        .origin = select.text(7),
                        .domain = select.optional_text(8),
                        .agent = select.optional_text(9),
                        .model_id = select.optional_int64(10),
                        .created_ms = select.int64(11)});
  }
  Status status = select.status();
  select.reset();
  if (!status) return make_error("failures of sample " + sample_id + ": " + status.message());
  return failures;
}

}  // namespace tailforge
