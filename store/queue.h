// The durable job queue: enqueue with an idempotency key, lease with an owner and expiry,
// complete, fail with exponential backoff, re-lease expired leases, dead-letter after N attempts.
// States: pending -> leased -> done, or back to pending (after a failure or an expired lease),
// or dead once attempts reach max_attempts. Every call is one short transaction.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct Job {
  int64_t id = 0;
  std::string kind;
  std::string payload;  // JSON text
  std::string state;
  int64_t priority = 0;
  std::optional<std::string> idempotency_key;
  std::optional<std::string> lease_owner;
  std::optional<int64_t> lease_expires_ms;
  int64_t attempts = 0;  // leases granted so far
  int64_t max_attempts = 0;
  int64_t next_attempt_ms = 0;
  std::optional<std::string> last_error;
};

struct QueuePolicy {
  int64_t max_attempts = 5;
  int64_t backoff_base_ms = 1000;     // delay after the first failure
  int64_t backoff_max_ms = 600000;    // cap on the delay
  int64_t max_interruptions = 20;     // leases lost to daemon deaths before a job is dead-lettered
  int64_t max_crashes = 2;            // daemon crashes on the job's own thread before it is dead-lettered
};

struct NewJob {
  std::string kind;
  std::string payload = "{}";
  std::optional<std::string> idempotency_key;
  int64_t priority = 0;
  std::optional<int64_t> max_attempts;  // QueuePolicy's when empty
};

struct EnqueueOutcome {
  int64_t id;
  bool inserted;  // false: a job with the same idempotency key already existed
};

class JobQueue {
 public:
  JobQueue(Database& db, QueuePolicy policy = {}) : db_(db), policy_(policy) {}

  Result<EnqueueOutcome> enqueue(const NewJob& job);
  // Leases the highest-priority ready job (pending and due, or leased with an expired lease),
  // optionally of the given kinds only. An expired lease whose attempts are used up goes dead.
  Result<std::optional<Job>> lease(const std::string& owner, int64_t lease_ms,
                                   const std::vector<std::string>& kinds = {});
  // Marks a job done; fails when the caller no longer holds the lease.
  Status complete(int64_t id, const std::string& owner);
  // Records a failure: back to pending with exponential backoff, or dead after max_attempts.
  Status fail(int64_t id, const std::string& owner, const std::string& error);
  // Puts a held job back to wait until `due_ms` without using up an attempt: the job could not
  // run for a reason outside it (its model's endpoint is paused). `reason` becomes its last error.
  Status defer(int64_t id, const std::string& owner, int64_t due_ms, const std::string& reason);
  // Extends a held lease.
  Status heartbeat(int64_t id, const std::string& owner, int64_t lease_ms);
  // Returns every lease held by owners other than `keep_owner` to pending (daemon start-up).
  // A lease lost to a dead daemon is an interruption, not a failed attempt; a job interrupted
  // max_interruptions times (it may be what kills the daemon) is dead-lettered.
  // Leases whose owner starts with `keep_prefix` are kept ("remote:" at daemon start: a remote
  // worker outlives the daemon, its lease expires by itself when it does not).
  Result<int> release_leases(const std::optional<std::string>& keep_owner = std::nullopt,
                             const std::string& keep_prefix = "");
  // Gives one held lease back as an interruption (the holder is stopping): pending again at once,
  // without using up an attempt.
  Status release(int64_t id, const std::string& owner);
  // Counts a crash of the daemon on the job's thread against a job it left leased: pending again,
  // or dead once max_crashes is reached, with `error` as its last error. Returns whether it is
  // dead now; a job that is not leased (already released, finished) is left alone (false).
  Result<bool> record_crash(int64_t id, const std::string& error);

  Result<std::optional<Job>> find(int64_t id);
  Result<std::optional<Job>> find_by_key(const std::string& idempotency_key);
  Result<std::vector<Job>> list(const std::optional<std::string>& state, int limit);
  Result<std::map<std::string, int64_t>> counts_by_state();
  int64_t backoff_ms(int64_t attempts) const;

 private:
  Database& db_;
  QueuePolicy policy_;
};

}  // namespace tailforge
