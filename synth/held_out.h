// The held-out-by-template split (eval.held_out_templates, eval.held_out_trees,
// eval.held_out_families): whole generator templates, whole imported source trees and whole CUDA
// API families reserved for evaluation. No sample of a reserved
// template or tree is ever exported for training (synth/export.h); each verified one may become an
// evaluation item marked with its group, scored apart from the items eval.fraction draws
// (synth/eval_set.h, `tailforge models`), so a model's score on templates it never saw shows
// generalization where the drawn items, near-duplicate-free as they are, show what it learned of
// the templates it trained on. It reads samples and their bundle manifests; it writes nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"

namespace tailforge {

struct HeldOutSplit {
  std::vector<std::string> templates;  // sample template ids: a generator template, "exebench", "c2x86:<kind>"
  std::vector<std::string> trees;      // imported trees by name (`import --name`, else the folder's name)
  // CUDA API families (policies/api_families.json): a sample whose code uses a name of one is held
  // out, so a model's score there shows whether it translates API it never trained on.
  std::vector<std::string> families;
  bool empty() const { return templates.empty() && trees.empty() && families.empty(); }
};

// Reads the three lists (arrays of non-empty strings) from the "eval" section (held_out_templates,
// held_out_trees, held_out_families); errors name the key.
Result<HeldOutSplit> held_out_split_from_json(const nlohmann::json& eval_section);

// "template:<id>", "tree:<name>" or "family:<name>" when the sample belongs to a reserved group,
// else nothing. A sample's tree is its bundle manifest's, or, for a pair derived from a program
// (PTX, SASS), the program's; its families are those of its counted API names (store/api_uses.h).
Result<std::optional<std::string>> held_out_group(Database& db, const HeldOutSplit& split, const std::string& sample_id,
                                                  const std::optional<std::string>& template_id);

// The imported tree a sample comes from (see held_out_group), if any.
Result<std::optional<std::string>> sample_tree(Database& db, const std::string& sample_id);

// The template id of a "template:<id>" group, else nothing.
std::optional<std::string> held_out_template(const std::string& group);

}  // namespace tailforge
