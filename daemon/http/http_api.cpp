#include "daemon/http/http_api.h"

#include <httplib.h>

#include <cstdlib>
#include <fstream>

#include <spdlog/spdlog.h>

#include "base/files.h"
#include "daemon/http/http_replies.h"
#include "daemon/http/metrics.h"
#include "daemon/http/views.h"
#include "dashboard/dashboard.h"
#include "store/failures.h"
#include "store/models.h"
#include "store/queue.h"
#include "store/samples.h"
#include "store/status.h"
#include "synth/api_coverage.h"
#include "synth/lineage.h"
#include "synth/model_registry.h"
#include "synth/model_report.h"
#include "synth/policy.h"
#include "synth/tails.h"
#include "text/regex.h"

namespace tailforge {

namespace {

// The sample named by the path's first match, with the store it was read from; when absent,
// the error (400 bad id, 404 unknown, 500/503 store) is already answered.
std::optional<Sample> requested_sample(const std::string& db_path, const httplib::Request& req,
                                       httplib::Response& res, std::optional<Database>& db) {
  std::string id = req.matches[1];
  if (!looks_like_sample_id(id)) {
    send_error(res, 400, "sample id must be 64 lowercase hex digits");
    return std::nullopt;
  }
  db = open_store(db_path, res);
  if (!db) return std::nullopt;
  Result<std::optional<Sample>> sample = find_sample(*db, id);
  if (!sample) {
    send_error(res, 500, sample.message());
    return std::nullopt;
  }
  if (!sample->has_value()) send_error(res, 404, "no sample " + id);
  return *sample;
}

std::map<std::string, std::string> query_parameters(const httplib::Request& request) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : request.params) out[key] = value;
  return out;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

Result<ListenAddress> parse_listen_address(const std::string& text) {
  static const text::Regex pattern(R"(^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-]*):([0-9]{1,5})$)");
  text::Match match;
  if (!text::regex_match(text, match, pattern)) {
    return make_error("listen address '" + text + "' is not HOST:PORT (e.g. 127.0.0.1:8470)");
  }
  ListenAddress address;
  address.host = match[1].str();
  if (address.host.size() > 2 && address.host.front() == '[') address.host = address.host.substr(1, address.host.size() - 2);
  if (address.host.empty()) address.host = "127.0.0.1";
  address.port = std::stoi(match[2].str());
  if (address.port > 65535) return make_error("listen address '" + text + "': port out of range");
  return address;
}

Result<std::string> read_token_file(const std::string& file, const std::string& what) {
  std::ifstream in(file);
  if (!in) return make_error(what + ": cannot read " + file);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) return make_error(what + ": " + file + " is empty");
  return token;
}

Result<std::string> load_api_token(const nlohmann::json& config) {
  const nlohmann::json& http = config["http"];
  std::string file = http.value("token_file", "");
  if (!file.empty()) return read_token_file(file, "http.token_file");
  std::string variable = http.value("token_env", "");
  if (!variable.empty()) {
    if (const char* value = std::getenv(variable.c_str()); value && *value) return std::string(value);
  }
  return std::string();
}

namespace {

// Known paths with the wrong method: 405. Everything else unmatched: 404. Both JSON.
void method_not_allowed(const httplib::Request& req, httplib::Response& res) {
  send_error(res, 405, "method " + req.method + " not allowed on " + req.path);
}

// POST routes, kept in a table so that bodiless POSTs reach them too (add_post_routes).
using PostRoutes = std::vector<std::pair<std::string, httplib::Server::Handler>>;

// GET /healthz, /v1/status and /metrics: the daemon's and the store's state.
void add_status_routes(httplib::Server& server, const std::string& db_path, DaemonControl& control,
                       const SynthPolicy& synth_policy) {
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"ok", true}});
  });
  server.Get("/v1/status", [db_path, &control](const httplib::Request&, httplib::Response& res) {
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    Result<StatusSummary> status = query_status(*db);
    if (!status) return send_error(res, 500, status.message());
    nlohmann::json body = status_to_json(*status);
    body["daemon"] = {{"paused", control.paused.load()},
                      {"draining", control.drain_requested.load()},
                      {"disk_low", control.disk_low.load()}};
    send_json(res, 200, body);
  });
  server.Get("/metrics", [db_path, api = synth_policy.api, track = synth_policy.track](const httplib::Request&,
                                                                                       httplib::Response& res) {
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    Result<std::string> text = prometheus_metrics(*db, api.enabled ? &api : nullptr, track);
    if (!text) return send_error(res, 500, text.message());
    res.set_content(*text, "text/plain; version=0.0.4");
  });
}

// GET /v1/taxonomy, /v1/tails and /v1/coverage: the reports over the verified samples.
void add_report_routes(httplib::Server& server, const std::string& db_path, const SynthPolicy& synth_policy) {
  server.Get("/v1/taxonomy", [db_path](const httplib::Request& req, httplib::Response& res) {
    Result<TaxonomyQuery> query = taxonomy_query_from_args(query_parameters(req));
    if (!query) return send_error(res, 400, query.message());
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    for (const std::string& name : {query->model, query->compare_model}) {
      if (name.empty()) continue;
      Result<std::optional<ModelRecord>> model = find_model(*db, name);
      if (!model) return send_error(res, 500, model.message());
      if (!model->has_value()) return send_error(res, 400, "taxonomy: no model named '" + name + "'");
    }
    Result<TaxonomyReport> report = taxonomy_report(*db, *query);
    if (!report) return send_error(res, 500, report.message());
    send_json(res, 200, taxonomy_report_to_json(*report));
  });
  server.Get("/v1/tails", [db_path, policy = synth_policy](const httplib::Request& req, httplib::Response& res) {
    std::optional<int64_t> cycle;
    if (!read_cycle_parameter(req, res, cycle)) return;
    std::string dimension, name;
    if (req.has_param("series")) {
      std::string series = req.get_param_value("series");
      size_t slash = series.find('/');
      dimension = series.substr(0, slash);
      if (slash == std::string::npos || slash + 1 == series.size() || !is_tail_dimension(dimension))
        return send_error(res, 400, "series is feature/NAME, domain/NAME, category/NAME, api_family/NAME or api/NAME");
      name = series.substr(slash + 1);
    }
    std::string track = req.has_param("track") ? req.get_param_value("track") : policy.track;
    Result<SynthPolicy> track_policy = policy_for_track(policy, track, data_dir());
    if (!track_policy) return send_error(res, 400, track_policy.message());
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    Result<TailsView> view = query_tails_view(*db, *track_policy, track, cycle, dimension, name);
    if (!view) {
      bool no_list = view.message().find("tail list") != std::string::npos;
      return send_error(res, no_list ? 404 : 500, view.message());
    }
    send_json(res, 200, tails_view_to_json(*view));
  });
  server.Get("/v1/coverage", [db_path, policy = synth_policy](const httplib::Request& req, httplib::Response& res) {
    std::string track = req.has_param("track") && !req.get_param_value("track").empty() ? req.get_param_value("track")
                                                                                          : policy.track;
    Result<SynthPolicy> track_policy = policy_for_track(policy, track, data_dir());
    if (!track_policy) return send_error(res, 400, track_policy.message());
    if (!track_policy->api.enabled) return send_error(res, 400, "track " + track + " has no CUDA API coverage");
    std::optional<int64_t> cycle;
    if (!read_cycle_parameter(req, res, cycle)) return;
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    Result<ApiCoverage> coverage = measure_api_coverage(*db, track_policy->api, track, cycle);
    if (!coverage) return send_error(res, 500, coverage.message());
    bool names = req.has_param("names") || (req.has_param("family") && !req.get_param_value("family").empty());
    send_json(res, 200, api_coverage_to_json(*coverage, names));
  });
}

// GET /v1/samples, /v1/samples/ID (with its artifacts) and /v1/samples/ID/lineage.
void add_sample_routes(httplib::Server& server, const std::string& db_path) {
  server.Get("/v1/samples", [db_path](const httplib::Request& req, httplib::Response& res) {
    std::string status = req.has_param("status") ? req.get_param_value("status") : "";
    if (!status.empty() && status != "pending" && status != "verified" && status != "failed")
      return send_error(res, 400, "status must be pending, verified or failed");
    int limit = 20;
    if (req.has_param("limit")) {
      std::string text = req.get_param_value("limit");
      if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos || text == "0")
        return send_error(res, 400, "limit must be a number from 1 to 9999");
      limit = std::stoi(text);
    }
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    Result<std::vector<SampleHeader>> samples =
        newest_samples(*db, status, req.has_param("track") ? req.get_param_value("track") : "", limit);
    if (!samples) return send_error(res, 500, samples.message());
    nlohmann::json body = {{"samples", nlohmann::json::array()}};
    for (const SampleHeader& s : *samples) {
      body["samples"].push_back({{"id", s.id}, {"track", s.track}, {"origin", s.origin}, {"status", s.status},
                                 {"domain", s.domain}, {"created_ms", s.created_ms}});
    }
    send_json(res, 200, body);
  });
  server.Get(R"(/v1/samples/([^/]+))", [db_path](const httplib::Request& req, httplib::Response& res) {
    std::optional<Database> db;
    std::optional<Sample> sample = requested_sample(db_path, req, res, db);
    if (sample) send_json(res, 200, sample_json(*db, *sample));
  });
  server.Get(R"(/v1/samples/([^/]+)/lineage)", [db_path](const httplib::Request& req, httplib::Response& res) {
    std::optional<Database> db;
    std::optional<Sample> sample = requested_sample(db_path, req, res, db);
    if (!sample) return;
    Result<nlohmann::json> lineage = lineage_report(*db, sample->id);
    if (!lineage) return send_error(res, 500, lineage.message());
    send_json(res, 200, *lineage);
  });
}

// GET /v1/jobs: the job queue, by state.
void add_job_routes(httplib::Server& server, const std::string& db_path) {
  server.Get("/v1/jobs", [db_path](const httplib::Request& req, httplib::Response& res) {
    std::optional<std::string> state;
    if (req.has_param("state")) {
      state = req.get_param_value("state");
      static const std::set<std::string> states = {"pending", "leased", "done", "dead"};
      if (!states.count(*state)) return send_error(res, 400, "state must be pending, leased, done or dead");
    }
    int limit = 100;
    if (req.has_param("limit")) {
      std::string text = req.get_param_value("limit");
      if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) {
        return send_error(res, 400, "limit must be a number from 1 to 999999");
      }
      limit = std::stoi(text);
    }
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    JobQueue queue(*db);
    Result<std::vector<Job>> jobs = queue.list(state, limit);
    if (!jobs) return send_error(res, 500, jobs.message());
    nlohmann::json body = {{"jobs", nlohmann::json::array()}};
    for (const Job& job : *jobs) body["jobs"].push_back(job_json(job));
    send_json(res, 200, body);
  });
}

// GET /v1/models, and POST /v1/models (token-protected) into the POST table.
void add_model_routes(httplib::Server& server, PostRoutes& post_routes, const nlohmann::json& config,
                      const std::string& db_path, const std::string& token) {
  // What `tailforge models --json` prints: one track with ?track=, else every track that has models.
  Result<ModelsListing> configured_listing = models_listing_from_config(config, data_dir());
  if (!configured_listing) {
    spdlog::warn("GET /v1/models lists with the default settings: {}", configured_listing.message());
  }
  const ModelsListing listing = configured_listing ? *configured_listing : ModelsListing{};
  server.Get("/v1/models", [db_path, listing](const httplib::Request& req, httplib::Response& res) {
    ModelsListing asked = listing;
    if (req.has_param("track")) asked.track = req.get_param_value("track");
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    Result<std::vector<ModelsReport>> reports = list_models_reports(*db, asked);
    if (!reports) return send_error(res, 500, reports.message());
    send_json(res, 200, models_listing_to_json(*reports, asked.track.has_value()));
  });
  // Registers a model version: the definition `tailforge model add` takes, as JSON; a trainer
  // passes "retrain_event" (its $TAILFORGE_RETRAIN_EVENT) and "parent".
  post_routes.emplace_back("/v1/models", [db_path, token](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(token, req, res, "registering a model")) return;
    nlohmann::json definition = parse_json_body(req.body);
    if (!definition.is_object()) {
      return send_error(res, 400, "the body must be a JSON object (a model definition), nested at most 64 levels");
    }
    std::optional<Database> db = open_store(db_path, res);
    if (!db) return;
    Result<ModelRecord> model = register_model(*db, definition);
    if (!model) return send_error(res, 400, model.message());
    spdlog::info("HTTP: model {} ({}) registered", model->name, model->kind);
    send_json(res, 201, {{"id", model->id}, {"name", model->name}, {"kind", model->kind}, {"track", model->track},
                         {"parent_id", model->parent_id ? nlohmann::json(*model->parent_id) : nlohmann::json()},
                         {"retrain_event", model->retrain_event_id ? nlohmann::json(*model->retrain_event_id)
                                                                   : nlohmann::json()},
                         {"active", model->active}});
  });
}

// POST /v1/control/pause, resume and drain (token-protected) into the POST table.
void add_control_routes(PostRoutes& post_routes, const std::string& token, DaemonControl& control,
                        std::function<void()> wake) {
  post_routes.emplace_back(R"(/v1/control/([a-z]+))", [token, &control, wake](const httplib::Request& req,
                                                                                    httplib::Response& res) {
    if (!authorized(token, req, res, "control")) return;
    std::string action = req.path.substr(std::string("/v1/control/").size());
    if (action == "pause") {
      control.paused = true;
    } else if (action == "resume") {
      control.paused = false;
    } else if (action == "drain") {
      control.drain_requested = true;
    } else {
      return send_error(res, 404, "unknown control action '" + action + "' (pause, resume, drain)");
    }
    spdlog::info("HTTP control: {}", action);
    wake();
    send_json(res, 200, {{"ok", true}, {"action", action}});
  });
}

// Serves the POST table (or, read-only, a 405 for every POST), bodiless POSTs included.
void add_post_routes(httplib::Server& server, PostRoutes post_routes, bool read_only) {
  post_routes.emplace_back(R"(/(healthz|metrics|v1/status|v1/taxonomy|v1/tails|v1/jobs|v1/samples|v1/samples/.*))",
                           method_not_allowed);
  if (read_only) {
    post_routes = {{R"(/.*)", [](const httplib::Request& req, httplib::Response& res) {
                      send_error(res, 405, "method POST not allowed on " + req.path + ": tailforge serve is read-only");
                    }}};
  }
  for (const auto& [pattern, handler] : post_routes) server.Post(pattern, handler);
  // `curl -X POST URL` sends neither a body nor Content-Length; httplib would wait for a body
  // until its keep-alive timeout and answer 400. Such a request has an empty body: it goes to the
  // same handlers before httplib tries to read one.
  std::vector<std::pair<text::Regex, httplib::Server::Handler>> bodiless_routes;
  for (const auto& [pattern, handler] : post_routes) bodiless_routes.emplace_back(text::Regex(pattern), handler);
  server.set_pre_routing_handler([bodiless_routes](const httplib::Request& req, httplib::Response& res) {
    using Outcome = httplib::Server::HandlerResponse;
    if (req.method != "POST" || req.has_header("Content-Length") || req.has_header("Transfer-Encoding"))
      return Outcome::Unhandled;
    for (const auto& [pattern, handler] : bodiless_routes) {
      if (!text::regex_match(req.path, pattern)) continue;
      handler(req, res);
      return Outcome::Handled;
    }
    send_error(res, 404, "no such endpoint: " + req.path);
    return Outcome::Handled;
  });
}

// 405 for the other methods, the dashboard, and JSON bodies for errors and exceptions.
void add_fallback_handlers(httplib::Server& server) {
  server.Put(R"(/.*)", method_not_allowed);
  server.Delete(R"(/.*)", method_not_allowed);
  server.Patch(R"(/.*)", method_not_allowed);
  server.Get(R"(/v1/control/.*)", method_not_allowed);
  add_dashboard_routes(server);
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty() || res.get_header_value("Content-Type") != "application/json") {
      std::string message = res.status == 404 ? "no such endpoint: " + req.path
                                              : "bad request (HTTP " + std::to_string(res.status) + ")";
      send_error(res, res.status, message);
    }
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, 500, "internal error");
  });
}

}  // namespace

Result<std::unique_ptr<HttpApi>> HttpApi::start(const std::string& listen, const nlohmann::json& config,
                                                 const std::string& db_path, DaemonControl& control,
                                                 std::function<void()> wake, bool read_only,
                                                 std::optional<WorkerApiContext> workers) {
  Result<ListenAddress> address = parse_listen_address(listen);
  if (!address) return address.error();
  Result<std::string> token = load_api_token(config);
  if (!token) return token.error();
  Result<SynthPolicy> synth_policy = synth_policy_from_config(config["synth"], data_dir());
  if (!synth_policy) return synth_policy.error();
  if (!is_loopback_host(address->host) && token->empty()) {
    return make_error("refusing to listen on non-loopback address " + listen +
                      " without a token (set http.token_file or $" + config["http"].value("token_env", "") + ")");
  }

  std::unique_ptr<HttpApi> api(new HttpApi());
  api->server_ = std::make_unique<httplib::Server>();
  httplib::Server& server = *api->server_;
  server.set_payload_max_length(config["http"]["max_body_bytes"].get<size_t>());
  server.set_read_timeout(5, 0);
  server.set_write_timeout(5, 0);
  if (workers && !read_only) {
    workers->token = *token;
    // Uploads are larger than other bodies; without a token there are none to accept.
    if (!token->empty()) {
      server.set_payload_max_length(
          std::max(config["http"]["max_body_bytes"].get<size_t>(), static_cast<size_t>(workers->settings.max_artifact_bytes)));
    }
    add_worker_routes(server, *workers);
  }

  add_status_routes(server, db_path, control, *synth_policy);
  add_report_routes(server, db_path, *synth_policy);
  add_sample_routes(server, db_path);
  add_job_routes(server, db_path);
  PostRoutes post_routes;
  add_model_routes(server, post_routes, config, db_path, *token);
  add_control_routes(post_routes, *token, control, wake);
  add_post_routes(server, std::move(post_routes), read_only);
  add_fallback_handlers(server);

  int port = address->port;
  if (port == 0) {
    port = server.bind_to_any_port(address->host);
    if (port < 0) return make_error("cannot bind " + listen);
  } else if (!server.bind_to_port(address->host, port)) {
    return make_error("cannot bind " + listen + " (address in use or not local)");
  }
  api->host_ = address->host;
  api->port_ = port;
  api->thread_ = std::thread([&server] { server.listen_after_bind(); });
  return api;
}

HttpApi::~HttpApi() { stop(); }

void HttpApi::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string HttpApi::address() const {
  return (host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

Result<std::unique_ptr<DaemonServer>> serve_daemon_api(const ServedLoop& loop) {
  WorkerApiContext workers{loop.db_path, "", loop.config, loop.worker_policy, loop.queue_policy, loop.pipeline, loop.wake};
  Result<std::unique_ptr<HttpApi>> started =
      HttpApi::start(loop.listen, loop.config, loop.db_path, loop.control, loop.wake, false, workers);
  if (!started) return started.error();
  return std::unique_ptr<DaemonServer>(std::move(*started));
}

}  // namespace tailforge
