// run_branches: independent parts of a chain run at once, each on its own copy of the context,
// and their stages come back in branch order.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "verifier/stage_runner.h"
#include "test_support/tools_here.h"

using namespace tailforge;

namespace {

StageResult ok_stage(const std::string& name) {
  StageResult stage;
  stage.name = name;
  stage.status = "ok";
  return stage;
}

// Waits until `count` reaches `target`, for at most 20 s; false when it never did.
bool wait_for(const std::atomic<int>& count, int target) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (count.load() < target) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

TEST_CASE("branches run at once, see the stages before the split, and come back in branch order") {
  VerifierOptions options;
  Toolchains toolchains;
  StageContext context{options, toolchains, nullptr, nullptr, "/tmp", {}};
  context.add(ok_stage("before"));
  std::atomic<int> arrived{0};
  std::atomic<bool> all_met{true};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  // Each branch waits for every other one to have started: run one after another, none would
  // get past its wait.
  auto branch = [&](const std::string& name) {
    return [&, name](StageContext& own) {
      {
        std::lock_guard lock(mutex);
        threads.insert(std::this_thread::get_id());
      }
      CHECK(own.ok("before"));
      ++arrived;
      if (!wait_for(arrived, 3)) all_met = false;
      own.add(ok_stage(name + ".1"));
      own.add(ok_stage(name + ".2"));
    };
  };
  std::thread::id caller = std::this_thread::get_id();
  std::thread::id last_ran_on;
  run_branches(context, {branch("a"), branch("b"), [&](StageContext& own) {
                           last_ran_on = std::this_thread::get_id();
                           branch("c")(own);
                         }});
  CHECK(all_met);
  CHECK(threads.size() == 3);
  CHECK(last_ran_on == caller);
  std::vector<std::string> names;
  for (const StageResult& stage : context.stages) names.push_back(stage.name);
  CHECK(names == std::vector<std::string>{"before", "a.1", "a.2", "b.1", "b.2", "c.1", "c.2"});
}

TEST_CASE("a branch on its own thread gets its own connection to the compile cache's file") {
  std::string path = "/tmp/tf-branches-" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  Result<Database> db = Database::open(path);
  REQUIRE(db);
  VerifierOptions options;
  Toolchains toolchains;
  StageContext context{options, toolchains, &*db, nullptr, "/tmp", {}};
  Database* seen[2] = {nullptr, nullptr};
  std::string seen_path;
  run_branches(context, {[&](StageContext& own) {
                           seen[0] = own.cache_db;
                           if (own.cache_db) seen_path = own.cache_db->path();
                         },
                         [&](StageContext& own) { seen[1] = own.cache_db; }});
  CHECK(seen[0] != nullptr);
  CHECK(seen[0] != &*db);
  CHECK(seen_path == path);
  CHECK(seen[1] == &*db);
  CHECK(context.cache_db == &*db);
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

TEST_CASE("an exception in a branch is an error stage, and the other branches still finish") {
  VerifierOptions options;
  Toolchains toolchains;
  StageContext context{options, toolchains, nullptr, nullptr, "/tmp", {}};
  run_branches(context, {[](StageContext&) { throw std::runtime_error("boom"); },
                         [](StageContext& own) { own.add(ok_stage("b")); },
                         [](StageContext&) { throw std::runtime_error("bang"); }});
  REQUIRE(context.stages.size() == 3);
  CHECK(context.stages[0].name == "chain");
  CHECK(context.stages[0].status == "error");
  CHECK(context.stages[0].reason == "internal error: boom");
  CHECK(context.stages[1].name == "b");
  CHECK(context.stages[2].reason == "internal error: bang");
}

namespace {

// A gate whose every slot is handed out only after `delay`.
class SlowGate : public ResourceGate {
 public:
  explicit SlowGate(std::chrono::milliseconds delay) : delay_(delay) {}
  void acquire(ResourceKind) override { std::this_thread::sleep_for(delay_); }

 private:
  std::chrono::milliseconds delay_;
};

}  // namespace

TEST_CASE("a stage's seconds leave out the time it waited for its slot") {
  const Toolchains& toolchains = detected_toolchains();
  if (!testing::tools_here({"gcc"})) return;
  VerifierOptions options;
  SlowGate gate(std::chrono::milliseconds(1500));
  StageContext context{options, toolchains, nullptr, &gate, "/tmp", {}};
  ToolStep step;
  step.stage_name = "probe";
  step.tool_role = "gcc";
  step.args = {"--version"};
  auto start = std::chrono::steady_clock::now();
  StageResult stage = run_tool_stage(context, step);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(stage.ok());
  CHECK(wall >= 1.5);
  CHECK(stage.seconds < wall - 1.4);
  CHECK(stage.seconds >= 0);
}
