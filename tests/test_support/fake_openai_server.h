// A small in-process OpenAI-compatible server for LLM tests, on 127.0.0.1 and a random port,
// over HTTP or HTTPS (a certificate the test made). Like a real server it answers chat
// completions at {prefix}/v1/chat/completions only (404 elsewhere) and lists its models at
// GET {prefix}/v1/models. Each test scripts a queue of
// canned replies, or a responder that answers from the request; the server records every request
// it receives. Used by the agents and daemon tests.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tailforge {

struct CannedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int delay_ms = 0;  // sleep before answering (to provoke client timeouts)
};

struct ReceivedRequest {
  std::string path;
  std::string authorization;
  std::string body;
};

class FakeOpenAiServer {
 public:
  FakeOpenAiServer();
  // HTTPS with this certificate and key (PEM files).
  FakeOpenAiServer(const std::string& cert_file, const std::string& key_file);
  ~FakeOpenAiServer();
  FakeOpenAiServer(const FakeOpenAiServer&) = delete;
  FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

  std::string base_url() const { return (tls_ ? "https" : "http") + std::string("://127.0.0.1:") + std::to_string(port_); }
  // Serves at {prefix}/v1/chat/completions, as behind a reverse proxy ("/proxy").
  void set_prefix(const std::string& prefix);
  int port() const { return port_; }
  // The configuration's "llm" section for this server: model "fake-coder", no API key, two
  // attempts `backoff_ms` apart, no circuit breaker.
  nlohmann::json llm_section(int backoff_ms = 1) const {
    return {{"base_url", base_url()}, {"model", "fake-coder"}, {"api_key_env", ""},
            {"timeout_ms", 5000},     {"max_attempts", 2},     {"backoff_base_ms", backoff_ms},
            {"backoff_max_ms", 2 * backoff_ms}, {"breaker_failures", 0}};
  }
  // The ids GET /v1/models lists (default: fake-coder). With `enforce`, a chat request for another
  // id is answered 404 "The model `x` does not exist." as vLLM answers it.
  void set_served_models(std::vector<std::string> ids, bool enforce);
  // The most chat requests it was answering at once.
  int max_in_flight() const { return max_in_flight_.load(); }
  // Replies in order; with the queue empty the responder answers, else a 500 "unscripted request".
  void enqueue(CannedResponse response);
  // Answers each request the script does not (called on the server's threads).
  void set_responder(std::function<CannedResponse(const ReceivedRequest&)> responder);
  std::vector<ReceivedRequest> requests();

  // A chat.completion body with one choice.
  static std::string completion(const std::string& content, const std::string& finish_reason = "stop",
                                const std::string& reasoning_content = "", int prompt_tokens = 10,
                                int completion_tokens = 20, int reasoning_tokens = -1);

 private:
  void start();

  std::unique_ptr<httplib::Server> server_;
  bool tls_ = false;
  std::string prefix_;
  int port_ = -1;
  std::thread thread_;
  std::mutex mutex_;
  std::deque<CannedResponse> script_;
  std::function<CannedResponse(const ReceivedRequest&)> responder_;
  std::vector<ReceivedRequest> received_;
  std::vector<std::string> served_ = {"fake-coder"};
  bool enforce_model_ = false;
  std::atomic<int> in_flight_{0}, max_in_flight_{0};
};

}  // namespace tailforge
