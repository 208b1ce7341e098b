// The CUDA API names in the store: which sample's code uses which name and how often (counted by
// agents/api_table.h, kept with the family it had then), and per imported tree how many of its
// files use each name. Only SQL and row mapping; synth/api_coverage.h turns them into coverage,
// the usage prior and API tails.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

// ---- the samples' names ---------------------------------------------------------------------
struct SampleApiUse {
  std::string identifier;
  std::string family;
  int64_t uses = 0;
};

// How far counting got: samples up to `last_rowid` were counted with the table `table_key`.
struct ApiIndexMark {
  std::string table_key;
  int64_t last_rowid = 0;
};
Result<std::optional<ApiIndexMark>> api_index_mark(Database& db);
// Drops every sample's rows and starts over under `table_key` (the table or its families changed).
Status restart_api_index(Database& db, const std::string& table_key);

// Samples to count next: CUDA-language samples stored after `after_rowid`, by rowid, at most `limit`.
struct SampleToCount {
  int64_t rowid = 0;
  std::string id;
};
Result<std::vector<SampleToCount>> samples_to_count(Database& db, int64_t after_rowid, int limit);
// Stores one sample's names (replacing any) and moves the mark to `rowid`; call inside a transaction.
Status store_sample_api(Database& db, const std::string& sample_id, const std::vector<SampleApiUse>& uses,
                        int64_t rowid);

// The names of one sample, by identifier.
Result<std::vector<SampleApiUse>> sample_api_uses(Database& db, const std::string& sample_id);
// The families of one sample.
Result<std::set<std::string>> sample_api_families(Database& db, const std::string& sample_id);

// The API families of the track's active evaluation items, by item.
Result<std::map<std::string, std::set<std::string>>> eval_item_api_families(Database& db, const std::string& track);

// Verified samples of the track that use each name (and, below, each family), counting samples
// of cycles up to `up_to_cycle` only when it is set. Names no verified sample uses are absent.
Result<std::map<std::string, int64_t>> verified_samples_by_identifier(Database& db, const std::string& track,
                                                                      std::optional<int64_t> up_to_cycle = {});
Result<std::map<std::string, int64_t>> verified_samples_by_api_family(Database& db, const std::string& track,
                                                                      std::optional<int64_t> up_to_cycle = {});
// Verified samples of the track up to a cycle (all when unset).
Result<int64_t> verified_samples_up_to(Database& db, const std::string& track, std::optional<int64_t> up_to_cycle);

// ---- imported trees ---------------------------------------------------------------------------
struct TreeApiScan {
  std::string tree;
  int64_t files = 0;      // source files read
  int64_t api_files = 0;  // of them, using at least one API name
  int64_t scanned_ms = 0;
};
struct TreeApiUse {
  std::string identifier;
  int64_t files = 0;
  int64_t uses = 0;
};
// Replaces what the store knows of the tree's names (one transaction).
Status replace_tree_api_uses(Database& db, const TreeApiScan& scan, const std::vector<TreeApiUse>& uses);
Result<std::vector<TreeApiScan>> tree_api_scans(Database& db);
// Every tree's names, files and uses summed over the trees.
Result<std::vector<TreeApiUse>> tree_api_uses_all(Database& db);

}  // namespace tailforge
