// A job that crashes the daemon stops early and says so: the fatal signal on a worker's thread is
// recorded against that worker's job, and at store.job_max_crashes the job is dead and its sample
// failed as daemon.crash with the stage it was in. Other leases a crash leaves are interruptions.
#include <doctest/doctest.h>
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "test_support/query.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"
#include "verifier/process.h"

using namespace tailforge;

namespace {

std::string write_config(const TempDir& dir) {
  std::string path = dir.file("crash.json");
  std::ofstream(path) << R"({
    "log_level": "warn",
    "store": {"job_max_crashes": 2},
    "daemon": {"samples_per_cycle": 2, "compile_slots": 1, "progress": false, "fill_samples": 0},
    "eval": {"enabled": false}, "synth": {"enabled": false}, "retrain": {"enabled": false}
  })";
  return path;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The thread id of the daemon's thread named `name` (a worker: "tf-w0"), or 0.
pid_t thread_named(pid_t pid, const std::string& name) {
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (!dir) return 0;
  pid_t found = 0;
  while (dirent* entry = readdir(dir)) {
    std::string comm = read_all(tasks + "/" + entry->d_name + "/comm");
    if (!comm.empty() && comm.substr(0, comm.find('\n')) == name) found = static_cast<pid_t>(std::atoi(entry->d_name));
  }
  closedir(dir);
  return found;
}

// Waits until a verify job (`job_id`, or any when 0) is leased, then sends SIGSEGV to the worker
// thread holding it. Returns the job's id, or 0 when none was leased in time.
int64_t crash_on_verify_job(pid_t pid, const std::string& db_path, int64_t job_id) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Result<Database> db = Database::open(db_path);
    if (!db) continue;
    std::string row = query_text(*db, "SELECT id || ' ' || lease_owner FROM job WHERE kind = 'verify' AND state = 'leased'"
                                      " AND (" + std::to_string(job_id) + " = 0 OR id = " + std::to_string(job_id) +
                                      ") ORDER BY id LIMIT 1");
    if (row.empty()) continue;
    int64_t leased = std::stoll(row.substr(0, row.find(' ')));
    std::string owner = row.substr(row.find(' ') + 1);
    owner = owner.substr(0, owner.find('\n'));
    std::string role = owner.substr(owner.rfind(':') + 1);
    pid_t tid = thread_named(pid, "tf-" + role);
    if (tid == 0) continue;
    // Give the chain a moment to be inside a stage, then crash that thread as a bug would.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    syscall(SYS_tgkill, pid, tid, SIGSEGV);
    return leased;
  }
  return 0;
}

}  // namespace

TEST_CASE("a job that crashes the daemon twice is dead, its sample failed as daemon.crash with its stage" *
          doctest::test_suite("long")) {
  TempDir dir;
  std::string config = write_config(dir);
  std::string db = dir.file("crash.db");
  std::vector<std::string> argv = {TAILFORGE_BINARY, "daemon", "--db", db, "--config", config, "--cycles", "1", "--no-progress"};

  int64_t crashed_job = 0;
  for (int crash = 1; crash <= 2; ++crash) {
    pid_t pid = spawn_in_background(argv, dir.file("daemon.log"));
    int64_t job = crash_on_verify_job(pid, db, crashed_job);
    if (job == 0) kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE_MESSAGE(job != 0, read_all(dir.file("daemon.log")));
    REQUIRE_MESSAGE(WIFSIGNALED(status), "the daemon ended by itself before the crash");
    CHECK(WTERMSIG(status) == SIGSEGV);
    if (crashed_job == 0) crashed_job = job;
    CHECK(job == crashed_job);
    // The handler recorded the crashing thread's job and the stage it was in.
    std::string records = read_all(db + ".crashes");
    CHECK(records.find("crash " + std::to_string(crashed_job) + " 11 ") == 0);
  }

  // The restart counts the second crash, gives the job up and fails its sample; the cycle ends.
  ProcessSpec rest;
  rest.argv = argv;
  rest.timeout_seconds = 300;
  ProcessResult ended = run_process(rest);
  INFO(ended.stderr_text);
  CHECK(ended.exit_code == 0);
  CHECK(ended.stderr_text.find("the job is dead (store.job_max_crashes)") != std::string::npos);

  Result<Database> opened = Database::open(db);
  REQUIRE(opened.ok());
  Database& store = *opened;
  std::string id = std::to_string(crashed_job);
  CHECK(query_text(store, "SELECT state || ' ' || crashes FROM job WHERE id = " + id) == "dead 2\n");
  CHECK(query_text(store, "SELECT last_error FROM job WHERE id = " + id).find("the daemon crashed (sigsegv)") == 0);
  std::string sample = query_text(store, "SELECT json_extract(payload, '$.sample_id') FROM job WHERE id = " + id);
  sample = sample.substr(0, sample.find('\n'));
  CHECK(query_text(store, "SELECT status FROM sample WHERE id = '" + sample + "'") == "failed\n");
  std::string failure = query_text(store, "SELECT category || ' ' || stage FROM failure WHERE sample_id = '" + sample + "'");
  CHECK(failure.rfind("daemon.crash ", 0) == 0);
  CHECK(failure.find(" daemon\n") == std::string::npos);  // the stage it was in, not a placeholder
  CHECK(read_all(db + ".crashes").empty());  // taken: a later start counts nothing again
  // The other sample's job was not blamed: it finished.
  CHECK(query_int(store, "SELECT count(*) FROM job WHERE kind = 'verify' AND state = 'dead'") == 1);

  // status and the taxonomy show it.
  ProcessSpec status;
  status.argv = {TAILFORGE_BINARY, "status", "--db", db, "--json"};
  ProcessResult shown = run_process(status);
  nlohmann::json json = nlohmann::json::parse(shown.stdout_text, nullptr, false);
  REQUIRE(json.is_object());
  CHECK(json["failures_by_category"].contains("daemon"));
  ProcessSpec taxonomy;
  taxonomy.argv = {TAILFORGE_BINARY, "taxonomy", "--db", db};
  ProcessResult tree = run_process(taxonomy);
  INFO(tree.stdout_text << tree.stderr_text);
  CHECK(tree.stdout_text.find("daemon") != std::string::npos);  // the tree: daemon, then crash below it
  CHECK(tree.stdout_text.find("crash") != std::string::npos);
}
