// CUDA API coverage: keeps every CUDA sample's API names counted in the store, builds the usage
// prior (the user's imported trees, weighted by how many of their files use each name; without
// one, the shipped policies/api_prior.json; every family with a floor share either way), and
// measures the verified corpus against it per family and per name. `tailforge coverage`, status,
// the dashboard, /metrics, the API tails and the per-family evaluation read it. It synthesizes
// nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/api_table.h"
#include "store/database.h"
#include "synth/policy.h"

namespace tailforge {

// The policy's table (its rules and families files, loaded once per process).
Result<const ApiTable*> api_table_of(const ApiPolicy& policy);

// Counts the API names of every CUDA sample stored since the last call (all of them again when
// the table changed) and stores them; a bundle's headers count with its program. Returns how
// many samples it counted now.
Result<int64_t> count_sample_api(Database& db, const ApiTable& table);

// What users' code uses: per name, the files of the prior's trees that use it and their uses, and
// the CUDA header files mentioning it (shipped prior only).
struct PriorName {
  int64_t files = 0;
  int64_t uses = 0;
  int64_t header_files = 0;
};
struct ApiPrior {
  bool from_imported_trees = false;
  std::vector<std::string> trees;  // the trees it was counted from
  std::string source;              // "imported trees" or the shipped file's path
  int64_t api_files = 0;           // the trees' files that use at least one API name
  int64_t header_api_files = 0;    // CUDA header files that mention one (shipped prior only)
  int64_t min_files = 1;           // a name is a target with this many files
  std::map<std::string, PriorName> names;
};
// Counts the names of every source file of the tree at `root` and stores them as the tree's part
// of the prior (an import calls it; a tree imported again replaces its counts).
Result<TreeApiCount> record_tree_api_uses(Database& db, const ApiPolicy& policy, const std::string& tree_name,
                                          const std::string& root, const TreeScanOptions& options);
// The imported trees' names when the store has any (tree_api_use), else the shipped prior.
Result<ApiPrior> load_api_prior(Database& db, const ApiPolicy& policy);
// The shipped prior file's JSON text, from trees and headers counted by count_tree_api_uses.
std::string api_prior_json(const std::vector<std::pair<std::string, TreeApiCount>>& trees,
                           const std::optional<std::pair<std::string, TreeApiCount>>& headers);

// Coverage of one name.
struct NameCoverage {
  std::string name;
  std::string family;
  PriorName prior;
  double target_share = 0;  // of the verified corpus; 0: no target
  int64_t verified = 0;     // verified samples using it
  double share = 0;
};

struct FamilyCoverage {
  std::string name, description;
  int64_t names = 0;          // names of the table (and extras) in the family
  int64_t target_names = 0;   // with a target share
  int64_t covered_targets = 0;
  int64_t covered_names = 0;  // any name of the family a verified sample uses
  int64_t prior_uses = 0, covered_uses = 0;  // the prior's uses of the family's target names
  int64_t verified = 0;       // verified samples using the family
  double share = 0;
  double target_share = 0;    // the largest target of its names, at least the floor
  bool below_target = false;
};

struct ApiCoverage {
  std::string track;
  std::optional<int64_t> up_to_cycle;  // unset: every cycle
  ApiPrior prior;
  int64_t verified_total = 0;
  // The headline: names the prior's trees use in two or more files, and every use of a prior name.
  int64_t shared_names = 0, covered_shared = 0;
  int64_t prior_uses = 0, covered_uses = 0;
  int64_t target_names = 0, covered_targets = 0;
  int64_t covered_names = 0;  // any table name a verified sample uses
  std::vector<FamilyCoverage> families;  // in the families file's order
  std::vector<NameCoverage> names;       // every target name and every covered one, by name
};

// Counts what is new (count_sample_api), then measures the track's verified samples (of cycles up
// to `up_to_cycle` when set) against the prior.
Result<ApiCoverage> measure_api_coverage(Database& db, const ApiPolicy& policy, const std::string& track,
                                         std::optional<int64_t> up_to_cycle = {});

double coverage_ratio(int64_t part, int64_t whole);

nlohmann::json api_coverage_to_json(const ApiCoverage& coverage, bool with_names);
// The summary and family table; with `family` set, that family's names instead of the table;
// `all_names`: every name below the families.
std::string format_api_coverage(const ApiCoverage& coverage, const std::string& family, bool all_names);
// One line for status: "API coverage: ..."
std::string api_coverage_line(const ApiCoverage& coverage);

// The coverage after each of the store's cycles (the verified samples of that cycle and the ones
// before), for a bounded run's report: a line per cycle, then the families furthest below target.
Result<std::string> format_api_coverage_by_cycle(Database& db, const ApiPolicy& policy, const std::string& track);

}  // namespace tailforge
