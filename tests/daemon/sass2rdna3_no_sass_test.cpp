// What a host without SASS says about the sass2rdna3 track: the daemon logs at start why it will
// make no kernel pairs, and `export --track sass2rdna3` with no pairs names the skipped SASS stage
// and the missing tools. On a host that has cuobjdump or nvdisasm neither line may appear.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "store/database.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"
#include "verifier/toolchains.h"

namespace tailforge {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Polls the database until some sample has a recorded nvidia.sass row, or `seconds` pass.
bool wait_for_sass_row(const std::string& db_path, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Result<Database> db = Database::open(db_path);
    if (!db) continue;
    Result<Statement> rows = db->prepare("SELECT count(*) FROM verification WHERE stage = 'nvidia.sass'");
    if (rows && rows->step() && rows->int64(0) > 0) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("without cuobjdump and nvdisasm, the daemon's start and an empty sass2rdna3 export say why there are no pairs") {
  const Toolchains& toolchains = detected_toolchains();
  bool host_has_sass = toolchains.tool("nvcc").found() &&
                       (toolchains.tool("cuobjdump").found() || toolchains.tool("nvdisasm").found());
  TempDir dir;
  std::string db = dir.file("no-sass.db");
  std::string config = dir.file("config.json");
  std::string log = dir.file("daemon.log");
  // Two programs, the translation and the NVIDIA stages only: enough for an nvidia.sass row.
  std::ofstream(config) << R"({"daemon": {"samples_per_cycle": 2, "progress": false, "drain_grace_seconds": 20},
                               "verifier": {"stages": ["translate", "nvidia"]}})";
  pid_t daemon = spawn_in_background({TAILFORGE_BINARY, "daemon", "--db", db, "--config", config, "--cycles", "1",
                                      "--no-progress"},
                                     log);
  bool recorded = wait_for_sass_row(db, 120);
  kill(daemon, SIGTERM);
  int status = 0;
  REQUIRE(waitpid(daemon, &status, 0) == daemon);
  REQUIRE_MESSAGE(recorded, read_text(log));

  std::string started = read_text(log);
  REQUIRE(started.find("resources:") != std::string::npos);
  bool logged = started.find("sass2rdna3: no kernel pairs on this host: no SASS (") != std::string::npos;
  CHECK_MESSAGE(logged == !host_has_sass, started);

  {
    Database store = Database::open(db).value();
    std::string sass_status = query_text(store, "SELECT DISTINCT status FROM verification WHERE stage = 'nvidia.sass'");
    CHECK(sass_status == (host_has_sass ? "ok\n" : "skipped\n"));
  }
  ProcessResult exported = run_tailforge({"export", "--db", db, "--track", "sass2rdna3", "--out", dir.file("asm")});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.stderr_text);
  if (host_has_sass) {
    // SASS was dumped; these two programs had no AMD stages, so no pairs, but not for want of tools.
    CHECK(exported.stdout_text.find("neither cuobjdump nor nvdisasm") == std::string::npos);
    CHECK(exported.stdout_text.find("nvidia.sass stage was skipped") == std::string::npos);
    return;
  }
  CHECK(exported.stdout_text.find("exported 0 sass2rdna3 pairs") != std::string::npos);
  CHECK(exported.stdout_text.find("no sass2rdna3 pairs: each comes from a verified CUDA program's SASS") !=
        std::string::npos);
  CHECK(exported.stdout_text.find("the newest nvidia.sass stage was skipped: ") != std::string::npos);
  CHECK(exported.stdout_text.find("this host has neither cuobjdump nor nvdisasm") != std::string::npos);
}

}  // namespace tailforge
