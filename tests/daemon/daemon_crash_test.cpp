// The crash test of the daemon issue: SIGKILL the daemon at 10 random instants, restart it each
// time, and compare the final database with an uninterrupted run over the same seeds.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/process.h"
#include "store/database.h"
#include "test_support/query.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"

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

// Jobs the store records as done: how far the daemon got. Empty when the store cannot be read now.
std::optional<int64_t> done_jobs(Database& db) {
  Result<Statement> count = db.prepare("SELECT count(*) FROM job WHERE state = 'done'");
  if (!count || !count->step()) return std::nullopt;
  return count->int64(0);
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

  // The uninterrupted run's work, counted in jobs done.
  int64_t reference_jobs = 0;
  {
    Result<Database> reference = Database::open(reference_db);
    REQUIRE(reference.ok());
    reference_jobs = query_int(*reference, "SELECT count(*) FROM job WHERE state = 'done'");
  }
  REQUIRE(reference_jobs > 0);
  // A killed run is killed at its random instant, or sooner, once it has finished a fifteenth of
  // that work: ten of them get through two thirds of it at most (and what one finishes between two
  // looks, 5 ms apart), so the daemon is still running at every kill however fast this machine runs
  // now next to the reference run, which only set the instants.
  const int64_t jobs_per_run = std::max<int64_t>(1, reference_jobs / 15);

  std::string crashed_db = dir.file("crashed.db");
  std::mt19937 random(20261122);
  // Spread over start-up, generation, verification and commits, short enough that the run
  // is still going at the tenth kill.
  std::uniform_real_distribution<double> instant(0.05, std::max(0.3, reference_seconds / 6));
  int kills = 0, kills_at_job_budget = 0;
  for (int i = 0; i < 10; ++i) {
    int cycles = remaining_cycles(crashed_db);
    if (cycles <= 0) break;
    Result<Database> watched = Database::open(crashed_db);
    REQUIRE(watched.ok());
    std::optional<int64_t> done_before = done_jobs(*watched);
    REQUIRE(done_before.has_value());
    pid_t pid = spawn_in_background(daemon_argv(crashed_db, config, cycles));
    double after = instant(random);
    auto kill_at = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(after));
    bool at_job_budget = false;
    while (std::chrono::steady_clock::now() < kill_at) {
      std::optional<int64_t> done = done_jobs(*watched);
      if (done && *done - *done_before >= jobs_per_run) {
        at_job_budget = true;
        break;
      }
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(5), kill_at - std::chrono::steady_clock::now()));
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
      ++kills;
      kills_at_job_budget += at_job_budget;
    } else {
      MESSAGE("run " << i << " ended by itself after " << after << " s with status " << WEXITSTATUS(status));
    }
  }
  MESSAGE("SIGKILLed the daemon " << kills << " times, " << kills_at_job_budget << " of them at " << jobs_per_run
                                  << " jobs done, before their instant");
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
