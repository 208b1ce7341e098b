#include "synth/snapshot_retention.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "store/corpus.h"
#include "store/models.h"
#include "synth/model_versions.h"

namespace tailforge {

namespace fs = std::filesystem;

namespace {

std::string normal_path(const fs::path& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  std::string text = (ec ? path : absolute).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

struct WholeSnapshot {
  std::string path;
  fs::file_time_type time;
};

// Folders holding a manifest.json: those under `root` and those retrain events name, newest first.
std::vector<WholeSnapshot> whole_snapshots(const std::string& root, const std::vector<RetrainEventRecord>& events) {
  std::set<std::string> seen;
  std::vector<WholeSnapshot> found;
  auto consider = [&](const fs::path& dir) {
    std::error_code ec;
    fs::path manifest = dir / "manifest.json";
    if (!fs::is_regular_file(manifest, ec)) return;
    fs::file_time_type time = fs::last_write_time(manifest, ec);
    if (ec || !seen.insert(normal_path(dir)).second) return;
    found.push_back({normal_path(dir), time});
  };
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code kind;
    if (it->is_directory(kind)) consider(it->path());
  }
  for (const RetrainEventRecord& event : events) {
    if (event.snapshot_dir) consider(*event.snapshot_dir);
  }
  std::sort(found.begin(), found.end(), [](const WholeSnapshot& a, const WholeSnapshot& b) {
    return a.time != b.time ? a.time > b.time : a.path > b.path;
  });
  return found;
}

std::string model_text(const ModelRecord& model) { return model.parameters + "\n" + model.endpoint.value_or(""); }

// The folder's top-level entries some of `texts` name (a file's path, or a path inside a folder).
std::vector<fs::path> named_entries(const std::string& folder, const std::vector<std::string>& texts) {
  std::vector<fs::path> named;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::string entry = it->path().string();
    for (const std::string& text : texts) {
      if (text.find(entry) != std::string::npos) {
        named.push_back(it->path());
        break;
      }
    }
  }
  return named;
}

std::string names_of(const std::vector<const ModelRecord*>& models) {
  std::string names;
  for (const ModelRecord* model : models) names += (names.empty() ? "" : ", ") + model->name;
  return names;
}

// Decides one folder older than the newest N; `texts` collects what its naming models name.
void decide(SnapshotFolder& folder, const std::vector<RetrainEventRecord>& events,
            const std::vector<ModelRecord>& models, const std::set<int64_t>& superseded,
            std::vector<std::string>& texts) {
  for (const RetrainEventRecord& event : events) {
    bool open = event.status == "pending" || event.status == "running" || event.status == "interrupted";
    if (open && event.snapshot_dir && normal_path(*event.snapshot_dir) == folder.path) {
      folder.reason = "retrain event " + std::to_string(event.id) + " is " + event.status;
      return;
    }
  }
  std::vector<const ModelRecord*> naming;
  for (const ModelRecord& model : models) {
    if (model_text(model).find(folder.path + "/") == std::string::npos) continue;
    if (model.active && !superseded.count(model.id)) {
      folder.reason = "model " + model.name + " is evaluated and uses it";
      return;
    }
    naming.push_back(&model);
    texts.push_back(model_text(model));
  }
  if (naming.empty()) {
    folder.action = "remove";
    folder.bytes_freed = folder.bytes;
    folder.reason = "older than the newest snapshots kept";
    return;
  }
  folder.action = "thin";
  folder.bytes_freed = folder.bytes;
  for (const fs::path& entry : named_entries(folder.path, texts)) folder.bytes_freed -= folder_bytes(entry.string());
  folder.reason = "only retired or superseded models use it (" + names_of(naming) + "): the files they name stay";
}

Result<SnapshotPlan> make_plan(Database& db, const std::string& root, int64_t keep_snapshots, int64_t keep_versions,
                               std::vector<std::vector<std::string>>* texts_by_folder) {
  Result<std::vector<RetrainEventRecord>> events = list_retrain_events(db, 1 << 30);
  if (!events) return events.error();
  Result<std::vector<ModelRecord>> models = list_models(db);
  if (!models) return models.error();
  const std::set<int64_t> superseded = superseded_versions(*models, keep_versions);
  SnapshotPlan plan;
  plan.root = normal_path(root);
  plan.keep_snapshots = keep_snapshots;
  std::vector<WholeSnapshot> wholes = whole_snapshots(plan.root, *events);
  for (size_t i = 0; i < wholes.size(); ++i) {
    SnapshotFolder folder{wholes[i].path, folder_bytes(wholes[i].path), 0, "keep", ""};
    std::vector<std::string> texts;
    if (keep_snapshots <= 0) {
      folder.reason = "retrain.keep_snapshots is 0: every snapshot stays";
    } else if (static_cast<int64_t>(i) < keep_snapshots) {
      folder.reason = "one of the newest " + std::to_string(keep_snapshots);
    } else {
      decide(folder, *events, *models, superseded, texts);
    }
    plan.folders.push_back(folder);
    if (texts_by_folder) texts_by_folder->push_back(std::move(texts));
  }
  return plan;
}

}  // namespace

int64_t SnapshotPlan::bytes() const {
  int64_t total = 0;
  for (const SnapshotFolder& folder : folders) total += folder.bytes;
  return total;
}

int64_t SnapshotPlan::bytes_to_free() const {
  int64_t total = 0;
  for (const SnapshotFolder& folder : folders) total += folder.bytes_freed;
  return total;
}

int64_t SnapshotPlan::count(const std::string& action) const {
  return std::count_if(folders.begin(), folders.end(), [&](const SnapshotFolder& f) { return f.action == action; });
}

int64_t folder_bytes(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return static_cast<int64_t>(fs::file_size(path, ec));
  int64_t total = 0;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_error;
    if (it->is_regular_file(size_error)) {
      uintmax_t size = it->file_size(size_error);
      if (!size_error) total += static_cast<int64_t>(size);
    }
  }
  return total;
}

Result<SnapshotPlan> plan_snapshot_retention(Database& db, const std::string& root, int64_t keep_snapshots,
                                             int64_t keep_versions) {
  return make_plan(db, root, keep_snapshots, keep_versions, nullptr);
}

Result<SnapshotPlan> prune_snapshots(Database& db, const std::string& root, int64_t keep_snapshots,
                                     int64_t keep_versions) {
  std::vector<std::vector<std::string>> texts;
  Result<SnapshotPlan> plan = make_plan(db, root, keep_snapshots, keep_versions, &texts);
  if (!plan) return plan.error();
  for (size_t i = 0; i < plan->folders.size(); ++i) {
    const SnapshotFolder& folder = plan->folders[i];
    if (folder.action == "keep") continue;
    std::vector<fs::path> kept = named_entries(folder.path, texts[i]);
    std::vector<fs::path> victims;
    std::error_code ec;
    if (folder.action == "remove") {
      victims.push_back(folder.path);
    } else {
      for (fs::directory_iterator it(folder.path, ec), end; !ec && it != end; it.increment(ec)) {
        if (std::find(kept.begin(), kept.end(), it->path()) == kept.end()) victims.push_back(it->path());
      }
    }
    for (const fs::path& victim : victims) {
      fs::remove_all(victim, ec);
      if (ec) return make_error("retrain.keep_snapshots: cannot remove " + victim.string() + ": " + ec.message());
    }
  }
  return plan;
}

}  // namespace tailforge
