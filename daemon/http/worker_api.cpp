#include "daemon/http/worker_api.h"

#include <cstdio>
#include <random>

#include <spdlog/spdlog.h>

#include "daemon/http/http_replies.h"
#include "daemon/cluster/verify_wire.h"
#include "store/workers.h"
#include "text/regex.h"

namespace tailforge {

namespace {

constexpr int64_t kUploadTtlMs = 3600 * 1000;  // staged uploads no result claimed are dropped after this

// The request's JSON object body, or an answered 400.
std::optional<nlohmann::json> json_body(const httplib::Request& req, httplib::Response& res) {
  nlohmann::json body = parse_json_body(req.body);
  if (!body.is_object()) {
    send_error(res, 400, "the body must be a JSON object, nested at most 64 levels");
    return std::nullopt;
  }
  return body;
}

// The worker's name from the body: 1 to 128 characters of [A-Za-z0-9._:@-].
std::optional<std::string> worker_name(const nlohmann::json& body, httplib::Response& res) {
  static const text::Regex allowed(R"([A-Za-z0-9._:@-]{1,128})");
  if (!body.contains("name") || !body["name"].is_string() || !text::regex_match(body["name"].get<std::string>(), allowed)) {
    send_error(res, 400, "name: 1 to 128 characters of letters, digits and ._:@-");
    return std::nullopt;
  }
  return body["name"].get<std::string>();
}

std::optional<int64_t> job_id(const nlohmann::json& body, httplib::Response& res) {
  if (!body.contains("job_id") || !body["job_id"].is_number_integer()) {
    send_error(res, 400, "job_id: an integer");
    return std::nullopt;
  }
  return body["job_id"].get<int64_t>();
}

void lease(const WorkerApiContext& context, const httplib::Request& req, httplib::Response& res) {
  std::optional<nlohmann::json> body = json_body(req, res);
  if (!body) return;
  std::optional<std::string> name = worker_name(*body, res);
  if (!name) return;
  nlohmann::json capabilities = body->value("capabilities", nlohmann::json::object());
  if (!capabilities.is_object()) return send_error(res, 400, "capabilities: a JSON object");
  std::optional<Database> db = open_store(context.db_path, res);
  if (!db) return;

  WorkerRecord worker;
  worker.name = *name;
  worker.host = body->value("host", std::string("?"));
  worker.capabilities = capabilities;
  for (const std::string& kind : remote_job_kinds()) {
    std::vector<std::string> missing = missing_needs(context.settings, kind, capabilities);
    // The LLM translator's calls are recorded in the store: verification with it stays in the daemon.
    if (kind == "verify" && context.settings.llm_translator) missing.push_back("agents.translator \"llm\" (runs in the daemon)");
    if (missing.empty()) {
      worker.kinds.push_back(kind);
    } else {
      worker.missing[kind] = missing;
    }
  }
  if (Status s = upsert_worker(*db, worker); !s) return send_error(res, 500, s.message());
  if (worker.kinds.empty()) {
    send_json(res, 200, {{"job", nullptr}, {"missing", worker.missing}});
    return;
  }

  JobQueue queue(*db, context.queue_policy);
  if (Status s = drop_uploads(*db, {}, now_ms() - kUploadTtlMs); !s) spdlog::warn("dropping stale uploads: {}", s.message());
  std::string owner = new_remote_lease(*name);
  // A job whose input cannot be read (its sample was deleted) fails here and the next is tried.
  for (int tries = 0; tries < 5; ++tries) {
    Result<std::optional<Job>> leased = queue.lease(owner, context.settings.lease_ms, worker.kinds);
    if (!leased) return send_error(res, 500, leased.message());
    if (!leased->has_value()) break;
    const Job& job = **leased;
    Result<VerifyInput> input = context.pipeline->verify_input(*db, job);
    if (!input) {
      spdlog::warn("job {} ({}) for worker {}: {}", job.id, job.kind, *name, input.message());
      if (Status failed = queue.fail(job.id, owner, input.message()); !failed) spdlog::error("job {}: {}", job.id, failed.message());
      continue;
    }
    if (Status s = touch_worker(*db, *name, job.id); !s) spdlog::warn("worker {}: {}", *name, s.message());
    // Addressed content (headers, a long program) is fetched by the worker from GET
    // /v1/artifacts/ when it does not hold it; what the store has under no artifact is staged.
    Blobs blobs;
    nlohmann::json wire = verify_input_to_json(*input, blobs);
    std::vector<std::string> addresses;
    for (const auto& [address, content] : blobs) addresses.push_back(address);
    Result<std::vector<std::string>> unstored = missing_artifacts(*db, addresses);
    if (!unstored) return send_error(res, 500, unstored.message());
    for (const std::string& address : *unstored) {
      if (Status s = stage_upload(*db, address, blobs[address]); !s) return send_error(res, 500, s.message());
    }
    spdlog::debug("job {} ({}) leased by worker {} on {}", job.id, job.kind, *name, worker.host);
    send_json(res, 200, {{"job", {{"id", job.id}, {"kind", job.kind}, {"attempt", job.attempts}, {"payload", job.payload}}},
                         {"lease", owner},
                         {"lease_ms", context.settings.lease_ms},
                         {"input", wire}});
    return;
  }
  send_json(res, 200, {{"job", nullptr}});
}

// A request about one lease of one worker: {"name", "job_id", "lease", ...}, with the store opened.
struct JobRequest {
  nlohmann::json body;
  std::string name;
  int64_t job_id = 0;
  std::string lease;  // the job's lease owner, as the lease answer named it
  Database db;
};

// The request's fields, or nothing when a 4xx/503 was answered.
std::optional<JobRequest> job_request(const WorkerApiContext& context, const httplib::Request& req, httplib::Response& res) {
  std::optional<nlohmann::json> body = json_body(req, res);
  if (!body) return std::nullopt;
  std::optional<std::string> name = worker_name(*body, res);
  if (!name) return std::nullopt;
  std::optional<int64_t> id = job_id(*body, res);
  if (!id) return std::nullopt;
  std::string lease = body->value("lease", std::string());
  if (lease.rfind(std::string(kRemoteOwnerPrefix) + *name + "/", 0) != 0) {
    send_error(res, 400, "lease: the lease this worker was given with the job");
    return std::nullopt;
  }
  std::optional<Database> db = open_store(context.db_path, res);
  if (!db) return std::nullopt;
  return JobRequest{std::move(*body), *name, *id, std::move(lease), std::move(*db)};
}

void heartbeat(const WorkerApiContext& context, const httplib::Request& req, httplib::Response& res) {
  std::optional<JobRequest> request = job_request(context, req, res);
  if (!request) return;
  JobQueue queue(request->db, context.queue_policy);
  if (Status s = queue.heartbeat(request->job_id, request->lease, context.settings.lease_ms); !s) {
    return send_error(res, 409, "lease lost: " + s.message());
  }
  if (Status s = touch_worker(request->db, request->name, request->job_id); !s) {
    spdlog::warn("worker {}: {}", request->name, s.message());
  }
  send_json(res, 200, {{"lease_ms", context.settings.lease_ms}});
}

void result(const WorkerApiContext& context, const httplib::Request& req, httplib::Response& res) {
  std::optional<JobRequest> request = job_request(context, req, res);
  if (!request) return;
  const nlohmann::json* body = &request->body;
  const std::string* name = &request->name;
  const int64_t* id = &request->job_id;
  Database* db = &request->db;
  JobQueue queue(*db, context.queue_policy);
  const std::string& owner = request->lease;

  // Answers for a job that is no longer this worker's to finish.
  auto answer_settled = [&](const Job& job) {
    if (job.state == "done") {
      send_json(res, 200, {{"stored", false}, {"duplicate", true}});
    } else {
      send_error(res, 409, "lease lost: job " + std::to_string(job.id) + " is " + job.state +
                               (job.lease_owner ? " (leased by " + *job.lease_owner + ")" : ""));
    }
  };
  Result<std::optional<Job>> found = queue.find(*id);
  if (!found) return send_error(res, 500, found.message());
  if (!found->has_value()) return send_error(res, 404, "no job " + std::to_string(*id));
  const Job& job = **found;
  if (job.state != "leased" || job.lease_owner != owner) return answer_settled(job);

  if (body->contains("release")) {  // the worker is stopping: the job goes to another at once
    if (Status s = queue.release(job.id, owner); !s) return send_error(res, 409, s.message());
    if (Status s = touch_worker(*db, *name, std::nullopt); !s) spdlog::warn("worker {}: {}", *name, s.message());
    spdlog::info("job {} ({}) given back by worker {}: {}", job.id, job.kind, *name, body->value("release", std::string()));
    send_json(res, 200, {{"stored", false}, {"released", true}});
    return;
  }
  if (body->contains("error")) {
    std::string error = body->value("error", std::string("worker error"));
    if (Status s = queue.fail(job.id, owner, "worker " + *name + ": " + error); !s) return send_error(res, 409, s.message());
    if (Status s = count_worker_job(*db, *name, false); !s) spdlog::warn("worker {}: {}", *name, s.message());
    spdlog::warn("job {} ({}) failed on worker {}: {}", job.id, job.kind, *name, error);
    send_json(res, 200, {{"stored", false}, {"failed", true}});
    return;
  }
  if (!body->contains("output") || !(*body)["output"].is_object()) return send_error(res, 400, "output: a JSON object");
  const nlohmann::json& wire = (*body)["output"];
  std::vector<std::string> addresses = blob_addresses(wire);
  Result<std::vector<std::string>> missing = missing_artifacts(*db, addresses);
  if (!missing) return send_error(res, 500, missing.message());
  if (!missing->empty()) {
    send_json(res, 409, {{"error", "upload these artifacts first"}, {"status", 409}, {"missing", *missing}});
    return;
  }
  std::vector<std::string> vanished;  // artifacts freed since the check above (the artifact cap)
  Result<VerifyOutput> output = verify_output_from_json(wire, [&db, &vanished](const std::string& address) {
    Result<std::optional<std::string>> content = find_artifact_content(*db, address);
    if (!content || !content->has_value()) vanished.push_back(address);
    return content ? *content : std::nullopt;
  });
  if (!vanished.empty()) {
    send_json(res, 409, {{"error", "upload these artifacts first"}, {"status", 409}, {"missing", vanished}});
    return;
  }
  if (!output) return send_error(res, 400, output.message());
  Result<std::string> host = worker_host(*db, *name);
  if (!host) return send_error(res, 500, host.message());
  Status stored = context.pipeline->store_verify_output(*db, queue, job, owner, *output, *host);
  if (!stored) {
    // Another post of the same result may have been stored meanwhile: then this one is a repeat.
    Result<std::optional<Job>> now = queue.find(*id);
    if (now && now->has_value() && ((*now)->state != "leased" || (*now)->lease_owner != owner)) return answer_settled(**now);
    if (Status s = queue.fail(job.id, owner, stored.message()); !s) spdlog::error("job {}: {}", job.id, s.message());
    if (Status s = count_worker_job(*db, *name, false); !s) spdlog::warn("worker {}: {}", *name, s.message());
    spdlog::warn("job {} ({}) from worker {} not stored: {}", job.id, job.kind, *name, stored.message());
    send_json(res, 200, {{"stored", false}, {"failed", true}, {"error", stored.message()}});
    return;
  }
  // The staged uploads of this job's output and input are stored or no longer needed.
  if (Result<VerifyInput> input = context.pipeline->verify_input(*db, job); input) {
    Blobs input_blobs;
    for (const std::string& address : blob_addresses(verify_input_to_json(*input, input_blobs))) addresses.push_back(address);
  }
  if (Status s = drop_uploads(*db, addresses, now_ms() - kUploadTtlMs); !s) spdlog::warn("dropping uploads: {}", s.message());
  if (Status s = count_worker_job(*db, *name, true); !s) spdlog::warn("worker {}: {}", *name, s.message());
  if (context.wake) context.wake();
  send_json(res, 200, {{"stored", true}, {"verified", output->verified}});
}

}  // namespace

std::string new_remote_lease(const std::string& worker_name) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  char nonce[17];
  std::snprintf(nonce, sizeof nonce, "%016llx", static_cast<unsigned long long>(random()));
  return kRemoteOwnerPrefix + worker_name + "/" + nonce;
}

void add_worker_routes(httplib::Server& server, const WorkerApiContext& context) {
  // Each handler checks the token first; the context is copied into every route.
  auto guarded = [context](void (*handler)(const WorkerApiContext&, const httplib::Request&, httplib::Response&)) {
    return [context, handler](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(context.token, req, res, "the worker API")) return;
      handler(context, req, res);
    };
  };
  server.Get("/v1/workers/config", guarded([](const WorkerApiContext& c, const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"config", c.config}, {"lease_ms", c.settings.lease_ms}});
  }));
  server.Post("/v1/workers/lease", guarded(lease));
  server.Post("/v1/workers/heartbeat", guarded(heartbeat));
  server.Post("/v1/workers/result", guarded(result));
  server.Post("/v1/artifacts/missing", guarded([](const WorkerApiContext& c, const httplib::Request& req, httplib::Response& res) {
    std::optional<nlohmann::json> body = json_body(req, res);
    if (!body) return;
    std::vector<std::string> ids;
    if (body->contains("sha256") && (*body)["sha256"].is_array()) {
      for (const nlohmann::json& id : (*body)["sha256"])
        if (id.is_string()) ids.push_back(id.get<std::string>());
    }
    std::optional<Database> db = open_store(c.db_path, res);
    if (!db) return;
    Result<std::vector<std::string>> missing = missing_artifacts(*db, ids);
    if (!missing) return send_error(res, 500, missing.message());
    send_json(res, 200, {{"missing", *missing}});
  }));
  server.Put(R"(/v1/artifacts/([0-9a-f]{64}))", guarded([](const WorkerApiContext& c, const httplib::Request& req, httplib::Response& res) {
    if (static_cast<int64_t>(req.body.size()) > c.settings.max_artifact_bytes) {
      return send_error(res, 413, "artifact larger than workers.max_artifact_bytes");
    }
    std::optional<Database> db = open_store(c.db_path, res);
    if (!db) return;
    if (Status s = stage_upload(*db, req.matches[1], req.body); !s) return send_error(res, 400, s.message());
    send_json(res, 201, {{"stored", true}});
  }));
  server.Get(R"(/v1/artifacts/([0-9a-f]{64}))", guarded([](const WorkerApiContext& c, const httplib::Request& req, httplib::Response& res) {
    std::optional<Database> db = open_store(c.db_path, res);
    if (!db) return;
    Result<std::optional<std::string>> content = find_artifact_content(*db, req.matches[1]);
    if (!content) return send_error(res, 500, content.message());
    if (!content->has_value()) return send_error(res, 404, "no artifact " + std::string(req.matches[1]));
    res.set_content(**content, "application/octet-stream");
  }));
}

}  // namespace tailforge
