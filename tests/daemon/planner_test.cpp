// The cycle planner on a real SQLite file, its jobs worked by hand: when the next cycle starts
// while the current one finishes, what the current cycle's steps can see of it, and how each
// cycle counts its samples.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "daemon/planner.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/samples.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

// Leases the next ready job and checks its kind and cycle.
Job lease_next(JobQueue& queue, const std::string& kind, int64_t cycle) {
  Result<std::optional<Job>> job = queue.lease("test", 60000);
  REQUIRE(job);
  REQUIRE(job->has_value());
  Job leased = **job;
  CHECK(leased.kind == kind);
  CHECK(nlohmann::json::parse(leased.payload)["cycle"].get<int64_t>() == cycle);
  return leased;
}

Job work_next(JobQueue& queue, const std::string& kind, int64_t cycle) {
  Job leased = lease_next(queue, kind, cycle);
  REQUIRE(queue.complete(leased.id, "test"));
  return leased;
}

// A verified sample of `cycle` with feature `tag`, as a verify job stores it.
std::string store_verified(Database& db, int64_t cycle, const std::string& text, const std::string& tag) {
  Sample sample;
  sample.track = "cuda2hip";
  sample.origin = "template";
  sample.language = "cuda";
  sample.text = text;
  sample.features = {tag};
  sample.cycle_id = cycle;
  Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
  REQUIRE(inserted);
  REQUIRE(set_sample_status(db, inserted->id, "verified"));
  return inserted->id;
}

std::string status_of(Database& db, const std::string& id) {
  Result<std::optional<Sample>> sample = find_sample(db, id);
  REQUIRE(sample);
  REQUIRE(sample->has_value());
  return (*sample)->status;
}

bool feature_seen(Database& db, const std::string& tag) {
  Result<std::vector<std::string>> seen = features_seen(db, "cuda2hip");
  REQUIRE(seen);
  return std::find(seen->begin(), seen->end(), tag) != seen->end();
}

PlannerOptions two_cycles() {
  return PlannerOptions{.cycles_to_run = 2, .samples_per_cycle = 2, .seed = 5, .evaluation = false,
                        .synthesis = true, .retrain = false};
}

}  // namespace

TEST_CASE("the next cycle starts once every job of the current one has a worker; its verdicts stay hidden until the current one finishes") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("planner.db"));
  REQUIRE(db);
  JobQueue queue(*db);
  CyclePlanner planner(*db, queue, two_cycles());

  Result<PlannerStep> step = planner.tick(true);
  REQUIRE(step);
  REQUIRE(step->started_cycle == 1);
  // A job still waits for a worker: no second cycle yet.
  Job first = lease_next(queue, "generate", 1);
  step = planner.tick(true);
  REQUIRE(step);
  CHECK_FALSE(step->started_cycle.has_value());
  Job second = lease_next(queue, "generate", 1);
  // Not while paused or draining.
  step = planner.tick(false);
  REQUIRE(step);
  CHECK_FALSE(step->started_cycle.has_value());
  step = planner.tick(true);
  REQUIRE(step);
  REQUIRE(step->started_cycle == 2);
  CHECK(planner.current_cycle() == 1);
  CHECK(running_cycles(*db)->size() == 2);

  // The current cycle's samples are judged; a sample of the next one is deferred: it stays
  // pending, and tail detection neither counts it nor sees its feature.
  REQUIRE(queue.complete(first.id, "test"));
  REQUIRE(queue.complete(second.id, "test"));
  store_verified(*db, 1, "__global__ void a() {}", "atomics");
  store_verified(*db, 1, "__global__ void b() {}", "atomics");
  std::string early = store_verified(*db, 2, "__global__ void c() {}", "warp_shuffle");
  CHECK(status_of(*db, early) == "pending");
  CHECK(*verified_count(*db, "cuda2hip") == 2);
  CHECK_FALSE(feature_seen(*db, "warp_shuffle"));

  // The current cycle's steps go before the next cycle's generation.
  REQUIRE(planner.tick(true));
  work_next(queue, "synthesize", 1);
  REQUIRE(queue.enqueue(NewJob{.kind = "verify", .payload = R"({"cycle": 1, "sample_id": "s"})"}));
  step = planner.tick(true);
  REQUIRE(step);
  CHECK_FALSE(step->started_cycle.has_value());  // two cycles were asked for
  work_next(queue, "verify", 1);
  std::string synthesized = store_verified(*db, 1, "__global__ void a_synthesized() {}", "atomics");
  CHECK(status_of(*db, synthesized) == "verified");

  // The current cycle finishes with its own samples; the deferred verdict is released.
  step = planner.tick(true);
  REQUIRE(step);
  REQUIRE(step->finished_cycle.has_value());
  CHECK(step->finished_cycle->id == 1);
  CHECK(step->finished_cycle->verified == 3);
  CHECK_FALSE(planner.done());
  CHECK(planner.current_cycle() == 2);
  CHECK(status_of(*db, early) == "verified");
  CHECK(*verified_count(*db, "cuda2hip") == 4);
  CHECK(feature_seen(*db, "warp_shuffle"));

  // The next cycle goes on as the current one; no third cycle starts, two were asked for.
  Job next_generate = work_next(queue, "generate", 2);
  CHECK(next_generate.priority < 0);
  work_next(queue, "generate", 2);
  step = planner.tick(true);
  REQUIRE(step);
  CHECK_FALSE(step->started_cycle.has_value());
  work_next(queue, "synthesize", 2);
  step = planner.tick(true);
  REQUIRE(step);
  REQUIRE(step->finished_cycle.has_value());
  CHECK(step->finished_cycle->id == 2);
  CHECK(step->finished_cycle->verified == 1);
  CHECK(planner.done());
}

TEST_CASE("a restarted planner resumes both running cycles, the older one as current") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("planner.db"));
  REQUIRE(db);
  JobQueue queue(*db);
  PlannerOptions options = two_cycles();
  options.cycles_to_run = 3;
  options.samples_per_cycle = 1;
  {
    CyclePlanner planner(*db, queue, options);
    REQUIRE(planner.tick(true));
    lease_next(queue, "generate", 1);
    Result<PlannerStep> step = planner.tick(true);
    REQUIRE(step);
    REQUIRE(step->started_cycle == 2);
  }
  std::string early = store_verified(*db, 2, "__global__ void d() {}", "atomics");
  CHECK(status_of(*db, early) == "pending");

  // The dead daemon's lease goes back to pending, as start-up does.
  REQUIRE(queue.release_leases());
  CyclePlanner restarted(*db, queue, options);
  Result<PlannerStep> step = restarted.tick(true);
  REQUIRE(step);
  CHECK(restarted.cycles_run() == 2);
  CHECK(restarted.current_cycle() == 1);
  CHECK_FALSE(step->started_cycle.has_value());
  work_next(queue, "generate", 1);
  REQUIRE(restarted.tick(true));  // queues cycle 1's synthesize step
  work_next(queue, "synthesize", 1);
  step = restarted.tick(true);
  REQUIRE(step);
  REQUIRE(step->finished_cycle.has_value());
  CHECK(step->finished_cycle->id == 1);
  CHECK(status_of(*db, early) == "verified");
  CHECK(restarted.current_cycle() == 2);
}

TEST_CASE("cycles start ahead while workers would idle, up to the cycles-in-flight cap") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("planner.db"));
  REQUIRE(db);
  JobQueue queue(*db);
  PlannerOptions options = two_cycles();
  options.cycles_to_run = 0;  // until stopped
  options.samples_per_cycle = 1;
  options.cycles_in_flight = 3;
  CyclePlanner planner(*db, queue, options);
  for (int64_t cycle = 1; cycle <= 3; ++cycle) {
    Result<PlannerStep> step = planner.tick(true);
    REQUIRE(step);
    CHECK(step->started_cycle == cycle);
    Result<PlannerStep> waiting = planner.tick(true);  // its generate job waits for a worker
    REQUIRE(waiting);
    CHECK_FALSE(waiting->started_cycle.has_value());
    lease_next(queue, "generate", cycle);
  }
  Result<PlannerStep> step = planner.tick(true);
  REQUIRE(step);
  CHECK_FALSE(step->started_cycle.has_value());
  CHECK(running_cycles(*db)->size() == 3);
  CHECK(planner.current_cycle() == 1);
}

TEST_CASE("with one cycle in flight a cycle starts only after the one before it has closed") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("planner.db"));
  REQUIRE(db);
  JobQueue queue(*db);
  PlannerOptions options = two_cycles();
  options.samples_per_cycle = 1;
  options.cycles_in_flight = 1;
  CyclePlanner planner(*db, queue, options);
  REQUIRE(planner.tick(true)->started_cycle == 1);
  lease_next(queue, "generate", 1);
  Result<PlannerStep> step = planner.tick(true);
  REQUIRE(step);
  CHECK_FALSE(step->started_cycle.has_value());
  CHECK(running_cycles(*db)->size() == 1);
}

TEST_CASE("while the current cycle's steps leave workers idle, the newest early cycle generates more, up to fill_samples") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("planner.db"));
  REQUIRE(db);
  JobQueue queue(*db);
  PlannerOptions options = two_cycles();
  options.samples_per_cycle = 4;
  options.cycles_in_flight = 2;
  options.fill_samples = 3;
  CyclePlanner planner(*db, queue, options);
  REQUIRE(planner.tick(true)->started_cycle == 1);
  std::vector<Job> current;
  for (int i = 0; i < 4; ++i) current.push_back(lease_next(queue, "generate", 1));  // cycle 1 stays open
  REQUIRE(planner.tick(true)->started_cycle == 2);
  // Cycle 2's own jobs wait for workers: no fill yet.
  Result<PlannerStep> waiting = planner.tick(true);
  REQUIRE(waiting);
  CHECK_FALSE(waiting->enqueued);
  for (int i = 0; i < 4; ++i) work_next(queue, "generate", 2);
  // Nothing pending while cycle 1 is still open: a batch of samples_per_cycle / 4 = 1 more.
  std::vector<int64_t> indexes;
  for (int round = 0; round < 5; ++round) {
    Result<PlannerStep> step = planner.tick(true);
    REQUIRE(step);
    if (!step->enqueued) break;
    Job extra = work_next(queue, "generate", 2);
    indexes.push_back(nlohmann::json::parse(extra.payload)["index"].get<int64_t>());
    CHECK(extra.priority == -1);
  }
  CHECK(indexes == std::vector<int64_t>{4, 5, 6});  // up to 4 + 3, then no more
  CHECK(find_cycle(*db, 2)->value().planned == 7);
  CHECK(find_cycle(*db, 1)->value().planned == 4);  // the current cycle's set stays as planned
  // Paused or draining (may_start false): no fill.
  options.fill_samples = 10;
  planner.set_options(options);
  Result<PlannerStep> paused = planner.tick(false);
  REQUIRE(paused);
  CHECK_FALSE(paused->enqueued);
  // A pending job anywhere means workers are not idle: no fill either.
  REQUIRE(queue.enqueue({.kind = "verify", .payload = R"({"cycle": 2})"}).ok());
  Result<PlannerStep> busy = planner.tick(true);
  REQUIRE(busy);
  CHECK_FALSE(busy->enqueued);
  for (const Job& job : current) REQUIRE(queue.complete(job.id, "test"));
}

TEST_CASE("the fill scales with the host's workers unless daemon.fill_samples sets it") {
  CHECK(fill_samples_for(-1, 2) == 48);    // 2 compile slots
  CHECK(fill_samples_for(-1, 20) == 480);  // 16 compile slots and 4 GPU slots
  CHECK(fill_samples_for(-1, 0) == 24);
  CHECK(fill_samples_for(0, 20) == 0);     // no fill
  CHECK(fill_samples_for(7, 20) == 7);
}
