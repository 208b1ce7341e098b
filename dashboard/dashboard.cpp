#include "dashboard/dashboard.h"

#include <httplib.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>

#include "base/files.h"
#include "dashboard/assets.h"

namespace tailforge {

namespace {

const DashboardAsset* find_asset(std::string_view name) {
  for (int i = 0; i < kDashboardAssetCount; ++i) {
    if (name == kDashboardAssets[i].name) return &kDashboardAssets[i];
  }
  return nullptr;
}

// Scripts and styles from this origin only; data comes from the same origin's API. Sample text
// and diagnostics are untrusted (model-written code), and the pages only ever insert them as text.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

void send_asset(httplib::Response& res, const std::string& body, const char* content_type,
                const char* cache_control = "no-cache") {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", cache_control);
  res.set_content(body, content_type);
}

}  // namespace

void add_dashboard_routes(httplib::Server& server, const std::string& javascript_dir) {
  // Read once: the package's file does not change under a running daemon, and a daemon started
  // before it was installed simply shows code without colours.
  auto highlight = std::make_shared<const std::string>(read_text_file_or_empty(javascript_dir + "/highlight.js/highlight.min.js"));
  std::string index = find_asset("index.html")->body;
  const std::string marker = "<!-- highlight.js -->";
  if (size_t at = index.find(marker); at != std::string::npos && !highlight->empty()) {
    index.replace(at, marker.size(), "<script src=\"/dashboard/vendor/highlight.min.js\" defer></script>");
  }
  auto page = [index](const httplib::Request&, httplib::Response& res) {
    send_asset(res, index, "text/html; charset=utf-8");
  };
  server.Get("/", page);
  server.Get("/index.html", page);
  server.Get(R"(/dashboard/(app\.js|style\.css))", [](const httplib::Request& req, httplib::Response& res) {
    const DashboardAsset* asset = find_asset(req.matches[1].str());
    send_asset(res, asset->body, asset->content_type);
  });
  if (!highlight->empty()) {
    server.Get("/dashboard/vendor/highlight.min.js", [highlight](const httplib::Request&, httplib::Response& res) {
      send_asset(res, *highlight, "text/javascript; charset=utf-8", "max-age=86400");
    });
  }
}

}  // namespace tailforge
