#include "daemon/remote_worker.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "daemon/evaluation_jobs.h"
#include "daemon/resource_slots.h"
#include "daemon/sample_verification.h"
#include "daemon/scaleout.h"
#include "daemon/verify_wire.h"
#include "store/sha256.h"

namespace tailforge {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// One HTTP exchange's outcome: status 0 when no answer came (connection refused, timeout).
struct Reply {
  int status = 0;
  std::string body;
  std::string error;  // what went wrong when status is 0
  nlohmann::json json() const {
    nlohmann::json value = nlohmann::json::parse(body, nullptr, false);
    return value.is_discarded() ? nlohmann::json::object() : value;
  }
};

class DaemonClient {
 public:
  DaemonClient(const RemoteWorkerOptions& options, const std::atomic<bool>& stop) : options_(options), stop_(stop) {}

  Reply get(const std::string& path) { return call([&](httplib::Client& c) { return c.Get(path, headers()); }); }
  Reply post(const std::string& path, const nlohmann::json& body) {
    std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return call([&](httplib::Client& c) { return c.Post(path, headers(), text, "application/json"); });
  }
  Reply put(const std::string& path, const std::string& bytes) {
    return call([&](httplib::Client& c) { return c.Put(path, headers(), bytes, "application/octet-stream"); });
  }

 private:
  httplib::Headers headers() const { return {{"Authorization", "Bearer " + options_.token}}; }

  // A request that got no answer (connection refused or reset, timeout) is sent again, up to three
  // times over about 7 s, unless the worker is stopping: every request may be repeated safely.
  template <typename Send>
  Reply call(Send send) {
    Reply reply;
    for (int attempt = 0; attempt < 4; ++attempt) {
      if (attempt > 0 && stop_) break;
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(1 << (attempt - 1)));
      reply = call_once(send);
      // TLS verification failures are not retried: they do not go away.
      if (reply.status != 0 || reply.error.find("SSL") != std::string::npos) break;
    }
    return reply;
  }

  template <typename Send>
  Reply call_once(Send send) {
    httplib::Client client(options_.server);
    client.set_connection_timeout(10, 0);
    client.set_read_timeout(120, 0);
    client.set_write_timeout(120, 0);
    if (!options_.ca_file.empty()) client.set_ca_cert_path(options_.ca_file.c_str());
    httplib::Result result = send(client);
    Reply reply;
    if (!result) {
      reply.error = httplib::to_string(result.error());
      return reply;
    }
    reply.status = result->status;
    reply.body = result->body;
    return reply;
  }

  const RemoteWorkerOptions& options_;
  const std::atomic<bool>& stop_;
};

std::string reply_text(const Reply& reply) {
  if (reply.status == 0) return "no answer (" + reply.error + ")";
  nlohmann::json body = reply.json();
  return "HTTP " + std::to_string(reply.status) + (body.contains("error") ? ": " + body["error"].get<std::string>() : "");
}

class Worker {
 public:
  Worker(const RemoteWorkerOptions& options, const std::atomic<bool>& stop) : options_(options), stop_(stop), client_(options, stop) {}

  Status start() {
    Result<nlohmann::json> config = fetch_config();
    if (!config) return config.error();
    config_ = *config;
    Result<std::unique_ptr<EvaluationResources>> resources = load_evaluation_resources(config_);
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
    std::vector<std::thread> threads;
    for (int i = 0; i < options_.jobs; ++i) threads.emplace_back([this, i] { loop(*verifiers_[i]); });
    for (std::thread& thread : threads) thread.join();
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

  // Bytes of a content address: the local cache, else the daemon (then cached).
  std::optional<std::string> fetch_blob(const std::string& address) {
    fs::path cached = fs::path(options_.work_dir) / "blobs" / address;
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

  void run_job(const nlohmann::json& leased, const SampleVerifier& verifier) {
    int64_t job_id = leased["job"]["id"].get<int64_t>();
    std::string lease = leased.value("lease", std::string());
    int64_t lease_ms = leased.value("lease_ms", int64_t{60000});
    spdlog::info("worker {}: job {} ({}), attempt {}", options_.name, job_id, leased["job"]["kind"].get<std::string>(),
                 leased["job"].value("attempt", 0));
    std::atomic<bool> done{false};
    std::atomic<bool> lost{false};
    std::thread heartbeat([&] {
      auto next = Clock::now();
      while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (Clock::now() < next) continue;
        // At least every 20 s, so that status keeps a busy worker live (store/status.h).
        next = Clock::now() + std::chrono::milliseconds(std::clamp<int64_t>(lease_ms / 3, 200, 20000));
        Reply reply = client_.post("/v1/workers/heartbeat", {{"name", options_.name}, {"job_id", job_id}, {"lease", lease}});
        if (reply.status == 409 && !lost.exchange(true)) {
          spdlog::warn("worker {}: job {}: {}", options_.name, job_id, reply_text(reply));
        }
      }
    });
    nlohmann::json result = verify(leased, verifier);
    done = true;
    heartbeat.join();
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
          verify_input_from_json(leased.at("input"), [this](const std::string& address) { return fetch_blob(address); });
      if (!input) return {{"error", input.message()}};
      Result<Database> cache = Database::open((fs::path(options_.work_dir) / "cache.db").string());
      Result<VerifyOutput> output = verifier.run(*input, cache ? &*cache : nullptr);
      if (!output) return {{"error", output.message()}};
      Blobs blobs;
      nlohmann::json wire = verify_output_to_json(*output, blobs);
      if (Status s = upload(blobs); !s) return {{"error", s.message()}};
      pending_blobs_for(leased["job"]["id"].get<int64_t>(), std::move(blobs));
      return {{"output", wire}};
    } catch (const std::exception& e) {
      return {{"error", std::string("worker exception: ") + e.what()}};
    }
  }

  // Uploads the blobs the daemon lacks.
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
      uploaded_bytes_ += static_cast<int64_t>(blob->second.size());
    }
    return {};
  }

  void pending_blobs_for(int64_t job_id, Blobs blobs) {
    std::lock_guard lock(mutex_);
    pending_blobs_[job_id] = std::move(blobs);
  }

  // Posts until the daemon answers: a lost answer is retried, and the daemon stores a result once.
  void post_result(int64_t job_id, nlohmann::json result) {
    result["name"] = options_.name;
    result["job_id"] = job_id;
    Blobs blobs;
    {
      std::lock_guard lock(mutex_);
      auto pending = pending_blobs_.find(job_id);
      if (pending != pending_blobs_.end()) {
        blobs = std::move(pending->second);
        pending_blobs_.erase(pending);
      }
    }
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
        if (Status s = upload(blobs, body["missing"].get<std::vector<std::string>>()); !s) {
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
  nlohmann::json config_;
  std::unique_ptr<EvaluationResources> resources_;
  Toolchains toolchains_;
  nlohmann::json capabilities_;
  ResourceSlots slots_;
  SlotGate gate_{slots_};
  std::vector<std::unique_ptr<SampleVerifier>> verifiers_;
  std::mutex mutex_;
  Clock::time_point last_busy_ = Clock::now();
  std::map<int64_t, Blobs> pending_blobs_;
  std::atomic<int64_t> reserved_{0}, stored_{0}, failed_{0}, lost_{0}, uploaded_bytes_{0};
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
