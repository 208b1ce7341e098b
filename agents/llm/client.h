// A client for one OpenAI-compatible endpoint (POST {base_url}/v1/chat/completions; the base URL
// as users write it: http:// or https://, with or without a trailing /v1, behind a path prefix): retries with
// backoff, a circuit breaker, hourly budgets and a response cache in the store. It knows no roles
// or prompts (agents/llm/roles.h) and never throws; every failure is a categorized value.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <random>
#include <string>
#include <vector>

#include "agents/llm/response.h"
#include "base/result.h"
#include "store/database.h"

namespace httplib {
class Client;
}

namespace tailforge {

// The "llm" section of the configuration; every field has a default.
struct LlmOptions {
  std::string base_url = "http://127.0.0.1:8000";  // http(s)://host[:port][/prefix][/v1]
  std::string ca_file;             // https: the CA bundle of a private CA; empty: the system's store
  std::string model = "default";
  std::string api_key_env = "OPENAI_API_KEY";  // the key is read from this variable; empty: no header
  double temperature = 0.2;
  int max_tokens = 4096;
  int64_t seed = 0;
  int timeout_ms = 120000;         // read/write timeout of one request
  int connect_timeout_ms = 5000;
  int max_attempts = 4;            // attempts per call, first one included
  int backoff_base_ms = 1000;      // delay before retry k (1-based): base * 2^(k-1), capped, with jitter
  int backoff_max_ms = 60000;
  double backoff_jitter = 0.25;    // the delay is scaled by a uniform factor in [1 - j, 1 + j]
  int retry_after_max_ms = 120000; // a Retry-After larger than this is capped
  int breaker_failures = 5;        // consecutive endpoint failures that open the breaker
  int breaker_open_ms = 60000;     // how long it stays open before one half-open probe
  int64_t tokens_per_hour = 0;     // 0: unlimited
  int64_t requests_per_hour = 0;   // 0: unlimited
  // Requests in flight at once to one endpoint (scheme, host, port and prefix), across every
  // client of this process: enough for a vLLM-style server to batch, few enough not to flood it.
  int max_concurrent_requests = 16;
  bool use_cache = true;           // --no-llm-cache turns it off
  // A JSON object merged into every request body, for what a server needs beyond the standard
  // fields: {"stop": ["</s>"], "chat_template_kwargs": {"enable_thinking": false}}.
  std::string request_fields = "{}";
  std::string prompts_path = "config/llm_prompts.json";
};

// Reads the options from a JSON object (the "llm" section); unknown keys and wrong types are
// errors naming "llm.<key>". Absent keys keep their defaults.
Result<LlmOptions> llm_options_from_json(const nlohmann::json& section);

// Where requests go: the scheme, host and port, and the path of the chat completions, from a base
// URL as users write it. "https://h/v1", "https://h/v1/" and "https://h" all give
// {"https://h", "/v1/chat/completions"}; "http://h:8080/proxy/v1" gives "/proxy/v1/chat/completions".
struct LlmEndpoint {
  std::string scheme_host_port;
  std::string prefix;  // "" or "/proxy": what comes before /v1
  std::string chat_path() const { return prefix + "/v1/chat/completions"; }
  std::string models_path() const { return prefix + "/v1/models"; }
};
Result<LlmEndpoint> parse_llm_endpoint(const std::string& base_url);

struct ChatMessage {
  std::string role;  // system, user, assistant
  std::string content;
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  bool require_code = true;  // a reply without a fenced code block is agent.llm.no_code_block
};

// One HTTP request of a call, as the endpoint answered it (what the store's llm_call row keeps).
struct SentRequest {
  std::string status;  // "ok", or the agent.llm.<reason> this request failed with
  int prompt_tokens = 0, completion_tokens = 0, reasoning_tokens = 0;
  int64_t latency_ms = 0;
  std::string finish_reason;
};

struct ChatResponse {
  bool ok = false;
  // On failure: agent.llm.<reason>. The endpoint's faults (endpoint_fault below): timeout,
  // connection, tls, auth (401/403), not_found (404/405: no chat completions at that URL),
  // unknown_model, bad_request (another 4xx), rate_limited (429), server_error (5xx),
  // malformed_response (an empty or non-JSON body), budget_exhausted, circuit_open. An answer
  // the model gave: no_code_block, truncated.
  std::string category;
  std::string message;   // names the URL, the HTTP status and the server's own message
  int http_status = 0;   // of the last request; 0 when none came back
  int retry_after_ms = -1;  // from a 429's Retry-After header
  std::string content;   // the answer text (reasoning removed)
  std::vector<CodeBlock> code_blocks;
  std::string reasoning;
  int reasoning_tokens = 0;
  bool reasoning_tokens_estimated = false;
  int prompt_tokens = 0, completion_tokens = 0, total_tokens = 0;
  std::string finish_reason;
  int64_t latency_ms = 0;  // of the successful request (0 when served from cache)
  int attempts = 0;        // HTTP requests made by this call
  bool from_cache = false;
  std::string cache_key;   // sha256 of endpoint, model, messages, sampling parameters, seed
  std::vector<SentRequest> sent;  // every HTTP request of this call, in order; none when from cache
};

// Whether a failure category is the endpoint's fault rather than an answer of the model: the
// server could not be reached, refused the request (key, URL, model id, request fields), was
// busy or broken, or sent no readable completion. Such a failure says nothing about the prompt
// or the model; the caller asks again later and never judges it.
bool endpoint_fault(const std::string& category);

// Whether a fault may pass by itself (timeout, connection, 429, 5xx, the hourly budget, the open
// breaker): the same request may succeed later, unlike a refused key, URL or request.
bool fault_may_pass(const std::string& category);

// The server's own message in an error body: error.message, message, error or detail of a JSON
// body, else the body's first line; at most 300 characters, one line.
std::string server_message(const std::string& body);

// The model ids of a GET /v1/models body: {"data": [{"id": ...}, ...]} or a bare list; an error
// when the body is no such list.
Result<std::vector<std::string>> parse_model_list(const std::string& body);

// What GET {base}/v1/models answered: the ids the server serves.
struct ServedModels {
  bool ok = false;
  std::string url;
  int http_status = 0;  // 0: no answer
  std::string message;  // when !ok: what failed, naming the URL, the status and the server's message
  std::vector<std::string> ids;
};

// Thread-safe: several workers may call complete() at once. The cache Database is the caller's
// own connection (one per thread); pass nullptr to skip the cache for that call.
class LlmClient {
 public:
  explicit LlmClient(LlmOptions options);

  ChatResponse complete(const ChatRequest& request, Database* cache);
  // GET {base}/v1/models, once, without retries.
  ServedModels served_models();
  // Counts `requests` requests and `tokens` tokens spent at wall-clock time `at` (by an earlier
  // run, as the store recorded them) against the hourly budgets; usage older than an hour is ignored.
  void record_past_usage(int64_t tokens, int64_t requests, std::chrono::system_clock::time_point at);

  const LlmOptions& options() const { return options_; }
  std::string cache_key(const ChatRequest& request) const;
  nlohmann::json request_body(const ChatRequest& request) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Attempt {
    ChatResponse response;
    bool endpoint_failure = false;  // counts toward the breaker
    int64_t latency_ms = 0;         // of the HTTP request, whatever its outcome
  };

  Attempt send_once(const ChatRequest& request);
  std::unique_ptr<httplib::Client> http_client(const LlmEndpoint& endpoint) const;
  std::string admit();  // empty when a request may go out now; else the failure category
  void record_outcome(bool endpoint_failure, int tokens);
  int backoff_ms(int retry_number, int retry_after_ms);

  LlmOptions options_;
  std::string api_key_;
  std::mutex mutex_;  // guards everything below
  int consecutive_failures_ = 0;
  Clock::time_point open_until_{};
  bool probe_in_flight_ = false;
  std::deque<Clock::time_point> request_log_;                   // requests sent in the last hour
  std::deque<std::pair<Clock::time_point, int64_t>> token_log_;  // tokens spent in the last hour
  std::mt19937_64 random_{0x7a11f04e};
};

}  // namespace tailforge
