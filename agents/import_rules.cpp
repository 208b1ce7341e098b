// The import filters (loading and validating policies/import_filters.json) and the program-text
// rules the importer applies: comments removed, kernel or launch present, hello world.
#include <algorithm>
#include <cctype>

#include "agents/importer.h"
#include "base/files.h"
#include "policies/config.h"
#include "text/chars.h"
#include "text/cpp_lexer.h"

namespace tailforge {
namespace {

using nlohmann::json;

json filters_to_json(const ImportFilters& f) {
  return {{"comment", ""},
          {"track", f.track},
          {"language", f.language},
          {"min_lines", f.min_lines},
          {"max_lines", f.max_lines},
          {"max_file_bytes", f.max_file_bytes},
          {"binary_probe_bytes", f.binary_probe_bytes},
          {"program_extensions", f.program_extensions},
          {"kernel_source_extensions", f.kernel_source_extensions},
          {"skip_dir_names", f.skip_dir_names},
          {"include_dir_names", f.include_dir_names},
          {"max_headers", f.max_headers},
          {"hello_world", {{"skip", f.skip_hello_world}, {"print_functions", f.print_functions}}},
          {"near_duplicate",
           {{"enabled", f.near_duplicate_enabled},
            {"threshold", f.near_duplicate_threshold},
            {"shingle_tokens", f.near_duplicate_shingle_tokens},
            {"permutations", f.near_duplicate_permutations}}}};
}

Status expect(bool holds, const std::string& file, const std::string& key, const json& value,
              const std::string& expected) {
  if (holds) return {};
  return make_error(file + ": key " + key + " has value " + value.dump() + ", expected " + expected);
}

Status check_string_list(const json& list, const std::string& file, const std::string& key) {
  bool strings = std::all_of(list.begin(), list.end(), [](const json& item) { return item.is_string(); });
  return expect(strings, file, key, list, "an array of strings");
}

using text::is_identifier_char;

// The position of `word` in `code` from `from` as a whole identifier, or npos.
size_t find_word(const std::string& code, const std::string& word, size_t from) {
  for (size_t at = code.find(word, from); at != std::string::npos; at = code.find(word, at + 1)) {
    bool starts = at == 0 || !is_identifier_char(code[at - 1]);
    bool ends = at + word.size() >= code.size() || !is_identifier_char(code[at + word.size()]);
    if (starts && ends) return at;
  }
  return std::string::npos;
}

// The position just past the bracket that closes the one at `open`, or npos.
size_t past_matching(const std::string& code, size_t open, char opening, char closing) {
  int depth = 0;
  for (size_t i = open; i < code.size(); ++i) {
    if (code[i] == opening) ++depth;
    if (code[i] == closing && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

}  // namespace

Result<ImportFilters> import_filters_from_json(const std::string& json_text, const std::string& file) {
  json user = json::parse(json_text, nullptr, false);
  if (user.is_discarded()) return make_error(file + ": not valid JSON");
  Result<json> merged = merge_config(filters_to_json(ImportFilters{}), user, file);
  if (!merged) return merged.error();
  const json& m = *merged;
  ImportFilters f;
  f.track = m["track"].get<std::string>();
  f.language = m["language"].get<std::string>();
  f.min_lines = m["min_lines"].get<int64_t>();
  f.max_lines = m["max_lines"].get<int64_t>();
  f.max_file_bytes = m["max_file_bytes"].get<int64_t>();
  f.binary_probe_bytes = m["binary_probe_bytes"].get<int64_t>();
  f.max_headers = m["max_headers"].get<int64_t>();
  const json& hello = m["hello_world"];
  const json& near = m["near_duplicate"];
  for (const char* key : {"program_extensions", "kernel_source_extensions", "skip_dir_names", "include_dir_names"}) {
    if (Status s = check_string_list(m[key], file, std::string("/") + key); !s) return s.error();
  }
  if (Status s = check_string_list(hello["print_functions"], file, "/hello_world/print_functions"); !s)
    return s.error();
  f.program_extensions = m["program_extensions"].get<std::vector<std::string>>();
  f.kernel_source_extensions = m["kernel_source_extensions"].get<std::vector<std::string>>();
  f.skip_dir_names = m["skip_dir_names"].get<std::vector<std::string>>();
  f.include_dir_names = m["include_dir_names"].get<std::vector<std::string>>();
  f.skip_hello_world = hello["skip"].get<bool>();
  f.print_functions = hello["print_functions"].get<std::vector<std::string>>();
  f.near_duplicate_enabled = near["enabled"].get<bool>();
  f.near_duplicate_threshold = near["threshold"].get<double>();
  f.near_duplicate_shingle_tokens = near["shingle_tokens"].get<int>();
  f.near_duplicate_permutations = near["permutations"].get<int>();

  const Status checks[] = {
      expect(f.min_lines >= 0, file, "/min_lines", m["min_lines"], "0 or more"),
      expect(f.max_lines >= f.min_lines, file, "/max_lines", m["max_lines"], "at least min_lines"),
      expect(f.max_file_bytes > 0, file, "/max_file_bytes", m["max_file_bytes"], "a positive byte count"),
      expect(f.binary_probe_bytes > 0, file, "/binary_probe_bytes", m["binary_probe_bytes"], "a positive byte count"),
      expect(f.max_headers >= 0, file, "/max_headers", m["max_headers"], "0 or more"),
      expect(!f.program_extensions.empty(), file, "/program_extensions", m["program_extensions"], "at least one"),
      expect(f.near_duplicate_threshold > 0 && f.near_duplicate_threshold <= 1, file, "/near_duplicate/threshold",
             near["threshold"], "a number in (0, 1]"),
      expect(f.near_duplicate_shingle_tokens > 0, file, "/near_duplicate/shingle_tokens", near["shingle_tokens"],
             "a positive integer"),
      expect(f.near_duplicate_permutations > 0, file, "/near_duplicate/permutations", near["permutations"],
             "a positive integer"),
  };
  for (const Status& check : checks) {
    if (!check) return check.error();
  }
  return f;
}

Result<ImportFilters> load_import_filters(const std::string& path) {
  Result<json> document = read_json_file(path);
  if (!document) return document.error();
  return import_filters_from_json(document->dump(), path);
}

std::string code_without_comments(const std::string& text, bool blank_strings) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    text::CppToken token = text::next_cpp_token(text, at);
    at = token.end;
    std::string_view spelled(text.data() + token.begin, token.end - token.begin);
    bool literal = token.kind == text::CppTokenKind::string_literal || token.kind == text::CppTokenKind::char_literal;
    if (token.kind == text::CppTokenKind::comment) {
      // Its newlines stay, so lines keep their numbers; a block comment leaves a space.
      out.append(static_cast<size_t>(std::count(spelled.begin(), spelled.end(), '\n')), '\n');
      if (spelled.starts_with("/*")) out.push_back(' ');
    } else if (literal && blank_strings) {
      // The prefix and quotes stay: "", L'', R"x()x".
      out.append(text, token.begin, token.body_begin - token.begin);
      if (token.closed) out.append(text, token.body_end, token.end - token.body_end);
    } else {
      out.append(spelled);
    }
  }
  return out;
}

bool has_kernel_or_launch(const std::string& code) {
  if (find_word(code, "__global__", 0) != std::string::npos) return true;
  size_t launch = code.find("<<<");
  return launch != std::string::npos && code.find(">>>", launch + 3) != std::string::npos;
}

bool is_hello_world(const std::string& code, const std::vector<std::string>& print_functions) {
  int kernels = 0;
  for (size_t at = find_word(code, "__global__", 0); at != std::string::npos;
       at = find_word(code, "__global__", at + 1)) {
    size_t open = code.find('(', at);
    size_t params_end = open == std::string::npos ? open : past_matching(code, open, '(', ')');
    if (params_end == std::string::npos) return false;
    size_t body = code.find_first_of("{;", params_end);
    if (body == std::string::npos || code[body] == ';') continue;  // a declaration
    size_t body_end = past_matching(code, body, '{', '}');
    if (body_end == std::string::npos) return false;
    std::string params = code.substr(open, params_end - open);
    if (params.find_first_of("*&[") != std::string::npos) return false;  // it can hand a result back
    std::string statements = code.substr(body, body_end - body);
    bool prints = std::any_of(print_functions.begin(), print_functions.end(), [&](const std::string& name) {
      return find_word(statements, name, 0) != std::string::npos;
    });
    if (!prints) return false;
    ++kernels;
  }
  return kernels > 0;
}

}  // namespace tailforge
