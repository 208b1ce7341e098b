#include <doctest/doctest.h>

#include <thread>

#include "store/queue.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

QueuePolicy fast_policy() {
  QueuePolicy policy;
  policy.max_attempts = 3;
  policy.backoff_base_ms = 40;
  policy.backoff_max_ms = 1000;
  return policy;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

TEST_CASE("a job is leased once, completed, and not leased again") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("q.db"));
  REQUIRE(db.ok());
  JobQueue queue(*db, fast_policy());
  Result<EnqueueOutcome> job = queue.enqueue({.kind = "generate", .payload = R"({"index":1})"});
  REQUIRE(job.ok());
  Result<std::optional<Job>> leased = queue.lease("worker-a", 10000);
  REQUIRE(leased.ok());
  REQUIRE(leased->has_value());
  CHECK((*leased)->id == job->id);
  CHECK((*leased)->payload == R"({"index":1})");
  CHECK((*leased)->attempts == 1);
  // The lease's start is kept, so the wait for a worker and the run can be told apart later.
  Result<Statement> started = db->prepare("SELECT created_ms <= started_ms AND started_ms <= updated_ms FROM job");
  REQUIRE(started.ok());
  REQUIRE(started->step());
  CHECK(started->int64(0) == 1);
  started->reset();
  Result<std::optional<Job>> none = queue.lease("worker-b", 10000);
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  CHECK_FALSE(queue.complete(job->id, "worker-b").ok());
  REQUIRE(queue.complete(job->id, "worker-a").ok());
  CHECK(queue.counts_by_state()->at("done") == 1);
  CHECK_FALSE(queue.lease("worker-b", 10000)->has_value());
}

TEST_CASE("the same idempotency key enqueues one job") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  JobQueue queue(*db, fast_policy());
  Result<EnqueueOutcome> first = queue.enqueue({.kind = "verify", .idempotency_key = "verify:abc"});
  Result<EnqueueOutcome> second = queue.enqueue({.kind = "verify", .idempotency_key = "verify:abc"});
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->inserted);
  CHECK_FALSE(second->inserted);
  CHECK(first->id == second->id);
  CHECK(queue.counts_by_state()->at("pending") == 1);
}

TEST_CASE("an expired lease is leased again by another owner") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  JobQueue queue(*db, fast_policy());
  REQUIRE(queue.enqueue({.kind = "verify"}).ok());
  REQUIRE(queue.lease("crashed", 30)->has_value());
  CHECK_FALSE(queue.lease("other", 10000)->has_value());
  sleep_ms(50);
  Result<std::optional<Job>> again = queue.lease("other", 10000);
  REQUIRE(again.ok());
  REQUIRE(again->has_value());
  CHECK((*again)->lease_owner == "other");
  CHECK((*again)->attempts == 2);
  CHECK_FALSE(queue.complete((*again)->id, "crashed").ok());
  CHECK(queue.complete((*again)->id, "other").ok());
}

TEST_CASE("a failed job waits out an exponential backoff before it is leased again") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  JobQueue queue(*db, fast_policy());
  CHECK(queue.backoff_ms(1) == 40);
  CHECK(queue.backoff_ms(2) == 80);
  CHECK(queue.backoff_ms(3) == 160);
  CHECK(queue.backoff_ms(30) == 1000);
  int64_t id = queue.enqueue({.kind = "verify"})->id;
  REQUIRE(queue.lease("w", 10000)->has_value());
  int64_t failed_at = now_ms();
  REQUIRE(queue.fail(id, "w", "compiler crashed").ok());
  Result<std::optional<Job>> stored = queue.find(id);
  REQUIRE(stored.ok());
  CHECK((*stored)->state == "pending");
  CHECK((*stored)->last_error == "compiler crashed");
  CHECK((*stored)->next_attempt_ms >= failed_at + 40);
  CHECK_FALSE(queue.lease("w", 10000)->has_value());
  sleep_ms(60);
  REQUIRE(queue.lease("w", 10000)->has_value());
  REQUIRE(queue.fail(id, "w", "again").ok());
  CHECK((*queue.find(id))->next_attempt_ms - now_ms() > 40);  // the second delay is 80 ms
}

TEST_CASE("a job is dead-lettered after its last attempt, failed or expired") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  QueuePolicy policy = fast_policy();
  policy.backoff_base_ms = 0;
  JobQueue queue(*db, policy);
  int64_t failing = queue.enqueue({.kind = "verify", .max_attempts = 2})->id;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    Result<std::optional<Job>> job = queue.lease("w", 10000);
    REQUIRE(job->has_value());
    REQUIRE(queue.fail(failing, "w", "boom " + std::to_string(attempt)).ok());
  }
  CHECK((*queue.find(failing))->state == "dead");
  CHECK((*queue.find(failing))->last_error == "boom 2");

  int64_t poison = queue.enqueue({.kind = "verify", .max_attempts = 1})->id;
  REQUIRE(queue.lease("w", 20)->has_value());
  sleep_ms(30);
  CHECK_FALSE(queue.lease("w", 10000)->has_value());
  CHECK((*queue.find(poison))->state == "dead");
  CHECK(queue.counts_by_state()->at("dead") == 2);
}

TEST_CASE("leases are handed out by priority, then age, and by kind when asked") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  JobQueue queue(*db, fast_policy());
  int64_t low = queue.enqueue({.kind = "generate"})->id;
  int64_t high = queue.enqueue({.kind = "verify", .priority = 5})->id;
  int64_t synth = queue.enqueue({.kind = "synthesize"})->id;
  CHECK((*queue.lease("w", 1000))->id == high);
  CHECK((*queue.lease("w", 1000, {"synthesize"}))->id == synth);
  CHECK((*queue.lease("w", 1000))->id == low);
}

TEST_CASE("leases of a previous daemon are released on start-up") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  JobQueue queue(*db, fast_policy());
  int64_t id = queue.enqueue({.kind = "verify"})->id;
  REQUIRE(queue.lease("old-daemon", 600000)->has_value());
  Result<int> released = queue.release_leases(std::string("new-daemon"));
  REQUIRE(released.ok());
  CHECK(*released == 1);
  Result<std::optional<Job>> job = queue.lease("new-daemon", 1000);
  REQUIRE(job->has_value());
  CHECK((*job)->id == id);
  CHECK((*job)->attempts == 1);
}

TEST_CASE("a job whose leases keep dying with the daemon is dead-lettered after max_interruptions") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  QueuePolicy policy = fast_policy();
  policy.max_interruptions = 3;
  JobQueue queue(*db, policy);
  int64_t id = queue.enqueue({.kind = "verify"})->id;
  for (int restart = 1; restart <= 3; ++restart) {
    REQUIRE(queue.lease("daemon-" + std::to_string(restart), 600000)->has_value());
    REQUIRE(queue.release_leases().ok());
  }
  Result<std::optional<Job>> job = queue.find(id);
  CHECK((*job)->state == "dead");
  CHECK((*job)->last_error == "interrupted 3 times");
}

TEST_CASE("a crash on a job's thread counts against that job alone, and max_crashes makes it dead") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  QueuePolicy policy = fast_policy();
  policy.max_crashes = 2;
  JobQueue queue(*db, policy);
  int64_t culprit = queue.enqueue({.kind = "verify", .payload = R"({"n":1})"})->id;
  int64_t bystander = queue.enqueue({.kind = "verify", .payload = R"({"n":2})"})->id;
  for (int crash = 1; crash <= 2; ++crash) {
    REQUIRE(queue.lease("daemon-" + std::to_string(crash), 600000)->has_value());
    REQUIRE(queue.lease("daemon-" + std::to_string(crash), 600000)->has_value());
    Result<bool> dead = queue.record_crash(culprit, "the daemon crashed (sigsegv) in stage compare");
    REQUIRE(dead.ok());
    CHECK(*dead == (crash == 2));
    REQUIRE(queue.release_leases().ok());  // the bystander: an interruption, not a crash
  }
  Result<std::optional<Job>> job = queue.find(culprit);
  CHECK((*job)->state == "dead");
  CHECK((*job)->last_error == "the daemon crashed (sigsegv) in stage compare");
  CHECK((*job)->attempts == 0);  // a crash is not a failed attempt
  CHECK((*queue.find(bystander))->state == "pending");
  // A job not leased any more (finished, or already released) is left alone.
  Result<bool> again = queue.record_crash(bystander, "late record");
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
  CHECK((*queue.find(bystander))->last_error != "late record");
}

TEST_CASE("a restart releases local leases and keeps remote ones; a holder may give its lease back") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("q.db"));
  REQUIRE(db.ok());
  JobQueue queue(*db, fast_policy());
  REQUIRE(queue.enqueue({.kind = "verify", .idempotency_key = "a"}).ok());
  REQUIRE(queue.enqueue({.kind = "verify", .idempotency_key = "b"}).ok());
  Result<std::optional<Job>> local = queue.lease("daemon-1:w0", 60000);
  Result<std::optional<Job>> remote = queue.lease("remote:node7/1f", 60000);
  REQUIRE((local.ok() && local->has_value() && remote.ok() && remote->has_value()));

  Result<int> released = queue.release_leases(std::nullopt, "remote:");
  REQUIRE(released.ok());
  CHECK(*released == 1);
  CHECK(queue.find((*local)->id).value()->state == "pending");
  CHECK(queue.find((*remote)->id).value()->lease_owner == std::optional<std::string>("remote:node7/1f"));

  CHECK_FALSE(queue.release((*remote)->id, "remote:node7/other").ok());
  REQUIRE(queue.release((*remote)->id, "remote:node7/1f").ok());
  std::optional<Job> back = queue.find((*remote)->id).value();
  CHECK(back->state == "pending");
  CHECK(back->attempts == 0);  // an interruption, not a failed attempt
}

TEST_CASE("a deferred job waits until its due time and uses up no attempt, however often it is deferred") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  JobQueue queue(*db, fast_policy());  // 3 attempts
  int64_t id = queue.enqueue({.kind = "evaluate"})->id;
  for (int i = 0; i < 5; ++i) {
    Result<std::optional<Job>> leased = queue.lease("w", 10000);
    REQUIRE(leased->has_value());
    CHECK((*leased)->attempts == 1);
    REQUIRE(queue.defer(id, "w", now_ms() + 30, "model remote paused: agent.llm.auth").ok());
    CHECK((*queue.find(id))->state == "pending");
    CHECK((*queue.find(id))->last_error == "model remote paused: agent.llm.auth");
    CHECK_FALSE(queue.lease("w", 10000)->has_value());
    sleep_ms(40);
  }
  CHECK_FALSE(queue.defer(id, "w", now_ms(), "not leased").ok());
  REQUIRE(queue.lease("w", 10000)->has_value());
  REQUIRE(queue.complete(id, "w").ok());
}
