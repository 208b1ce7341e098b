// A job that crashes the daemon stops early and says so: the fatal signal on a worker's thread is
// recorded against that worker's job, and at store.job_max_crashes the job is dead and its sample
// failed as daemon.crash with the stage it was in. Other leases a crash leaves are interruptions.
#include <doctest/doctest.h>
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/process.h"
#include "store/database.h"
#include "test_support/query.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

// The chains' scratch folders go under `scratch_root`, a folder of the test's own, so that the test
// can see how far a chain got (crash_on_verify_job).
std::string write_config(const TempDir& dir, const std::string& scratch_root) {
  std::string path = dir.file("crash.json");
  nlohmann::json config = nlohmann::json::parse(R"({
    "log_level": "warn",
    "store": {"job_max_crashes": 2},
    "daemon": {"samples_per_cycle": 2, "compile_slots": 1, "progress": false, "fill_samples": 0},
    "eval": {"enabled": false}, "synth": {"enabled": false}, "retrain": {"enabled": false}
  })");
  config["verifier"]["scratch_root"] = scratch_root;
  std::ofstream(path) << config.dump(2);
  return path;
}

// Empties the scratch root, readable by the sandbox's user as /tmp would be, before a daemon starts:
// a folder found there afterwards is that daemon's (a crashed one leaves its folders behind).
void empty_scratch_root(const std::string& scratch_root) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::remove_all(scratch_root, error);
  fs::create_directories(scratch_root, error);
  REQUIRE_MESSAGE(!error, "cannot create " << scratch_root << ": " << error.message());
  fs::permissions(scratch_root, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(fs::path(scratch_root).parent_path(), fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The thread id of the daemon's first thread named `name` (a worker: "tf-w0"), or 0. Threads a
// worker starts for a chain's branches inherit its name; they come after it in /proc/PID/task,
// which lists threads in the order they were created, so the first is the worker itself.
pid_t first_thread_named(pid_t pid, const std::string& name) {
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (!dir) return 0;
  pid_t found = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::string comm = read_all(tasks + "/" + entry->d_name + "/comm");
    if (!comm.empty() && comm.substr(0, comm.find('\n')) == name) {
      found = static_cast<pid_t>(std::atoi(entry->d_name));
      break;
    }
  }
  closedir(dir);
  return found;
}

// The program text of the sample that job `job_id` verifies; "" when it cannot be read.
std::string sample_text_of_job(Database& db, int64_t job_id) {
  Result<Statement> select = db.prepare(
      "SELECT s.text FROM job j JOIN sample s ON s.id = json_extract(j.payload, '$.sample_id') WHERE j.id = ?1");
  if (!select) return "";
  select->bind(1, job_id);
  if (!select->step()) return "";
  return select->text(0);
}

// The scratch folder of the chain that verifies `cuda` once a stage of that chain has left
// something there beside the copied source (source.hip from translate.hip, nvcc's kept files from
// the NVIDIA stages, a stage's folder), else "".
std::string started_chain_folder(const std::string& scratch_root, const std::string& cuda) {
  namespace fs = std::filesystem;
  std::error_code error;
  for (fs::directory_iterator entry(scratch_root, error), end; !error && entry != end; entry.increment(error)) {
    std::string folder = entry->path().string();
    if (entry->path().filename().string().rfind("tailforge-verify-", 0) != 0) continue;
    if (read_all(folder + "/source.cu") != cuda) continue;
    std::error_code listing;
    for (fs::directory_iterator inside(folder, listing), last; !listing && inside != last; inside.increment(listing)) {
      if (inside->path().filename() != "source.cu") return folder;
    }
  }
  return "";
}

// Waits until a verify job (`job_id`, or any when 0) is leased and its chain is inside a stage,
// then sends SIGSEGV to the worker thread holding it. Returns the job's id, or 0 when none got
// that far within 3 minutes.
//
// Inside a stage is an event, not a delay: the worker thread names its stage ("translate.hip", which
// it runs itself) as the chain's stages start, and the stages write into the chain's scratch folder
// (verifier/chain.cpp), which lives as long as the chain. So once a stage has written there, the
// daemon is stopped (SIGSTOP) and, if the folder is still there (the chain has not ended), the
// worker thread gets SIGSEGV before the daemon goes on (SIGCONT): a stopped thread takes a pending
// signal before it runs another instruction of its own. (A generated program may fail its
// translation, inline PTX for one, so source.hip alone is no event to wait for.)
int64_t crash_on_verify_job(pid_t pid, const std::string& db_path, const std::string& scratch_root, int64_t job_id) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  int64_t leased = 0;
  std::string role, cuda;
  auto next_lookup = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (std::chrono::steady_clock::now() >= next_lookup) {  // which job, at most every 50 ms
      next_lookup = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
      leased = 0;
      Result<Database> db = Database::open(db_path);
      if (!db) continue;
      std::string row = query_text(*db, "SELECT id || ' ' || lease_owner FROM job WHERE kind = 'verify' AND state = 'leased'"
                                        " AND (" + std::to_string(job_id) + " = 0 OR id = " + std::to_string(job_id) +
                                        ") ORDER BY id LIMIT 1");
      if (row.empty()) continue;
      std::string owner = row.substr(row.find(' ') + 1);
      owner = owner.substr(0, owner.find('\n'));
      role = owner.substr(owner.rfind(':') + 1);
      cuda = sample_text_of_job(*db, std::stoll(row.substr(0, row.find(' '))));
      if (!cuda.empty()) leased = std::stoll(row.substr(0, row.find(' ')));
    }
    if (leased == 0) continue;
    std::string folder = started_chain_folder(scratch_root, cuda);
    if (folder.empty()) continue;

    if (kill(pid, SIGSTOP) != 0) return 0;
    siginfo_t info{};
    int waited;
    while ((waited = waitid(P_PID, static_cast<id_t>(pid), &info, WSTOPPED | WEXITED | WNOWAIT)) != 0 && errno == EINTR) {
    }
    if (waited != 0 || info.si_code != CLD_STOPPED) return 0;  // it ended by itself; the caller reaps it
    pid_t tid = first_thread_named(pid, "tf-" + role);
    std::error_code missing;
    if (tid == 0 || !std::filesystem::exists(folder + "/source.cu", missing)) {  // the chain ended meanwhile
      kill(pid, SIGCONT);
      continue;
    }
    syscall(SYS_tgkill, pid, tid, SIGSEGV);
    kill(pid, SIGCONT);
    return leased;
  }
  return 0;
}

}  // namespace

TEST_CASE("a job that crashes the daemon twice is dead, its sample failed as daemon.crash with its stage" *
          doctest::test_suite("long")) {
  TempDir dir;
  TempDir scratch;
  std::string scratch_root = scratch.file("chains");
  std::string config = write_config(dir, scratch_root);
  std::string db = dir.file("crash.db");
  std::vector<std::string> argv = {TAILFORGE_BINARY, "daemon", "--db", db, "--config", config, "--cycles", "1", "--no-progress"};

  int64_t crashed_job = 0;
  for (int crash = 1; crash <= 2; ++crash) {
    empty_scratch_root(scratch_root);
    pid_t pid = spawn_in_background(argv, dir.file("daemon.log"));
    int64_t job = crash_on_verify_job(pid, db, scratch_root, crashed_job);
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
  empty_scratch_root(scratch_root);
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
