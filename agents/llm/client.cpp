#include "agents/llm/client.h"

#include <httplib.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/sha256.h"
#include "store/cache.h"
#include "text/regex.h"

namespace tailforge {

using nlohmann::json;

namespace {

template <typename T>
std::function<std::string(const json&, LlmOptions&)> field(T LlmOptions::*member) {
  return [member](const json& value, LlmOptions& options) -> std::string {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!value.is_string()) return "expected a string";
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) return "expected true or false";
    } else if constexpr (std::is_same_v<T, double>) {
      if (!value.is_number()) return "expected a number";
    } else {
      if (!value.is_number_integer()) return "expected an integer";
      if (value.get<int64_t>() < 0) return "must not be negative";
    }
    options.*member = value.get<T>();
    return "";
  };
}


// What may pass within one call's backoff: a passing fault, or an answer without usable code
// (sampling may give another). The other faults (a key, a URL, a model id, request fields, a
// certificate) need the user, and a budget or an open breaker needs time.
bool retryable(const std::string& category) {
  for (const char* reason : {"timeout", "connection", "rate_limited", "server_error", "malformed_response",
                             "no_code_block", "truncated"}) {
    if (category == std::string("agent.llm.") + reason) return true;
  }
  return false;
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A 400 or 404 that says the model id is not served (vLLM: "The model `x` does not exist.";
// OpenAI: code model_not_found; others: "model 'x' not found").
bool names_unknown_model(const std::string& body) {
  std::string text = lowercase(body.substr(0, 4096));
  if (text.find("model_not_found") != std::string::npos) return true;
  if (text.find("model") == std::string::npos) return false;
  for (const char* phrase : {"does not exist", "not found", "unknown model", "no such model", "not served",
                             "is not available"}) {
    if (text.find(phrase) != std::string::npos) return true;
  }
  return false;
}

// Keeps a limit of requests in flight per endpoint for the whole process.
class EndpointSlots {
 public:
  void acquire(int limit) {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return limit <= 0 || in_flight_ < limit; });
    ++in_flight_;
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      --in_flight_;
    }
    freed_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  int in_flight_ = 0;
};

EndpointSlots& endpoint_slots(const LlmEndpoint& endpoint) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<EndpointSlots>> slots;
  std::lock_guard lock(mutex);
  std::unique_ptr<EndpointSlots>& entry = slots[endpoint.scheme_host_port + endpoint.prefix];
  if (!entry) entry = std::make_unique<EndpointSlots>();
  return *entry;
}

ChatResponse failure(const std::string& reason, const std::string& message) {
  ChatResponse response;
  response.category = "agent.llm." + reason;
  response.message = message;
  return response;
}

json cached_value(const ChatResponse& r) {
  return {{"content", r.content},           {"reasoning", r.reasoning},
          {"reasoning_tokens", r.reasoning_tokens}, {"reasoning_tokens_estimated", r.reasoning_tokens_estimated},
          {"prompt_tokens", r.prompt_tokens}, {"completion_tokens", r.completion_tokens},
          {"total_tokens", r.total_tokens}, {"finish_reason", r.finish_reason}};
}

std::optional<ChatResponse> from_cached_value(const std::string& text) {
  try {
    json v = json::parse(text);
    ChatResponse r;
    r.ok = true;
    r.from_cache = true;
    r.content = v.at("content").get<std::string>();
    r.reasoning = v.at("reasoning").get<std::string>();
    r.reasoning_tokens = v.at("reasoning_tokens").get<int>();
    r.reasoning_tokens_estimated = v.at("reasoning_tokens_estimated").get<bool>();
    r.prompt_tokens = v.at("prompt_tokens").get<int>();
    r.completion_tokens = v.at("completion_tokens").get<int>();
    r.total_tokens = v.at("total_tokens").get<int>();
    r.finish_reason = v.at("finish_reason").get<std::string>();
    r.code_blocks = extract_code_blocks(r.content);
    return r;
  } catch (const json::exception&) {
    return std::nullopt;  // a damaged entry is ignored and overwritten
  }
}

}  // namespace

Result<LlmEndpoint> parse_llm_endpoint(const std::string& base_url) {
  std::string_view url = base_url;
  size_t scheme_end = url.rfind("https://", 0) == 0 ? 8 : url.rfind("http://", 0) == 0 ? 7 : 0;
  size_t host_end = scheme_end == 0 ? std::string_view::npos : url.find('/', scheme_end);
  std::string_view host = url.substr(scheme_end, host_end == std::string_view::npos ? url.npos : host_end - scheme_end);
  bool host_ok = !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_';
  });
  if (scheme_end == 0 || !host_ok)
    return make_error("llm.base_url '" + base_url + "': expected http(s)://host[:port][/prefix][/v1]");
  LlmEndpoint endpoint;
  endpoint.scheme_host_port = std::string(url.substr(0, scheme_end)) + std::string(host);
  std::string prefix = host_end == std::string_view::npos ? "" : std::string(url.substr(host_end));
  if (prefix.find_first_of("?#") != std::string::npos)
    return make_error("llm.base_url '" + base_url + "': a base URL has no query or fragment");
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  // The OpenAI way to write it ends in /v1 (vLLM, llama.cpp's server, hosted APIs): the client adds
  // /v1/... itself, so a trailing /v1 is the same endpoint.
  if (prefix.size() >= 3 && prefix.compare(prefix.size() - 3, 3, "/v1") == 0) prefix.resize(prefix.size() - 3);
  endpoint.prefix = prefix;
  return endpoint;
}

bool endpoint_fault(const std::string& category) {
  for (const char* reason : {"timeout", "connection", "tls", "auth", "not_found", "unknown_model", "bad_request",
                             "rate_limited", "server_error", "malformed_response", "budget_exhausted",
                             "circuit_open"}) {
    if (category == std::string("agent.llm.") + reason) return true;
  }
  return false;
}

bool fault_may_pass(const std::string& category) {
  for (const char* reason : {"timeout", "connection", "rate_limited", "server_error", "budget_exhausted", "circuit_open"}) {
    if (category == std::string("agent.llm.") + reason) return true;
  }
  return false;
}

std::string server_message(const std::string& body) {
  std::string message;
  json parsed = json::parse(body.substr(0, 1 << 20), nullptr, false);
  if (parsed.is_object()) {
    const json* error = parsed.contains("error") ? &parsed["error"] : nullptr;
    if (error && error->is_object() && error->contains("message") && (*error)["message"].is_string()) {
      message = (*error)["message"].get<std::string>();
    } else if (error && error->is_string()) {
      message = error->get<std::string>();
    } else if (parsed.contains("message") && parsed["message"].is_string()) {
      message = parsed["message"].get<std::string>();
    } else if (parsed.contains("detail") && parsed["detail"].is_string()) {
      message = parsed["detail"].get<std::string>();
    }
  }
  if (message.empty()) message = body.substr(0, body.find('\n'));
  if (message.size() > 300) message = message.substr(0, 300) + "...";
  for (char& c : message) {
    if (c == '\r' || c == '\n' || c == '\t') c = ' ';
  }
  return message.empty() ? "(empty body)" : message;
}

Result<LlmOptions> llm_options_from_json(const json& section) {
  static const std::map<std::string, std::function<std::string(const json&, LlmOptions&)>> fields = {
      {"base_url", field(&LlmOptions::base_url)},
      {"model", field(&LlmOptions::model)},
      {"api_key_env", field(&LlmOptions::api_key_env)},
      {"temperature", field(&LlmOptions::temperature)},
      {"max_tokens", field(&LlmOptions::max_tokens)},
      {"seed", field(&LlmOptions::seed)},
      {"timeout_ms", field(&LlmOptions::timeout_ms)},
      {"connect_timeout_ms", field(&LlmOptions::connect_timeout_ms)},
      {"max_attempts", field(&LlmOptions::max_attempts)},
      {"backoff_base_ms", field(&LlmOptions::backoff_base_ms)},
      {"backoff_max_ms", field(&LlmOptions::backoff_max_ms)},
      {"backoff_jitter", field(&LlmOptions::backoff_jitter)},
      {"retry_after_max_ms", field(&LlmOptions::retry_after_max_ms)},
      {"breaker_failures", field(&LlmOptions::breaker_failures)},
      {"breaker_open_ms", field(&LlmOptions::breaker_open_ms)},
      {"tokens_per_hour", field(&LlmOptions::tokens_per_hour)},
      {"requests_per_hour", field(&LlmOptions::requests_per_hour)},
      {"max_concurrent_requests", field(&LlmOptions::max_concurrent_requests)},
      {"cache", field(&LlmOptions::use_cache)},
      {"prompts", field(&LlmOptions::prompts_path)},
      {"ca_file", field(&LlmOptions::ca_file)},
      {"request_fields", [](const json& value, LlmOptions& options) -> std::string {
         if (!value.is_object()) return "expected a JSON object";
         options.request_fields = value.dump();
         return "";
       }},
  };
  if (!section.is_object()) return make_error("llm: expected an object");
  LlmOptions options;
  for (const auto& [key, value] : section.items()) {
    auto it = fields.find(key);
    if (it == fields.end()) return make_error("llm." + key + ": unknown key");
    std::string problem = it->second(value, options);
    if (!problem.empty()) return make_error("llm." + key + ": " + problem + " (got " + value.dump() + ")");
  }
  if (options.max_attempts < 1) return make_error("llm.max_attempts: must be at least 1");
  if (options.max_concurrent_requests < 1) return make_error("llm.max_concurrent_requests: must be at least 1");
  if (options.backoff_jitter < 0 || options.backoff_jitter > 1) return make_error("llm.backoff_jitter: must be in [0, 1]");
  if (auto endpoint = parse_llm_endpoint(options.base_url); !endpoint) return endpoint.error();
  return options;
}

LlmClient::LlmClient(LlmOptions options) : options_(std::move(options)) {
  if (!options_.api_key_env.empty())
    if (const char* key = std::getenv(options_.api_key_env.c_str())) api_key_ = key;
}

json LlmClient::request_body(const ChatRequest& request) const {
  json messages = json::array();
  for (const ChatMessage& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", options_.model},           {"messages", messages},
               {"temperature", options_.temperature}, {"max_tokens", options_.max_tokens},
               {"seed", options_.seed},             {"stream", false}};
  json extra = json::parse(options_.request_fields, nullptr, false);
  if (extra.is_object()) {
    for (const auto& [key, value] : extra.items())
      if (key != "messages" && key != "stream") body[key] = value;  // the exchange itself stays ours
  }
  return body;
}

std::string LlmClient::cache_key(const ChatRequest& request) const {
  json key = request_body(request);
  key["endpoint"] = options_.base_url;
  key["require_code"] = request.require_code;
  return sha256_hex(key.dump());
}

std::string LlmClient::admit() {
  std::lock_guard lock(mutex_);
  Clock::time_point now = Clock::now();
  if (options_.breaker_failures > 0 && consecutive_failures_ >= options_.breaker_failures) {
    if (now < open_until_ || probe_in_flight_) return "agent.llm.circuit_open";
    probe_in_flight_ = true;  // half-open: this request is the probe
  }
  Clock::time_point hour_ago = now - std::chrono::hours(1);
  while (!request_log_.empty() && request_log_.front() < hour_ago) request_log_.pop_front();
  while (!token_log_.empty() && token_log_.front().first < hour_ago) token_log_.pop_front();
  int64_t tokens = 0;
  for (const auto& entry : token_log_) tokens += entry.second;
  bool over_requests = options_.requests_per_hour > 0 && static_cast<int64_t>(request_log_.size()) >= options_.requests_per_hour;
  bool over_tokens = options_.tokens_per_hour > 0 && tokens >= options_.tokens_per_hour;
  if (over_requests || over_tokens) {
    probe_in_flight_ = false;
    return "agent.llm.budget_exhausted";
  }
  request_log_.push_back(now);
  return "";
}

void LlmClient::record_past_usage(int64_t tokens, int64_t requests, std::chrono::system_clock::time_point at) {
  std::chrono::system_clock::duration age = std::chrono::system_clock::now() - at;
  if (age >= std::chrono::hours(1)) return;
  age = std::max(age, std::chrono::system_clock::duration::zero());
  Clock::time_point when = Clock::now() - std::chrono::duration_cast<Clock::duration>(age);
  std::lock_guard lock(mutex_);
  // admit() drops expired entries from the front: both logs stay in time order.
  for (int64_t i = 0; i < requests; ++i) {
    request_log_.insert(std::upper_bound(request_log_.begin(), request_log_.end(), when), when);
  }
  if (tokens > 0) {
    auto later = std::upper_bound(token_log_.begin(), token_log_.end(), when,
                                  [](Clock::time_point t, const auto& entry) { return t < entry.first; });
    token_log_.insert(later, {when, tokens});
  }
}

void LlmClient::record_outcome(bool endpoint_failure, int tokens) {
  std::lock_guard lock(mutex_);
  Clock::time_point now = Clock::now();
  if (tokens > 0) token_log_.emplace_back(now, tokens);
  probe_in_flight_ = false;
  if (!endpoint_failure) {
    consecutive_failures_ = 0;
    return;
  }
  ++consecutive_failures_;
  if (options_.breaker_failures > 0 && consecutive_failures_ >= options_.breaker_failures)
    open_until_ = now + std::chrono::milliseconds(options_.breaker_open_ms);
}

int LlmClient::backoff_ms(int retry_number, int retry_after_ms) {
  double delay = options_.backoff_base_ms * std::pow(2.0, retry_number - 1);
  delay = std::min<double>(delay, options_.backoff_max_ms);
  {
    std::lock_guard lock(mutex_);
    std::uniform_real_distribution<double> jitter(1.0 - options_.backoff_jitter, 1.0 + options_.backoff_jitter);
    delay *= jitter(random_);
  }
  if (retry_after_ms >= 0) delay = std::max<double>(delay, std::min(retry_after_ms, options_.retry_after_max_ms));
  return static_cast<int>(delay);
}

std::unique_ptr<httplib::Client> LlmClient::http_client(const LlmEndpoint& endpoint) const {
  auto client = std::make_unique<httplib::Client>(endpoint.scheme_host_port);
  if (!options_.ca_file.empty()) client->set_ca_cert_path(options_.ca_file.c_str());
  client->enable_server_certificate_verification(true);
  client->set_connection_timeout(std::chrono::milliseconds(options_.connect_timeout_ms));
  client->set_read_timeout(std::chrono::milliseconds(options_.timeout_ms));
  client->set_write_timeout(std::chrono::milliseconds(options_.timeout_ms));
  return client;
}

namespace {

// A request that got no HTTP answer: timeout, TLS or connection, naming the URL.
ChatResponse transport_failure(httplib::Error error, int64_t latency_ms, int timeout_ms, const std::string& where) {
  bool timed_out = error == httplib::Error::ConnectionTimeout ||
                   (error == httplib::Error::Read && latency_ms >= timeout_ms * 9 / 10);
  bool tls = error == httplib::Error::SSLConnection || error == httplib::Error::SSLLoadingCerts ||
             error == httplib::Error::SSLServerVerification;
  std::string hint = error == httplib::Error::SSLServerVerification
                         ? " (a private CA: give its certificate with --ca-file or llm.ca_file)" : "";
  return failure(timed_out ? "timeout" : tls ? "tls" : "connection",
                 where + ": " + httplib::to_string(error) + " after " + std::to_string(latency_ms) + " ms" + hint);
}

// An HTTP answer other than 2xx, as its category: what the status and the server's message say.
ChatResponse status_failure(int status, const std::string& body, const std::string& where, const std::string& key_hint) {
  std::string said = where + ": HTTP " + std::to_string(status) + ": " + server_message(body);
  ChatResponse response;
  if (status == 429) {
    response = failure("rate_limited", said);
  } else if (status == 408) {
    response = failure("timeout", said);
  } else if (status >= 500) {
    response = failure("server_error", said);
  } else if (status == 401 || status == 403) {
    response = failure("auth", said + key_hint);
  } else if ((status == 404 || status == 400 || status == 422) && names_unknown_model(body)) {
    response = failure("unknown_model", said + " (tailforge model check NAME lists the ids the server serves)");
  } else if (status == 404 || status == 405) {
    response = failure("not_found", said + " (no chat completions at this URL: check the base URL and its prefix)");
  } else {
    response = failure("bad_request", said);
  }
  response.http_status = status;
  return response;
}

}  // namespace

LlmClient::Attempt LlmClient::send_once(const ChatRequest& request) {
  Attempt attempt;
  auto endpoint = parse_llm_endpoint(options_.base_url);
  if (!endpoint) {
    attempt.response = failure("connection", endpoint.message());
    attempt.endpoint_failure = true;
    return attempt;
  }
  std::unique_ptr<httplib::Client> client = http_client(*endpoint);
  httplib::Headers headers;
  if (!api_key_.empty()) headers.emplace("Authorization", "Bearer " + api_key_);
  std::string path = endpoint->chat_path();
  std::string where = "POST " + endpoint->scheme_host_port + path;

  EndpointSlots& slots = endpoint_slots(*endpoint);
  slots.acquire(options_.max_concurrent_requests);
  Clock::time_point start = Clock::now();
  httplib::Result result = client->Post(path.c_str(), headers, request_body(request).dump(), "application/json");
  int64_t latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  slots.release();
  attempt.latency_ms = latency;
  if (!result) {
    attempt.response = transport_failure(result.error(), latency, options_.timeout_ms, where);
    attempt.endpoint_failure = true;
    return attempt;
  }
  int status = result->status;
  if (status < 200 || status >= 300) {
    std::string key_hint = options_.api_key_env.empty() ? " (no API key is sent: llm.api_key_env is empty)"
                           : api_key_.empty() ? " (no API key is sent: $" + options_.api_key_env + " is not set)"
                                              : " (the key is read from $" + options_.api_key_env + ")";
    attempt.response = status_failure(status, result->body, where, key_hint);
    attempt.endpoint_failure = true;
    if (status == 429 && result->has_header("Retry-After")) {
      std::string value = result->get_header_value("Retry-After");
      char* end = nullptr;
      double seconds = std::strtod(value.c_str(), &end);
      if (end != value.c_str() && seconds >= 0 && seconds < 1e6) attempt.response.retry_after_ms = static_cast<int>(seconds * 1000);
    }
    return attempt;
  }
  auto parsed = parse_chat_completion(result->body);
  if (!parsed) {
    attempt.response = failure("malformed_response", where + ": HTTP " + std::to_string(status) + ": " + parsed.message());
    attempt.response.http_status = status;
    attempt.endpoint_failure = true;
    return attempt;
  }
  ChatResponse& r = attempt.response;
  r.http_status = status;
  r.content = parsed->content;
  r.reasoning = parsed->reasoning;
  r.reasoning_tokens = parsed->reasoning_tokens;
  r.reasoning_tokens_estimated = parsed->reasoning_tokens_estimated;
  r.prompt_tokens = parsed->prompt_tokens;
  r.completion_tokens = parsed->completion_tokens;
  r.total_tokens = parsed->total_tokens;
  r.finish_reason = parsed->finish_reason;
  r.latency_ms = latency;
  r.code_blocks = extract_code_blocks(r.content);
  if (r.finish_reason == "length") {
    r.category = "agent.llm.truncated";
    r.message = where + ": finish_reason 'length' after " + std::to_string(r.completion_tokens) + " completion tokens";
  } else if (request.require_code && r.code_blocks.empty()) {
    r.category = "agent.llm.no_code_block";
    r.message = where + ": the reply has no fenced code block";
  } else {
    r.ok = true;
  }
  return attempt;
}

ServedModels LlmClient::served_models() {
  ServedModels served;
  auto endpoint = parse_llm_endpoint(options_.base_url);
  if (!endpoint) {
    served.message = endpoint.message();
    return served;
  }
  served.url = endpoint->scheme_host_port + endpoint->models_path();
  std::unique_ptr<httplib::Client> client = http_client(*endpoint);
  httplib::Headers headers;
  if (!api_key_.empty()) headers.emplace("Authorization", "Bearer " + api_key_);
  Clock::time_point start = Clock::now();
  httplib::Result result = client->Get(endpoint->models_path().c_str(), headers);
  int64_t latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  std::string where = "GET " + served.url;
  if (!result) {
    served.message = transport_failure(result.error(), latency, options_.timeout_ms, where).message;
    return served;
  }
  served.http_status = result->status;
  if (result->status < 200 || result->status >= 300) {
    served.message = where + ": HTTP " + std::to_string(result->status) + ": " + server_message(result->body);
    return served;
  }
  Result<std::vector<std::string>> ids = parse_model_list(result->body);
  if (!ids) {
    served.message = where + ": HTTP " + std::to_string(result->status) + ": " + ids.message();
    return served;
  }
  served.ids = std::move(*ids);
  served.ok = true;
  return served;
}

Result<std::vector<std::string>> parse_model_list(const std::string& body) {
  json parsed = json::parse(body, nullptr, false);
  const json* data = parsed.is_object() && parsed.contains("data") && parsed["data"].is_array() ? &parsed["data"]
                     : parsed.is_array() ? &parsed : nullptr;  // some servers answer the bare list
  if (!data) return make_error("not a model list: " + server_message(body));
  std::vector<std::string> ids;
  for (const json& entry : *data) {
    if (entry.is_object() && entry.contains("id") && entry["id"].is_string()) ids.push_back(entry["id"].get<std::string>());
  }
  return ids;
}

ChatResponse LlmClient::complete(const ChatRequest& request, Database* cache) {
  std::string key = cache_key(request);
  bool use_cache = cache != nullptr && options_.use_cache;
  if (use_cache) {
    if (auto stored = cache_lookup(*cache, "llm", key)) {
      if (auto response = from_cached_value(*stored)) {
        response->cache_key = key;
        return *response;
      }
    }
  }
  ChatResponse last;
  int attempts = 0;
  std::vector<SentRequest> sent;
  for (int attempt_number = 1; attempt_number <= options_.max_attempts; ++attempt_number) {
    std::string refused = admit();
    if (!refused.empty()) {
      ChatResponse response = failure(refused.substr(10), refused == "agent.llm.circuit_open"
                                                              ? "endpoint " + options_.base_url + " paused after repeated failures"
                                                              : "hourly LLM budget spent (llm.requests_per_hour / llm.tokens_per_hour)");
      response.category = refused;
      if (!last.category.empty()) response.message += "; last failure: " + last.category + ": " + last.message;
      response.attempts = attempts;
      response.cache_key = key;
      response.sent = std::move(sent);
      return response;
    }
    Attempt attempt = send_once(request);
    ++attempts;
    record_outcome(attempt.endpoint_failure, attempt.response.total_tokens);
    const ChatResponse& answer = attempt.response;
    sent.push_back({answer.ok ? "ok" : answer.category, answer.prompt_tokens, answer.completion_tokens,
                    answer.reasoning_tokens, attempt.latency_ms, answer.finish_reason});
    int retry_after_ms = answer.retry_after_ms;
    attempt.response.attempts = attempts;
    attempt.response.cache_key = key;
    if (attempt.response.ok) {
      if (use_cache) (void)cache_store(*cache, "llm", key, cached_value(attempt.response).dump());
      attempt.response.sent = std::move(sent);
      return attempt.response;
    }
    last = attempt.response;
    if (!retryable(last.category)) break;
    if (attempt_number < options_.max_attempts)
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms(attempt_number, retry_after_ms)));
  }
  if (attempts > 1) last.message = "after " + std::to_string(attempts) + " attempt(s): " + last.message;
  last.sent = std::move(sent);
  return last;
}

}  // namespace tailforge
