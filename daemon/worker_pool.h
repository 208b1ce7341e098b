// Worker threads that lease jobs from the durable queue and run the handler for each job's kind,
// plus dedicated workers that take only some kinds (the cycle's serial steps, evaluations).
// Each worker owns its own SQLite connection. A handler completes its job itself, inside the
// transaction that stores its results; a handler error puts the job back with backoff.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/queue.h"

namespace tailforge {

using JobHandler = std::function<Status(Database& db, JobQueue& queue, const Job& job, const std::string& owner)>;

struct WorkerPoolOptions {
  std::string db_path;
  int workers = 2;
  // Extra workers that lease only some kinds: one for the cycle's serial steps, so that a step
  // never waits for a busy worker to finish a long verification; several for evaluations, so
  // that requests to a model's server are in flight while earlier answers are verified.
  struct Dedicated {
    std::string role;  // names the threads and their leases: "step", "eval"
    int count = 0;
    std::set<std::string> kinds;
    int idle_ms = 200;  // how often an idle one asks the queue (a wake() asks at once)
  };
  std::vector<Dedicated> dedicated;
  // Kinds these workers never lease (verify, when only remote workers may run it).
  std::set<std::string> excluded_kinds;
  std::string owner_prefix = "worker";
  int64_t lease_ms = 600000;
  QueuePolicy queue_policy;
};

class WorkerPool {
 public:
  WorkerPool(WorkerPoolOptions options, std::map<std::string, JobHandler> handlers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Opens one connection per worker and starts the threads.
  Status start();
  // Paused workers finish their current job and lease nothing new until resumed.
  void set_paused(bool paused);
  // Kinds that may not be leased for now (e.g. "generate" while the disk is nearly full).
  void set_blocked_kinds(std::set<std::string> kinds);
  // Wakes idle workers (new jobs were enqueued).
  void wake();
  // General workers (the dedicated ones not counted).
  int workers() const { return options_.workers; }
  // Number of jobs being handled right now.
  int running() const { return running_.load(); }
  // Stops leasing, waits for running jobs up to `grace_seconds`; true when all finished.
  bool drain(double grace_seconds);
  // Stops and joins every thread (after drain, or abandoning jobs still running).
  void stop();

 private:
  void work(int index, Database db);
  // The kinds worker `index` may lease now; nullopt: any kind.
  std::optional<std::vector<std::string>> leasable_kinds(int index);
  // The dedicated group of worker `index`; nullptr for a general worker.
  const WorkerPoolOptions::Dedicated* group_of(int index) const;

  WorkerPoolOptions options_;
  std::map<std::string, JobHandler> handlers_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> paused_{false};
  std::atomic<bool> draining_{false};
  std::atomic<int> running_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::set<std::string> blocked_kinds_;
};

}  // namespace tailforge
