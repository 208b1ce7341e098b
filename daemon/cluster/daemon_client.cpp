#include "daemon/cluster/daemon_client.h"

#include <chrono>
#include <thread>

#include <httplib.h>

namespace tailforge {

nlohmann::json Reply::json() const {
  nlohmann::json value = nlohmann::json::parse(body, nullptr, false);
  return value.is_discarded() ? nlohmann::json::object() : value;
}

std::string reply_text(const Reply& reply) {
  if (reply.status == 0) return "no answer (" + reply.error + ")";
  nlohmann::json body = reply.json();
  return "HTTP " + std::to_string(reply.status) + (body.contains("error") ? ": " + body["error"].get<std::string>() : "");
}

namespace {

httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

}  // namespace

Reply DaemonClient::get(const std::string& path) {
  return call([&](httplib::Client& c) { return c.Get(path, bearer(address_.token)); });
}

Reply DaemonClient::post(const std::string& path, const nlohmann::json& body) {
  std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return call([&](httplib::Client& c) { return c.Post(path, bearer(address_.token), text, "application/json"); });
}

Reply DaemonClient::put(const std::string& path, const std::string& bytes) {
  return call([&](httplib::Client& c) { return c.Put(path, bearer(address_.token), bytes, "application/octet-stream"); });
}

template <typename Send>
Reply DaemonClient::call(Send send) {
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
Reply DaemonClient::call_once(Send send) {
  httplib::Client client(address_.server);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(120, 0);
  client.set_write_timeout(120, 0);
  if (!address_.ca_file.empty()) client.set_ca_cert_path(address_.ca_file.c_str());
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

}  // namespace tailforge
