// The HTTP client of a remote worker: requests to the daemon's worker endpoints with the bearer
// token, each sent again (up to three times over about 7 s) when no answer came, unless the
// worker is stopping; every worker request may be repeated safely.
#pragma once

#include <atomic>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>


namespace httplib {
class Client;
}

namespace tailforge {

// One HTTP exchange's outcome: status 0 when no answer came (connection refused, timeout).
struct Reply {
  int status = 0;
  std::string body;
  std::string error;  // what went wrong when status is 0
  // The body as JSON; an empty object when it is not JSON.
  nlohmann::json json() const;
};

// "HTTP 409: <the body's error>", or "no answer (<why>)": for logs and errors.
std::string reply_text(const Reply& reply);

// Where the daemon is and how to reach it.
struct DaemonAddress {
  std::string server;   // http://host:port or https://host:port
  std::string token;
  std::string ca_file;  // https: a CA bundle for the daemon's certificate ("" = the system's)
};

class DaemonClient {
 public:
  DaemonClient(DaemonAddress address, const std::atomic<bool>& stop) : address_(std::move(address)), stop_(stop) {}

  Reply get(const std::string& path);
  Reply post(const std::string& path, const nlohmann::json& body);
  Reply put(const std::string& path, const std::string& bytes);

 private:
  template <typename Send>
  Reply call(Send send);
  template <typename Send>
  Reply call_once(Send send);

  DaemonAddress address_;
  const std::atomic<bool>& stop_;
};

}  // namespace tailforge
