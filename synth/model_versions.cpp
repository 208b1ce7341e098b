#include "synth/model_versions.h"

#include <algorithm>
#include <map>

namespace tailforge {

int64_t lineage_root(const std::vector<ModelRecord>& models, const ModelRecord& model) {
  std::map<int64_t, const ModelRecord*> by_id;
  for (const ModelRecord& candidate : models) by_id[candidate.id] = &candidate;
  const ModelRecord* current = &model;
  // At most one step per model: a parent loop (never written by register_model) cannot hang it.
  for (size_t steps = 0; steps < models.size() && current->parent_id; ++steps) {
    auto parent = by_id.find(*current->parent_id);
    if (parent == by_id.end()) break;
    current = parent->second;
  }
  return current->id;
}

std::set<int64_t> superseded_versions(const std::vector<ModelRecord>& models, int64_t keep_versions) {
  std::set<int64_t> superseded;
  if (keep_versions <= 0) return superseded;
  std::map<int64_t, std::vector<const ModelRecord*>> lineages;
  for (const ModelRecord& model : models) lineages[lineage_root(models, model)].push_back(&model);
  for (auto& [root, versions] : lineages) {
    std::sort(versions.begin(), versions.end(), [](const ModelRecord* a, const ModelRecord* b) {
      return a->created_ms != b->created_ms ? a->created_ms > b->created_ms : a->id > b->id;
    });
    for (size_t i = static_cast<size_t>(keep_versions); i < versions.size(); ++i) superseded.insert(versions[i]->id);
  }
  return superseded;
}

}  // namespace tailforge
