#include "store/taxonomy_internal.h"

#include "store/category_path.h"

namespace tailforge {

namespace taxonomy_internal {

void add_item_filters(Filter& f, const TaxonomyQuery& q, std::optional<int64_t> since, std::optional<int64_t> until,
                      bool sample_columns) {
  if (since) f.add_int("created_ms >= ?", *since);
  if (until) f.add_int("created_ms < ?", *until);
  f.by_sample = f.by_sample || !q.track.empty() || !q.origin.empty() || !q.domain.empty() || !q.feature.empty();
  if (!q.track.empty()) f.add_text("track = ?", q.track);
  for (const auto& [name, value] : {std::pair{"origin", q.origin}, std::pair{"domain", q.domain}}) {
    if (value.empty()) continue;
    f.add_text(sample_columns ? std::string(name) + " = ?"
                              : std::string("sample_id IN (SELECT id FROM sample WHERE ") + name + " = ?)",
               value);
  }
  if (!q.feature.empty()) f.add_text("sample_id IN (SELECT sample_id FROM sample_feature WHERE tag = ?)", q.feature);
}

void add_stage_filter(Filter& f, const TaxonomyQuery& q) {
  if (q.stage_prefix.empty()) return;
  f.add_text("stage >= ?", q.stage_prefix);
  f.add_text("stage < ?", q.stage_prefix + "\xff");
}

std::map<std::string, int64_t> rolled_up(const std::map<std::string, int64_t>& leaves) {
  std::map<std::string, int64_t> all;
  for (const auto& [path, count] : leaves) {
    for (std::string p = path; !p.empty(); p = category_parent(p)) all[p] += count;
  }
  return all;
}

int64_t sum(const std::map<std::string, int64_t>& counts) {
  int64_t total = 0;
  for (const auto& [key, count] : counts) total += count;
  return total;
}

double ratio(int64_t count, int64_t of) { return of ? double(count) / double(of) : 0; }

}  // namespace taxonomy_internal

}  // namespace tailforge
