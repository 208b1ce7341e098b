#include "daemon/worker_pool.h"

#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>

#include <spdlog/spdlog.h>

#include "verifier/thread_stack.h"
#include "verifier/work_label.h"

namespace tailforge {

WorkerPool::WorkerPool(WorkerPoolOptions options, std::map<std::string, JobHandler> handlers)
    : options_(std::move(options)), handlers_(std::move(handlers)) {}

WorkerPool::~WorkerPool() { stop(); }

Status WorkerPool::start() {
  std::vector<Database> connections;
  int threads = options_.workers;
  for (const WorkerPoolOptions::Dedicated& group : options_.dedicated) threads += group.count;
  for (int i = 0; i < threads; ++i) {
    Result<Database> db = Database::open(options_.db_path);
    if (!db) return db.error();
    connections.push_back(std::move(*db));
  }
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, i, db = std::move(connections[i])]() mutable { work(i, std::move(db)); });
  }
  return {};
}

void WorkerPool::set_paused(bool paused) {
  paused_ = paused;
  wake();
}

void WorkerPool::set_blocked_kinds(std::set<std::string> kinds) {
  std::lock_guard lock(mutex_);
  blocked_kinds_ = std::move(kinds);
}

void WorkerPool::wake() { wake_.notify_all(); }

const WorkerPoolOptions::Dedicated* WorkerPool::group_of(int index) const {
  int first = options_.workers;
  for (const WorkerPoolOptions::Dedicated& group : options_.dedicated) {
    if (index >= first && index < first + group.count) return &group;
    first += group.count;
  }
  return nullptr;
}

std::optional<std::vector<std::string>> WorkerPool::leasable_kinds(int index) {
  const WorkerPoolOptions::Dedicated* group = group_of(index);
  std::lock_guard lock(mutex_);
  if (blocked_kinds_.empty() && options_.excluded_kinds.empty() && !group) return std::nullopt;
  std::vector<std::string> kinds;
  for (const auto& [kind, handler] : handlers_) {
    if (blocked_kinds_.count(kind) || options_.excluded_kinds.count(kind)) continue;
    if (group && !group->kinds.count(kind)) continue;
    kinds.push_back(kind);
  }
  return kinds;
}

bool WorkerPool::drain(double grace_seconds) {
  draining_ = true;
  wake();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
  while (running_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return running_.load() == 0;
}

void WorkerPool::stop() {
  stopping_ = true;
  wake();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

void WorkerPool::work(int index, Database db) {
  ensure_alternate_signal_stack();  // so that a stack overflow still reaches the crash recorder
  JobQueue queue(db, options_.queue_policy);
  const WorkerPoolOptions::Dedicated* group = group_of(index);
  std::string role = (group ? group->role : "w") + std::to_string(index);
  const int idle_ms = group ? group->idle_ms : 200;
  std::string owner = options_.owner_prefix + ":" + role;
  // `top -H` and /proc/PID/task/TID/comm name the worker as its leases do ("tf-w3").
  pthread_setname_np(pthread_self(), ("tf-" + role).substr(0, 15).c_str());
  auto idle_wait = [&](int ms) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(ms));
  };
  while (!stopping_) {
    if (paused_ || draining_) {
      idle_wait(200);
      continue;
    }
    std::optional<std::vector<std::string>> kinds = leasable_kinds(index);
    if (kinds && kinds->empty()) {  // every kind this worker may take is blocked
      idle_wait(200);
      continue;
    }
    Result<std::optional<Job>> leased = queue.lease(owner, options_.lease_ms, kinds.value_or(std::vector<std::string>{}));
    if (!leased) {
      spdlog::warn("{}: leasing a job: {}", owner, leased.message());
      idle_wait(1000);
      continue;
    }
    if (!leased->has_value()) {
      idle_wait(idle_ms);
      continue;
    }
    const Job& job = **leased;
    auto handler = handlers_.find(job.kind);
    ++running_;
    Status status;
    if (handler == handlers_.end()) {
      status = make_error("no handler for job kind '" + job.kind + "'");
    } else {
      try {
        JobLabel label(job.id);  // a crash of the daemon from here on is this job's
        status = handler->second(db, queue, job, owner);
      } catch (const std::exception& e) {
        status = make_error(std::string("unexpected exception: ") + e.what());
      }
    }
    --running_;
    if (!status) {
      spdlog::warn("job {} ({}) failed on attempt {}: {}", job.id, job.kind, job.attempts, status.message());
      if (Status failed = queue.fail(job.id, owner, status.message()); !failed) {
        spdlog::error("job {}: recording its failure: {}", job.id, failed.message());
      }
    }
    // A job's transient buffers (tool output, corpus texts, artifacts) are freed by now; hand the
    // free pages, and the stack the job reached below this frame, back so that the resident size
    // of a long run follows what is live.
    malloc_trim(0);
    release_unused_stack();
  }
}

}  // namespace tailforge
