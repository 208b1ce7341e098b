#include "agents/api_table.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "base/sha256.h"
#include "text/cpp_lexer.h"

namespace tailforge {
namespace {

using nlohmann::json;

// One rule of the families file: exact names, or prefixes/substrings and kinds.
struct FamilyRule {
  size_t family = 0;
  std::set<std::string, std::less<>> names;
  std::vector<std::string> prefixes, contains, kinds;

  bool matches(const std::string& name, const std::string& kind) const {
    if (!names.empty()) return names.count(name) > 0;
    bool text_fits = prefixes.empty() && contains.empty();
    for (const std::string& prefix : prefixes) text_fits = text_fits || name.rfind(prefix, 0) == 0;
    for (const std::string& part : contains) text_fits = text_fits || name.find(part) != std::string::npos;
    bool kind_fits = kinds.empty() || std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
    return text_fits && kind_fits;
  }
};

Result<std::vector<std::string>> string_list(const json& node, const std::string& where) {
  if (!node.is_array()) return make_error(where + " must be an array of strings");
  std::vector<std::string> out;
  for (const json& item : node) {
    if (!item.is_string() || item.get<std::string>().empty()) return make_error(where + " must hold non-empty strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

Status check_keys(const json& object, const std::set<std::string>& known, const std::string& where) {
  if (!object.is_object()) return make_error(where + " must be an object");
  for (const auto& item : object.items()) {
    if (!known.count(item.key())) return make_error(where + "." + item.key() + " is not a known key");
  }
  return {};
}

}  // namespace

const ApiIdentifier* ApiTable::find(std::string_view name) const {
  auto found = index_.find(name);
  return found == index_.end() ? nullptr : &identifiers_[found->second];
}

size_t ApiTable::family_index(std::string_view family) const {
  for (size_t i = 0; i < families_.size(); ++i) {
    if (families_[i].name == family) return i;
  }
  return families_.size();
}

std::vector<const ApiIdentifier*> ApiTable::members(size_t family) const {
  std::vector<const ApiIdentifier*> out;
  for (const ApiIdentifier& identifier : identifiers_) {
    if (identifier.family == family) out.push_back(&identifier);
  }
  return out;
}

Result<ApiTable> build_api_table(std::vector<std::pair<std::string, std::string>> table_names,
                                 const std::string& families_json, const std::string& families_source) {
  json root = json::parse(families_json, nullptr, false);
  const std::string& at = families_source;
  if (Status s = check_keys(root, {"comment", "unmatched_family", "families", "rules"}, at); !s) return s.error();
  if (!root.contains("families") || !root["families"].is_array() || root["families"].empty()) {
    return make_error(at + ": families must be a non-empty array");
  }
  ApiTable table;
  std::vector<std::vector<std::string>> extras;
  for (size_t i = 0; i < root["families"].size(); ++i) {
    const json& node = root["families"][i];
    std::string where = at + ": families[" + std::to_string(i) + "]";
    if (Status s = check_keys(node, {"name", "description", "extra_identifiers"}, where); !s) return s.error();
    if (!node.contains("name") || !node["name"].is_string() || node["name"].get<std::string>().empty()) {
      return make_error(where + ".name must be a non-empty string");
    }
    ApiFamily family{node["name"].get<std::string>(), node.value("description", "")};
    if (table.family_index(family.name) < table.families_.size()) return make_error(where + ".name repeats '" + family.name + "'");
    table.families_.push_back(family);
    extras.emplace_back();
    if (node.contains("extra_identifiers")) {
      Result<std::vector<std::string>> list = string_list(node["extra_identifiers"], where + ".extra_identifiers");
      if (!list) return list.error();
      extras.back() = std::move(*list);
    }
  }
  std::string unmatched = root.value("unmatched_family", "");
  size_t unmatched_family = table.family_index(unmatched);
  if (unmatched_family == table.families_.size()) {
    return make_error(at + ": unmatched_family must name one of the families, got '" + unmatched + "'");
  }

  std::vector<FamilyRule> rules;
  if (!root.contains("rules") || !root["rules"].is_array()) return make_error(at + ": rules must be an array");
  for (size_t i = 0; i < root["rules"].size(); ++i) {
    const json& node = root["rules"][i];
    std::string where = at + ": rules[" + std::to_string(i) + "]";
    if (Status s = check_keys(node, {"family", "names", "prefixes", "contains", "kinds"}, where); !s) return s.error();
    FamilyRule rule;
    std::string family = node.value("family", "");
    rule.family = table.family_index(family);
    if (rule.family == table.families_.size()) return make_error(where + ".family names no family: '" + family + "'");
    for (const char* key : {"names", "prefixes", "contains", "kinds"}) {
      if (!node.contains(key)) continue;
      Result<std::vector<std::string>> list = string_list(node[key], where + "." + key);
      if (!list) return list.error();
      if (std::string(key) == "names") rule.names.insert(list->begin(), list->end());
      if (std::string(key) == "prefixes") rule.prefixes = std::move(*list);
      if (std::string(key) == "contains") rule.contains = std::move(*list);
      if (std::string(key) == "kinds") rule.kinds = std::move(*list);
    }
    bool by_pattern = !rule.prefixes.empty() || !rule.contains.empty() || !rule.kinds.empty();
    if (rule.names.empty() == !by_pattern) {
      return make_error(where + " must give either names or prefixes/contains/kinds");
    }
    rules.push_back(std::move(rule));
  }

  std::sort(table_names.begin(), table_names.end());
  table_names.erase(std::unique(table_names.begin(), table_names.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    table_names.end());
  for (auto& [name, kind] : table_names) {
    size_t family = unmatched_family;
    for (const FamilyRule& rule : rules) {
      if (rule.matches(name, kind)) {
        family = rule.family;
        break;
      }
    }
    table.identifiers_.push_back({name, kind, family, true});
  }
  std::set<std::string> table_set;
  for (const ApiIdentifier& identifier : table.identifiers_) table_set.insert(identifier.name);
  for (size_t family = 0; family < extras.size(); ++family) {
    for (const std::string& name : extras[family]) {
      if (table_set.count(name)) {
        return make_error(at + ": families[" + std::to_string(family) + "].extra_identifiers: '" + name +
                          "' is in the translation table already");
      }
      table_set.insert(name);
      table.identifiers_.push_back({name, "extra", family, false});
    }
  }
  std::sort(table.identifiers_.begin(), table.identifiers_.end(),
            [](const ApiIdentifier& a, const ApiIdentifier& b) { return a.name < b.name; });
  std::string digest;
  for (size_t i = 0; i < table.identifiers_.size(); ++i) {
    const ApiIdentifier& identifier = table.identifiers_[i];
    table.index_.emplace(identifier.name, i);
    digest += identifier.name + "=" + table.families_[identifier.family].name + "\n";
  }
  table.key_ = sha256_hex(digest).substr(0, 16);
  return table;
}

Result<const ApiTable*> load_api_table(const std::string& rules_path, const std::string& families_path) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<ApiTable>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(rules_path, families_path);
  if (auto found = loaded.find(key); found != loaded.end()) return found->second.get();
  Result<HipifyRules> rules = load_hipify_rules(rules_path);
  if (!rules) return make_error("API table: " + rules.message());
  std::vector<std::pair<std::string, std::string>> names;
  for (const IdentifierRule& rule : rules->identifiers) names.emplace_back(rule.from, rule.kind);
  for (const SymbolCallRule& rule : rules->symbol_calls) names.emplace_back(rule.from, "symbol_call");
  for (const WarpIntrinsicRule& rule : rules->warp_intrinsics) names.emplace_back(rule.from, "warp_intrinsic");
  for (const CallRewriteRule& rule : rules->call_rewrites) names.emplace_back(rule.from, "call_rewrite");
  // The rule file's own entries come first, so its kind wins over a generated one (stable sort).
  std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Result<std::string> families = read_text_file(families_path);
  if (!families) return make_error("API table: " + families.message());
  Result<ApiTable> table = build_api_table(std::move(names), *families, families_path);
  if (!table) return table.error();
  auto stored = std::make_unique<ApiTable>(std::move(*table));
  const ApiTable* pointer = stored.get();
  loaded.emplace(key, std::move(stored));
  return pointer;
}

Result<const ApiTable*> load_default_api_table() {
  return load_api_table(data_path("policies/hipify_rules.json"), data_path("policies/api_families.json"));
}

ApiUses count_api_uses(std::string_view text, const ApiTable& table) {
  ApiUses uses;
  bool line_start = true;  // nothing but whitespace since the last newline
  size_t at = 0;
  while (at < text.size()) {
    text::CppToken token = text::next_cpp_token(text, at);
    at = token.end;
    switch (token.kind) {
      case text::CppTokenKind::whitespace:
        if (text.substr(token.begin, token.end - token.begin).find('\n') != std::string_view::npos) line_start = true;
        continue;
      case text::CppTokenKind::identifier:
        if (const ApiIdentifier* found = table.find(text.substr(token.begin, token.end - token.begin))) {
          ++uses[found->name];
        }
        break;
      case text::CppTokenKind::punctuation:
        if (line_start && text[token.begin] == '#') {
          // A directive: an #include (#include_next, #import) line names a header, not the API.
          text::CppToken next = text::next_cpp_token(text, at);
          if (next.kind == text::CppTokenKind::whitespace && text.substr(next.begin, next.end - next.begin).find('\n') ==
                                                                 std::string_view::npos) {
            next = text::next_cpp_token(text, next.end);
          }
          std::string_view word = text.substr(next.begin, next.end - next.begin);
          if (next.kind == text::CppTokenKind::identifier &&
              (word == "include" || word == "include_next" || word == "import")) {
            size_t newline = text.find('\n', next.end);
            at = newline == std::string_view::npos ? text.size() : newline;
          }
        }
        break;
      default:
        break;
    }
    line_start = false;
  }
  return uses;
}

Result<TreeApiCount> count_tree_api_uses(const std::string& root, const ApiTable& table,
                                         const TreeScanOptions& options) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(root, error)) return make_error("counting API names: " + root + " is not a folder");
  TreeApiCount count;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error);
  if (error) return make_error("counting API names: cannot read " + root + ": " + error.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) break;
    const fs::directory_entry& entry = *it;
    std::string name = entry.path().filename().string();
    if (entry.is_directory(error) && !entry.is_symlink(error)) {
      if (std::find(options.skip_dir_names.begin(), options.skip_dir_names.end(), name) != options.skip_dir_names.end()) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (entry.is_symlink(error) || !entry.is_regular_file(error)) continue;
    std::string extension = entry.path().extension().string();
    if (std::find(options.extensions.begin(), options.extensions.end(), extension) == options.extensions.end()) continue;
    if (static_cast<int64_t>(entry.file_size(error)) > options.max_file_bytes || error) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) continue;
    if (text.find('\0') != std::string::npos) continue;
    ++count.files;
    ApiUses uses = count_api_uses(text, table);
    if (!uses.empty()) ++count.api_files;
    for (const auto& [identifier, n] : uses) {
      ApiNameCount& total = count.names[identifier];
      ++total.files;
      total.uses += n;
    }
  }
  return count;
}

}  // namespace tailforge
