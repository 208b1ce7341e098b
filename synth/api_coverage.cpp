#include "synth/api_coverage.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "base/files.h"
#include "store/api_uses.h"
#include "store/bundles.h"
#include "store/cycles.h"

namespace tailforge {
namespace {

using nlohmann::json;

constexpr int kCountBatch = 256;

std::vector<SampleApiUse> uses_of(const ApiUses& uses, const ApiTable& table) {
  std::vector<SampleApiUse> out;
  for (const auto& [name, count] : uses) {
    if (const ApiIdentifier* identifier = table.find(name)) out.push_back({name, table.family_name(*identifier), count});
  }
  return out;
}

// The sample's program and, for a bundle, its headers, counted together.
Result<std::vector<SampleApiUse>> count_one_sample(Database& db, const std::string& id, const ApiTable& table) {
  Result<std::optional<Sample>> sample = find_sample(db, id);
  if (!sample) return sample.error();
  if (!*sample) return std::vector<SampleApiUse>{};
  ApiUses uses = count_api_uses((*sample)->text, table);
  Result<std::optional<Bundle>> bundle = read_bundle(db, id);
  if (bundle && *bundle) {  // a bundle whose headers cannot be read counts its program alone
    for (const BundleFile& header : (*bundle)->headers) {
      for (const auto& [name, count] : count_api_uses(header.content, table)) uses[name] += count;
    }
  }
  return uses_of(uses, table);
}

double target_of(const ApiPrior& prior, const ApiPolicy& policy, const PriorName& name) {
  double target = 0;
  if (name.files >= prior.min_files && prior.api_files > 0) {
    target = static_cast<double>(name.files) / static_cast<double>(prior.api_files);
  }
  if (name.header_files >= policy.header_min_files && prior.header_api_files > 0) {
    target = std::max(target, policy.header_weight * static_cast<double>(name.header_files) /
                                  static_cast<double>(prior.header_api_files));
  }
  return std::min(target, 1.0);
}

Result<ApiPrior> shipped_prior(const ApiPolicy& policy) {
  Result<std::string> text = read_text_file(policy.prior_file);
  if (!text) return make_error("API prior: " + text.message());
  json root = json::parse(*text, nullptr, false);
  const std::string& at = policy.prior_file;
  if (!root.is_object() || !root.contains("names") || !root["names"].is_object()) {
    return make_error(at + ": expected an object with \"names\"");
  }
  ApiPrior prior;
  prior.source = at;
  prior.min_files = policy.shipped_min_files;
  try {
    prior.api_files = root.value("api_files", int64_t{0});
    prior.header_api_files = root.value("header_api_files", int64_t{0});
    for (const json& tree : root.value("trees", json::array())) prior.trees.push_back(tree.get<std::string>());
    for (const auto& [name, counts] : root["names"].items()) {
      prior.names[name] = {counts.value("files", int64_t{0}), counts.value("uses", int64_t{0}),
                           counts.value("header_files", int64_t{0})};
    }
  } catch (const json::exception& e) {
    return make_error(at + ": " + e.what());
  }
  return prior;
}

std::string percent(int64_t part, int64_t whole) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << 100.0 * coverage_ratio(part, whole) << "%";
  return out.str();
}

std::string fixed3(double value) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << value;
  return out.str();
}

}  // namespace

double coverage_ratio(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

Result<const ApiTable*> api_table_of(const ApiPolicy& policy) {
  if (!policy.enabled) return make_error("the synth policy has no api section: this track's samples are not CUDA");
  return load_api_table(policy.rules_file, policy.families_file);
}

Result<int64_t> count_sample_api(Database& db, const ApiTable& table) {
  Result<std::optional<ApiIndexMark>> mark = api_index_mark(db);
  if (!mark) return make_error("counting API names: " + mark.message());
  int64_t last = 0;
  if (!*mark || (*mark)->table_key != table.key()) {
    if (Status s = restart_api_index(db, table.key()); !s) return make_error("counting API names: " + s.message());
  } else {
    last = (*mark)->last_rowid;
  }
  int64_t counted = 0;
  while (true) {
    Result<std::vector<SampleToCount>> batch = samples_to_count(db, last, kCountBatch);
    if (!batch) return make_error("counting API names: " + batch.message());
    if (batch->empty()) return counted;
    std::vector<std::vector<SampleApiUse>> rows;
    for (const SampleToCount& sample : *batch) {
      Result<std::vector<SampleApiUse>> uses = count_one_sample(db, sample.id, table);
      if (!uses) return make_error("counting API names of " + sample.id + ": " + uses.message());
      rows.push_back(std::move(*uses));
    }
    Transaction transaction(db);
    if (!transaction.begin_status()) return transaction.begin_status().error();
    for (size_t i = 0; i < batch->size(); ++i) {
      if (Status s = store_sample_api(db, (*batch)[i].id, rows[i], (*batch)[i].rowid); !s) return s.error();
    }
    if (Status s = transaction.commit(); !s) return s.error();
    counted += static_cast<int64_t>(batch->size());
    last = batch->back().rowid;
  }
}

Result<TreeApiCount> record_tree_api_uses(Database& db, const ApiPolicy& policy, const std::string& tree_name,
                                          const std::string& root, const TreeScanOptions& options) {
  Result<const ApiTable*> table = api_table_of(policy);
  if (!table) return table.error();
  Result<TreeApiCount> count = count_tree_api_uses(root, **table, options);
  if (!count) return count.error();
  std::vector<TreeApiUse> uses;
  for (const auto& [name, n] : count->names) uses.push_back({name, n.files, n.uses});
  if (Status s = replace_tree_api_uses(db, {tree_name, count->files, count->api_files, now_ms()}, uses); !s) {
    return make_error("storing the API names of " + tree_name + ": " + s.message());
  }
  return count;
}

Result<ApiPrior> load_api_prior(Database& db, const ApiPolicy& policy) {
  Result<std::vector<TreeApiScan>> scans = tree_api_scans(db);
  if (!scans) return make_error("API prior: " + scans.message());
  if (scans->empty()) return shipped_prior(policy);
  Result<std::vector<TreeApiUse>> uses = tree_api_uses_all(db);
  if (!uses) return make_error("API prior: " + uses.message());
  ApiPrior prior;
  prior.from_imported_trees = true;
  prior.source = "imported trees";
  prior.min_files = policy.imported_min_files;
  for (const TreeApiScan& scan : *scans) {
    prior.trees.push_back(scan.tree);
    prior.api_files += scan.api_files;
  }
  for (const TreeApiUse& use : *uses) prior.names[use.identifier] = {use.files, use.uses, 0};
  return prior;
}

std::string api_prior_json(const std::vector<std::pair<std::string, TreeApiCount>>& trees,
                           const std::optional<std::pair<std::string, TreeApiCount>>& headers) {
  std::map<std::string, PriorName> names;
  json tree_names = json::array();
  int64_t api_files = 0, files = 0;
  for (const auto& [name, count] : trees) {
    tree_names.push_back(name);
    api_files += count.api_files;
    files += count.files;
    for (const auto& [identifier, n] : count.names) {
      names[identifier].files += n.files;
      names[identifier].uses += n.uses;
    }
  }
  if (headers) {
    for (const auto& [identifier, n] : headers->second.names) names[identifier].header_files += n.files;
  }
  json root = {{"comment",
                "The shipped usage prior of the CUDA API (synth/api_coverage.h), counts only: per name of the API "
                "table, how many files of the trees below use it and how often, and how many CUDA header files "
                "mention it. Written by scripts/api_prior.sh (tailforge api-prior); do not edit. A store with "
                "imported trees uses their counts instead."},
               {"trees", tree_names},
               {"files", files},
               {"api_files", api_files}};
  if (headers) {
    root["headers"] = headers->first;
    root["header_files"] = headers->second.files;
    root["header_api_files"] = headers->second.api_files;
  }
  // One name a line, so that a regenerated prior reads as a diff.
  std::string text = root.dump(1);
  text.pop_back();  // the closing brace
  while (!text.empty() && text.back() == '\n') text.pop_back();
  text += ",\n \"names\": {";
  bool first = true;
  for (const auto& [identifier, n] : names) {
    json entry = json::object();
    if (n.files) entry["files"] = n.files;
    if (n.uses) entry["uses"] = n.uses;
    if (n.header_files) entry["header_files"] = n.header_files;
    text += std::string(first ? "" : ",") + "\n  " + json(identifier).dump() + ": " + entry.dump();
    first = false;
  }
  return text + "\n }\n}\n";
}

Result<ApiCoverage> measure_api_coverage(Database& db, const ApiPolicy& policy, const std::string& track,
                                         std::optional<int64_t> up_to_cycle) {
  Result<const ApiTable*> table = api_table_of(policy);
  if (!table) return table.error();
  if (Result<int64_t> counted = count_sample_api(db, **table); !counted) return counted.error();
  Result<ApiPrior> prior = load_api_prior(db, policy);
  if (!prior) return prior.error();
  Result<std::map<std::string, int64_t>> by_name = verified_samples_by_identifier(db, track, up_to_cycle);
  Result<std::map<std::string, int64_t>> by_family = verified_samples_by_api_family(db, track, up_to_cycle);
  Result<int64_t> total = verified_samples_up_to(db, track, up_to_cycle);
  if (!by_name || !by_family || !total) {
    return make_error("API coverage: " + (!by_name ? by_name.message() : !by_family ? by_family.message() : total.message()));
  }
  ApiCoverage coverage;
  coverage.track = track;
  coverage.up_to_cycle = up_to_cycle;
  coverage.prior = std::move(*prior);
  coverage.verified_total = *total;
  const std::vector<ApiFamily>& families = (*table)->families();
  for (const ApiFamily& family : families) {
    FamilyCoverage f;
    f.name = family.name;
    f.description = family.description;
    f.target_share = policy.family_floor_share;
    auto found = by_family->find(family.name);
    f.verified = found == by_family->end() ? 0 : found->second;
    f.share = coverage_ratio(f.verified, *total);
    coverage.families.push_back(f);
  }
  for (const ApiIdentifier& identifier : (*table)->identifiers()) {
    NameCoverage name;
    name.name = identifier.name;
    name.family = (*table)->family_name(identifier);
    if (auto found = coverage.prior.names.find(identifier.name); found != coverage.prior.names.end()) {
      name.prior = found->second;
    }
    name.target_share = target_of(coverage.prior, policy, name.prior);
    if (auto found = by_name->find(identifier.name); found != by_name->end()) name.verified = found->second;
    name.share = coverage_ratio(name.verified, *total);
    FamilyCoverage& family = coverage.families[identifier.family];
    ++family.names;
    bool covered = name.verified > 0;
    family.covered_names += covered;
    coverage.covered_names += covered;
    if (name.prior.files >= 2) {
      ++coverage.shared_names;
      coverage.covered_shared += covered;
    }
    coverage.prior_uses += name.prior.uses;
    coverage.covered_uses += covered ? name.prior.uses : 0;
    if (name.target_share > 0) {
      ++family.target_names;
      family.covered_targets += covered;
      family.prior_uses += name.prior.uses;
      family.covered_uses += covered ? name.prior.uses : 0;
      family.target_share = std::max(family.target_share, name.target_share);
      ++coverage.target_names;
      coverage.covered_targets += covered;
    }
    if (name.target_share > 0 || covered || name.prior.files > 0) coverage.names.push_back(std::move(name));
  }
  for (FamilyCoverage& family : coverage.families) family.below_target = family.share < family.target_share;
  return coverage;
}

json api_coverage_to_json(const ApiCoverage& coverage, bool with_names) {
  json families = json::array();
  for (const FamilyCoverage& f : coverage.families) {
    families.push_back({{"name", f.name}, {"description", f.description}, {"names", f.names},
                        {"target_names", f.target_names}, {"covered_targets", f.covered_targets},
                        {"covered_names", f.covered_names}, {"prior_uses", f.prior_uses},
                        {"covered_uses", f.covered_uses}, {"verified", f.verified}, {"share", f.share},
                        {"target_share", f.target_share}, {"below_target", f.below_target}});
  }
  json prior = {{"source", coverage.prior.source}, {"from_imported_trees", coverage.prior.from_imported_trees},
                {"trees", coverage.prior.trees}, {"api_files", coverage.prior.api_files},
                {"header_api_files", coverage.prior.header_api_files}, {"min_files", coverage.prior.min_files}};
  json out = {{"track", coverage.track},
              {"up_to_cycle", coverage.up_to_cycle ? json(*coverage.up_to_cycle) : json()},
              {"prior", prior},
              {"verified_total", coverage.verified_total},
              {"shared_names", coverage.shared_names},
              {"covered_shared", coverage.covered_shared},
              {"shared_coverage", coverage_ratio(coverage.covered_shared, coverage.shared_names)},
              {"prior_uses", coverage.prior_uses},
              {"covered_uses", coverage.covered_uses},
              {"use_coverage", coverage_ratio(coverage.covered_uses, coverage.prior_uses)},
              {"target_names", coverage.target_names},
              {"covered_targets", coverage.covered_targets},
              {"covered_names", coverage.covered_names},
              {"families", families}};
  if (with_names) {
    json names = json::array();
    for (const NameCoverage& n : coverage.names) {
      names.push_back({{"name", n.name}, {"family", n.family}, {"prior_files", n.prior.files},
                       {"prior_uses", n.prior.uses}, {"header_files", n.prior.header_files},
                       {"target_share", n.target_share}, {"verified", n.verified}, {"share", n.share}});
    }
    out["names"] = names;
  }
  return out;
}

std::string format_api_coverage(const ApiCoverage& coverage, const std::string& family, bool all_names) {
  std::ostringstream out;
  const ApiPrior& prior = coverage.prior;
  out << "CUDA API coverage of the " << coverage.verified_total << " verified " << coverage.track << " samples";
  if (coverage.up_to_cycle) out << " of cycles up to " << *coverage.up_to_cycle;
  out << "\n  prior: " << (prior.from_imported_trees ? "the imported trees " : "shipped, " + prior.source + ", from ");
  for (size_t i = 0; i < prior.trees.size(); ++i) out << (i ? ", " : "") << prior.trees[i];
  out << " (" << prior.api_files << " files using the API";
  if (prior.header_api_files) out << "; " << prior.header_api_files << " CUDA header files";
  out << ")\n";
  out << "  names used in two or more of the prior's files: " << coverage.covered_shared << " of "
      << coverage.shared_names << " covered (" << percent(coverage.covered_shared, coverage.shared_names) << ")\n";
  out << "  uses of the prior's names: " << coverage.covered_uses << " of " << coverage.prior_uses << " covered ("
      << percent(coverage.covered_uses, coverage.prior_uses) << ")\n";
  out << "  target names: " << coverage.covered_targets << " of " << coverage.target_names
      << " covered; names any verified sample uses: " << coverage.covered_names << "\n\n";

  auto name_rows = [&](const std::vector<const NameCoverage*>& rows) {
    out << "  " << std::left << std::setw(44) << "name" << std::setw(28) << "family" << std::right << std::setw(7)
        << "files" << std::setw(7) << "uses" << std::setw(9) << "target" << std::setw(10) << "verified" << std::setw(8)
        << "share" << "\n";
    for (const NameCoverage* n : rows) {
      out << "  " << std::left << std::setw(44) << n->name << std::setw(28) << n->family << std::right << std::setw(7)
          << n->prior.files << std::setw(7) << n->prior.uses << std::setw(9) << fixed3(n->target_share)
          << std::setw(10) << n->verified << std::setw(8) << fixed3(n->share)
          << (n->target_share > 0 && n->share < n->target_share ? "  below target" : "") << "\n";
    }
  };
  if (!family.empty()) {
    std::vector<const NameCoverage*> rows;
    for (const NameCoverage& n : coverage.names) {
      if (n.family == family) rows.push_back(&n);
    }
    out << "family " << family << ": " << rows.size() << " names with a target or a verified use\n";
    name_rows(rows);
    return out.str();
  }
  out << "  " << std::left << std::setw(28) << "family" << std::right << std::setw(7) << "names" << std::setw(9)
      << "targets" << std::setw(9) << "covered" << std::setw(8) << "uses" << std::setw(10) << "verified"
      << std::setw(8) << "share" << std::setw(8) << "target" << "\n";
  for (const FamilyCoverage& f : coverage.families) {
    out << "  " << std::left << std::setw(28) << f.name << std::right << std::setw(7) << f.names << std::setw(9)
        << f.target_names << std::setw(9) << f.covered_targets << std::setw(8)
        << (f.prior_uses ? percent(f.covered_uses, f.prior_uses) : "-") << std::setw(10) << f.verified << std::setw(8)
        << fixed3(f.share) << std::setw(8) << fixed3(f.target_share) << (f.below_target ? "  below target" : "")
        << "\n";
  }
  if (all_names) {
    std::vector<const NameCoverage*> rows;
    for (const NameCoverage& n : coverage.names) rows.push_back(&n);
    out << "\n";
    name_rows(rows);
  }
  return out.str();
}

std::string api_coverage_line(const ApiCoverage& coverage) {
  int64_t at_target = 0;
  for (const FamilyCoverage& f : coverage.families) at_target += !f.below_target;
  std::ostringstream out;
  out << "API coverage: " << coverage.covered_shared << " of " << coverage.shared_names << " shared names ("
      << percent(coverage.covered_shared, coverage.shared_names) << "), "
      << percent(coverage.covered_uses, coverage.prior_uses) << " of uses, " << at_target << " of "
      << coverage.families.size() << " families at target (prior: "
      << (coverage.prior.from_imported_trees ? "imported trees" : "shipped") << ")";
  return out.str();
}

Result<std::string> format_api_coverage_by_cycle(Database& db, const ApiPolicy& policy, const std::string& track) {
  Result<std::vector<CycleRecord>> cycles = list_cycles(db, 1000);
  if (!cycles) return cycles.error();
  std::vector<int64_t> ids;
  for (const CycleRecord& cycle : *cycles) ids.push_back(cycle.id);
  std::sort(ids.begin(), ids.end());
  std::ostringstream out;
  std::optional<ApiCoverage> last;
  for (int64_t id : ids) {
    Result<ApiCoverage> coverage = measure_api_coverage(db, policy, track, id);
    if (!coverage) return coverage.error();
    if (!last) {
      out << "CUDA API coverage of the verified " << track << " corpus, against the "
          << (coverage->prior.from_imported_trees ? "imported trees'" : "shipped") << " usage prior ("
          << coverage->shared_names << " names used in two or more of its files; tailforge coverage):\n";
    }
    out << "  after cycle " << id << ": " << coverage->verified_total << " verified samples use "
        << coverage->covered_names << " API names; " << coverage->covered_shared << " of " << coverage->shared_names
        << " shared names (" << percent(coverage->covered_shared, coverage->shared_names) << "), "
        << percent(coverage->covered_uses, coverage->prior_uses) << " of uses\n";
    last = std::move(*coverage);
  }
  if (!last) return std::string();
  std::vector<const FamilyCoverage*> below;
  for (const FamilyCoverage& f : last->families) {
    if (f.below_target) below.push_back(&f);
  }
  std::stable_sort(below.begin(), below.end(), [](const FamilyCoverage* a, const FamilyCoverage* b) {
    return a->target_share - a->share > b->target_share - b->share;
  });
  out << "  " << below.size() << " of " << last->families.size() << " families below target";
  for (size_t i = 0; i < below.size() && i < 6; ++i) {
    out << (i ? ", " : ": ") << below[i]->name << " " << fixed3(below[i]->share) << " < " << fixed3(below[i]->target_share);
  }
  out << (below.size() > 6 ? ", ..." : "") << "\n";
  return out.str();
}

}  // namespace tailforge
