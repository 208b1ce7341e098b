// The crash test of the daemon issue: SIGKILL the daemon at 10 random instants, restart it each
// time, and compare the final database with an uninterrupted run over the same seeds.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "test_support/query.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"
#include "verifier/process.h"

using namespace tailforge;

namespace {

const int kCycles = 2;

// A small, fast loop: few samples per cycle, fewer synthesized, and the cheaper verifier stages
// only. Evaluation and retraining stay on, so kills land in them too. No fill: how many samples
// it adds depends on timing, and the killed run must repeat the uninterrupted one exactly.
std::string write_config(const TempDir& dir) {
  std::string path = dir.file("crash.json");
  std::ofstream(path) << R"({
    "log_level": "warn",
    "daemon": {"samples_per_cycle": 6, "compile_slots": 2, "progress": false, "drain_grace_seconds": 5,
               "fill_samples": 0},
    "synth": {"top_k": 2, "multiplier": 4},
    "verifier": {"stages": ["translate", "amd.asm", "amd.assemble", "nvidia.ptx"]}
  })";
  return path;
}

std::vector<std::string> daemon_argv(const std::string& db, const std::string& config, int cycles) {
  return {TAILFORGE_BINARY, "daemon", "--db", db, "--config", config, "--cycles", std::to_string(cycles), "--no-progress"};
}

// Cycles the restarted daemon still has to run: unfinished ones count as one of them.
int remaining_cycles(const std::string& db_path) {
  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  return kCycles - static_cast<int>(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done'"));
}

int run_to_end(const std::string& db, const std::string& config) {
  int cycles = remaining_cycles(db);
  if (cycles <= 0) return 0;
  ProcessSpec spec;
  spec.argv = daemon_argv(db, config, cycles);
  spec.timeout_seconds = 300;
  ProcessResult result = run_process(spec);
  INFO(result.stderr_text);
  CHECK(result.exit_code == 0);
  return result.exit_code;
}

// What must be equal between the interrupted and the uninterrupted run.
std::string fingerprint(Database& db) {
  return query_text(db, "SELECT 'samples ' || count(*) || ' verified ' || sum(status = 'verified') || ' failed ' ||"
                        " sum(status = 'failed') || ' synthesized ' || sum(origin = 'synthesized') FROM sample") +
         query_text(db, "SELECT id || ' ' || status FROM sample ORDER BY id") +
         query_text(db, "SELECT sample_id || ' ' || stage || ' ' || status FROM verification ORDER BY 1") +
         query_text(db, "SELECT category || ' ' || count(*) FROM failure GROUP BY category ORDER BY 1") +
         query_text(db, "SELECT parent_id || ' ' || child_id || ' ' || relation FROM lineage ORDER BY 1") +
         query_text(db, "SELECT id || ' ' || state || ' ' || generated || ' ' || verified || ' ' || failed FROM cycle ORDER BY id") +
         query_text(db, "SELECT 'item ' || sample_id || ' v' || version FROM eval_item ORDER BY 1") +
         query_text(db, "SELECT name || ' parent ' || coalesce(parent_id, 0) FROM model ORDER BY id") +
         query_text(db, "SELECT m.name || ' ' || e.sample_id || ' ' || e.ok || ' ' || e.category FROM evaluation e"
                        " JOIN model m ON m.id = e.model_id ORDER BY 1");
}

}  // namespace

TEST_CASE("a daemon killed with SIGKILL at 10 random instants ends like an uninterrupted run" *
          doctest::test_suite("long")) {
  TempDir dir;
  std::string config = write_config(dir);

  std::string reference_db = dir.file("reference.db");
  auto started = std::chrono::steady_clock::now();
  REQUIRE(run_to_end(reference_db, config) == 0);
  double reference_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  MESSAGE("uninterrupted run: " << reference_seconds << " s");

  std::string crashed_db = dir.file("crashed.db");
  std::mt19937 random(20261122);
  // Spread over start-up, generation, verification and commits, short enough that the run
  // is still going at the tenth kill.
  std::uniform_real_distribution<double> instant(0.05, std::max(0.3, reference_seconds / 6));
  int kills = 0;
  for (int i = 0; i < 10; ++i) {
    int cycles = remaining_cycles(crashed_db);
    if (cycles <= 0) break;
    pid_t pid = spawn_in_background(daemon_argv(crashed_db, config, cycles));
    double after = instant(random);
    std::this_thread::sleep_for(std::chrono::duration<double>(after));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
      ++kills;
    } else {
      MESSAGE("run " << i << " ended by itself after " << after << " s with status " << WEXITSTATUS(status));
    }
  }
  MESSAGE("SIGKILLed the daemon " << kills << " times");
  CHECK(kills >= 8);
  REQUIRE(run_to_end(crashed_db, config) == 0);

  Result<Database> crashed = Database::open(crashed_db);
  Result<Database> reference = Database::open(reference_db);
  REQUIRE(crashed.ok());
  REQUIRE(reference.ok());
  CHECK(query_text(*crashed, "PRAGMA integrity_check") == "ok\n");
  CHECK(query_int(*crashed, "SELECT count(*) FROM job WHERE state NOT IN ('done', 'pending')") == 0);
  CHECK(query_int(*crashed, "SELECT count(*) - count(DISTINCT sample_id || stage) FROM verification") == 0);
  CHECK(query_int(*crashed, "SELECT count(*) FROM cycle WHERE state = 'done'") == kCycles);
  CHECK(query_int(*crashed, "SELECT count(*) FROM sample") > 0);
  // The comparison covers the model loop too: a trained version and its evaluations.
  CHECK(query_int(*reference, "SELECT count(*) FROM model") >= 1);
  CHECK(query_int(*reference, "SELECT count(*) FROM evaluation") >= 1);
  CHECK(fingerprint(*crashed) == fingerprint(*reference));
}
