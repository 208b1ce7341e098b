// `tailforge coverage`: the CUDA API the verified corpus covers, per family and name, against the
// usage prior; `tailforge api-prior`: writes the shipped prior from source trees and CUDA headers.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "agents/translate/hipify_names.h"
#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "synth/api_coverage.h"

namespace tailforge {

int command_coverage(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  Result<SynthPolicy> configured = synth_policy_from_config(context->config["synth"], data_dir());
  if (!configured) return report_failure(configured.message());
  std::string track = args.get("--track", configured->track);
  Result<SynthPolicy> policy = policy_for_track(*configured, track, data_dir());
  if (!policy) return report_failure(policy.message());
  if (!policy->api.enabled) return report_failure("track " + track + ": " + api_table_of(policy->api).message());
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  std::optional<int64_t> cycle;
  if (args.has("--cycle")) cycle = args.get_int("--cycle", 0);
  Result<ApiCoverage> coverage = measure_api_coverage(*db, policy->api, track, cycle);
  if (!coverage) return report_failure(coverage.message());
  std::string family = args.get("--family");
  if (!family.empty()) {
    bool known = false;
    for (const FamilyCoverage& f : coverage->families) known = known || f.name == family;
    if (!known) {
      std::cerr << "tailforge: --family must name one of the families:";
      for (const FamilyCoverage& f : coverage->families) std::cerr << " " << f.name;
      std::cerr << "\n";
      return 2;
    }
  }
  if (args.has("--json")) {
    std::cout << api_coverage_to_json(*coverage, args.has("--names") || !family.empty())
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << format_api_coverage(*coverage, family, args.has("--names"));
  }
  return 0;
}

int command_api_prior(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  Result<SynthPolicy> policy = synth_policy_from_config(context->config["synth"], data_dir());
  if (!policy) return report_failure(policy.message());
  Result<const ApiTable*> table = api_table_of(policy->api);
  if (!table) return report_failure(table.message());
  std::vector<std::string> trees = args.get_all("--tree");
  if (trees.empty()) {
    std::cerr << "tailforge: api-prior needs at least one --tree\n";
    return 2;
  }
  std::vector<std::pair<std::string, TreeApiCount>> counted;
  for (const std::string& tree : trees) {
    Result<TreeApiCount> count = count_tree_api_uses(tree, **table);
    if (!count) return report_failure(count.message());
    std::string name = std::filesystem::path(tree).lexically_normal().filename().string();
    if (name.empty()) name = std::filesystem::path(tree).lexically_normal().parent_path().filename().string();
    std::cerr << name << ": " << count->names.size() << " names in " << count->api_files << " of " << count->files
              << " source files\n";
    counted.emplace_back(name, std::move(*count));
  }
  std::optional<std::pair<std::string, TreeApiCount>> headers;
  std::string header_dir = args.get("--headers");
  if (!args.has("--no-headers")) {
    if (header_dir.empty()) {
      const char* cuda_home = std::getenv("CUDA_HOME");
      header_dir = std::string(cuda_home && *cuda_home ? cuda_home : "/usr/local/cuda") + "/include";
    }
    Result<TreeApiCount> count = count_tree_api_uses(header_dir, **table);
    if (!count) return report_failure(count.message() + " (--headers DIR, or --no-headers)");
    std::cerr << "CUDA headers " << header_dir << ": " << count->names.size() << " names in " << count->api_files
              << " of " << count->files << " files\n";
    std::string version = cuda_version(header_dir);
    headers.emplace(header_dir + (version.empty() ? "" : " (CUDA " + version + ")"), std::move(*count));
  }
  std::string out_path = args.get("--out", data_path("policies/api_prior.json"));
  std::string text = api_prior_json(counted, headers);
  std::string temporary = out_path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.good()) return report_failure("cannot write " + temporary);
  }
  std::error_code error;
  std::filesystem::rename(temporary, out_path, error);
  if (error) return report_failure("cannot write " + out_path + ": " + error.message());
  std::cout << "wrote " << out_path << "\n";
  return 0;
}

}  // namespace tailforge
