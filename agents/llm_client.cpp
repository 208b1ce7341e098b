#include "agents/llm_client.h"

#include <httplib.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "store/cache.h"
#include "store/sha256.h"
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


bool retryable(const std::string& category) {
  return category != "agent.llm.http_error" && category != "agent.llm.budget_exhausted" &&
         category != "agent.llm.circuit_open";
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

bool endpoint_unavailable(const std::string& category) {
  for (const char* reason : {"timeout", "connection", "rate_limited", "server_error", "budget_exhausted",
                             "circuit_open"}) {
    if (category == std::string("agent.llm.") + reason) return true;
  }
  return false;
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

LlmClient::Attempt LlmClient::send_once(const ChatRequest& request) {
  Attempt attempt;
  auto endpoint = parse_llm_endpoint(options_.base_url);
  if (!endpoint) {
    attempt.response = failure("connection", endpoint.message());
    attempt.endpoint_failure = true;
    return attempt;
  }
  httplib::Client client(endpoint->scheme_host_port);
  if (!options_.ca_file.empty()) client.set_ca_cert_path(options_.ca_file.c_str());
  client.enable_server_certificate_verification(true);
  auto set_ms = [](int ms) { return std::chrono::milliseconds(ms); };
  client.set_connection_timeout(set_ms(options_.connect_timeout_ms));
  client.set_read_timeout(set_ms(options_.timeout_ms));
  client.set_write_timeout(set_ms(options_.timeout_ms));
  httplib::Headers headers;
  if (!api_key_.empty()) headers.emplace("Authorization", "Bearer " + api_key_);
  std::string path = endpoint->chat_path();
  std::string where = "POST " + endpoint->scheme_host_port + path;

  Clock::time_point start = Clock::now();
  httplib::Result result = client.Post(path.c_str(), headers, request_body(request).dump(), "application/json");
  int64_t latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  attempt.latency_ms = latency;
  if (!result) {
    httplib::Error error = result.error();
    bool timed_out = error == httplib::Error::ConnectionTimeout ||
                     (error == httplib::Error::Read && latency >= options_.timeout_ms * 9 / 10);
    std::string hint = error == httplib::Error::SSLServerVerification
                           ? " (a private CA: give its certificate with --ca-file or llm.ca_file)" : "";
    attempt.response = failure(timed_out ? "timeout" : "connection", where + ": " + httplib::to_string(error) +
                                                                         " after " + std::to_string(latency) + " ms" + hint);
    attempt.endpoint_failure = true;
    return attempt;
  }
  int status = result->status;
  std::string snippet = result->body.substr(0, 200);
  if (status == 429) {
    attempt.response = failure("rate_limited", where + ": HTTP 429: " + snippet);
    attempt.endpoint_failure = true;
    if (result->has_header("Retry-After")) {
      std::string value = result->get_header_value("Retry-After");
      char* end = nullptr;
      double seconds = std::strtod(value.c_str(), &end);
      if (end != value.c_str() && seconds >= 0) attempt.retry_after_ms = static_cast<int>(seconds * 1000);
    }
    return attempt;
  }
  if (status >= 500) {
    attempt.response = failure("server_error", where + ": HTTP " + std::to_string(status) + ": " + snippet);
    attempt.endpoint_failure = true;
    return attempt;
  }
  if (status < 200 || status >= 300) {
    attempt.response = failure("http_error", where + ": HTTP " + std::to_string(status) + ": " + snippet);
    return attempt;
  }
  auto parsed = parse_chat_completion(result->body);
  if (!parsed) {
    attempt.response = failure("malformed_response", where + ": " + parsed.message());
    attempt.endpoint_failure = true;
    return attempt;
  }
  ChatResponse& r = attempt.response;
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
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms(attempt_number, attempt.retry_after_ms)));
  }
  last.message = "after " + std::to_string(attempts) + " attempt(s): " + last.message;
  last.sent = std::move(sent);
  return last;
}

}  // namespace tailforge
