#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
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

// What polling lease() until it handed a job out showed.
struct Polled {
  std::optional<Job> job;
  int refused_before_due = 0;  // empty answers from calls that had returned before `due_ms`
};

// Calls queue.lease(owner) until it hands out a job, checking that the queue honours `due_ms` (the
// lease expiry or next attempt time it stored) from both sides. The queue reads its clock, now_ms(),
// inside each call, so a call that returned before `due_ms` must come back empty and a call that
// began at or after it must hand the job out, however late the scheduler ran either: no fixed
// window is assumed. A refusal only shows something when a call got in before `due_ms`; the caller
// checks refused_before_due and, when a busy machine left no such call, tries again with a longer
// wait.
Polled poll_until_leased(JobQueue& queue, const std::string& owner, int64_t due_ms) {
  // The longest wait any test here asks for is about 10 s; a due time past a minute is a wrong one.
  REQUIRE_MESSAGE(due_ms - now_ms() <= 60000, "due at " << due_ms << " ms, over a minute away");
  Polled polled;
  while (true) {
    int64_t began = now_ms();
    Result<std::optional<Job>> leased = queue.lease(owner, 10000);
    int64_t returned = now_ms();
    REQUIRE(leased.ok());
    if (leased->has_value()) {
      CHECK_MESSAGE(returned >= due_ms, "handed out at " << returned << " ms, before it was due at " << due_ms);
      polled.job = std::move(**leased);
      return polled;
    }
    if (began >= due_ms) {
      FAIL_CHECK("refused at " << began << " ms, though due at " << due_ms);
      return polled;
    }
    if (returned < due_ms) ++polled.refused_before_due;
    sleep_ms(static_cast<int>(std::max<int64_t>(1, due_ms - now_ms())));
  }
}

// The waits below start at the old fixed windows and double, up to 256 times longer, while a busy
// machine let no lease() call in before the due time: only the precondition is retried, never a
// failed check.
constexpr int kMaxDoublings = 8;

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
  bool shown = false;  // a lease() call got in while the first lease still ran
  int64_t lease_ms = 30;
  for (int doubling = 0; !shown && doubling <= kMaxDoublings; ++doubling, lease_ms *= 2) {
    CAPTURE(lease_ms);
    Result<Database> db = Database::open(":memory:");
    REQUIRE(db.ok());
    JobQueue queue(*db, fast_policy());
    REQUIRE(queue.enqueue({.kind = "verify"}).ok());
    int64_t before = now_ms();
    Result<std::optional<Job>> first = queue.lease("crashed", lease_ms);
    int64_t after = now_ms();
    REQUIRE(first.ok());
    REQUIRE(first->has_value());
    REQUIRE((*first)->lease_expires_ms.has_value());
    int64_t expires = *(*first)->lease_expires_ms;
    CHECK(expires >= before + lease_ms);  // the lease runs lease_ms from when it was granted
    CHECK(expires <= after + lease_ms);
    Polled again = poll_until_leased(queue, "other", expires);
    REQUIRE(again.job.has_value());
    shown = again.refused_before_due > 0;
    CHECK(again.job->lease_owner == "other");
    CHECK(again.job->attempts == 2);
    CHECK_FALSE(queue.complete(again.job->id, "crashed").ok());
    CHECK(queue.complete(again.job->id, "other").ok());
  }
  CHECK_MESSAGE(shown, "no lease() call got in before the first lease expired, even with a lease of " << lease_ms / 2
                                                                                                      << " ms");
}

TEST_CASE("a failed job waits out an exponential backoff before it is leased again") {
  {
    Result<Database> db = Database::open(":memory:");
    REQUIRE(db.ok());
    JobQueue queue(*db, fast_policy());
    CHECK(queue.backoff_ms(1) == 40);
    CHECK(queue.backoff_ms(2) == 80);
    CHECK(queue.backoff_ms(3) == 160);
    CHECK(queue.backoff_ms(30) == 1000);
  }
  bool shown = false;  // a lease() call got in during the first backoff
  int64_t base_ms = 40;
  for (int doubling = 0; !shown && doubling <= kMaxDoublings; ++doubling, base_ms *= 2) {
    CAPTURE(base_ms);
    Result<Database> db = Database::open(":memory:");
    REQUIRE(db.ok());
    QueuePolicy policy = fast_policy();
    policy.backoff_base_ms = base_ms;
    policy.backoff_max_ms = 1000 * base_ms;
    JobQueue queue(*db, policy);
    int64_t id = queue.enqueue({.kind = "verify"})->id;
    REQUIRE(queue.lease("w", 10000)->has_value());
    int64_t failed_at = now_ms();
    REQUIRE(queue.fail(id, "w", "compiler crashed").ok());
    int64_t failed_by = now_ms();
    Result<std::optional<Job>> stored = queue.find(id);
    REQUIRE(stored.ok());
    CHECK((*stored)->state == "pending");
    CHECK((*stored)->last_error == "compiler crashed");
    // The first delay is the base, counted from the failure.
    CHECK((*stored)->next_attempt_ms >= failed_at + base_ms);
    CHECK((*stored)->next_attempt_ms <= failed_by + base_ms);
    Polled retry = poll_until_leased(queue, "w", (*stored)->next_attempt_ms);
    REQUIRE(retry.job.has_value());
    shown = retry.refused_before_due > 0;
    int64_t second_at = now_ms();
    REQUIRE(queue.fail(id, "w", "again").ok());
    int64_t second_by = now_ms();
    // The second delay is twice the first.
    int64_t next = (*queue.find(id))->next_attempt_ms;
    CHECK(next >= second_at + 2 * base_ms);
    CHECK(next <= second_by + 2 * base_ms);
  }
  CHECK_MESSAGE(shown, "no lease() call got in during the backoff, even with a base of " << base_ms / 2 << " ms");
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
  Result<std::optional<Job>> first = queue.lease("w", 10000);
  REQUIRE(first.ok());
  REQUIRE(first->has_value());
  std::optional<Job> held = **first;
  // Five deferrals whose wait a lease() call was seen to respect; a deferral that a busy machine let
  // no call into before its due time counts as a deferral all the same, and the next waits twice as long.
  int shown = 0;
  int64_t wait_ms = 30;
  for (int deferral = 0; shown < 5 && deferral < 5 + kMaxDoublings; ++deferral) {
    CAPTURE(deferral);
    CHECK(held->attempts == 1);
    int64_t due = now_ms() + wait_ms;
    REQUIRE(queue.defer(id, "w", due, "model remote paused: agent.llm.auth").ok());
    CHECK((*queue.find(id))->state == "pending");
    CHECK((*queue.find(id))->last_error == "model remote paused: agent.llm.auth");
    CHECK((*queue.find(id))->next_attempt_ms == due);
    CHECK_FALSE(queue.defer(id, "w", now_ms(), "not leased").ok());
    Polled next = poll_until_leased(queue, "w", due);
    REQUIRE(next.job.has_value());
    held = next.job;
    if (next.refused_before_due > 0) {
      ++shown;
    } else {
      wait_ms *= 2;
    }
  }
  CHECK_MESSAGE(shown == 5, "only " << shown << " deferrals had a lease() call in before their due time");
  CHECK(held->attempts == 1);
  REQUIRE(queue.complete(id, "w").ok());
}
