// The dashboard: a read-only browser view of the store, served at GET / by the daemon's HTTP
// listener (and by `tailforge serve`). Its pages (overview, taxonomy, tails, models, sample) are
// static files compiled into the binary; every chart reads the same JSON endpoints as the CLI
// (/v1/status, /v1/taxonomy, /v1/tails, /v1/models, /v1/samples). Syntax highlighting uses
// Debian's libjs-highlight.js from /usr/share/javascript when it is installed; nothing is
// fetched from elsewhere.
#pragma once

#include <string>

namespace httplib {
class Server;
}

namespace tailforge {

inline constexpr const char* kSystemJavascriptDir = "/usr/share/javascript";

// Adds GET /, /dashboard/app.js, /dashboard/style.css and, when `javascript_dir` holds
// highlight.js/highlight.min.js, /dashboard/vendor/highlight.min.js.
void add_dashboard_routes(httplib::Server& server, const std::string& javascript_dir = kSystemJavascriptDir);

}  // namespace tailforge
