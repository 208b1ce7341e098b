#include "store/maintenance.h"

namespace tailforge {

namespace {

// Children before parents, so foreign keys hold at every step.
const char* kClearDataset = R"sql(
DELETE FROM failure;
DELETE FROM evaluation_stage;
DELETE FROM evaluation;
DELETE FROM eval_item;
DELETE FROM trained_sample;
DELETE FROM lineage;
DELETE FROM sample_artifact;
DELETE FROM artifact;
DELETE FROM verification;
DELETE FROM sample_feature;
DELETE FROM sample;
DELETE FROM tail_report;
UPDATE model SET retrain_event_id = NULL;
DELETE FROM retrain_event;
DELETE FROM job;
DELETE FROM cycle;
)sql";

}  // namespace

Status clear_dataset_keep_cache(Database& db) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  if (Status cleared = db.exec(kClearDataset); !cleared) {
    return make_error("clearing the dataset of " + db.path() + ": " + cleared.message());
  }
  return transaction.commit();
}

}  // namespace tailforge
