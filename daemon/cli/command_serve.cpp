// `tailforge serve`: the HTTP API and the dashboard on a database, without the loop, so that a
// finished run (or a copy of one) can be browsed. Every POST answers 405; like every command, it
// brings an older database's schema up to date when it opens it.
#include <signal.h>

#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/http/http_api.h"

namespace tailforge {

int command_serve(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  if (!std::filesystem::exists(context->db_path)) return report_failure("no database at " + context->db_path);
  // Opened once before serving, so that an older store's schema is brought up to date (its new
  // indexes built) now rather than by the first page's requests, which would wait on it.
  if (Result<Database> db = Database::open(context->db_path); !db) return report_failure(db.message());
  std::string listen = args.get("--listen", context->config["http"]["listen"].get<std::string>());
  if (listen.empty()) listen = "127.0.0.1:8470";

  // Block the stop signals before the server's threads start, so that they all inherit the mask
  // and sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  DaemonControl control;
  Result<std::unique_ptr<HttpApi>> api =
      HttpApi::start(listen, context->config, context->db_path, control, [] {}, /*read_only=*/true);
  if (!api) return report_failure(api.message());
  std::cout << "dashboard of " << context->db_path << " at http://" << (*api)->address() << "/ (read-only; Ctrl-C stops)"
            << std::endl;
  int received = 0;
  sigwait(&stop_signals, &received);
  spdlog::info("serve: stopping on signal {}", received);
  (*api)->stop();
  return 0;
}

}  // namespace tailforge
