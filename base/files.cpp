#include "base/files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tailforge {

namespace fs = std::filesystem;

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return make_error(path + ": cannot read file");
  return text.str();
}

std::string read_text_file_or_empty(const std::string& path) {
  Result<std::string> text = read_text_file(path);
  return text ? std::move(*text) : std::string();
}

Status write_text_file(const std::string& path, std::string_view content) {
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code error;
    fs::create_directories(parent, error);
    if (error) return make_error("cannot create " + parent.string() + ": " + error.message());
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) return make_error("cannot write " + path);
  return {};
}

Result<nlohmann::json> parse_json_text(const std::string& text, const std::string& file) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return make_error(file + ": invalid JSON: " + e.what());
  }
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  Result<std::string> text = read_text_file(path);
  if (!text) return text.error();
  try {
    return nlohmann::json::parse(*text, nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(path + ": invalid JSON: " + e.what());
  }
}

std::string data_dir() {
  if (const char* home = std::getenv("TAILFORGE_HOME"); home && *home) return home;
  if (fs::exists(fs::path(TAILFORGE_SOURCE_DIR) / "config" / "default.json")) return TAILFORGE_SOURCE_DIR;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      if (fs::exists(dir / "config" / "default.json")) return dir.string();
    }
  }
  return TAILFORGE_SOURCE_DIR;
}

std::string data_path(const std::string& relative) { return (fs::path(data_dir()) / relative).string(); }

}  // namespace tailforge
