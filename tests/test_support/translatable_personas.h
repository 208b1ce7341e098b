// The shipped personas, each avoiding inline PTX and grid sync, which the built-in translator
// cannot translate: a test whose few generated programs must verify, whichever domains the
// generator holds and wherever a cycle's seed lands, sets this file as generator.personas_file.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support/temp_dir.h"

namespace tailforge {

inline std::string write_translatable_personas(const TempDir& dir) {
  nlohmann::json catalog = nlohmann::json::parse(std::ifstream(std::string(TAILFORGE_SOURCE_DIR) + "/config/personas.json"));
  for (nlohmann::json& persona : catalog["personas"]) {
    nlohmann::json& avoid = persona["avoid_features"];
    if (!avoid.is_array()) avoid = nlohmann::json::array();
    for (const char* feature : {"inline_ptx", "grid_sync"}) avoid.push_back(feature);
    if (persona.contains("prefer_features")) {
      nlohmann::json kept = nlohmann::json::array();
      for (const nlohmann::json& feature : persona["prefer_features"]) {
        if (feature != "inline_ptx" && feature != "grid_sync") kept.push_back(feature);
      }
      persona["prefer_features"] = kept;
    }
  }
  std::string path = dir.file("translatable_personas.json");
  std::ofstream(path) << catalog.dump(2);
  return path;
}

}  // namespace tailforge
