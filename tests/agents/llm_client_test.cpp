#include "agents/llm/client.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/process.h"
#include "store/cache.h"
#include "test_support/fake_openai_server.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

using namespace tailforge;

namespace {

LlmOptions fast_options(const std::string& base_url) {
  LlmOptions options;
  options.base_url = base_url;
  options.model = "test-model";
  options.api_key_env = "TAILFORGE_TEST_LLM_KEY";
  options.timeout_ms = 2000;
  options.connect_timeout_ms = 500;
  options.max_attempts = 3;
  options.backoff_base_ms = 1;
  options.backoff_max_ms = 5;
  options.backoff_jitter = 0;
  options.breaker_failures = 100;
  return options;
}

ChatRequest simple_request(const std::string& text = "write a kernel") {
  ChatRequest request;
  request.messages = {{"system", "you write CUDA"}, {"user", text}};
  return request;
}

const std::string kProgram = "Here it is:\n```cuda\n__global__ void k() {}\n```\n";

}  // namespace

TEST_CASE("a completion returns code, reasoning, usage, latency and sends the configured request") {
  setenv("TAILFORGE_TEST_LLM_KEY", "sk-test", 1);
  FakeOpenAiServer server;
  server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram, "stop", "let me think", 11, 40, 7)});
  LlmOptions options = fast_options(server.base_url());
  options.seed = 42;
  options.temperature = 0.7;
  options.max_tokens = 512;
  LlmClient client(options);
  ChatResponse r = client.complete(simple_request(), nullptr);
  REQUIRE_MESSAGE(r.ok, r.message);
  REQUIRE(r.code_blocks.size() == 1);
  CHECK(r.code_blocks[0].language == "cuda");
  CHECK(r.code_blocks[0].code == "__global__ void k() {}\n");
  CHECK(r.reasoning == "let me think");
  CHECK(r.reasoning_tokens == 7);
  CHECK_FALSE(r.reasoning_tokens_estimated);
  CHECK(r.prompt_tokens == 11);
  CHECK(r.completion_tokens == 40);
  CHECK(r.total_tokens == 51);
  CHECK(r.finish_reason == "stop");
  CHECK(r.attempts == 1);
  CHECK(r.latency_ms >= 0);
  auto requests = server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].path == "/v1/chat/completions");
  CHECK(requests[0].authorization == "Bearer sk-test");
  auto body = nlohmann::json::parse(requests[0].body);
  CHECK(body["model"] == "test-model");
  CHECK(body["seed"] == 42);
  CHECK(body["max_tokens"] == 512);
  CHECK(body["temperature"].get<double>() == doctest::Approx(0.7));
  CHECK(body["messages"][1]["content"] == "write a kernel");
  unsetenv("TAILFORGE_TEST_LLM_KEY");
}

TEST_CASE("a 5xx is retried with backoff and then succeeds") {
  FakeOpenAiServer server;
  server.enqueue({503, {}, "overloaded"});
  server.enqueue({500, {}, "oops"});
  server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram)});
  LlmClient client(fast_options(server.base_url()));
  ChatResponse r = client.complete(simple_request(), nullptr);
  CHECK(r.ok);
  CHECK(r.attempts == 3);
  CHECK(server.requests().size() == 3);
}

TEST_CASE("every failure kind becomes its category after the retry limit") {
  struct Case {
    CannedResponse reply;
    std::string category;
  };
  std::vector<Case> cases = {
      {{500, {}, "boom"}, "agent.llm.server_error"},
      {{429, {}, "slow down"}, "agent.llm.rate_limited"},
      {{200, {}, "{not json"}, "agent.llm.malformed_response"},
      {{200, {}, R"({"choices":[]})"}, "agent.llm.malformed_response"},
      {{200, {}, FakeOpenAiServer::completion("no code here, sorry")}, "agent.llm.no_code_block"},
      {{200, {}, FakeOpenAiServer::completion("```cuda\n__global__ void k(", "length")}, "agent.llm.truncated"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.category);
    FakeOpenAiServer server;
    for (int i = 0; i < 3; ++i) server.enqueue(c.reply);
    LlmClient client(fast_options(server.base_url()));
    ChatResponse r = client.complete(simple_request(), nullptr);
    CHECK_FALSE(r.ok);
    CHECK(r.category == c.category);
    CHECK(r.attempts == 3);
    CHECK(r.message.find("after 3 attempt(s)") == 0);
    CHECK(server.requests().size() == 3);
  }
}

TEST_CASE("a 4xx other than 408 and 429 is not retried, and each is an endpoint fault naming URL, status and message") {
  struct Case {
    CannedResponse reply;
    std::string category;
    std::string said;  // the server's message as the failure quotes it
  };
  std::vector<Case> cases = {
      {{401, {}, R"({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})"},
       "agent.llm.auth", "HTTP 401: Incorrect API key provided"},
      {{403, {}, R"({"error": "forbidden for this project"})"}, "agent.llm.auth", "HTTP 403: forbidden for this project"},
      {{404, {}, R"({"object": "error", "message": "The model `qwen` does not exist.", "code": 404})"},
       "agent.llm.unknown_model", "HTTP 404: The model `qwen` does not exist."},
      {{400, {}, R"({"error": {"message": "m", "code": "model_not_found"}})"}, "agent.llm.unknown_model", "HTTP 400: m"},
      {{404, {}, "<html><body>Not Found</body></html>"}, "agent.llm.not_found", "HTTP 404: <html><body>Not Found</body></html>"},
      {{405, {}, R"({"detail": "Method Not Allowed"})"}, "agent.llm.not_found", "HTTP 405: Method Not Allowed"},
      {{400, {}, R"({"error": {"message": "temperature must be at most 2"}})"}, "agent.llm.bad_request",
       "HTTP 400: temperature must be at most 2"},
      {{422, {}, ""}, "agent.llm.bad_request", "HTTP 422: (empty body)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.category);
    FakeOpenAiServer server;
    server.enqueue(c.reply);
    LlmClient client(fast_options(server.base_url()));
    ChatResponse r = client.complete(simple_request(), nullptr);
    CHECK_FALSE(r.ok);
    CHECK(r.category == c.category);
    CHECK(endpoint_fault(r.category));
    CHECK(r.http_status == c.reply.status);
    CHECK_MESSAGE(r.message.find("POST " + server.base_url() + "/v1/chat/completions: " + c.said) != std::string::npos,
                  r.message);
    CHECK(server.requests().size() == 1);
  }
}

TEST_CASE("a 401 says where the key came from, never the key") {
  setenv("TAILFORGE_TEST_WRONG_KEY", "sk-wrong-secret", 1);
  FakeOpenAiServer server;
  server.enqueue({401, {}, R"({"error": {"message": "invalid key"}})"});
  LlmOptions options = fast_options(server.base_url());
  options.api_key_env = "TAILFORGE_TEST_WRONG_KEY";
  ChatResponse r = LlmClient(options).complete(simple_request(), nullptr);
  CHECK(r.category == "agent.llm.auth");
  CHECK(r.message.find("$TAILFORGE_TEST_WRONG_KEY") != std::string::npos);
  CHECK(r.message.find("sk-wrong-secret") == std::string::npos);
  options.api_key_env = "TAILFORGE_TEST_UNSET_KEY";
  unsetenv("TAILFORGE_TEST_UNSET_KEY");
  server.enqueue({401, {}, "{}"});
  ChatResponse unset = LlmClient(options).complete(simple_request(), nullptr);
  CHECK(unset.message.find("$TAILFORGE_TEST_UNSET_KEY is not set") != std::string::npos);
}

TEST_CASE("a 408 and a non-JSON body are retried endpoint faults; a 429's Retry-After is kept") {
  FakeOpenAiServer server;
  server.enqueue({408, {}, "request timeout"});
  server.enqueue({200, {}, ""});
  server.enqueue({429, {{"Retry-After", "7"}}, R"({"error": {"message": "slow down"}})"});
  LlmOptions options = fast_options(server.base_url());
  options.max_attempts = 3;
  options.retry_after_max_ms = 1;  // the wait itself is capped; the value is still reported
  ChatResponse r = LlmClient(options).complete(simple_request(), nullptr);
  CHECK(r.category == "agent.llm.rate_limited");
  CHECK(r.retry_after_ms == 7000);
  REQUIRE(r.sent.size() == 3);
  CHECK(r.sent[0].status == "agent.llm.timeout");
  CHECK(r.sent[1].status == "agent.llm.malformed_response");
  for (const char* category : {"agent.llm.timeout", "agent.llm.malformed_response", "agent.llm.rate_limited",
                               "agent.llm.server_error", "agent.llm.connection", "agent.llm.tls"}) {
    CHECK(endpoint_fault(category));
  }
  CHECK_FALSE(endpoint_fault("agent.llm.no_code_block"));
  CHECK_FALSE(endpoint_fault("agent.llm.truncated"));
}

TEST_CASE("server_message reads the error shapes servers use and keeps one short line") {
  CHECK(server_message(R"({"error": {"message": "a"}})") == "a");
  CHECK(server_message(R"({"error": "b"})") == "b");
  CHECK(server_message(R"({"message": "c", "object": "error"})") == "c");
  CHECK(server_message(R"({"detail": "d"})") == "d");
  CHECK(server_message("plain\nsecond line") == "plain");
  CHECK(server_message("") == "(empty body)");
  std::string huge(5'000'000, 'x');
  CHECK(server_message(huge).size() == 303);
  CHECK(server_message(R"({"error": {"message": "x\ty"}})") == "x y");  // a JSON tab escape
}

TEST_CASE("GET /v1/models lists what the server serves, naming the URL when it fails") {
  FakeOpenAiServer server;
  server.set_served_models({"qwen2.5-coder", "llama-3"}, false);
  ServedModels served = LlmClient(fast_options(server.base_url() + "/v1")).served_models();
  REQUIRE_MESSAGE(served.ok, served.message);
  CHECK(served.ids == std::vector<std::string>{"qwen2.5-coder", "llama-3"});
  CHECK(served.url == server.base_url() + "/v1/models");
  server.set_prefix("/proxy");
  ServedModels missing = LlmClient(fast_options(server.base_url())).served_models();
  CHECK_FALSE(missing.ok);
  CHECK(missing.http_status == 404);
  CHECK(missing.message.find("GET " + server.base_url() + "/v1/models: HTTP 404: not found") != std::string::npos);
}

TEST_CASE("requests in flight to one endpoint stay within llm.max_concurrent_requests, across clients") {
  FakeOpenAiServer server;
  server.set_responder([](const ReceivedRequest&) { return CannedResponse{200, {}, FakeOpenAiServer::completion(kProgram), 100}; });
  for (int limit : {2, 6}) {
    CAPTURE(limit);
    LlmOptions options = fast_options(server.base_url() + (limit == 2 ? "" : "/v1/"));  // the same endpoint either way
    options.max_concurrent_requests = limit;
    options.use_cache = false;
    LlmClient first(options), second(options);
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < 12; ++i) {
      threads.emplace_back([&, i] {
        ChatRequest request = simple_request();
        request.messages.back().content += std::to_string(i);
        ok += (i % 2 ? first : second).complete(request, nullptr).ok;
      });
    }
    for (std::thread& t : threads) t.join();
    CHECK(ok == 12);
    CHECK(server.max_in_flight() <= limit);
    CHECK(server.max_in_flight() >= 2);
  }
  CHECK(server.max_in_flight() > 2);
}

TEST_CASE("a slow server is a timeout") {
  FakeOpenAiServer server;
  server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram), 600});
  server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram), 600});
  LlmOptions options = fast_options(server.base_url());
  options.timeout_ms = 150;
  options.max_attempts = 2;
  LlmClient client(options);
  ChatResponse r = client.complete(simple_request(), nullptr);
  CHECK(r.category == "agent.llm.timeout");
  CHECK(r.attempts == 2);
}

TEST_CASE("a refused connection is a connection failure") {
  int port;
  {
    FakeOpenAiServer closed;
    port = closed.port();
  }
  LlmClient client(fast_options("http://127.0.0.1:" + std::to_string(port)));
  ChatResponse r = client.complete(simple_request(), nullptr);
  CHECK(r.category == "agent.llm.connection");
  CHECK(r.attempts == 3);
}

TEST_CASE("a 429 waits at least its Retry-After seconds") {
  FakeOpenAiServer server;
  server.enqueue({429, {{"Retry-After", "1"}}, "later"});
  server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram)});
  LlmClient client(fast_options(server.base_url()));
  auto start = std::chrono::steady_clock::now();
  ChatResponse r = client.complete(simple_request(), nullptr);
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.ok);
  CHECK(r.attempts == 2);
  CHECK(waited >= 950);
}

TEST_CASE("the circuit breaker opens after repeated failures, then lets one probe through") {
  using Clock = std::chrono::steady_clock;  // the breaker's clock
  // The breaker opens for breaker_open_ms from the moment the failure that opened it was recorded,
  // somewhere inside that failing call. So a call that returned before breaker_open_ms had passed
  // since the failing call began must find it open, however slow the machine; and once
  // breaker_open_ms has passed since the failing call returned, it must let a probe through (the
  // test sleeps until then). A call that came back later than the first bound shows nothing about
  // the open breaker: that run is repeated with a window twice as long. A breaker that does not
  // open fails at once, whatever the window.
  bool shown = false;
  int open_ms = 200;
  for (int doubling = 0; !shown && doubling <= 6; ++doubling, open_ms *= 2) {
    CAPTURE(open_ms);
    const auto open = std::chrono::milliseconds(open_ms);
    FakeOpenAiServer server;
    LlmOptions options = fast_options(server.base_url());
    options.max_attempts = 1;
    options.breaker_failures = 2;
    options.breaker_open_ms = open_ms;
    LlmClient client(options);
    // A failing call that opens the breaker, then a call right after it, which must be paused (no
    // attempt, no request beyond the `requests` made) unless it came too late to tell. The time
    // the failing call returned, or nullopt when too late.
    auto fails_and_opens = [&](size_t requests) -> std::optional<Clock::time_point> {
      Clock::time_point opening = Clock::now();
      CHECK(client.complete(simple_request(), nullptr).category == "agent.llm.server_error");
      Clock::time_point opened = Clock::now();
      ChatResponse paused = client.complete(simple_request(), nullptr);
      if (paused.category != "agent.llm.circuit_open" && Clock::now() >= opening + open) return std::nullopt;
      CHECK(paused.category == "agent.llm.circuit_open");
      CHECK(paused.attempts == 0);
      CHECK(server.requests().size() == requests);
      return opened;
    };
    server.enqueue({500, {}, "a"});
    server.enqueue({500, {}, "b"});
    CHECK(client.complete(simple_request(), nullptr).category == "agent.llm.server_error");
    std::optional<Clock::time_point> opened = fails_and_opens(2);
    if (!opened) continue;  // too late to tell
    std::this_thread::sleep_until(*opened + open);
    server.enqueue({500, {}, "probe fails"});
    std::optional<Clock::time_point> reopened = fails_and_opens(3);
    if (!reopened) continue;
    std::this_thread::sleep_until(*reopened + open);
    server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram)});
    CHECK(client.complete(simple_request(), nullptr).ok);
    server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram)});
    CHECK(client.complete(simple_request(), nullptr).ok);
    CHECK(server.requests().size() == 5);
    shown = true;
  }
  CHECK_MESSAGE(shown, "no call got in while the breaker was open, even with breaker_open_ms " << open_ms / 2);
}

TEST_CASE("hourly request and token budgets stop requests before they are sent") {
  FakeOpenAiServer server;
  for (int i = 0; i < 4; ++i) server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram, "stop", "", 10, 20)});
  LlmOptions options = fast_options(server.base_url());
  options.requests_per_hour = 2;
  LlmClient by_requests(options);
  CHECK(by_requests.complete(simple_request("a"), nullptr).ok);
  CHECK(by_requests.complete(simple_request("b"), nullptr).ok);
  ChatResponse refused = by_requests.complete(simple_request("c"), nullptr);
  CHECK(refused.category == "agent.llm.budget_exhausted");
  CHECK(server.requests().size() == 2);

  options.requests_per_hour = 0;
  options.tokens_per_hour = 50;  // one response costs 30 tokens
  LlmClient by_tokens(options);
  CHECK(by_tokens.complete(simple_request("d"), nullptr).ok);
  CHECK(by_tokens.complete(simple_request("e"), nullptr).ok);
  CHECK(by_tokens.complete(simple_request("f"), nullptr).category == "agent.llm.budget_exhausted");
  CHECK(server.requests().size() == 4);
}

TEST_CASE("usage an earlier run spent in the last hour counts against the budgets, older usage does not") {
  FakeOpenAiServer server;
  for (int i = 0; i < 3; ++i) server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram, "stop", "", 10, 20)});
  LlmOptions options = fast_options(server.base_url());
  options.requests_per_hour = 3;
  auto now = std::chrono::system_clock::now();
  LlmClient by_requests(options);
  by_requests.record_past_usage(0, 2, now - std::chrono::minutes(59));
  by_requests.record_past_usage(500, 5, now - std::chrono::minutes(61));  // out of the window
  CHECK(by_requests.complete(simple_request("a"), nullptr).ok);
  CHECK(by_requests.complete(simple_request("b"), nullptr).category == "agent.llm.budget_exhausted");
  CHECK(server.requests().size() == 1);

  options.requests_per_hour = 0;
  options.tokens_per_hour = 100;
  LlmClient by_tokens(options);
  by_tokens.record_past_usage(60, 1, now - std::chrono::minutes(10));
  CHECK(by_tokens.complete(simple_request("c"), nullptr).ok);  // 60 + 30 spent
  CHECK(by_tokens.complete(simple_request("d"), nullptr).ok);  // 120 spent
  CHECK(by_tokens.complete(simple_request("e"), nullptr).category == "agent.llm.budget_exhausted");
  CHECK(server.requests().size() == 3);
}

TEST_CASE("every HTTP request of a call is reported with its status, usage and latency") {
  auto db = Database::open(":memory:");
  REQUIRE(db.ok());
  FakeOpenAiServer server;
  server.enqueue({503, {}, "overloaded"});
  server.enqueue({200, {}, FakeOpenAiServer::completion("no code here", "stop", "", 7, 3)});
  server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram, "stop", "thinking", 11, 40, 9)});
  LlmClient client(fast_options(server.base_url()));
  ChatResponse r = client.complete(simple_request(), &*db);
  REQUIRE(r.ok);
  REQUIRE(r.sent.size() == 3);
  CHECK(r.sent[0].status == "agent.llm.server_error");
  CHECK(r.sent[0].prompt_tokens == 0);
  CHECK(r.sent[1].status == "agent.llm.no_code_block");
  CHECK(r.sent[1].prompt_tokens == 7);
  CHECK(r.sent[1].completion_tokens == 3);
  CHECK(r.sent[2].status == "ok");
  CHECK(r.sent[2].prompt_tokens == 11);
  CHECK(r.sent[2].completion_tokens == 40);
  CHECK(r.sent[2].reasoning_tokens == 9);
  CHECK(r.sent[2].finish_reason == "stop");
  CHECK(r.sent[2].latency_ms == r.latency_ms);
  ChatResponse cached = client.complete(simple_request(), &*db);
  CHECK(cached.from_cache);
  CHECK(cached.sent.empty());

  LlmOptions once = fast_options(server.base_url());
  once.max_attempts = 2;
  ChatResponse failed = LlmClient(once).complete(simple_request("unscripted"), nullptr);
  CHECK_FALSE(failed.ok);
  REQUIRE(failed.sent.size() == 2);
  CHECK(failed.sent[1].status == "agent.llm.server_error");
}

TEST_CASE("a repeated request is served from the store cache, unless the cache is off") {
  auto db = Database::open(":memory:");
  REQUIRE(db.ok());
  FakeOpenAiServer server;
  server.enqueue({200, {}, FakeOpenAiServer::completion("<think>hmm</think>" + kProgram)});
  LlmOptions options = fast_options(server.base_url());
  LlmClient client(options);
  ChatResponse first = client.complete(simple_request(), &*db);
  REQUIRE(first.ok);
  CHECK(first.reasoning == "hmm");
  CHECK(first.reasoning_tokens_estimated);
  ChatResponse second = client.complete(simple_request(), &*db);
  REQUIRE(second.ok);
  CHECK(second.from_cache);
  CHECK(second.attempts == 0);
  CHECK(second.content == first.content);
  CHECK(second.reasoning == "hmm");
  CHECK(second.cache_key == first.cache_key);
  CHECK(second.code_blocks.size() == 1);
  CHECK(server.requests().size() == 1);
  CHECK(cache_count(*db, "llm") == 1);

  LlmOptions other_seed = options;
  other_seed.seed = 7;
  CHECK(LlmClient(other_seed).cache_key(simple_request()) != client.cache_key(simple_request()));

  options.use_cache = false;
  LlmClient uncached(options);
  server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram)});
  ChatResponse third = uncached.complete(simple_request(), &*db);
  CHECK(third.ok);
  CHECK_FALSE(third.from_cache);
  CHECK(server.requests().size() == 2);
}

TEST_CASE("several threads share one client") {
  FakeOpenAiServer server;
  for (int i = 0; i < 8; ++i) server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram)});
  LlmClient client(fast_options(server.base_url()));
  std::vector<std::thread> workers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    workers.emplace_back([&, i] { ok += client.complete(simple_request(std::to_string(i)), nullptr).ok ? 1 : 0; });
  for (auto& w : workers) w.join();
  CHECK(ok == 8);
  CHECK(server.requests().size() == 8);
}

TEST_CASE("llm options parse from JSON with defaults, and bad values name the key") {
  auto options = llm_options_from_json(nlohmann::json::parse(R"({"model":"m","seed":3,"cache":false,"backoff_base_ms":10})"));
  REQUIRE(options.ok());
  CHECK(options->model == "m");
  CHECK(options->seed == 3);
  CHECK_FALSE(options->use_cache);
  CHECK(options->backoff_base_ms == 10);
  CHECK(options->max_attempts == LlmOptions{}.max_attempts);
  auto wrong_type = llm_options_from_json(nlohmann::json::parse(R"({"max_tokens":"many"})"));
  REQUIRE_FALSE(wrong_type.ok());
  CHECK(wrong_type.message().find("llm.max_tokens") == 0);
  auto unknown = llm_options_from_json(nlohmann::json::parse(R"({"modle":"x"})"));
  CHECK(unknown.message().find("llm.modle") == 0);
  auto bad_url = llm_options_from_json(nlohmann::json::parse(R"({"base_url":"ftp://x"})"));
  CHECK(bad_url.message().find("llm.base_url") == 0);
}

TEST_CASE("a base URL as users write it: http or https, with or without /v1, behind a prefix") {
  struct Case {
    const char* url;
    const char* scheme_host_port;
    const char* chat_path;
  };
  for (const Case& c : {Case{"http://127.0.0.1:8000", "http://127.0.0.1:8000", "/v1/chat/completions"},
                        Case{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000", "/v1/chat/completions"},
                        Case{"http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000", "/v1/chat/completions"},
                        Case{"https://api.example.com/v1", "https://api.example.com", "/v1/chat/completions"},
                        Case{"http://gpu-box:8080/proxy/llm/v1", "http://gpu-box:8080", "/proxy/llm/v1/chat/completions"},
                        Case{"http://gpu-box:8080/proxy", "http://gpu-box:8080", "/proxy/v1/chat/completions"}}) {
    CAPTURE(c.url);
    Result<LlmEndpoint> endpoint = parse_llm_endpoint(c.url);
    REQUIRE_MESSAGE(endpoint.ok(), endpoint.message());
    CHECK(endpoint->scheme_host_port == c.scheme_host_port);
    CHECK(endpoint->chat_path() == c.chat_path);
  }
  for (const char* bad : {"ftp://x", "127.0.0.1:8000", "http://", "http:// x/v1", "http://h/v1?key=1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_llm_endpoint(bad).ok());
  }
}

TEST_CASE("requests reach the server at the path it serves, with /v1 or a proxy prefix in the base URL") {
  FakeOpenAiServer server;
  server.set_responder([](const ReceivedRequest&) { return CannedResponse{200, {}, FakeOpenAiServer::completion(kProgram)}; });
  for (const char* suffix : {"", "/v1", "/v1/"}) {
    CAPTURE(suffix);
    LlmClient client(fast_options(server.base_url() + suffix));
    ChatResponse r = client.complete(simple_request(), nullptr);
    CHECK_MESSAGE(r.ok, r.message);
  }
  for (const ReceivedRequest& request : server.requests()) CHECK(request.path == "/v1/chat/completions");

  FakeOpenAiServer proxied;
  proxied.set_prefix("/proxy");
  proxied.set_responder([](const ReceivedRequest&) { return CannedResponse{200, {}, FakeOpenAiServer::completion(kProgram)}; });
  LlmClient behind(fast_options(proxied.base_url() + "/proxy/v1"));
  ChatResponse r = behind.complete(simple_request(), nullptr);
  CHECK_MESSAGE(r.ok, r.message);
  // Without the prefix the server answers 404, as a real one would: an HTTP error naming the URL.
  LlmClient wrong(fast_options(proxied.base_url()));
  ChatResponse missed = wrong.complete(simple_request(), nullptr);
  CHECK_FALSE(missed.ok);
  CHECK(missed.category == "agent.llm.not_found");
  CHECK(missed.message.find("POST " + proxied.base_url() + "/v1/chat/completions: HTTP 404") != std::string::npos);
}

TEST_CASE("extra request fields are sent as configured; the key comes from the variable the options name") {
  setenv("TAILFORGE_TEST_OTHER_KEY", "sk-other", 1);
  FakeOpenAiServer server;
  server.enqueue({200, {}, FakeOpenAiServer::completion(kProgram)});
  LlmOptions options = fast_options(server.base_url() + "/v1");
  options.api_key_env = "TAILFORGE_TEST_OTHER_KEY";
  options.request_fields = R"({"stop": ["</s>"], "chat_template_kwargs": {"enable_thinking": false}, "messages": []})";
  LlmClient client(options);
  ChatResponse r = client.complete(simple_request(), nullptr);
  REQUIRE_MESSAGE(r.ok, r.message);
  auto requests = server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].authorization == "Bearer sk-other");
  auto body = nlohmann::json::parse(requests[0].body);
  CHECK(body["stop"] == nlohmann::json::array({"</s>"}));
  CHECK(body["chat_template_kwargs"]["enable_thinking"] == false);
  CHECK(body["messages"].size() == 2);  // the exchange itself is never replaced
  unsetenv("TAILFORGE_TEST_OTHER_KEY");
  auto parsed = llm_options_from_json(nlohmann::json::parse(R"({"request_fields": {"top_p": 0.9}, "ca_file": "/x.pem"})"));
  REQUIRE(parsed.ok());
  CHECK(nlohmann::json::parse(parsed->request_fields)["top_p"] == 0.9);
  CHECK(parsed->ca_file == "/x.pem");
  CHECK_FALSE(llm_options_from_json(nlohmann::json::parse(R"({"request_fields": [1]})")).ok());
}

TEST_CASE("an https endpoint with a private CA: refused without its certificate, answered with it") {
  TempDir dir;
  ProcessSpec openssl;
  openssl.argv = {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                  "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", dir.file("key.pem"), "-out", dir.file("cert.pem")};
  openssl.timeout_seconds = 60;
  ProcessResult made = run_process(openssl);
  if (!made.spawned) {
    testing::skip(testing::Missing::setup_tool, "openssl not found: " + made.spawn_error);
    return;
  }
  REQUIRE_MESSAGE(made.succeeded(), "openssl could not make a test certificate: " << made.stderr_text);
  FakeOpenAiServer server(dir.file("cert.pem"), dir.file("key.pem"));
  server.set_responder([](const ReceivedRequest&) { return CannedResponse{200, {}, FakeOpenAiServer::completion(kProgram)}; });
  REQUIRE(server.base_url().rfind("https://", 0) == 0);
  LlmOptions options = fast_options(server.base_url() + "/v1");
  options.max_attempts = 1;
  ChatResponse refused = LlmClient(options).complete(simple_request(), nullptr);
  CHECK_FALSE(refused.ok);
  CHECK(refused.category == "agent.llm.tls");
  CHECK(refused.message.find("--ca-file") != std::string::npos);
  options.ca_file = dir.file("cert.pem");
  ChatResponse answered = LlmClient(options).complete(simple_request(), nullptr);
  CHECK_MESSAGE(answered.ok, answered.message);
}
