// The translator's rule table as shipped (policies/hipify_rules.json), loaded once per test binary.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"

namespace tailforge {

inline const HipifyRules& shipped_hipify_rules() {
  static HipifyRules loaded = [] {
    Result<HipifyRules> rules = load_hipify_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json");
    REQUIRE_MESSAGE(rules.ok(), rules.message());
    return std::move(rules.value());
  }();
  return loaded;
}

}  // namespace tailforge
