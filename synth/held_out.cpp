#include "synth/held_out.h"

#include <algorithm>

#include "store/api_uses.h"
#include "store/bundles.h"
#include "store/samples.h"

namespace tailforge {

namespace {

constexpr std::string_view kTemplateGroup = "template:";  // a reserved template's group: "template:<id>"

Result<std::vector<std::string>> names_at(const nlohmann::json& section, const std::string& key) {
  std::vector<std::string> names;
  auto found = section.find(key);
  if (found == section.end()) return names;
  if (!found->is_array()) return make_error("eval." + key + " must be an array of names");
  for (const nlohmann::json& name : *found) {
    if (!name.is_string() || name.get<std::string>().empty()) {
      return make_error("eval." + key + " must hold non-empty strings, not " + name.dump());
    }
    names.push_back(name.get<std::string>());
  }
  return names;
}

bool is_listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Result<std::optional<std::string>> sample_tree(Database& db, const std::string& sample_id) {
  Result<std::optional<BundleProvenance>> own = bundle_provenance(db, sample_id);
  if (!own) return own.error();
  if (*own) return std::optional<std::string>((*own)->tree_name);
  Result<std::vector<std::string>> parents = lineage_parent_ids(db, sample_id, "compiled_to");
  if (!parents) return parents.error();
  for (const std::string& parent : *parents) {
    Result<std::optional<BundleProvenance>> provenance = bundle_provenance(db, parent);
    if (!provenance) return provenance.error();
    if (*provenance) return std::optional<std::string>((*provenance)->tree_name);
  }
  return std::optional<std::string>();
}

Result<HeldOutSplit> held_out_split_from_json(const nlohmann::json& eval_section) {
  HeldOutSplit split;
  if (!eval_section.is_object()) return split;
  Result<std::vector<std::string>> templates = names_at(eval_section, "held_out_templates");
  if (!templates) return templates.error();
  Result<std::vector<std::string>> trees = names_at(eval_section, "held_out_trees");
  if (!trees) return trees.error();
  Result<std::vector<std::string>> families = names_at(eval_section, "held_out_families");
  if (!families) return families.error();
  split.templates = std::move(*templates);
  split.trees = std::move(*trees);
  split.families = std::move(*families);
  return split;
}

std::optional<std::string> held_out_template(const std::string& group) {
  if (!group.starts_with(kTemplateGroup)) return std::nullopt;
  return group.substr(kTemplateGroup.size());
}

Result<std::optional<std::string>> held_out_group(Database& db, const HeldOutSplit& split, const std::string& sample_id,
                                                  const std::optional<std::string>& template_id) {
  if (template_id && is_listed(split.templates, *template_id)) {
    return std::optional<std::string>(std::string(kTemplateGroup) + *template_id);
  }
  if (!split.trees.empty()) {
    Result<std::optional<std::string>> tree = sample_tree(db, sample_id);
    if (!tree) return make_error("held-out split: " + tree.message());
    if (*tree && is_listed(split.trees, **tree)) return std::optional<std::string>("tree:" + **tree);
  }
  if (!split.families.empty()) {
    Result<std::set<std::string>> families = sample_api_families(db, sample_id);
    if (!families) return make_error("held-out split: " + families.message());
    for (const std::string& family : split.families) {
      if (families->count(family)) return std::optional<std::string>("family:" + family);
    }
  }
  return std::optional<std::string>();
}

}  // namespace tailforge
