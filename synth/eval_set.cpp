#include "synth/eval_set.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "base/sha256.h"
#include "policies/config_section.h"
#include "store/api_uses.h"
#include "store/evaluations.h"
#include "store/samples.h"
#include "synth/api_coverage.h"
#include "synth/dataset_card.h"
#include "synth/minhash.h"
#include "synth/tracks.h"

namespace tailforge {

using nlohmann::json;

// The "eval" section's keys are EvalPolicy's fields (policies/config_section.h), the held-out
// split's apart.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EvalPolicy, enabled, fraction, max_items, command_timeout_seconds,
                                                keep_versions, endpoint_pause_seconds, min_items_per_family,
                                                min_items_per_tree, kernelopt_speedup_target)

Result<EvalPolicy> eval_policy_from_json(const json& section) {
  EvalPolicy policy;
  if (!section.is_object()) return make_error("eval: the section must be an object");
  const SectionRules rules{.other_keys = {"held_out_templates", "held_out_trees", "held_out_families"}};
  if (Status s = read_config_section(section, "eval", policy, rules); !s) return s.error();
  Result<HeldOutSplit> held_out = held_out_split_from_json(section);
  if (!held_out) return held_out.error();
  policy.held_out = std::move(*held_out);
  if (policy.fraction < 0 || policy.fraction > 1) return make_error("eval.fraction must be between 0 and 1");
  if (policy.max_items < 0) return make_error("eval.max_items must not be negative");
  if (policy.endpoint_pause_seconds < 0) return make_error("eval.endpoint_pause_seconds must not be negative");
  if (policy.command_timeout_seconds <= 0) return make_error("eval.command_timeout_seconds must be positive");
  if (policy.keep_versions < 0) return make_error("eval.keep_versions must not be negative (0 evaluates every version)");
  if (policy.min_items_per_family < 0 || policy.min_items_per_tree < 0) {
    return make_error("eval.min_items_per_family and eval.min_items_per_tree must not be negative");
  }
  return policy;
}

namespace {

// A sample's place in [0, 1) under the evaluation hash.
double evaluation_draw(const std::string& sample_id) {
  return static_cast<double>(std::stoull(sha256_hex("eval:" + sample_id).substr(0, 13), nullptr, 16)) /
         static_cast<double>(1ull << 52);
}

// What a sample counts toward: its API families ("family:<name>") and imported tree ("tree:<name>").
Result<std::set<std::string>> spanning_groups(Database& db, const EvalPolicy& eval, bool count_families,
                                              const std::string& sample_id) {
  std::set<std::string> groups;
  if (count_families && eval.min_items_per_family > 0) {
    Result<std::set<std::string>> families = sample_api_families(db, sample_id);
    if (!families) return families.error();
    for (const std::string& family : *families) groups.insert("family:" + family);
  }
  if (eval.min_items_per_tree > 0) {
    Result<std::optional<std::string>> tree = sample_tree(db, sample_id);
    if (!tree) return tree.error();
    if (*tree) groups.insert("tree:" + **tree);
  }
  return groups;
}

int64_t minimum_of(const EvalPolicy& eval, const std::string& group) {
  return group.rfind("family:", 0) == 0 ? eval.min_items_per_family : eval.min_items_per_tree;
}

// Candidates, best draw first, taken while one of their families or trees is short of its
// minimum among the active items and the candidates chosen before, and while the group keeps at
// least as many of its candidates for training as it gave to the set: a small store is not
// emptied into the evaluation set.
Result<std::vector<std::string>> spanning_choice(Database& db, const EvalPolicy& eval, bool count_families,
                                                 const std::string& track, const std::vector<std::string>& candidates,
                                                 const std::vector<std::string>& chosen) {
  std::vector<std::string> picked;
  if (eval.min_items_per_family <= 0 && eval.min_items_per_tree <= 0) return picked;
  std::map<std::string, int64_t> have;
  Result<std::vector<EvalItem>> items = list_eval_items(db, track);
  if (!items) return items.error();
  std::vector<std::string> counted;
  for (const EvalItem& item : *items) counted.push_back(item.sample_id);
  counted.insert(counted.end(), chosen.begin(), chosen.end());
  for (const std::string& id : counted) {
    Result<std::set<std::string>> groups = spanning_groups(db, eval, count_families, id);
    if (!groups) return groups.error();
    for (const std::string& group : *groups) ++have[group];
  }
  std::set<std::string> taken(chosen.begin(), chosen.end());
  std::vector<std::tuple<double, std::string, std::set<std::string>>> order;
  std::map<std::string, int64_t> candidates_of, given;  // per group: candidates, and those the set took
  for (const std::string& id : candidates) {
    Result<std::set<std::string>> groups = spanning_groups(db, eval, count_families, id);
    if (!groups) return groups.error();
    for (const std::string& group : *groups) {
      ++candidates_of[group];
      given[group] += taken.count(id);
    }
    if (!taken.count(id)) order.emplace_back(evaluation_draw(id), id, std::move(*groups));
  }
  std::sort(order.begin(), order.end());
  for (const auto& [draw, id, groups] : order) {
    bool short_of = std::any_of(groups.begin(), groups.end(), [&](const std::string& group) {
      return have[group] < minimum_of(eval, group) && 2 * (given[group] + 1) <= candidates_of[group];
    });
    if (!short_of) continue;
    picked.push_back(id);
    for (const std::string& group : groups) {
      ++have[group];
      ++given[group];
    }
  }
  return picked;
}

// The samples a training export held, indexed for near-duplicates, with their ids by index.
struct TrainedIndex {
  NearDuplicateIndex index;
  std::vector<std::string> ids;
};

Result<TrainedIndex> trained_index(Database& db, const SynthPolicy& synth, const std::string& track) {
  TrainedIndex trained{NearDuplicateIndex(synth.dedup), {}};
  if (Status s = for_each_trained_sample_text(db, track, [&](const std::string& id, const std::string& text) {
        trained.index.add(text);
        trained.ids.push_back(id);
      });
      !s) {
    return make_error("evaluation set: reading trained samples: " + s.message());
  }
  return trained;
}

Result<EvalSetRejudge> rejudge_with(Database& db, const TrainedIndex& trained, const SynthPolicy& synth,
                                    const std::string& track) {
  EvalSetRejudge judged;
  Result<std::vector<EvalItem>> items = list_eval_items(db, track);
  Result<std::vector<RetiredItem>> retired = retired_eval_items(db, track);
  if (!items || !retired) return make_error("evaluation set: " + (!items ? items.message() : retired.message()));
  judged.judged = static_cast<int64_t>(items->size());
  judged.retired_before = static_cast<int64_t>(retired->size());
  std::vector<std::pair<std::string, std::string>> to_retire;  // sample id, reason
  for (const EvalItem& item : *items) {
    Result<std::optional<Sample>> sample = find_sample(db, item.sample_id);
    if (!sample) return sample.error();
    if (!*sample) continue;
    std::vector<uint64_t> shingles = shingle_hashes((*sample)->text, synth.dedup);
    std::vector<size_t> near = trained.index.near_duplicates(shingles);
    if (near.empty()) continue;
    double similarity = shingle_set_jaccard(shingles, trained.index.shingles_at(near.front()));
    to_retire.emplace_back(item.sample_id, "near-duplicate of trained sample " + trained.ids[near.front()].substr(0, 12) +
                                               " (exact Jaccard " + fixed_decimals(similarity, 3) + ", threshold " +
                                               fixed_decimals(synth.dedup.threshold, 2) + ")");
  }
  if (to_retire.empty()) return judged;
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  for (const auto& [id, reason] : to_retire) {
    Result<bool> retired_now = retire_eval_item(db, track, id, reason);
    if (!retired_now) return retired_now.error();
    judged.retired += *retired_now;
  }
  if (Status s = transaction.commit(); !s) return s.error();
  return judged;
}

}  // namespace

bool selected_for_evaluation(const std::string& sample_id, double fraction) {
  return evaluation_draw(sample_id) < fraction;
}

Result<EvalSetRejudge> rejudge_eval_set(Database& db, const SynthPolicy& synth, const std::string& track) {
  Result<TrainedIndex> trained = trained_index(db, synth, track);
  if (!trained) return trained.error();
  return rejudge_with(db, *trained, synth, track);
}

Result<EvalSetRefresh> refresh_eval_set(Database& db, const EvalPolicy& eval, const SynthPolicy& synth,
                                        const std::string& track) {
  EvalSetRefresh refresh;
  Result<TrainedIndex> trained = trained_index(db, synth, track);
  if (!trained) return trained.error();
  Result<EvalSetRejudge> rejudged = rejudge_with(db, *trained, synth, track);
  if (!rejudged) return rejudged.error();
  refresh.retired = rejudged->retired;
  Result<int64_t> version = eval_set_version(db, track);
  Result<int64_t> size = eval_set_size(db, track);
  Result<std::vector<std::string>> candidates = eval_candidate_ids(db, track);
  if (!version || !size || !candidates) {
    return make_error("evaluation set: " + (!version ? version.message() : !size ? size.message() : candidates.message()));
  }
  refresh.version = *version;
  refresh.size = *size;
  // The API families of the candidates are read from their counted names: count the newest first.
  bool count_families = synth.api.enabled;
  if (count_families && (eval.min_items_per_family > 0 || !eval.held_out.families.empty())) {
    Result<const ApiTable*> table = api_table_of(synth.api);
    if (!table) return make_error("evaluation set: " + table.message());
    if (Result<int64_t> counted = count_sample_api(db, **table); !counted) {
      return make_error("evaluation set: " + counted.message());
    }
  }
  std::vector<std::string> chosen;
  std::map<std::string, std::string> groups;  // chosen id -> its reserved template or tree
  std::vector<std::string> drawn;             // chosen by the hash alone
  for (const std::string& id : *candidates) {
    if (!eval.held_out.empty()) {
      Result<std::optional<std::string>> template_id = sample_template_id(db, id);
      if (!template_id) return template_id.error();
      Result<std::optional<std::string>> group = held_out_group(db, eval.held_out, id, *template_id);
      if (!group) return make_error("evaluation set: " + group.message());
      if (*group) {
        groups[id] = **group;
        chosen.push_back(id);
        continue;
      }
    }
    if (selected_for_evaluation(id, eval.fraction)) drawn.push_back(id);
  }
  // Reserved groups first, then what the families and trees lack, then the drawn rest, so the
  // set spans the API and the user's trees before eval.max_items is reached.
  std::vector<std::string> reserved_and_drawn = chosen;
  reserved_and_drawn.insert(reserved_and_drawn.end(), drawn.begin(), drawn.end());
  Result<std::vector<std::string>> spanning =
      spanning_choice(db, eval, count_families, track, *candidates, reserved_and_drawn);
  if (!spanning) return make_error("evaluation set: " + spanning.message());
  std::set<std::string> spanning_ids(spanning->begin(), spanning->end());
  chosen.insert(chosen.end(), spanning->begin(), spanning->end());
  chosen.insert(chosen.end(), drawn.begin(), drawn.end());
  if (chosen.empty() || refresh.size >= eval.max_items) return refresh;

  // A pair's target is the item's reference answer; a kernelopt task is its own reference (its
  // answers are measured against it), so that track needs no pair.
  auto pair = synth.export_pairs.find(track);
  const Track* named = find_track(track);
  bool own_reference = named && named->exported == Track::Exported::curated_kernels;
  if (pair == synth.export_pairs.end() && !own_reference) {
    return make_error("evaluation set: track '" + track + "' has no pair in the synth policy's export.pairs");
  }
  std::vector<EvalItem> items;
  for (const std::string& id : chosen) {
    if (refresh.size + static_cast<int64_t>(items.size()) >= eval.max_items) break;
    Result<std::optional<Sample>> sample = find_sample(db, id);
    if (!sample) return sample.error();
    if (!*sample) continue;
    if (trained->index.find_near_duplicate((*sample)->text)) {
      ++refresh.near_duplicates;
      continue;
    }
    EvalItem item{track, id, refresh.version + 1, std::nullopt, std::nullopt, 0, std::nullopt};
    if (auto group = groups.find(id); group != groups.end()) item.held_out = group->second;
    if (!own_reference && pair->second.target_kind != "text") {
      Result<std::optional<std::string>> target = sample_artifact_id(db, id, "", pair->second.target_kind);
      if (!target) return target.error();
      if (!*target) continue;  // verified without a reference answer: nothing to compare with
      item.reference_target_id = *target;
    }
    Result<std::optional<std::string>> stdout_id = sample_artifact_id(db, id, "nvidia.run", "stdout");
    if (!stdout_id) return stdout_id.error();
    item.reference_stdout_id = *stdout_id;
    items.push_back(std::move(item));
  }
  if (items.empty()) return refresh;
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  if (Status s = add_eval_items(db, items); !s) return s.error();
  if (Status s = transaction.commit(); !s) return s.error();
  refresh.version += 1;
  refresh.added = static_cast<int64_t>(items.size());
  for (const EvalItem& item : items) {
    refresh.held_out_added += item.held_out.has_value();
    refresh.spanning_added += spanning_ids.count(item.sample_id);
  }
  refresh.size += refresh.added;
  return refresh;
}

}  // namespace tailforge
