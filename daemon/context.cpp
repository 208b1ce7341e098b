#include "daemon/context.h"

#include <cstdio>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "policies/config.h"

namespace tailforge {

int report_failure(const std::string& message) {
  std::fprintf(stderr, "tailforge: %s\n", message.c_str());
  return 1;
}

Status set_log_level(const std::string& level) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    return make_error("unknown log level '" + level + "' (expected trace, debug, info, warn, error or off)");
  }
  static bool sink_ready = false;
  if (!sink_ready) {
    auto logger = spdlog::stderr_color_mt("tailforge");
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    spdlog::set_default_logger(logger);
    sink_ready = true;
  }
  spdlog::set_level(parsed);
  return {};
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
