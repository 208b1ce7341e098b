#include "daemon/daemon.h"

#include <algorithm>
#include <fcntl.h>
#include <malloc.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <spdlog/spdlog.h>

#include "base/process.h"
#include "daemon/crash_recorder.h"
#include "daemon/disk_rules.h"
#include "daemon/logging.h"
#include "daemon/pipeline.h"
#include "daemon/planner.h"
#include "daemon/progress.h"
#include "daemon/resource_slots.h"
#include "daemon/scaleout.h"
#include "daemon/service_manager.h"
#include "daemon/worker_pool.h"
#include "policies/config.h"
#include "store/cache.h"
#include "store/corpus.h"
#include "store/retention.h"
#include "store/workers.h"

namespace tailforge {

namespace asio = boost::asio;

namespace {

// Holds an exclusive lock on <db>.lock for the daemon's lifetime: one daemon per database.
class DatabaseLock {
 public:
  static Result<std::unique_ptr<DatabaseLock>> acquire(const std::string& db_path) {
    std::string path = db_path + ".lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return make_error("cannot create lock file " + path);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return make_error("another tailforge daemon is running on " + db_path + " (lock " + path + " is held)");
    }
    return std::unique_ptr<DatabaseLock>(new DatabaseLock(fd));
  }
  ~DatabaseLock() { ::close(fd_); }

 private:
  explicit DatabaseLock(int fd) : fd_(fd) {}
  int fd_;
};

int64_t free_disk_mb(const std::string& db_path) {
  std::filesystem::path dir = std::filesystem::absolute(db_path).parent_path();
  struct statvfs info {};
  if (statvfs(dir.c_str(), &info) != 0) return -1;
  return static_cast<int64_t>(info.f_bavail) * static_cast<int64_t>(info.f_frsize) / (1024 * 1024);
}

std::string owner_prefix() { return host_name() + ":" + std::to_string(getpid()); }

PlannerOptions planner_options(const nlohmann::json& config, int64_t cycles, int workers) {
  const nlohmann::json& daemon = config["daemon"];
  PlannerOptions options;
  options.cycles_to_run = cycles;
  options.samples_per_cycle = daemon["samples_per_cycle"].get<int64_t>();
  options.cycles_in_flight = std::max<int64_t>(1, daemon.value("cycles_in_flight", 2));
  options.fill_samples = fill_samples_for(daemon["fill_samples"].get<int64_t>(), workers);
  options.seed = daemon["seed"].get<int64_t>();
  options.evaluation = config["eval"].value("enabled", true);
  options.synthesis = config["synth"].value("enabled", true);
  options.retrain = config["retrain"].value("enabled", true);
  return options;
}

QueuePolicy queue_policy(const nlohmann::json& config) {
  const nlohmann::json& store = config["store"];
  return {store["job_max_attempts"].get<int64_t>(), store["job_backoff_base_ms"].get<int64_t>(),
          store["job_backoff_max_ms"].get<int64_t>(), store["job_max_interruptions"].get<int64_t>(),
          store["job_max_crashes"].get<int64_t>()};
}

// Holds the compile cache under verifier.cache_max_mb, logging what it evicted.
void trim_compile_cache(Database& db, const nlohmann::json& config) {
  const int64_t cache_max_mb = config["verifier"]["cache_max_mb"].get<int64_t>();
  Result<CacheTrimOutcome> trimmed = cache_trim(db, "compile", cache_max_mb * 1024 * 1024);
  if (!trimmed) {
    spdlog::warn("compile cache not trimmed: {}", trimmed.message());
  } else if (trimmed->removed > 0) {
    spdlog::info("compile cache over {} MB: evicted {} least recently used entries ({:.0f} -> {:.0f} MB)",
                 cache_max_mb, trimmed->removed, trimmed->bytes_before / 1048576.0,
                 trimmed->bytes_after / 1048576.0);
  }
}

// Holds stored artifacts under store.artifact_cap_mb (store/retention's policy), logging what it freed.
void trim_artifacts(Database& db, const nlohmann::json& config) {
  const int64_t cap_mb = config["store"]["artifact_cap_mb"].get<int64_t>();
  if (cap_mb <= 0) return;
  Result<int64_t> bytes = artifact_bytes(db);
  if (!bytes) {
    spdlog::warn("artifact cap not checked: {}", bytes.message());
    return;
  }
  if (*bytes <= cap_mb * 1048576) return;
  Result<ArtifactGcPlan> freed = collect_artifacts(db, cap_mb * 1048576);
  if (!freed) {
    spdlog::warn("artifacts over store.artifact_cap_mb not freed: {}", freed.message());
    return;
  }
  spdlog::info("artifacts over {} MB: freed {} ({:.0f} -> {:.0f} MB); kept {:.0f} MB of verified, pending and "
               "evaluated data", cap_mb, freed->to_free.count, freed->total.bytes / 1048576.0,
               freed->bytes_after() / 1048576.0, freed->kept.bytes / 1048576.0);
}

struct CrashedJob {
  Job job;
  std::string stage;   // the verification stage its sample fails with
  std::string reason;
};

// Counts the crashes earlier runs recorded against the jobs their crashing threads worked on;
// returns the jobs that reached store.job_max_crashes and are dead now.
Result<std::vector<CrashedJob>> count_recorded_crashes(const std::string& db_path, JobQueue& queue) {
  Result<std::vector<CrashRecord>> records = take_crash_records(db_path);
  if (!records) return records.error();
  std::vector<CrashedJob> dead;
  for (const CrashRecord& record : *records) {
    std::string stage = record.stage.empty() ? "daemon" : record.stage;
    if (record.job_id == 0) {
      spdlog::error("the previous run crashed ({}) on a thread without a job", fatal_signal_name(record.signal));
      continue;
    }
    std::string reason = "the daemon crashed (" + fatal_signal_name(record.signal) + ") working on job " +
                         std::to_string(record.job_id) + " in stage " + stage;
    Result<bool> is_dead = queue.record_crash(record.job_id, reason);
    if (!is_dead) return is_dead.error();
    spdlog::error("the previous run ended in a crash: {}{}", reason,
                  *is_dead ? ": the job is dead (store.job_max_crashes)" : ": it runs again");
    if (!*is_dead) continue;
    Result<std::optional<Job>> job = queue.find(record.job_id);
    if (!job) return job.error();
    if (job->has_value()) dead.push_back({**job, stage, reason});
  }
  return dead;
}

// Process-wide memory settings for a run of days.
void bound_process_memory() {
  // Executables and tool outputs are megabytes each and live for one job. A fixed mmap threshold
  // gives every such buffer its own mapping, returned to the system when it is freed; glibc's
  // default raises the threshold after the first large free, so they would land in the heap and
  // leave it fragmented, and the resident size of a long run would creep up.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // glibc gives threads arenas of their own (up to 8 per core), and each keeps what its threads
  // freed: with a worker per core plus branch threads, that idle memory grew from cycle to cycle
  // (6.8 MiB kept free after one cycle against 1.9 MiB with one arena). Two arenas keep it
  // bounded; the per-thread caches in front of them keep allocation uncontended.
  mallopt(M_ARENA_MAX, 2);
  // Every connection's page cache may grow to 2 MiB, and the daemon holds one per worker, the
  // planner's and the progress line's: as the database grows they fill, a slow climb over a
  // weekend. One bound for all of them keeps SQLite's share flat.
  limit_sqlite_memory(int64_t{8} << 20);
}

// What the previous run left behind: crashes recorded against jobs (the jobs that reached
// store.job_max_crashes are returned, to be failed by the pipeline), remote leases that are
// leasable again, retrain events it left running. Installs this run's crash recorder.
Result<std::vector<CrashedJob>> recover_previous_run(const std::string& db_path, Database& db, JobQueue& queue) {
  // A crash on a job's thread counts against that job alone, before the other leases the dead
  // process left are given back as interruptions.
  Result<std::vector<CrashedJob>> crashed = count_recorded_crashes(db_path, queue);
  if (!crashed) return crashed.error();
  if (Status s = install_crash_recorder(db_path); !s) return s.error();
  // Leases of remote workers outlive a restart: a worker still running its job posts it.
  Result<int> released = queue.release_leases(std::nullopt, kRemoteOwnerPrefix);
  if (!released) return released.error();
  if (*released > 0) spdlog::info("resumed: {} jobs leased by a previous run are leasable again", *released);
  Result<int64_t> interrupted = mark_running_retrain_events_interrupted(db);
  if (!interrupted) return interrupted.error();
  if (*interrupted > 0) {
    spdlog::warn("{} retrain events were left running by a previous run: marked interrupted (retrain.on_interrupted "
                 "decides what happens to them)", *interrupted);
  }
  return crashed;
}

// Records the daemon's own workers as the worker "local", with what this host can run, so that
// status can say why a kind waits when neither they nor a remote worker may take it. Returns the
// kinds they may not lease (verify, when this host lacks what it needs or workers.local_verify
// is false).
Result<std::set<std::string>> register_local_worker(Database& db, const nlohmann::json& config,
                                                    const WorkerSettings& policy, Pipeline& pipeline) {
  WorkerRecord local;
  local.name = kLocalWorkerName;
  local.host = host_name();
  local.capabilities = host_capabilities(detected_toolchains(), config["sandbox"]["mode"].get<std::string>());
  std::set<std::string> excluded;
  std::vector<std::string> missing = missing_needs(policy, kVerifyJob, local.capabilities);
  if (!policy.local_verify || !missing.empty()) {
    excluded.insert(kVerifyJob);
    local.missing[kVerifyJob] = missing;
    spdlog::info("local workers lease no verify jobs ({}); they wait for tailforge worker processes",
                 policy.local_verify ? "this host lacks " + nlohmann::json(missing).dump() : "workers.local_verify is false");
  }
  for (const auto& [kind, handler] : pipeline.handlers())
    if (!excluded.count(kind)) local.kinds.push_back(kind);
  if (Status s = upsert_worker(db, local); !s) return s.error();
  // Workers gone for a day (a finished Slurm array) leave the status listing.
  if (Status s = forget_workers(db, now_ms() - 24 * 3600 * 1000); !s) return s.error();
  return excluded;
}

WorkerPoolOptions worker_pool_options(const nlohmann::json& config, const std::string& db_path, int workers,
                                      std::set<std::string> excluded_kinds) {
  WorkerPoolOptions pool_options;
  pool_options.excluded_kinds = std::move(excluded_kinds);
  pool_options.db_path = db_path;
  pool_options.workers = workers;
  // One more worker for the cycle's serial steps: with every other worker on a verification (the
  // planner fills idle workers), a step would otherwise wait for one to finish. And workers for
  // evaluations, as many as requests may be in flight to a model's endpoint
  // (llm.max_concurrent_requests): each asks, then judges under the compile slots, so the server
  // stays busy while earlier answers are verified. Idle, they ask the queue once a second.
  pool_options.dedicated = {
      {"step", 1, {kSynthesizeJob, kRetrainJob, kEvaluateModelsJob}},
      {"eval", std::clamp(config["llm"]["max_concurrent_requests"].get<int>(), 1, 256), {kEvaluateJob}, 1000}};
  pool_options.owner_prefix = owner_prefix();
  pool_options.lease_ms = config["store"]["job_lease_ms"].get<int64_t>();
  pool_options.queue_policy = queue_policy(config);
  return pool_options;
}

// The event loop: one Boost.Asio context on the daemon's thread turns the planner every 100 ms,
// redraws the progress line every second, checks the disk every 10 s and handles signals. The
// work itself runs on the worker pool.
class EventLoop {
 public:
  EventLoop(const DaemonOptions& options, nlohmann::json& config, Database& db, Database& progress_db,
            WorkerPool& pool, CyclePlanner& planner, DaemonControl& control, ServiceManager& service,
            ProgressLine& progress)
      : options_(options), config_(config), db_(db), progress_db_(progress_db), pool_(pool), planner_(planner),
        control_(control), service_(service), progress_(progress),
        grace_seconds_(config["daemon"]["drain_grace_seconds"].get<double>()),
        min_free_mb_(config["daemon"]["min_free_disk_mb"].get<int64_t>()) {}

  // Runs until the cycles are done, a drain finished or a second signal came.
  void run() {
    arm_signals();
    arm_planner();
    arm_progress();
    check_disk();
    io_.run();
  }
  // Waits for a drain begun by a signal or over HTTP to give up its grace period.
  void wait_for_drain() {
    if (drain_thread_.joinable()) drain_thread_.join();
  }

 private:
  // Running jobs get drain_grace_seconds to finish; then the loop stops.
  void begin_drain(const char* why) {
    if (drain_thread_.joinable()) return;
    control_.drain_requested = true;
    spdlog::info("draining ({}): running jobs get {:.0f} s to finish", why, grace_seconds_);
    service_.stopping(std::string(why) + ", draining");
    service_.extend_stop_timeout(grace_seconds_ + 30);
    drain_thread_ = std::thread([this] {
      bool clean = pool_.drain(grace_seconds_);
      if (!clean) spdlog::warn("drain grace period over: {} jobs stay leased and resume on restart", pool_.running());
      asio::post(io_, [this] { io_.stop(); });
    });
  }

  // SIGHUP reloads the configuration; SIGINT or SIGTERM drains, and a second one stops at once.
  void arm_signals() {
    signals_.async_wait([this](const boost::system::error_code& error, int signal_number) {
      if (error) return;
      if (signal_number == SIGHUP) {
        reload_config();
      } else if (control_.drain_requested) {
        spdlog::warn("second signal: stopping now; unfinished jobs resume on restart");
        io_.stop();
        return;
      } else {
        begin_drain(signal_number == SIGINT ? "SIGINT" : "SIGTERM");
      }
      arm_signals();
    });
  }

  void reload_config() {
    service_.reloading();
    Result<nlohmann::json> reloaded = load_config_layers({options_.base_config_file, options_.config_file});
    if (!reloaded) {
      spdlog::error("SIGHUP: configuration not reloaded: {}", reloaded.message());
    } else {
      config_ = *reloaded;
      planner_.set_options(planner_options(config_, options_.cycles, pool_.workers()));
      if (Status level = set_log_level(config_.value("log_level", "info")); !level) {
        spdlog::error("SIGHUP: {}", level.message());
      }
      spdlog::info("SIGHUP: configuration reloaded from {}",
                   options_.config_file.empty() ? "the defaults" : options_.config_file);
    }
    service_.ready(reloaded ? "configuration reloaded" : "configuration not reloaded: " + reloaded.message());
  }

  void arm_planner() {
    planner_timer_.expires_after(std::chrono::milliseconds(100));
    planner_timer_.async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      service_.watchdog_tick();  // only while this loop turns: a hung loop gets restarted
      pool_.set_paused(control_.paused);
      if (control_.drain_requested && !drain_thread_.joinable()) begin_drain("HTTP drain");
      bool may_start = !control_.paused && !control_.drain_requested && !control_.disk_low;
      Result<PlannerStep> step = planner_.tick(may_start);
      if (!step) {
        spdlog::error("planner: {}", step.message());
      } else {
        if (step->enqueued) pool_.wake();
        if (step->finished_cycle) progress_.cycle_finished(*step->finished_cycle);
      }
      if (planner_.done() && !control_.drain_requested) {
        spdlog::info("all {} cycles done", planner_.cycles_run());
        asio::post(io_, [this] { io_.stop(); });
        return;
      }
      arm_planner();
    });
  }

  void arm_progress() {
    progress_timer_.expires_after(std::chrono::seconds(1));
    progress_timer_.async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      service_.status(progress_.update(progress_db_, planner_.current_cycle(), planner_.cycles_run()));
      if (Status s = touch_worker(progress_db_, kLocalWorkerName, std::nullopt); !s) {
        spdlog::warn("worker registry: {}", s.message());
      }
      arm_progress();
    });
  }

  // Below daemon.min_free_disk_mb, generation and synthesis pause; the caches and artifacts are
  // held under their caps (read each time, so a SIGHUP-reloaded value applies at the next check).
  void check_disk() {
    int64_t free_mb = free_disk_mb(options_.db_path);
    bool low = free_mb >= 0 && free_mb < min_free_mb_;
    if (low != control_.disk_low) {
      control_.disk_low = low;
      if (low) {
        spdlog::warn("disk space low: {} MB free next to {} (watermark {} MB); generation paused", free_mb,
                     options_.db_path, min_free_mb_);
        pool_.set_blocked_kinds({kGenerateJob, kSynthesizeJob});
      } else {
        spdlog::info("disk space recovered: {} MB free; generation resumes", free_mb);
        pool_.set_blocked_kinds({});
      }
    }
    trim_compile_cache(db_, config_);
    trim_artifacts(db_, config_);
    apply_disk_rules(db_, config_, options_.db_path);
    disk_timer_.expires_after(std::chrono::seconds(10));
    disk_timer_.async_wait([this](const boost::system::error_code& error) {
      if (!error) check_disk();
    });
  }

  const DaemonOptions& options_;
  nlohmann::json& config_;
  Database& db_;
  Database& progress_db_;
  WorkerPool& pool_;
  CyclePlanner& planner_;
  DaemonControl& control_;
  ServiceManager& service_;
  ProgressLine& progress_;
  const double grace_seconds_;
  const int64_t min_free_mb_;

  asio::io_context io_;
  asio::signal_set signals_{io_, SIGINT, SIGTERM, SIGHUP};
  asio::steady_timer planner_timer_{io_};
  asio::steady_timer progress_timer_{io_};
  asio::steady_timer disk_timer_{io_};
  std::thread drain_thread_;
};

}  // namespace

Status run_daemon(const DaemonOptions& options) {
  bound_process_memory();
  Result<std::unique_ptr<DatabaseLock>> lock = DatabaseLock::acquire(options.db_path);
  if (!lock) return lock.error();
  Result<Database> opened = Database::open(options.db_path);
  if (!opened) return opened.error();
  Database& db = *opened;
  nlohmann::json config = options.config;
  JobQueue queue(db, queue_policy(config));
  Result<std::vector<CrashedJob>> crashed = recover_previous_run(options.db_path, db, queue);
  if (!crashed) return crashed.error();

  ResourceSlots slots;
  Result<std::shared_ptr<Pipeline>> pipeline = make_pipeline(config, options.db_path, slots);
  if (!pipeline) return pipeline.error();
  for (const CrashedJob& dead : *crashed) {
    if (Status s = (*pipeline)->fail_crashed_job(db, dead.job, dead.stage, dead.reason); !s) return s;
  }

  Result<WorkerSettings> worker_policy = worker_settings(config);
  if (!worker_policy) return worker_policy.error();
  Result<std::set<std::string>> local_excluded = register_local_worker(db, config, *worker_policy, **pipeline);
  if (!local_excluded) return local_excluded.error();
  WorkerPoolOptions pool_options =
      worker_pool_options(config, options.db_path, (*pipeline)->worker_count(), std::move(*local_excluded));
  WorkerPool pool(pool_options, (*pipeline)->handlers());

  CyclePlanner planner(db, queue, planner_options(config, options.cycles, pool_options.workers));
  DaemonControl control;

  std::unique_ptr<DaemonServer> server;
  if (!options.listen.empty()) {
    if (!options.start_server) return make_error("--listen needs a server, and this daemon was started without one");
    ServedLoop served{options.listen, config, options.db_path, control, *worker_policy, queue_policy(config),
                      *pipeline, [&pool] { pool.wake(); }};
    Result<std::unique_ptr<DaemonServer>> started = options.start_server(served);
    if (!started) return started.error();
    server = std::move(*started);
    spdlog::info("HTTP API listening on {}; dashboard at http://{}/", server->address(), server->address());
  }

  if (Status s = pool.start(); !s) return s;
  spdlog::info("daemon started on {}: {} workers, cycles {}, an early cycle fills idle workers with up to {} more samples",
               options.db_path, pool_options.workers, options.cycles > 0 ? std::to_string(options.cycles) : "unbounded",
               planner.options().fill_samples);
  ServiceManager service;
  service.ready("started on " + options.db_path + ": " + std::to_string(pool_options.workers) + " workers");

  ProgressLine progress(options.progress_line && config["daemon"]["progress"].get<bool>(), options.cycles);
  Result<Database> progress_db = Database::open(options.db_path);
  if (!progress_db) return progress_db.error();

  EventLoop loop(options, config, db, *progress_db, pool, planner, control, service, progress);
  loop.run();

  progress.finish();
  loop.wait_for_drain();
  if (pool.running() > 0) {
    // Stopped before the running jobs finished: their leases are released on the next start.
    spdlog::warn("stopping with {} jobs unfinished; they resume on restart", pool.running());
    spdlog::shutdown();
    std::_Exit(0);
  }
  pool.stop();
  if (server) server->stop();
  trim_compile_cache(db, config);  // a short run ends under the caps too, not only at the next start
  trim_artifacts(db, config);
  spdlog::info("daemon stopped after {} cycles", planner.cycles_run());
  return {};
}

}  // namespace tailforge
