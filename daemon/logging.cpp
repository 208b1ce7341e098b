#include "daemon/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "daemon/service_manager.h"

namespace tailforge {

namespace {

// %* : the line's syslog priority, which journald reads from a "<N>" prefix.
class SyslogPriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& message, const std::tm&, spdlog::memory_buf_t& out) override {
    char digit = '6';  // info
    switch (message.level) {
      case spdlog::level::trace:
      case spdlog::level::debug: digit = '7'; break;
      case spdlog::level::warn: digit = '4'; break;
      case spdlog::level::err: digit = '3'; break;
      case spdlog::level::critical: digit = '2'; break;
      default: break;
    }
    out.push_back(digit);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SyslogPriorityFlag>(); }
};

}  // namespace

Status set_log_level(const std::string& level) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    return make_error("unknown log level '" + level + "' (expected trace, debug, info, warn, error or off)");
  }
  static bool sink_ready = false;
  if (!sink_ready) {
    auto logger = spdlog::stderr_color_mt("tailforge");
    if (stderr_is_journal()) {  // journald stamps each line itself and reads its priority from <N>
      auto formatter = std::make_unique<spdlog::pattern_formatter>();
      formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("<%*>%v");
      logger->set_formatter(std::move(formatter));
    } else {
      logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    }
    spdlog::set_default_logger(logger);
    sink_ready = true;
  }
  spdlog::set_level(parsed);
  return {};
}

}  // namespace tailforge
