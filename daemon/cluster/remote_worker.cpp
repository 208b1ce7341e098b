#include "daemon/cluster/remote_worker.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "base/parallel.h"
#include "base/process.h"
#include "base/sha256.h"
#include "daemon/cluster/daemon_client.h"
#include "daemon/cluster/verify_wire.h"
#include "daemon/evaluation_jobs.h"
#include "daemon/loaded_policies.h"
#include "daemon/resource_slots.h"
#include "daemon/scaleout.h"
#include "daemon/verify/sample_verification.h"

namespace tailforge {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// The content-addressed side of a worker's jobs: inputs fetched from the daemon once and cached
// in the work folder by SHA-256, outputs uploaded only where the daemon lacks them, and each
// job's outputs kept until its result is posted (the daemon may ask for some again).
class ArtifactExchange {
 public:
  ArtifactExchange(DaemonClient& client, std::string cache_dir) : client_(client), cache_dir_(std::move(cache_dir)) {}

  // Bytes of a content address: the local cache, else the daemon (then cached).
  std::optional<std::string> fetch(const std::string& address) {
    fs::path cached = fs::path(cache_dir_) / address;
    std::ifstream in(cached, std::ios::binary);
    if (in) {
      std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (sha256_hex(content) == address) return content;
    }
    Reply reply = client_.get("/v1/artifacts/" + address);
    if (reply.status != 200 || sha256_hex(reply.body) != address) return std::nullopt;
    fs::path partial = cached.string() + ".part" + std::to_string(gettid());
    {
      std::ofstream out(partial, std::ios::binary);
      out << reply.body;
    }
    std::error_code ec;
    fs::rename(partial, cached, ec);
    return reply.body;
  }

  // Uploads the blobs the daemon lacks (asking which), or exactly `only`.
  Status upload(const Blobs& blobs, std::vector<std::string> only = {}) {
    if (only.empty()) {
      nlohmann::json addresses = nlohmann::json::array();
      for (const auto& [address, content] : blobs) addresses.push_back(address);
      if (addresses.empty()) return {};
      Reply reply = client_.post("/v1/artifacts/missing", {{"sha256", addresses}});
      if (reply.status != 200) return make_error("asking which artifacts to upload: " + reply_text(reply));
      only = reply.json().value("missing", std::vector<std::string>{});
    }
    for (const std::string& address : only) {
      auto blob = blobs.find(address);
      if (blob == blobs.end()) return make_error("the daemon asks for " + address + ", which this job did not make");
      Reply reply = client_.put("/v1/artifacts/" + address, blob->second);
      if (reply.status != 201) return make_error("uploading " + address + ": " + reply_text(reply));
    }
    return {};
  }

  void keep_for(int64_t job_id, Blobs blobs) {
    std::lock_guard lock(mutex_);
    kept_[job_id] = std::move(blobs);
  }

  Blobs take_kept(int64_t job_id) {
    std::lock_guard lock(mutex_);
    auto kept = kept_.find(job_id);
    if (kept == kept_.end()) return {};
    Blobs blobs = std::move(kept->second);
    kept_.erase(kept);
    return blobs;
  }

 private:
  DaemonClient& client_;
  const std::string cache_dir_;
  std::mutex mutex_;
  std::map<int64_t, Blobs> kept_;
};

// Heartbeats a job's lease from a thread of its own while the job runs: every third of the lease,
// and at least every 20 s, so that status keeps a busy worker live (store/status.h).
class LeaseHeartbeat {
 public:
  LeaseHeartbeat(DaemonClient& client, const std::string& worker, int64_t job_id, const std::string& lease,
                 int64_t lease_ms)
      : thread_([this, &client, worker, job_id, lease, lease_ms] {
          auto next = Clock::now();
          while (!done_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (Clock::now() < next) continue;
            next = Clock::now() + std::chrono::milliseconds(std::clamp<int64_t>(lease_ms / 3, 200, 20000));
            Reply reply = client.post("/v1/workers/heartbeat", {{"name", worker}, {"job_id", job_id}, {"lease", lease}});
            if (reply.status == 409 && !lost_.exchange(true)) {
              spdlog::warn("worker {}: job {}: {}", worker, job_id, reply_text(reply));
            }
          }
        }) {}
  ~LeaseHeartbeat() { stop(); }

  // Stops heartbeating; true when the daemon said the lease was lost meanwhile.
  bool stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return lost_;
  }

 private:
  std::atomic<bool> done_{false};
  std::atomic<bool> lost_{false};
  std::thread thread_;  // last: it starts once the flags exist
};

class Worker {
 public:
  Worker(const RemoteWorkerOptions& options, const std::atomic<bool>& stop) : options_(options), stop_(stop), client_({options.server, options.token, options.ca_file}, stop) {}

  Status start() {
    Result<nlohmann::json> config = fetch_config();
    if (!config) return config.error();
    config_ = *config;
    Result<std::unique_ptr<LoadedPolicies>> resources = load_policies(config_);
    if (!resources) return make_error("the daemon's configuration: " + resources.message());
    resources_ = std::move(*resources);
    Result<Toolchains> toolchains = toolchains_without(detect_toolchains(), options_.without);
    if (!toolchains) return toolchains.error();
    toolchains_ = std::move(*toolchains);
    capabilities_ = host_capabilities(toolchains_, config_["sandbox"]["mode"].get<std::string>());
    std::error_code ec;
    fs::create_directories(fs::path(options_.work_dir) / "blobs", ec);
    if (ec) return make_error("cannot create " + options_.work_dir + ": " + ec.message());
    Result<Database> cache = Database::open((fs::path(options_.work_dir) / "cache.db").string());
    if (!cache) return make_error("the worker's compile cache: " + cache.message());
    // The daemon's limits on this host: compile processes and GPU programs at once, whatever --jobs.
    SlotSizes sizes = size_slots(config_, toolchains_, slots_);
    // One scratch folder per job thread: two threads never share a sample's folder.
    for (int i = 0; i < options_.jobs; ++i) {
      verifiers_.push_back(std::make_unique<SampleVerifier>(
          *resources_, (fs::path(options_.work_dir) / "scratch" / std::to_string(i)).string(), &gate_, toolchains_));
    }
    spdlog::info("worker {}: {} jobs at once, {} compile slots, {} GPU slots", options_.name, options_.jobs, sizes.compile,
                 sizes.gpu);
    spdlog::info("worker {} on {}: {} can run {}", options_.name, host_name(), options_.server, capabilities_["stages"].dump());
    return {};
  }

  void run() {
    run_on_threads(options_.jobs, [this](size_t i) { loop(*verifiers_[i]); });
    spdlog::info("worker {}: {} jobs stored, {} failed, {} not stored (lease lost)", options_.name, stored_.load(),
                 failed_.load(), lost_.load());
  }

 private:
  Result<nlohmann::json> fetch_config() {
    auto deadline = Clock::now() + std::chrono::duration<double>(options_.connect_seconds);
    double wait = 0.5;
    while (true) {
      Reply reply = client_.get("/v1/workers/config");
      if (reply.status == 200 && reply.json().contains("config")) return reply.json()["config"];
      if (reply.status == 401 || reply.status == 403) return make_error("the daemon refused the token: " + reply_text(reply));
      // A certificate that does not verify will not verify on a retry either.
      if (reply.status == 0 && reply.error.find("SSL") != std::string::npos) {
        return make_error("TLS with " + options_.server + " failed: " + reply.error +
                          (options_.ca_file.empty() ? " (a private CA needs --ca-file)" : ""));
      }
      if (reply.status != 0 && reply.status != 503) return make_error("GET /v1/workers/config: " + reply_text(reply));
      if (Clock::now() > deadline || stop_) return make_error("the daemon at " + options_.server + " is unreachable: " + reply_text(reply));
      spdlog::info("waiting for the daemon at {}: {}", options_.server, reply_text(reply));
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      wait = std::min(wait * 2, 10.0);
    }
  }

  bool finished() {
    if (stop_) return true;
    if (options_.max_jobs > 0 && reserved_.load() >= options_.max_jobs) return true;
    std::lock_guard lock(mutex_);
    return options_.idle_exit_seconds > 0 &&
           std::chrono::duration<double>(Clock::now() - last_busy_).count() > options_.idle_exit_seconds;
  }

  void loop(const SampleVerifier& verifier) {
    {
      std::lock_guard lock(mutex_);
      last_busy_ = Clock::now();
    }
    while (!finished()) {
      // A thread reserves its job before leasing, so that --max-jobs is never exceeded.
      if (options_.max_jobs > 0 && ++reserved_ > options_.max_jobs) break;
      Reply reply = client_.post("/v1/workers/lease",
                                 {{"name", options_.name}, {"host", host_name()}, {"capabilities", capabilities_}});
      nlohmann::json body = reply.json();
      if (reply.status != 200 || !body.contains("job") || body["job"].is_null()) {
        if (reply.status != 200) {
          spdlog::warn("worker {}: leasing: {}", options_.name, reply_text(reply));
        } else if (body.contains("missing") && !body["missing"].empty() && !warned_missing_.exchange(true)) {
          spdlog::warn("worker {}: the daemon offers this worker no job: it lacks {}", options_.name, body["missing"].dump());
        }
        if (options_.max_jobs > 0) --reserved_;
        std::this_thread::sleep_for(std::chrono::duration<double>(options_.poll_seconds));
        continue;
      }
      run_job(body, verifier);
      std::lock_guard lock(mutex_);
      last_busy_ = Clock::now();
    }
  }

  void run_job(const nlohmann::json& leased, const SampleVerifier& verifier) {
    int64_t job_id = leased["job"]["id"].get<int64_t>();
    std::string lease = leased.value("lease", std::string());
    int64_t lease_ms = leased.value("lease_ms", int64_t{60000});
    spdlog::info("worker {}: job {} ({}), attempt {}", options_.name, job_id, leased["job"]["kind"].get<std::string>(),
                 leased["job"].value("attempt", 0));
    LeaseHeartbeat heartbeat(client_, options_.name, job_id, lease, lease_ms);
    nlohmann::json result = verify(leased, verifier);
    bool lost = heartbeat.stop();
    if (stop_) {
      // Stopping (SIGTERM from Slurm's scancel or a terminal's Ctrl-C) reached the job's tools as
      // well: what they reported says nothing about the sample. Another worker takes the job now.
      result = {{"release", "the worker is stopping"}};
    } else if (lost) {
      spdlog::warn("worker {}: job {}: the lease was lost while it ran; posting anyway (the daemon decides)",
                   options_.name, job_id);
    }
    result["lease"] = lease;
    post_result(job_id, result);
  }

  // The job's output or error, as posted.
  nlohmann::json verify(const nlohmann::json& leased, const SampleVerifier& verifier) {
    try {
      Result<VerifyInput> input =
          verify_input_from_json(leased.at("input"), [this](const std::string& address) { return artifacts_.fetch(address); });
      if (!input) return {{"error", input.message()}};
      Result<Database> cache = Database::open((fs::path(options_.work_dir) / "cache.db").string());
      Result<VerifyOutput> output = verifier.run(*input, cache ? &*cache : nullptr);
      if (!output) return {{"error", output.message()}};
      Blobs blobs;
      nlohmann::json wire = verify_output_to_json(*output, blobs);
      if (Status s = artifacts_.upload(blobs); !s) return {{"error", s.message()}};
      artifacts_.keep_for(leased["job"]["id"].get<int64_t>(), std::move(blobs));
      return {{"output", wire}};
    } catch (const std::exception& e) {
      return {{"error", std::string("worker exception: ") + e.what()}};
    }
  }

  // Posts until the daemon answers: a lost answer is retried, and the daemon stores a result once.
  void post_result(int64_t job_id, nlohmann::json result) {
    result["name"] = options_.name;
    result["job_id"] = job_id;
    Blobs blobs = artifacts_.take_kept(job_id);
    double wait = 0.5;
    for (int attempt = 0; attempt < 40; ++attempt) {
      Reply reply = client_.post("/v1/workers/result", result);
      nlohmann::json body = reply.json();
      if (reply.status == 200) {
        if (body.value("stored", false)) {
          ++stored_;
        } else if (body.value("duplicate", false)) {
          spdlog::info("worker {}: job {} was already stored", options_.name, job_id);
        } else if (body.value("released", false)) {
          spdlog::info("worker {}: job {} given back", options_.name, job_id);
        } else {
          ++failed_;
        }
        return;
      }
      if (reply.status == 409 && body.contains("missing")) {  // artifacts dropped meanwhile: send them again
        if (Status s = artifacts_.upload(blobs, body["missing"].get<std::vector<std::string>>()); !s) {
          spdlog::warn("worker {}: job {}: {}", options_.name, job_id, s.message());
          std::this_thread::sleep_for(std::chrono::duration<double>(wait));
          wait = std::min(wait * 2, 15.0);
        }
        continue;
      }
      if (reply.status != 0 && reply.status < 500) {
        spdlog::warn("worker {}: job {} not stored: {}", options_.name, job_id, reply_text(reply));
        ++lost_;
        return;
      }
      if (stop_ && attempt >= 2) break;  // stopping, and the daemon does not answer: the lease will expire
      spdlog::warn("worker {}: posting job {}: {}; retrying in {:.1f} s", options_.name, job_id, reply_text(reply), wait);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      wait = std::min(wait * 2, 15.0);
    }
    ++lost_;
  }

  const RemoteWorkerOptions& options_;
  const std::atomic<bool>& stop_;
  DaemonClient client_;
  ArtifactExchange artifacts_{client_, (fs::path(options_.work_dir) / "blobs").string()};
  nlohmann::json config_;
  std::unique_ptr<LoadedPolicies> resources_;
  Toolchains toolchains_;
  nlohmann::json capabilities_;
  ResourceSlots slots_;
  SlotGate gate_{slots_};
  std::vector<std::unique_ptr<SampleVerifier>> verifiers_;
  std::mutex mutex_;
  Clock::time_point last_busy_ = Clock::now();
  std::atomic<int64_t> reserved_{0}, stored_{0}, failed_{0}, lost_{0};
  std::atomic<bool> warned_missing_{false};
};

}  // namespace

Status run_remote_worker(const RemoteWorkerOptions& options, const std::atomic<bool>& stop) {
  Worker worker(options, stop);
  if (Status s = worker.start(); !s) return s;
  worker.run();
  return {};
}

}  // namespace tailforge
