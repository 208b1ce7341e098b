#include "test_support/fake_openai_server.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

namespace tailforge {

FakeOpenAiServer::FakeOpenAiServer() : server_(std::make_unique<httplib::Server>()) { start(); }

FakeOpenAiServer::FakeOpenAiServer(const std::string& cert_file, const std::string& key_file)
    : server_(std::make_unique<httplib::SSLServer>(cert_file.c_str(), key_file.c_str())), tls_(true) {
  start();
}

void FakeOpenAiServer::set_prefix(const std::string& prefix) {
  std::lock_guard lock(mutex_);
  prefix_ = prefix;
}

void FakeOpenAiServer::set_served_models(std::vector<std::string> ids, bool enforce) {
  std::lock_guard lock(mutex_);
  served_ = std::move(ids);
  enforce_model_ = enforce;
}

void FakeOpenAiServer::start() {
  // A batching server answers many requests at once (httplib's default pool is 8 threads here).
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  server_->Get(R"(/.*)", [this](const httplib::Request& request, httplib::Response& response) {
    std::lock_guard lock(mutex_);
    received_.push_back({request.path, request.get_header_value("Authorization"), ""});
    if (request.path != prefix_ + "/v1/models") {
      response.status = 404;
      response.set_content(R"({"error": {"message": "not found"}})", "application/json");
      return;
    }
    nlohmann::json data = nlohmann::json::array();
    for (const std::string& id : served_) data.push_back({{"id", id}, {"object", "model"}, {"owned_by", "test"}});
    response.set_content(nlohmann::json{{"object", "list"}, {"data", data}}.dump(), "application/json");
  });
  server_->Post(R"(/.*)", [this](const httplib::Request& request, httplib::Response& response) {
    CannedResponse canned;
    bool scripted = false;
    ReceivedRequest received{request.path, request.get_header_value("Authorization"), request.body};
    std::function<CannedResponse(const ReceivedRequest&)> responder;
    {
      std::lock_guard lock(mutex_);
      received_.push_back(received);
      if (request.path != prefix_ + "/v1/chat/completions") {
        response.status = 404;
        response.set_content(R"({"error": {"message": "not found"}})", "application/json");
        return;
      }
      nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
      std::string model = body.is_object() && body.contains("model") && body["model"].is_string() ? body["model"].get<std::string>() : "";
      if (enforce_model_ && std::find(served_.begin(), served_.end(), model) == served_.end()) {
        response.status = 404;
        nlohmann::json error = {{"object", "error"}, {"message", "The model `" + model + "` does not exist."},
                                {"type", "NotFoundError"}, {"param", nullptr}, {"code", 404}};
        response.set_content(error.dump(), "application/json");
        return;
      }
      if (!script_.empty()) {
        canned = script_.front();
        script_.pop_front();
        scripted = true;
      }
      responder = responder_;
    }
    if (!scripted) {
      canned = responder ? responder(received) : CannedResponse{500, {}, R"({"error":"unscripted request"})", 0};
    }
    int now = ++in_flight_;
    for (int seen = max_in_flight_.load(); now > seen && !max_in_flight_.compare_exchange_weak(seen, now);) {
    }
    if (canned.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(canned.delay_ms));
    --in_flight_;
    response.status = canned.status;
    for (const auto& [name, value] : canned.headers) response.set_header(name, value);
    response.set_content(canned.body, "application/json");
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  for (int i = 0; i < 2000 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeOpenAiServer::~FakeOpenAiServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void FakeOpenAiServer::enqueue(CannedResponse response) {
  std::lock_guard lock(mutex_);
  script_.push_back(std::move(response));
}

void FakeOpenAiServer::set_responder(std::function<CannedResponse(const ReceivedRequest&)> responder) {
  std::lock_guard lock(mutex_);
  responder_ = std::move(responder);
}

std::vector<ReceivedRequest> FakeOpenAiServer::requests() {
  std::lock_guard lock(mutex_);
  return received_;
}

std::string FakeOpenAiServer::completion(const std::string& content, const std::string& finish_reason,
                                         const std::string& reasoning_content, int prompt_tokens,
                                         int completion_tokens, int reasoning_tokens) {
  nlohmann::json message = {{"role", "assistant"}, {"content", content}};
  if (!reasoning_content.empty()) message["reasoning_content"] = reasoning_content;
  nlohmann::json usage = {{"prompt_tokens", prompt_tokens},
                          {"completion_tokens", completion_tokens},
                          {"total_tokens", prompt_tokens + completion_tokens}};
  if (reasoning_tokens >= 0) usage["completion_tokens_details"] = {{"reasoning_tokens", reasoning_tokens}};
  nlohmann::json body = {{"id", "chatcmpl-test"},
                         {"object", "chat.completion"},
                         {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish_reason}}}},
                         {"usage", usage}};
  return body.dump();
}

}  // namespace tailforge
