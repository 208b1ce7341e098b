#include "daemon/http/http_replies.h"

namespace tailforge {

nlohmann::json parse_json_body(const std::string& body) {
  constexpr int kMaxNesting = 64;
  bool too_deep = false;
  // The callback sees each value's depth as it is read and drops the deep ones, so no deep
  // value is ever built.
  auto check = [&too_deep](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth >= kMaxNesting) too_deep = true;  // depth 0 is the body itself
    return !too_deep;
  };
  nlohmann::json parsed = nlohmann::json::parse(body, check, false);
  return too_deep ? nlohmann::json(nlohmann::json::value_t::discarded) : parsed;
}

void send_json(httplib::Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  // Paths and parameters echoed in messages may hold invalid UTF-8: replace, never throw.
  response.set_content(body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
}

void send_error(httplib::Response& response, int status, const std::string& message) {
  send_json(response, status, {{"error", message}, {"status", status}});
}

std::optional<Database> open_store(const std::string& db_path, httplib::Response& response) {
  Result<Database> db = Database::open(db_path);
  if (!db) {
    send_error(response, 503, db.message());
    return std::nullopt;
  }
  return std::move(*db);
}

bool authorized(const std::string& token, const httplib::Request& req, httplib::Response& res, const char* what) {
  if (token.empty()) {
    send_error(res, 403, std::string(what) + " is disabled: no API token is configured");
    return false;
  }
  std::string expected = "Bearer " + token;
  std::string given = req.get_header_value("Authorization");
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    difference |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  }
  if (difference != 0) {
    send_error(res, 401, std::string(what) + " needs 'Authorization: Bearer <token>'");
    return false;
  }
  return true;
}

bool read_cycle_parameter(const httplib::Request& req, httplib::Response& res, std::optional<int64_t>& cycle) {
  if (!req.has_param("cycle")) return true;
  std::string text = req.get_param_value("cycle");
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) {
    send_error(res, 400, "cycle must be a cycle id");
    return false;
  }
  cycle = std::stoll(text);
  return true;
}

}  // namespace tailforge
