// `tailforge install-service`: writes a systemd unit that runs this binary's daemon on one
// database as a Type=notify service (readiness, status line, watchdog, reload on SIGHUP, a stop
// that drains within TimeoutStopSec), and prints the commands that start it.

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "base/files.h"
#include "base/process.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

// A word of a unit's command line: quoted when it holds a space, a quote or a backslash;
// % is systemd's specifier character and is doubled.
std::string unit_word(const std::string& word) {
  std::string escaped;
  for (char c : word) {
    if (c == '%') escaped += "%%";
    else if (c == '"' || c == '\\') escaped += std::string("\\") + c;
    else escaped += c;
  }
  bool plain = !word.empty() && word.find_first_of(" \t\"'\\") == std::string::npos;
  return plain ? escaped : "\"" + escaped + "\"";
}

std::string absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

}  // namespace

int command_install_service(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  const nlohmann::json& config = context->config;
  const std::string out = args.get("--out", "/etc/systemd/system/tailforge.service");
  const std::string db = absolute(context->db_path);
  const double grace = config["daemon"]["drain_grace_seconds"].get<double>();
  // The daemon drains for the grace period, then stops in a few seconds; systemd waits longer.
  const int64_t stop_timeout = static_cast<int64_t>(std::ceil(grace)) + 30;
  std::string watchdog = std::to_string(args.get_int("--watchdog-sec", 120));

  std::vector<std::string> command = {current_executable(), "daemon", "--db", db};
  if (args.has("--config")) command.insert(command.end(), {"--config", absolute(args.get("--config"))});
  command.insert(command.end(), {"--cycles", "0", "--no-progress"});
  std::string exec_start;
  for (const std::string& word : command) exec_start += (exec_start.empty() ? "" : " ") + unit_word(word);

  std::string unit;
  unit += "# Written by `tailforge install-service` (tailforge " TAILFORGE_VERSION "). Edit, then\n";
  unit += "# `systemctl daemon-reload`; or write it again with other options.\n";
  unit += "[Unit]\n";
  unit += "Description=tailforge: verified GPU-code dataset growth on " + db + "\n";
  unit += "After=network.target\n\n";
  unit += "[Service]\n";
  unit += "Type=notify\n";
  unit += "NotifyAccess=main\n";
  unit += "ExecStart=" + exec_start + "\n";
  unit += "ExecReload=/bin/kill -HUP $MAINPID\n";
  unit += "Environment=" + unit_word("TAILFORGE_HOME=" + absolute(data_dir())) + "\n";
  unit += "WorkingDirectory=" + unit_word(fs::path(db).parent_path().string()) + "\n";
  if (args.has("--user")) unit += "User=" + args.get("--user") + "\n";
  unit += "# SIGTERM goes to the daemon only: it drains (running jobs get daemon.drain_grace_seconds, " +
          std::to_string(static_cast<int64_t>(grace)) + " s)\n";
  unit += "# while its sandboxed programs run on; what is left when the timeout ends is killed.\n";
  unit += "KillMode=mixed\n";
  unit += "# Its own cgroup tree: each GPU test program runs in a memory cgroup capped at sandbox.gpu_memory_cap_bytes.\n";
  unit += "Delegate=yes\n";
  unit += "TimeoutStopSec=" + std::to_string(stop_timeout) + "\n";
  if (watchdog != "0") unit += "WatchdogSec=" + watchdog + "\n";
  unit += "Restart=on-failure\n";
  unit += "RestartSec=10\n";
  unit += "LimitNOFILE=65536\n\n";
  unit += "[Install]\n";
  unit += "WantedBy=multi-user.target\n";

  if (out == "-") {
    std::cout << unit;
    return 0;
  }
  std::error_code ec;
  if (fs::path parent = fs::path(out).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  std::string temporary = out + ".tmp";
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << unit;
    if (!file.flush()) return report_failure("cannot write " + temporary);
  }
  fs::rename(temporary, out, ec);
  if (ec) return report_failure("cannot write " + out + ": " + ec.message());
  std::string name = fs::path(out).filename().string();
  std::cout << "wrote " << out << "\n"
            << "start it now and at every boot:\n"
            << "  systemctl daemon-reload && systemctl enable --now " << name << "\n"
            << "then:\n"
            << "  systemctl status " << name << "      # the daemon's status line\n"
            << "  journalctl -u " << name << " -f      # its log\n"
            << "  systemctl reload " << name << "      # re-read the configuration (SIGHUP)\n"
            << "  systemctl stop " << name << "        # drains: running jobs get " << static_cast<int64_t>(grace)
            << " s, systemd waits " << stop_timeout << " s\n";
  return 0;
}

}  // namespace tailforge
