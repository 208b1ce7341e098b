#include "agents/translate/hipify_rules.h"

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/translate/hipify_names.h"

namespace tailforge {
namespace {

using nlohmann::json;

std::string string_at(const json& object, const std::string& key, const std::string& where,
                      std::string* error, bool required = true) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (required && error->empty()) *error = where + "." + key + ": missing";
    return {};
  }
  if (!it->is_string()) {
    if (error->empty()) *error = where + "." + key + ": expected a string";
    return {};
  }
  return it->get<std::string>();
}

const json* array_at(const json& root, const std::string& key, std::string* error) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_array()) {
    if (error->empty()) *error = key + ": missing or not an array";
    return nullptr;
  }
  return &*it;
}

std::string where(const std::string& section, size_t index) {
  return section + "[" + std::to_string(index) + "]";
}

template <typename Rule>
void index_rules(const std::vector<Rule>& rules, const std::string& section,
                 std::unordered_map<std::string, size_t>& index, std::string* error) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].from.empty() && error->empty()) *error = where(section, i) + ".from: empty";
    if (!index.emplace(rules[i].from, i).second && error->empty())
      *error = where(section, i) + ".from: duplicate rule for '" + rules[i].from + "'";
  }
}

void string_list(const json& list, const std::string& at, std::vector<std::string>& out, std::string* error) {
  if (!list.is_array()) {
    if (error->empty()) *error = at + ": expected an array of strings";
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      if (error->empty()) *error = where(at, i) + ": expected a string";
      continue;
    }
    out.push_back(list[i].get<std::string>());
  }
}

void load_tables(const json& root, HipifyRules& rules, std::string* error) {
  if (const json* headers = array_at(root, "headers", error)) {
    for (size_t i = 0; i < headers->size(); ++i) {
      const json& h = (*headers)[i];
      std::string at = where("headers", i);
      HeaderRule rule{string_at(h, "from", at, error), string_at(h, "to", at, error, false),
                      string_at(h, "unsupported", at, error, false), string_at(h, "message", at, error, false),
                      h.value("compat", false), h.value("unless_in_tree", false), {}};
      if (auto also = h.find("also"); also != h.end()) string_list(*also, at + ".also", rule.also, error);
      if (rule.to.empty() == rule.unsupported_construct.empty() && error->empty())
        *error = at + ": needs exactly one of 'to' and 'unsupported'";
      rules.headers.push_back(rule);
    }
  }
  if (const json* ids = array_at(root, "identifiers", error)) {
    for (size_t i = 0; i < ids->size(); ++i) {
      std::string at = where("identifiers", i);
      const json& r = (*ids)[i];
      rules.identifiers.push_back({string_at(r, "from", at, error), string_at(r, "to", at, error),
                                   string_at(r, "kind", at, error), string_at(r, "header", at, error, false)});
    }
  }
  if (const json* calls = array_at(root, "symbol_calls", error)) {
    for (size_t i = 0; i < calls->size(); ++i) {
      std::string at = where("symbol_calls", i);
      const json& r = (*calls)[i];
      SymbolCallRule rule{string_at(r, "from", at, error), string_at(r, "to", at, error),
                          string_at(r, "wrapper", at, error)};
      if (!r.contains("symbol_argument") || !r["symbol_argument"].is_number_integer()) {
        if (error->empty()) *error = at + ".symbol_argument: expected an integer";
      } else {
        rule.symbol_argument = r["symbol_argument"].get<int>();
      }
      rules.symbol_calls.push_back(rule);
    }
  }
  if (const json* warp = array_at(root, "warp_intrinsics", error)) {
    for (size_t i = 0; i < warp->size(); ++i) {
      std::string at = where("warp_intrinsics", i);
      rules.warp_intrinsics.push_back({string_at((*warp)[i], "from", at, error), string_at((*warp)[i], "to", at, error)});
    }
  }
  if (const json* rewrites = array_at(root, "call_rewrites", error)) {
    for (size_t i = 0; i < rewrites->size(); ++i) {
      std::string at = where("call_rewrites", i);
      rules.call_rewrites.push_back({string_at((*rewrites)[i], "from", at, error),
                                     string_at((*rewrites)[i], "to", at, error)});
    }
  }
}

void load_lists(const json& root, HipifyRules& rules, std::string* error) {

  if (const json* masks = array_at(root, "full_warp_masks", error)) string_list(*masks, "full_warp_masks", rules.full_warp_masks, error);
  auto bounds = root.find("launch_bounds");
  if (bounds == root.end() || !bounds->is_object() || !bounds->contains("keep_arguments") ||
      !(*bounds)["keep_arguments"].is_number_integer()) {
    if (error->empty()) *error = "launch_bounds.keep_arguments: missing or not an integer";
  } else {
    rules.launch_bounds_name = string_at(*bounds, "name", "launch_bounds", error);
    rules.launch_bounds_keep_arguments = (*bounds)["keep_arguments"].get<int>();
  }
  auto warp_size = root.find("warp_size");
  if (warp_size == root.end() || !warp_size->is_object()) {
    if (error->empty()) *error = "warp_size: missing or not an object";
  } else {
    string_list(warp_size->value("literals", json()), "warp_size.literals", rules.warp_size_literals, error);
    string_list(warp_size->value("warp_code_markers", json()), "warp_size.warp_code_markers", rules.warp_code_markers, error);
  }
  if (const json* unsupported = array_at(root, "unsupported", error)) {
    for (size_t i = 0; i < unsupported->size(); ++i) {
      std::string at = where("unsupported", i);
      const json& r = (*unsupported)[i];
      UnsupportedRule rule;
      rule.construct = string_at(r, "construct", at, error);
      rule.message = string_at(r, "message", at, error);
      rule.example = string_at(r, "example", at, error);
      string_list(r.value("patterns", json()), at + ".patterns", rule.pattern_texts, error);
      if (rule.pattern_texts.empty() && error->empty()) *error = at + ".patterns: empty";
      for (size_t p = 0; p < rule.pattern_texts.size(); ++p) {
        try {
          rule.patterns.emplace_back(rule.pattern_texts[p]);
        } catch (const text::RegexError& e) {
          if (error->empty()) *error = where(at + ".patterns", p) + ": bad regex: " + e.what();
        }
      }
      rules.unsupported.push_back(std::move(rule));
    }
  }
  if (root.contains("libraries")) {
    if (const json* libraries = array_at(root, "libraries", error)) {
      for (size_t i = 0; i < libraries->size(); ++i) {
        std::string at = where("libraries", i);
        const json& r = (*libraries)[i];
        LibraryRule rule;
        rule.name = string_at(r, "name", at, error);
        rule.message = string_at(r, "message", at, error);
        string_list(r.value("prefixes", json()), at + ".prefixes", rule.prefixes, error);
        if (rule.prefixes.empty() && error->empty()) *error = at + ".prefixes: empty";
        rules.libraries.push_back(std::move(rule));
      }
    }
  }
  if (const json* residual = array_at(root, "residual_identifiers", error)) {
    string_list(*residual, "residual_identifiers", rules.residual_pattern_texts, error);
    for (size_t p = 0; p < rules.residual_pattern_texts.size(); ++p) {
      try {
        rules.residual_patterns.emplace_back(rules.residual_pattern_texts[p]);
      } catch (const text::RegexError& e) {
        if (error->empty()) *error = where("residual_identifiers", p) + ": bad regex: " + e.what();
      }
    }
  }
  if (const json* rewrites = array_at(root, "code_rewrites", error)) {
    for (size_t i = 0; i < rewrites->size(); ++i) {
      std::string at = where("code_rewrites", i);
      CodeRewriteRule rule{string_at((*rewrites)[i], "pattern", at, error), string_at((*rewrites)[i], "to", at, error, false), {}};
      try {
        rule.pattern = text::Regex(rule.pattern_text);
      } catch (const text::RegexError& e) {
        if (error->empty()) *error = at + ".pattern: bad regex: " + e.what();
      }
      rules.code_rewrites.push_back(std::move(rule));
    }
  }
  auto casts = root.find("vararg_casts");
  if (casts == root.end() || !casts->is_object()) {
    if (error->empty()) *error = "vararg_casts: missing or not an object";
  } else {
    string_list(casts->value("calls", json()), "vararg_casts.calls", rules.vararg_cast_calls, error);
    rules.vararg_cast = string_at(*casts, "cast", "vararg_casts", error);
    std::string pattern = string_at(*casts, "arguments", "vararg_casts", error);
    try {
      rules.vararg_cast_arguments = text::Regex(pattern);
    } catch (const text::RegexError& e) {
      if (error->empty()) *error = std::string("vararg_casts.arguments: bad regex: ") + e.what();
    }
  }
}

}  // namespace

Result<HipifyRules> load_hipify_rules(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("cannot read hipify rules '" + path + "'");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& e) {
    return make_error(path + ": invalid JSON: " + e.what());
  }
  if (!root.is_object()) return make_error(path + ": the top level must be an object");
  HipifyRules rules;
  rules.source_path = path;
  std::string error;
  try {
    load_tables(root, rules, &error);
    load_lists(root, rules, &error);
  } catch (const json::exception& e) {
    if (error.empty()) error = std::string("unexpected JSON shape: ") + e.what();
  }
  index_rules(rules.identifiers, "identifiers", rules.identifier_index, &error);
  index_rules(rules.symbol_calls, "symbol_calls", rules.symbol_call_index, &error);
  index_rules(rules.warp_intrinsics, "warp_intrinsics", rules.warp_intrinsic_index, &error);
  index_rules(rules.call_rewrites, "call_rewrites", rules.call_rewrite_index, &error);
  if (!error.empty()) return make_error(path + ": " + error);
  rules.handwritten_identifiers = rules.identifiers.size();
  if (auto generated = root.find("generated_identifiers"); generated != root.end()) {
    if (!generated->is_string()) return make_error(path + ": generated_identifiers: expected a file name");
    if (Status merged = merge_generated_table(rules, generated->get<std::string>()); !merged.ok())
      return make_error(path + ": generated_identifiers: " + merged.message());
  }
  return rules;
}

}  // namespace tailforge
