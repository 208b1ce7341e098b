#include "daemon/cli/trained_version.h"

#include <cstdlib>
#include <iostream>
#include <optional>

#include "base/number.h"
#include "store/models.h"
#include "synth/model_registry.h"

namespace tailforge {
namespace {

// The one the event already made (a rerun), else the next <prefix>N.
Result<std::string> version_name(Database& db, const std::optional<int64_t>& retrain_event, const std::string& prefix) {
  if (retrain_event) {
    Result<std::optional<ModelRecord>> made = model_of_retrain_event(db, *retrain_event);
    if (!made) return made.error();
    if (*made) return (*made)->name;
  }
  Result<int64_t> count = count_models_named(db, prefix);
  if (!count) return count.error();
  for (int64_t n = *count + 1;; ++n) {
    Result<std::optional<ModelRecord>> taken = find_model(db, prefix + std::to_string(n));
    if (!taken) return taken.error();
    if (!*taken) return prefix + std::to_string(n);
  }
}

}  // namespace

std::string environment_value(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

int register_trained_version(const CommandLine& args, const CommandContext& context, const std::string& prefix,
                             nlohmann::json definition) {
  std::string db_path = args.has("--db") ? args.get("--db") : environment_value("TAILFORGE_DB");
  if (db_path.empty()) db_path = context.db_path;
  Result<Database> db = Database::open(db_path);
  if (!db) return report_failure(db.message());
  std::optional<int64_t> retrain_event;
  if (std::string event = environment_value("TAILFORGE_RETRAIN_EVENT"); !event.empty()) {
    int64_t id = 0;
    if (event.find_first_not_of("0123456789") != std::string::npos || !parse_int64(event, id)) {
      return report_failure("TAILFORGE_RETRAIN_EVENT is not an event id: '" + event + "'");
    }
    retrain_event = id;
  }
  Result<std::string> name =
      args.has("--name") ? Result<std::string>(args.get("--name")) : version_name(*db, retrain_event, prefix);
  if (!name) return report_failure(name.message());
  definition["name"] = *name;
  if (std::string parent = environment_value("TAILFORGE_PARENT_MODEL"); !parent.empty()) definition["parent"] = parent;
  if (retrain_event) definition["retrain_event"] = *retrain_event;
  Result<ModelRecord> model = register_model(*db, definition);
  if (!model) return report_failure(model.message());
  std::cout << "registered " << model->name << " (parent " << definition.value("parent", std::string("none"))
            << (retrain_event ? ", retrain event " + std::to_string(*retrain_event) : std::string()) << ")\n";
  return 0;
}

}  // namespace tailforge
