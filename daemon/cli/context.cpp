#include "daemon/cli/context.h"

#include <cstdio>

#include "daemon/logging.h"
#include "policies/config.h"

namespace tailforge {

int report_failure(const std::string& message) {
  std::fprintf(stderr, "tailforge: %s\n", message.c_str());
  return 1;
}

Result<CommandContext> make_context(const CommandLine& args) {
  Result<nlohmann::json> config = load_config(args.get("--config"));
  if (!config) return config.error();
  CommandContext context;
  context.config = std::move(*config);
  std::string level = args.get("--log-level", context.config.value("log_level", "info"));
  if (Status s = set_log_level(level); !s) return s.error();
  context.db_path = args.get("--db", context.config["store"].value("path", "tailforge.db"));
  return context;
}

}  // namespace tailforge
