#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <chrono>
#include <random>

#include "base/process.h"
#include "daemon/http/http_api.h"
#include "policies/config.h"
#include "store/failures.h"
#include "store/samples.h"
#include "store/status.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

using namespace tailforge;

namespace {

struct Server {
  TempDir dir;
  std::string db_path = dir.file("api.db");
  DaemonControl control;
  int wakes = 0;
  std::unique_ptr<HttpApi> api;
  int port = 0;

  explicit Server(const std::string& token = "s3cret") {
    Result<nlohmann::json> config = load_config("");
    REQUIRE(config.ok());
    std::string token_file = dir.file("token");
    if (!token.empty()) {
      std::ofstream(token_file) << token << "\n";
      (*config)["http"]["token_file"] = token_file;
    }
    (*config)["http"]["token_env"] = "";
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    Sample sample{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = "// api sample\n"};
    REQUIRE(insert_sample_if_absent(*db, sample).ok());
    Result<std::unique_ptr<HttpApi>> started = HttpApi::start("127.0.0.1:0", *config, db_path, control, [this] { ++wakes; });
    REQUIRE(started.ok());
    api = std::move(*started);
    port = std::stoi(api->address().substr(api->address().rfind(':') + 1));
  }
};

// Sends raw bytes and returns the status code of the answer (0 when the server closed).
int raw_request(int port, const std::string& bytes) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  // Read the status line and headers; the connection may stay open (keep-alive).
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while (answer.find("\r\n\r\n") == std::string::npos && (n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12) return 0;
  return std::stoi(answer.substr(9, 3));
}

}  // namespace

TEST_CASE("listen addresses parse, and only loopback is loopback") {
  CHECK(parse_listen_address("127.0.0.1:8470")->port == 8470);
  CHECK(parse_listen_address("[::1]:9")->host == "::1");
  CHECK(parse_listen_address(":8470")->host == "127.0.0.1");
  CHECK_FALSE(parse_listen_address("8470").ok());
  CHECK_FALSE(parse_listen_address("host:99999").ok());
  CHECK(is_loopback_host("127.0.0.1"));
  CHECK(is_loopback_host("localhost"));
  CHECK_FALSE(is_loopback_host("0.0.0.0"));
}

TEST_CASE("binding a non-loopback address without a token is refused") {
  Result<nlohmann::json> config = load_config("");
  REQUIRE(config.ok());
  (*config)["http"]["token_env"] = "";
  DaemonControl control;
  Result<std::unique_ptr<HttpApi>> api = HttpApi::start("0.0.0.0:0", *config, ":memory:", control, [] {});
  REQUIRE_FALSE(api.ok());
  CHECK(api.message().find("without a token") != std::string::npos);
}

TEST_CASE("status, jobs, samples and metrics answer with the store's numbers") {
  Server server;
  httplib::Client client("127.0.0.1", server.port);
  auto health = client.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);

  auto status = client.Get("/v1/status");
  REQUIRE(status);
  CHECK(status->status == 200);
  nlohmann::json body = nlohmann::json::parse(status->body);
  Result<Database> db = Database::open(server.db_path);
  REQUIRE(db.ok());
  nlohmann::json direct = status_to_json(*query_status(*db));
  for (const char* key : {"samples", "samples_by_origin", "samples_by_track", "verified", "failures_by_category",
                          "jobs_by_state", "cycles", "retrain_events"}) {
    CHECK_MESSAGE(body[key] == direct[key], key);
  }

  std::string id = sample_id_for("// api sample\n");
  auto sample = client.Get(("/v1/samples/" + id).c_str());
  REQUIRE(sample);
  CHECK(sample->status == 200);
  CHECK(nlohmann::json::parse(sample->body)["text"] == "// api sample\n");
  auto lineage = client.Get(("/v1/samples/" + id + "/lineage").c_str());
  REQUIRE(lineage);
  CHECK(lineage->status == 200);
  auto missing = client.Get(("/v1/samples/" + std::string(64, 'a')).c_str());
  REQUIRE(missing);
  CHECK(missing->status == 404);

  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK(metrics->body.find("tailforge_samples{track=\"cuda2hip\",origin=\"template\"} 1") != std::string::npos);
  CHECK(metrics->body.find("\nprocess_resident_memory_bytes ") != std::string::npos);
  CHECK(metrics->body.find("\nprocess_resident_memory_bytes 0\n") == std::string::npos);
  CHECK(metrics->body.find("\ntailforge_sqlite_heap_bytes ") != std::string::npos);
  auto jobs = client.Get("/v1/jobs?state=pending");
  REQUIRE(jobs);
  CHECK(jobs->status == 200);

  // CUDA API coverage: a verified sample calling cudaMalloc, as `coverage --json` counts it.
  Sample verified{.track = "cuda2hip", .origin = "template", .language = "cuda",
                  .text = "int main() { float* p; cudaMalloc(&p, 4); }\n"};
  verified.status = "verified";
  REQUIRE(insert_sample_if_absent(*db, verified).ok());
  auto coverage = client.Get("/v1/coverage");
  REQUIRE(coverage);
  REQUIRE(coverage->status == 200);
  nlohmann::json measured = nlohmann::json::parse(coverage->body);
  CHECK(measured["verified_total"] == 1);
  CHECK(measured["prior"]["from_imported_trees"] == false);
  CHECK_FALSE(measured.contains("names"));
  bool memory = false;
  for (const nlohmann::json& family : measured["families"]) {
    if (family["name"] == "memory") memory = family["verified"] == 1 && family["share"] == 1.0;
  }
  CHECK(memory);
  auto named = client.Get("/v1/coverage?family=memory");
  REQUIRE(named);
  CHECK(nlohmann::json::parse(named->body)["names"].size() > 5);
  auto bad = client.Get("/v1/coverage?cycle=x");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  auto after = client.Get("/metrics");
  REQUIRE(after);
  CHECK(after->body.find("tailforge_api_family_verified{track=\"cuda2hip\",family=\"memory\"} 1\n") != std::string::npos);
  CHECK(after->body.find("tailforge_api_family_share{track=\"cuda2hip\",family=\"memory\"} 1\n") != std::string::npos);
  CHECK(after->body.find("tailforge_api_shared_names{track=\"cuda2hip\",covered=\"true\"} ") != std::string::npos);
  CHECK(after->body.find("# TYPE tailforge_api_use_coverage_ratio gauge") != std::string::npos);
}

TEST_CASE("control needs the bearer token and changes the daemon's state") {
  Server server;
  httplib::Client client("127.0.0.1", server.port);
  auto anonymous = client.Post("/v1/control/pause", "", "application/json");
  REQUIRE(anonymous);
  CHECK(anonymous->status == 401);
  CHECK_FALSE(server.control.paused);
  httplib::Headers wrong = {{"Authorization", "Bearer nope"}};
  CHECK(client.Post("/v1/control/pause", wrong, "", "application/json")->status == 401);
  httplib::Headers right = {{"Authorization", "Bearer s3cret"}};
  CHECK(client.Post("/v1/control/pause", right, "", "application/json")->status == 200);
  CHECK(server.control.paused);
  CHECK(client.Post("/v1/control/resume", right, "", "application/json")->status == 200);
  CHECK_FALSE(server.control.paused);
  CHECK(client.Post("/v1/control/drain", right, "", "application/json")->status == 200);
  CHECK(server.control.drain_requested);
  CHECK(client.Post("/v1/control/explode", right, "", "application/json")->status == 404);
  CHECK(server.wakes == 3);
}

TEST_CASE("a POST with no body and no Content-Length (curl -X POST) is answered at once") {
  Server server;
  auto bodiless = [&](const std::string& path, const std::string& authorization) {
    std::string head = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n";
    if (!authorization.empty()) head += "Authorization: " + authorization + "\r\n";
    auto start = std::chrono::steady_clock::now();
    int status = raw_request(server.port, head + "\r\n");
    CHECK_MESSAGE(std::chrono::steady_clock::now() - start < std::chrono::seconds(2), path, " waited for a body");
    return status;
  };
  CHECK(bodiless("/v1/control/pause", "") == 401);
  CHECK(bodiless("/v1/control/pause", "Bearer nope") == 401);
  CHECK_FALSE(server.control.paused);
  CHECK(bodiless("/v1/control/pause", "Bearer s3cret") == 200);
  CHECK(server.control.paused);
  CHECK(bodiless("/v1/control/resume", "Bearer s3cret") == 200);
  CHECK_FALSE(server.control.paused);
  CHECK(bodiless("/v1/control/explode", "Bearer s3cret") == 404);
  CHECK(bodiless("/v1/models", "Bearer s3cret") == 400);  // a model definition is a body
  CHECK(bodiless("/v1/status", "") == 405);
  CHECK(bodiless("/nowhere", "") == 404);
  CHECK(server.wakes == 2);
  Server tokenless("");
  CHECK(raw_request(tokenless.port, "POST /v1/control/pause HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 403);
  CHECK_FALSE(tokenless.control.paused);

  // The command the README shows, where curl exists.
  if (!testing::program_here("curl", "the raw requests above are what it sends")) return;
  std::string url = "http://127.0.0.1:" + std::to_string(server.port) + "/v1/control/drain";
  ProcessResult curl = run_process({.argv = {"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H",
                                             "Authorization: Bearer s3cret", url},
                                    .timeout_seconds = 10});
  CHECK(curl.stdout_text == "200");
  CHECK(server.control.drain_requested);
}

TEST_CASE("the server survives a fuzz run of malformed requests and answers each with a 4xx") {
  Server server;
  std::vector<std::string> requests = {
      "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/samples/not-an-id HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/samples/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/jobs?state=bogus HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/jobs?limit=-5 HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/taxonomy?since=yesterday HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/taxonomy?unknown=1 HTTP/1.1\r\nHost: x\r\n\r\n",
      "DELETE /v1/status HTTP/1.1\r\nHost: x\r\n\r\n",
      "PUT /v1/control/pause HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
      "POST /v1/status HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{broken",
      "POST /v1/control/pause HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"a\": [1,",
      "GET /v1/control/pause HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX-Huge: " + std::string(64 * 1024, 'h') + "\r\n\r\n",
      "GET /" + std::string(20000, 'p') + " HTTP/1.1\r\nHost: x\r\n\r\n",
      "BREW /v1/status HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/status HTTP/9.9\r\nHost: x\r\n\r\n",
      "POST /v1/control/drain HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\nabc",
      "\x01\x02\x03 garbage\r\n\r\n",
  };
  std::mt19937 random(7);
  for (int i = 0; i < 40; ++i) {
    std::string noise(1 + random() % 300, ' ');
    for (char& c : noise) c = static_cast<char>(random() % 256);
    requests.push_back("GET /" + noise + " HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  int answered = 0;
  for (const std::string& request : requests) {
    int status = raw_request(server.port, request);
    // A request too broken to parse may be dropped without an answer; any answer is a 4xx.
    if (status != 0) {
      CHECK_MESSAGE(status >= 400, request.substr(0, 60));
      CHECK_MESSAGE(status < 500, request.substr(0, 60));
      ++answered;
    }
  }
  CHECK(answered >= 15);
  CHECK_FALSE(server.control.paused);
  CHECK_FALSE(server.control.drain_requested);
  httplib::Client client("127.0.0.1", server.port);
  auto health = client.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
}

TEST_CASE("tailforge taxonomy --json --since 24h and GET /v1/taxonomy?since=24h give the same numbers") {
  Server server;
  {
    Result<Database> db = Database::open(server.db_path);
    REQUIRE(db.ok());
    const char* categories[] = {"amd.asm.register_alignment", "amd.asm.vgpr_bank", "translate.unsupported.inline_ptx",
                                "amd.asm.register_alignment", "run.output_mismatch.numeric"};
    int i = 0;
    for (const char* category : categories) {
      Sample sample{.track = "cuda2hip", .origin = "template", .language = "cuda",
                    .text = "// failing " + std::to_string(i) + "\n"};
      std::string id = insert_sample_if_absent(*db, sample)->id;
      FailureRecord failure{.sample_id = id, .stage = "amd.assemble.gfx1100", .category = category,
                            .message = "error", .track = "cuda2hip", .origin = "template"};
      // One failure from three days ago, outside the window.
      if (i == 4) failure.created_ms = now_ms() - 72 * 3600 * 1000LL;
      REQUIRE(insert_failure(*db, failure).ok());
      ++i;
    }
  }
  ProcessSpec cli;
  cli.argv = {TAILFORGE_BINARY, "taxonomy", "--json", "--since", "24h", "--db", server.db_path};
  ProcessResult printed = run_process(cli);
  REQUIRE(printed.exit_code == 0);
  nlohmann::json from_cli = nlohmann::json::parse(printed.stdout_text);

  httplib::Client client("127.0.0.1", server.port);
  auto answer = client.Get("/v1/taxonomy?since=24h");
  REQUIRE(answer);
  REQUIRE(answer->status == 200);
  nlohmann::json from_http = nlohmann::json::parse(answer->body);
  int64_t cli_total = from_cli.at("total").get<int64_t>();
  int64_t http_total = from_http.at("total").get<int64_t>();
  CHECK(cli_total == 4);
  CHECK(http_total == cli_total);
  std::string cli_tree = from_cli.at("categories").dump();
  std::string http_tree = from_http.at("categories").dump();
  CHECK(from_cli.at("categories").size() >= 4);
  CHECK(http_tree == cli_tree);
}

TEST_CASE("the daemon's listener serves the dashboard at GET /, without a token") {
  Server server;
  httplib::Client client("127.0.0.1", server.port);
  auto page = client.Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->body.find("<nav aria-label=\"Pages\">") != std::string::npos);
  auto script = client.Get("/dashboard/app.js");
  REQUIRE(script);
  CHECK(script->status == 200);
  CHECK(script->get_header_value("Content-Type") == "text/javascript; charset=utf-8");
  auto missing = client.Get("/dashboard/nothing.js");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  // The daemon's POST routes are unchanged: control still needs the token.
  auto control = client.Post("/v1/control/pause", "", "text/plain");
  REQUIRE(control);
  CHECK(control->status == 401);
}
