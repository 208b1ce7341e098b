// The track table (synth/tracks.h): every track the loop evaluates has a judge and a small input
// for `model check`; registering a model checks its track against the table; and no code outside
// the table and the tracks' own folders compares a track's name.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "store/database.h"
#include "synth/model_registry.h"
#include "synth/tracks.h"

namespace fs = std::filesystem;

namespace tailforge {

TEST_CASE("every evaluated track has a judge and a small input; find_track knows each name and no other") {
  std::set<std::string> names;
  for (const Track& track : tracks()) {
    CAPTURE(track.name);
    CHECK(names.insert(std::string(track.name)).second);
    CHECK(find_track(track.name) == &track);
    CHECK(!track.summary.empty());
    if (track.evaluated) {
      CHECK(static_cast<bool>(track.judge));
      CHECK(!track.check_input.empty());
    }
  }
  CHECK(names == std::set<std::string>{"cuda2hip", "sass2rdna3", "ptx2cuda", "c2x86", "kernelopt"});
  CHECK(find_track("cuda2hipp") == nullptr);
  CHECK(find_track("") == nullptr);
  CHECK(track_names() == "cuda2hip, sass2rdna3, ptx2cuda, c2x86, kernelopt");
}

TEST_CASE("registering a model checks its track against the table") {
  Database db = Database::open(":memory:").value();
  auto refused = [&](const nlohmann::json& definition, const std::string& why) {
    Result<ModelRecord> model = register_model(db, definition);
    CAPTURE(definition.dump());
    REQUIRE_FALSE(model.ok());
    CHECK(model.message().find(why) != std::string::npos);
  };
  refused({{"name", "a"}, {"kind", "command"}, {"command", {"cat"}}, {"track", "fortran2rust"}},
          "track 'fortran2rust' has no evaluator (cuda2hip, sass2rdna3, ptx2cuda, c2x86, kernelopt have)");
  refused({{"name", "a"}, {"kind", "builtin"}, {"track", "c2x86"}},
          "no built-in model answers c2x86 (a builtin model is the CUDA->HIP rule translator for cuda2hip; the "
          "built-in strategies");
  CHECK(register_model(db, {{"name", "k"}, {"kind", "command"}, {"command", {"cat"}}, {"track", "kernelopt"}}).ok());
  CHECK(register_model(db, {{"name", "s"}, {"kind", "builtin"}, {"track", "kernelopt"}}).ok());
  CHECK(register_model(db, {{"name", "b"}, {"kind", "builtin"}, {"track", "cuda2hip"}}).ok());
  CHECK(register_model(db, {{"name", "c"}, {"kind", "command"}, {"command", {"cat"}}, {"track", "ptx2cuda"}}).ok());
  CHECK(register_model(db, {{"name", "d"}, {"kind", "openai"}, {"endpoint", "http://127.0.0.1:8000"}, {"track", "kernelopt"}}).ok());
}

namespace {

std::string source_root() { return fs::path(std::string(TAILFORGE_TEST_DATA) + "/../..").lexically_normal().string(); }

bool ends_with_operator(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.ends_with("==") || text.ends_with("!=");
}

bool starts_with_operator(const std::string& text) {
  size_t first = text.find_first_not_of(' ');
  return first != std::string::npos && (text.compare(first, 2, "==") == 0 || text.compare(first, 2, "!=") == 0);
}

// Lines that compare something named like a track with a track's name: `track == "c2x86"`,
// `"ptx2cuda" != sample.track`, `args.get("--track", "kernelopt") != "kernelopt"`.
std::vector<std::string> track_comparisons(const std::string& text) {
  static const char* const kNames[] = {"\"cuda2hip\"", "\"sass2rdna3\"", "\"ptx2cuda\"", "\"c2x86\"", "\"kernelopt\""};
  std::vector<std::string> found;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    bool compared = false;
    for (const char* name : kNames) {
      for (size_t at = line.find(name); at != std::string::npos && !compared; at = line.find(name, at + 1)) {
        std::string before = line.substr(0, at), after = line.substr(at + std::string(name).size());
        compared = (ends_with_operator(before) && before.find("track") != std::string::npos) ||
                   (starts_with_operator(after) && after.find("track") != std::string::npos);
      }
    }
    if (compared) found.push_back(line);
  }
  return found;
}

}  // namespace

TEST_CASE("the track-name checker finds comparisons either way round and nothing else") {
  CHECK(track_comparisons("  if (item.track == \"ptx2cuda\") {\n").size() == 1);
  CHECK(track_comparisons("  if (\"c2x86\" != sample.track) return;\n").size() == 1);
  CHECK(track_comparisons("  if (args.get(\"--track\", \"kernelopt\") != \"kernelopt\") {\n").size() == 1);
  CHECK(track_comparisons("  sample.track = \"cuda2hip\";\n  std::string track = \"kernelopt\";\n").empty());
  CHECK(track_comparisons("  if (language == \"c2x86\") {\n").empty());
}

TEST_CASE("no track name is compared outside the table and the tracks' own folders") {
  // A place that must tell tracks apart asks the table for what the track brings.
  const std::set<std::string> track_folders = {"c2x86", "sass2rdna3", "ptx2cuda", "kernelopt"};
  std::map<std::string, std::vector<std::string>> found;  // file -> its lines that compare
  for (const char* library : {"text", "store", "policies", "verifier", "agents", "synth", "daemon", "dashboard"}) {
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(fs::path(source_root()) / library)) {
      std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".h")) continue;
      std::string relative = entry.path().lexically_relative(source_root()).generic_string();
      if (relative == "synth/tracks.cpp") continue;
      bool in_track_folder = false;
      for (const auto& part : fs::path(relative)) in_track_folder = in_track_folder || track_folders.count(part.string());
      if (in_track_folder) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      for (const std::string& line : track_comparisons(text.str())) found[relative].push_back(line);
    }
  }
  for (const auto& [file, lines] : found) {
    CAPTURE(file);
    CAPTURE(lines.front());
    CHECK(lines.empty());
  }
  CHECK(found.empty());
}

}  // namespace tailforge
