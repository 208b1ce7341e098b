#include "store/verification_summary.h"

#include <map>
#include <tuple>

namespace tailforge {

Result<std::vector<StageResultCount>> stage_result_counts(Database& db, const std::vector<std::string>& sample_ids) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int64_t> counts;
  Statement& select = db.cached(
      "SELECT stage, status, coalesce(host, ''), coalesce(toolchain_version, '') FROM verification"
      " WHERE sample_id = ?1");
  for (const std::string& id : sample_ids) {
    select.bind(1, id);
    while (select.step()) ++counts[{select.text(0), select.text(1), select.text(2), select.text(3)}];
    if (Status status = select.finish(); !status) return status.error();
  }
  std::vector<StageResultCount> out;
  for (const auto& [key, samples] : counts) {
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), samples});
  }
  return out;
}

}  // namespace tailforge
