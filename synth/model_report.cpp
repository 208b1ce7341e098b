#include "synth/model_report.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "store/corpus.h"
#include "synth/dataset_card.h"
#include "store/api_uses.h"
#include "synth/api_coverage.h"
#include "synth/held_out.h"
#include "synth/kernelopt/version_speed.h"
#include "synth/model_versions.h"
#include "synth/policy.h"
#include "synth/tracks.h"

namespace tailforge {
namespace {

using nlohmann::json;

// The newest version v such that every item of version <= v has an outcome.
int64_t complete_version(const std::vector<EvalItem>& items, const std::vector<EvaluationOutcome>& outcomes) {
  std::set<std::string> evaluated;
  for (const EvaluationOutcome& outcome : outcomes) evaluated.insert(outcome.sample_id);
  int64_t complete = 0;
  for (size_t i = 0; i < items.size();) {
    int64_t version = items[i].version;
    bool all = true;
    for (; i < items.size() && items[i].version == version; ++i) all = all && evaluated.count(items[i].sample_id);
    if (!all) break;
    complete = version;
  }
  return complete;
}

// The item ids of a tail, among items up to `version`.
Result<std::set<std::string>> tail_items(Database& db, const std::string& track, const TailAccuracy& tail,
                                         const ModelScore* parent, int64_t version,
                                         const std::vector<EvalItem>& items) {
  std::set<std::string> ids;
  if (tail.dimension == "category") {
    if (!parent) return ids;
    Result<std::set<std::string>> failed = items_failed_with(db, parent->model.id, tail.name);
    if (!failed) return failed.error();
    ids = std::move(*failed);
  } else {
    Result<std::set<std::string>> with = eval_items_with(db, track, tail.dimension, tail.name);
    if (!with) return with.error();
    ids = std::move(*with);
  }
  std::set<std::string> within;
  for (const EvalItem& item : items) {
    if (item.version <= version && ids.count(item.sample_id)) within.insert(item.sample_id);
  }
  return within;
}

int64_t ok_among(const ModelScore& score, const std::set<std::string>& ids) {
  int64_t ok = 0;
  for (const EvaluationOutcome& outcome : score.outcomes) ok += outcome.ok && ids.count(outcome.sample_id);
  return ok;
}

// The tails listed by the conditions of a retrain event's reason.
std::vector<TailAccuracy> tails_of_reason(const std::string& reason_text) {
  std::vector<TailAccuracy> tails;
  json reason = json::parse(reason_text, nullptr, false);
  if (!reason.is_object() || !reason.contains("conditions") || !reason["conditions"].is_array()) return tails;
  for (const json& condition : reason["conditions"]) {
    if (!condition.is_object() || !condition.contains("tails") || !condition["tails"].is_array()) continue;
    for (const json& tail : condition["tails"]) {
      if (!tail.is_object()) continue;
      tails.push_back({tail.value("dimension", ""), tail.value("name", ""), tail.value("signal", ""), 0, 0, 0});
    }
  }
  return tails;
}

}  // namespace

int64_t ModelScore::items_at(int64_t version) const {
  return std::count_if(outcomes.begin(), outcomes.end(), [version](const EvaluationOutcome& o) { return o.version <= version; });
}

int64_t ModelScore::ok_at(int64_t version) const {
  return std::count_if(outcomes.begin(), outcomes.end(),
                       [version](const EvaluationOutcome& o) { return o.version <= version && o.ok; });
}

double accuracy(int64_t ok, int64_t items) { return items > 0 ? static_cast<double>(ok) / static_cast<double>(items) : 0.0; }

Result<TrackScores> track_scores(Database& db, const std::string& track) {
  TrackScores scores;
  scores.track = track;
  Result<std::vector<EvalItem>> items = list_eval_items(db, track);
  Result<std::vector<ModelRecord>> models = list_models(db, track);
  if (!items || !models) return make_error("model scores: " + (!items ? items.message() : models.message()));
  scores.eval_items = static_cast<int64_t>(items->size());
  scores.eval_version = items->empty() ? 0 : items->back().version;
  for (ModelRecord& model : *models) {
    Result<std::vector<EvaluationOutcome>> outcomes = evaluation_outcomes(db, model.id);
    if (!outcomes) return outcomes.error();
    ModelScore score{std::move(model), std::move(*outcomes), 0};
    score.complete_version = complete_version(*items, score.outcomes);
    scores.models.push_back(std::move(score));
  }
  return scores;
}

// The item figures the retrain events of `track` recorded with their snapshots, by the set's version.
Result<std::vector<ItemLeakage>> item_leakage_by_version(Database& db, const std::string& track, double* threshold) {
  Result<std::vector<RetrainEventRecord>> events = list_retrain_events(db, 1000000);
  if (!events) return events.error();
  std::map<int64_t, ItemLeakage> by_version;
  for (const RetrainEventRecord& event : *events) {
    json reason = json::parse(event.reason, nullptr, false);
    if (!reason.is_object() || reason.value("track", "") != track || !reason.contains("snapshot")) continue;
    const json& snapshot = reason["snapshot"];
    if (!snapshot.is_object() || !snapshot.contains("evaluation_items_with_near_duplicate")) continue;
    int64_t version = snapshot.value("evaluation_set_version", int64_t{0});
    ItemLeakage& leakage = by_version[version];
    leakage.version = version;
    ++leakage.snapshots;
    const json& largest = snapshot["largest_evaluation_item_similarity"];
    if (largest.is_number()) {
      leakage.largest_similarity = std::max(leakage.largest_similarity.value_or(0.0), largest.get<double>());
    }
    leakage.items_with_near_duplicate =
        std::max(leakage.items_with_near_duplicate, snapshot.value("evaluation_items_with_near_duplicate", int64_t{0}));
    if (reason.contains("near_duplicate_threshold") && reason["near_duplicate_threshold"].is_number()) {
      *threshold = reason["near_duplicate_threshold"].get<double>();
    }
  }
  std::vector<ItemLeakage> list;
  for (auto& [version, leakage] : by_version) list.push_back(leakage);
  return list;
}

Result<ModelsReport> models_report(Database& db, const std::string& track) {
  Result<TrackScores> scores = track_scores(db, track);
  Result<std::vector<EvalItem>> items = list_eval_items(db, track);
  if (!scores || !items) return make_error("models: " + (!scores ? scores.message() : items.message()));
  ModelsReport report{track, scores->eval_version, scores->eval_items, 0, {}, 0.8, {}, 0};
  Result<std::vector<RetiredItem>> retired = retired_eval_items(db, track);
  if (!retired) return make_error("models: " + retired.message());
  report.retired_items = static_cast<int64_t>(retired->size());
  for (const EvalItem& item : *items) {
    if (item.held_out) ++report.held_out_groups[*item.held_out];
  }
  if (!report.held_out_groups.empty()) {
    Result<std::map<std::string, int64_t>> trained = trained_samples_by_template(db, track);
    if (!trained) return make_error("models: " + trained.message());
    for (const auto& [group, count] : report.held_out_groups) {
      std::optional<std::string> reserved = held_out_template(group);
      if (!reserved) continue;
      auto found = trained->find(*reserved);
      report.held_out_trained[*reserved] = found == trained->end() ? 0 : found->second;
    }
  }
  Result<std::vector<ItemLeakage>> leakage = item_leakage_by_version(db, track, &report.near_duplicate_threshold);
  if (!leakage) return make_error("models: " + leakage.message());
  report.leakage = std::move(*leakage);
  Result<std::map<std::string, std::set<std::string>>> item_families = eval_item_api_families(db, track);
  if (!item_families) return make_error("models: " + item_families.message());
  for (const ModelScore& score : scores->models) {
    ModelSummary summary;
    summary.model = score.model;
    summary.version = score.complete_version;
    summary.items = score.items_at(score.complete_version);
    summary.ok = score.ok_at(score.complete_version);
    summary.evaluated = static_cast<int64_t>(score.outcomes.size());
    for (const EvaluationOutcome& outcome : score.outcomes) {
      ++summary.checked[outcome.checked];
      if (outcome.version > score.complete_version) continue;
      (outcome.held_out ? summary.held_out_items : summary.drawn_items) += 1;
      (outcome.held_out ? summary.held_out_ok : summary.drawn_ok) += outcome.ok;
      if (auto families = item_families->find(outcome.sample_id); families != item_families->end()) {
        for (const std::string& family : families->second) {
          summary.families[family].first += 1;
          summary.families[family].second += outcome.ok;
        }
      }
    }
    Result<std::optional<ModelPause>> paused = find_model_pause(db, score.model.id);
    if (!paused) return make_error("models: " + paused.message());
    summary.paused = *paused;
    const ModelScore* parent = nullptr;
    for (const ModelScore& candidate : scores->models) {
      if (score.model.parent_id && candidate.model.id == *score.model.parent_id) parent = &candidate;
    }
    if (parent) summary.parent = parent->model.name;
    if (score.model.retrain_event_id) {
      Result<std::optional<RetrainEventRecord>> event = find_retrain_event(db, *score.model.retrain_event_id);
      if (!event) return event.error();
      if (*event) {
        summary.retrain_event_id = (*event)->id;
        summary.snapshot_hash = (*event)->snapshot_hash;
        json reason = json::parse((*event)->reason, nullptr, false);
        if (reason.is_object() && reason.contains("snapshot") && reason["snapshot"].is_object()) {
          summary.snapshot_train_samples = reason["snapshot"].value("train_samples", int64_t{0});
        }
        summary.tails = tails_of_reason((*event)->reason);
      }
    }
    if (parent) {
      int64_t version = std::min(parent->complete_version, score.complete_version);
      if (version > 0) {
        summary.compared_version = version;
        summary.compared_items = score.items_at(version);
        summary.compared_ok = score.ok_at(version);
        summary.parent_ok = parent->ok_at(version);
        for (TailAccuracy& tail : summary.tails) {
          Result<std::set<std::string>> ids = tail_items(db, track, tail, parent, version, *items);
          if (!ids) return ids.error();
          tail.items = static_cast<int64_t>(ids->size());
          tail.parent_ok = ok_among(*parent, *ids);
          tail.ok = ok_among(score, *ids);
        }
      }
    }
    report.models.push_back(std::move(summary));
  }
  const Track* named = find_track(track);
  if (named && named->exported == Track::Exported::curated_kernels) {
    Result<std::map<std::string, KernelFigures>> speed = kernel_figures_by_version(db);
    if (!speed) return speed.error();
    for (ModelSummary& summary : report.models) {
      auto found = speed->find(summary.model.name);
      if (found != speed->end()) summary.kernels = found->second;
    }
  }
  return report;
}

Status mark_superseded(Database& db, ModelsReport& report, int64_t keep_versions) {
  Result<std::vector<ModelRecord>> models = list_models(db);
  if (!models) return models.error();
  const std::set<int64_t> superseded = superseded_versions(*models, keep_versions);
  for (ModelSummary& summary : report.models) summary.superseded = superseded.count(summary.model.id) > 0;
  report.keep_versions = keep_versions;
  return {};
}

Status mark_model_under_test(Database& db, ModelsReport& report, const std::optional<std::string>& configured) {
  Result<UnderTest> tested = model_under_test(db, configured, report.track);
  if (!tested) return tested.error();
  report.under_test = *tested;
  return {};
}

json models_report_to_json(const ModelsReport& report) {
  json models = json::array();
  for (const ModelSummary& m : report.models) {
    json item = {{"name", m.model.name},
                 {"kind", m.model.kind},
                 {"track", m.model.track},
                 {"active", m.model.active},
                 {"parent", m.parent ? json(*m.parent) : json()},
                 {"created_ms", m.model.created_ms},
                 {"retrain_event", m.retrain_event_id ? json(*m.retrain_event_id) : json()},
                 {"snapshot", {{"hash", m.snapshot_hash}, {"train_samples", m.snapshot_train_samples}}},
                 {"evaluation", {{"version", m.version},
                                 {"items", m.items},
                                 {"ok", m.ok},
                                 {"accuracy", m.items ? json(accuracy(m.ok, m.items)) : json()},
                                 {"evaluated", m.evaluated},
                                 {"checked", m.checked},
                                 {"drawn", {{"items", m.drawn_items}, {"ok", m.drawn_ok},
                                            {"accuracy", m.drawn_items ? json(accuracy(m.drawn_ok, m.drawn_items)) : json()}}},
                                 {"held_out", {{"items", m.held_out_items}, {"ok", m.held_out_ok},
                                               {"accuracy", m.held_out_items ? json(accuracy(m.held_out_ok, m.held_out_items))
                                                                             : json()}}}}}};
    if (m.superseded) item["superseded"] = *m.superseded;
    if (m.paused) {
      item["paused"] = {{"category", m.paused->category}, {"message", m.paused->message}, {"since_ms", m.paused->since_ms},
                        {"resume_ms", m.paused->resume_ms}, {"faults", m.paused->faults}};
    }
    if (m.compared_version) {
      item["parent_comparison"] = {{"version", *m.compared_version},
                                   {"items", m.compared_items},
                                   {"parent_ok", m.parent_ok},
                                   {"ok", m.compared_ok},
                                   {"parent_accuracy", accuracy(m.parent_ok, m.compared_items)},
                                   {"accuracy", accuracy(m.compared_ok, m.compared_items)},
                                   {"delta", accuracy(m.compared_ok, m.compared_items) -
                                                 accuracy(m.parent_ok, m.compared_items)}};
    } else {
      item["parent_comparison"] = nullptr;
    }
    json tails = json::array();
    for (const TailAccuracy& t : m.tails) {
      json tail = {{"dimension", t.dimension}, {"name", t.name}, {"signal", t.signal}, {"items", t.items},
                   {"parent_ok", t.parent_ok}, {"ok", t.ok}};
      tail["parent_accuracy"] = t.items ? json(accuracy(t.parent_ok, t.items)) : json();
      tail["accuracy"] = t.items ? json(accuracy(t.ok, t.items)) : json();
      tails.push_back(tail);
    }
    item["retrained_for"] = tails;
    json families = json::object();
    for (const auto& [family, counts] : m.families) {
      families[family] = {{"items", counts.first}, {"ok", counts.second},
                          {"accuracy", accuracy(counts.second, counts.first)}};
    }
    item["api_families"] = families;
    if (m.kernels) item["kernels"] = kernel_figures_json(*m.kernels);
    models.push_back(item);
  }
  json leakage = json::array();
  for (const ItemLeakage& l : report.leakage) {
    leakage.push_back({{"version", l.version}, {"snapshots", l.snapshots},
                       {"largest_similarity", l.largest_similarity ? json(*l.largest_similarity) : json()},
                       {"items_with_near_duplicate", l.items_with_near_duplicate}});
  }
  json out = {{"track", report.track},
              {"evaluation_set", {{"version", report.eval_version}, {"items", report.eval_items},
                                  {"retired", report.retired_items},
                                  {"near_duplicate_threshold", report.near_duplicate_threshold},
                                  {"training_row_similarity", leakage},
                                  {"held_out", {{"groups", report.held_out_groups},
                                                {"trained_samples_of_reserved_templates", report.held_out_trained}}}}},
              {"models", models}};
  if (report.under_test) {
    out["model_under_test"] = {{"name", report.under_test->model ? json(report.under_test->model->name) : json()},
                               {"why", report.under_test->why}};
  }
  return out;
}

// Accuracy per CUDA API family of the newest versions, a column each: where a model fails
// shows by family, not only in its total.
std::string format_family_accuracy(const ModelsReport& report) {
  constexpr size_t kColumns = 4;
  std::vector<const ModelSummary*> shown;
  for (const ModelSummary& m : report.models) {
    if (!m.families.empty()) shown.push_back(&m);
  }
  if (shown.empty()) return "";
  if (shown.size() > kColumns) shown.erase(shown.begin(), shown.end() - kColumns);
  std::set<std::string> families;
  for (const ModelSummary* m : shown) {
    for (const auto& [family, counts] : m->families) families.insert(family);
  }
  std::ostringstream out;
  out << "  accuracy per CUDA API family (right/items at each version's complete set; an item counts for every "
         "family its code uses):\n";
  out << "    " << std::left << std::setw(30) << "family";
  for (const ModelSummary* m : shown) out << std::right << std::setw(22) << m->model.name.substr(0, 21);
  out << "\n";
  for (const std::string& family : families) {
    out << "    " << std::left << std::setw(30) << family;
    for (const ModelSummary* m : shown) {
      auto found = m->families.find(family);
      std::string cell = "-";
      if (found != m->families.end()) {
        cell = fixed_decimals(accuracy(found->second.second, found->second.first), 3) + " (" +
               std::to_string(found->second.second) + "/" + std::to_string(found->second.first) + ")";
      }
      out << std::right << std::setw(22) << cell;
    }
    out << "\n";
  }
  return out.str();
}

std::string format_models_table(const ModelsReport& report) {
  std::ostringstream out;
  out << "models of " << report.track << ", evaluation set v" << report.eval_version << " (" << report.eval_items
      << " items" << (report.retired_items ? ", " + std::to_string(report.retired_items) + " retired" : std::string())
      << "); accuracy = share of items whose answer passed every check that could run here\n";
  if (report.retired_items) {
    out << "  retired items are near-duplicates of trained samples (exact rule): their results are kept, not "
           "counted; tailforge rejudge lists them\n";
  }
  if (!report.leakage.empty()) {
    out << "  training rows near evaluation items (exact, on each written snapshot; near-duplicate at "
        << fixed_decimals(report.near_duplicate_threshold, 2) << "):";
    for (const ItemLeakage& l : report.leakage) {
      out << " v" << l.version << " largest "
          << (l.largest_similarity ? fixed_decimals(*l.largest_similarity, 3) : std::string("below 0.5")) << ", "
          << l.items_with_near_duplicate << " items at or above (" << l.snapshots
          << (l.snapshots == 1 ? " snapshot)" : " snapshots)") << ";";
    }
    out << "\n";
  }
  if (!report.held_out_groups.empty()) {
    out << "  held out for evaluation (eval.held_out_templates, eval.held_out_trees, eval.held_out_families; never exported for training):";
    for (const auto& [group, count] : report.held_out_groups) out << " " << group << " " << count << " items;";
    int64_t trained = 0;
    for (const auto& [name, count] : report.held_out_trained) trained += count;
    if (trained > 0) {
      out << " but " << trained << " samples of reserved templates were trained on before they were reserved";
    }
    out << "\n";
  }
  if (report.models.empty()) {
    out << "  no models yet: tailforge model add --name N --kind openai|command|builtin ...\n";
    return out.str();
  }
  auto shown_name = [](const ModelSummary& m) {
    return m.model.name + (!m.model.active ? " (retired)" : m.superseded.value_or(false) ? " (superseded)" : "");
  };
  int name_width = 18;  // wider when a name with its note needs it
  for (const ModelSummary& m : report.models) name_width = std::max(name_width, static_cast<int>(shown_name(m).size()) + 1);
  out << std::left << "  " << std::setw(name_width) << "model" << std::setw(9) << "kind" << std::setw(18) << "parent"
      << std::setw(10) << "snapshot" << std::right << std::setw(8) << "train" << std::setw(14) << "accuracy"
      << std::setw(22) << "vs parent" << "\n";
  auto fixed = [](double value) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(3) << value;
    return s.str();
  };
  bool any_superseded = false;
  for (const ModelSummary& m : report.models) {
    std::string name = shown_name(m);
    std::string acc = m.items ? fixed(accuracy(m.ok, m.items)) + " v" + std::to_string(m.version) : "-";
    std::string versus = "-";
    if (m.compared_version) {
      double delta = accuracy(m.compared_ok, m.compared_items) - accuracy(m.parent_ok, m.compared_items);
      versus = fixed(accuracy(m.parent_ok, m.compared_items)) + "->" + fixed(accuracy(m.compared_ok, m.compared_items)) +
               " (" + (delta >= 0 ? "+" : "") + fixed(delta) + ")";
    }
    out << "  " << std::left << std::setw(name_width) << name << std::setw(9) << m.model.kind << std::setw(18)
        << m.parent.value_or("-") << std::setw(10) << (m.snapshot_hash.empty() ? "-" : m.snapshot_hash.substr(0, 8))
        << std::right << std::setw(8) << (m.snapshot_train_samples ? std::to_string(m.snapshot_train_samples) : "-")
        << std::setw(14) << acc << std::setw(22) << versus << "\n";
    if (m.superseded.value_or(false)) any_superseded = true;
    if (m.kernels) out << "      kernels: " << describe_kernel_figures(*m.kernels) << "\n";
    if (m.held_out_items > 0) {
      out << "      drawn items " << m.drawn_ok << "/" << m.drawn_items << " ("
          << (m.drawn_items ? fixed(accuracy(m.drawn_ok, m.drawn_items)) : std::string("-"))
          << "), held-out templates and trees " << m.held_out_ok << "/" << m.held_out_items << " ("
          << fixed(accuracy(m.held_out_ok, m.held_out_items)) << ")\n";
    }
    for (const TailAccuracy& t : m.tails) {
      out << "      retrained for " << t.dimension << "/" << t.name << " (" << t.signal << "): ";
      if (!m.compared_version) {
        out << "not compared yet\n";
      } else if (t.items == 0) {
        out << "no evaluation item of this tail up to v" << *m.compared_version << "\n";
      } else {
        out << t.parent_ok << "/" << t.items << " -> " << t.ok << "/" << t.items << " items ("
            << fixed(accuracy(t.parent_ok, t.items)) << " -> " << fixed(accuracy(t.ok, t.items)) << ")\n";
      }
    }
  }
  out << format_family_accuracy(report);
  if (any_superseded) {
    out << "  superseded: older than the newest " << report.keep_versions
        << " versions of its lineage (eval.keep_versions); its results stay, the daemon queues it no new evaluations\n";
  }
  for (const ModelSummary& m : report.models) {
    if (!m.paused) continue;
    out << "  evaluation paused: " << m.model.name << ": " << m.paused->category << " x" << m.paused->faults
        << " (an endpoint fault: nothing judged): " << m.paused->message.substr(0, 240) << "\n";
  }
  if (report.under_test) {
    out << "  under test: " << (report.under_test->model ? report.under_test->model->name : std::string("none")) << " ("
        << report.under_test->why << ")\n";
  }
  return out.str();
}

Result<ModelsListing> models_listing_from_config(const json& config, const std::string& source_dir) {
  ModelsListing listing;
  if (config.contains("synth") && config["synth"].is_object()) {
    Result<SynthPolicy> synth = synth_policy_from_config(config["synth"], source_dir);
    if (!synth) return synth.error();
    listing.configured_track = synth->track;
    listing.configured_model = synth->model_under_test;
    listing.api = synth->api;
  }
  if (config.contains("eval") && config["eval"].is_object()) {
    json keep = config["eval"].value("keep_versions", json(listing.keep_versions));
    if (!keep.is_number_integer()) return make_error("eval.keep_versions must be a whole number");
    listing.keep_versions = keep.get<int64_t>();
  }
  return listing;
}

Result<std::vector<ModelsReport>> list_models_reports(Database& db, const ModelsListing& listing) {
  if (listing.api.enabled) {  // the items' API families are read from their counted names
    Result<const ApiTable*> table = api_table_of(listing.api);
    if (!table) return make_error("models: " + table.message());
    if (Result<int64_t> counted = count_sample_api(db, **table); !counted) return make_error("models: " + counted.message());
  }
  std::vector<std::string> tracks;
  if (listing.track) {
    tracks.push_back(*listing.track);
  } else {
    Result<std::vector<ModelRecord>> models = list_models(db);
    if (!models) return models.error();
    std::set<std::string> others;
    for (const ModelRecord& model : *models) {
      if (model.track != listing.configured_track) others.insert(model.track);
    }
    tracks.push_back(listing.configured_track);
    tracks.insert(tracks.end(), others.begin(), others.end());
  }
  std::vector<ModelsReport> reports;
  for (const std::string& track : tracks) {
    Result<ModelsReport> report = models_report(db, track);
    if (!report) return report.error();
    if (Status s = mark_superseded(db, *report, listing.keep_versions); !s) return s.error();
    if (Status s = mark_model_under_test(db, *report, listing.configured_model); !s) return s.error();
    reports.push_back(std::move(*report));
  }
  return reports;
}

json models_listing_to_json(const std::vector<ModelsReport>& reports, bool one_track) {
  if (one_track && reports.size() == 1) return models_report_to_json(reports.front());
  json tracks = json::array();
  for (const ModelsReport& report : reports) tracks.push_back(models_report_to_json(report));
  return {{"tracks", tracks}};
}

std::string format_models_listing(const std::vector<ModelsReport>& reports) {
  std::string out;
  for (const ModelsReport& report : reports) out += (out.empty() ? "" : "\n") + format_models_table(report);
  return out;
}

}  // namespace tailforge
