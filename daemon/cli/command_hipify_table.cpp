// `tailforge hipify-table`: regenerates the translator's CUDA->HIP identifier table
// (policies/hipify_names.json) from the installed CUDA and HIP headers.
#include <cstdlib>
#include <iostream>

#include "agents/translate/hipify_names.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "daemon/cli/commands.h"

namespace tailforge {

int command_hipify_table(const CommandLine& args) {
  const char* cuda_home = std::getenv("CUDA_HOME");
  std::string default_cuda = cuda_home && *cuda_home ? std::string(cuda_home) + "/include" : "/usr/local/cuda/include";
  HipifyTableSources sources;
  sources.cuda_include = args.get("--cuda-include", default_cuda);
  sources.hip_includes = args.get_all("--hip-include");
  if (sources.hip_includes.empty()) sources.hip_includes = {"/usr/include"};
  sources.exceptions_path = args.get("--exceptions", data_path("policies/hipify_name_exceptions.json"));
  Result<HipifyRules> rules = load_hipify_rules(args.get("--rules", data_path("policies/hipify_rules.json")));
  if (!rules) {
    std::cerr << "tailforge hipify-table: " << rules.message() << "\n";
    return 1;
  }
  sources.rules = &*rules;
  sources.compat_dir = data_path("verifier/hip_compat");
  return run_hipify_table_command(sources, args.get("--out", data_path("policies/hipify_names.json")), std::cout,
                                  std::cerr);
}

}  // namespace tailforge
