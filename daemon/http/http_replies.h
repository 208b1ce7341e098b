// Replies shared by the daemon's HTTP endpoints (daemon/http/http_api.h, daemon/http/worker_api.h): JSON
// bodies, JSON errors, the per-request store, and the bearer-token check.
#pragma once

#include <optional>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "store/database.h"

namespace tailforge {

// A request body as JSON; discarded when it is not JSON or nests deeper than 64 levels (copying
// or printing a JSON value recurses once per level, so a deeper body could overflow the stack).
nlohmann::json parse_json_body(const std::string& body);

void send_json(httplib::Response& response, int status, const nlohmann::json& body);
void send_error(httplib::Response& response, int status, const std::string& message);
// Opens the store for one request; a failure answers 503.
std::optional<Database> open_store(const std::string& db_path, httplib::Response& response);
// Answers 403 (no token configured) or 401 and returns false unless the request carries the
// token; compares in constant time.
bool authorized(const std::string& token, const httplib::Request& req, httplib::Response& res, const char* what);
// The request's ?cycle=N into `cycle` (left unset without one); answers 400 and returns false
// when it is no cycle id.
bool read_cycle_parameter(const httplib::Request& req, httplib::Response& res, std::optional<int64_t>& cycle);

}  // namespace tailforge
