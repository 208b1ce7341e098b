#include "agents/c2x86/exebench.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "text/regex.h"

namespace tailforge {
namespace {

using nlohmann::json;

// ExeBench values nest a few levels; text nested deeper is refused, not read by a recursion per level.
constexpr size_t kMaxNesting = 256;

// A recursive-descent reader of the Python literal subset ExeBench writes.
class LiteralReader {
 public:
  explicit LiteralReader(const std::string& text) : text_(text) {}

  Result<json> read_all() {
    Result<json> value = read_value();
    if (!value) return value;
    skip_space();
    if (at_ < text_.size()) return fail("unexpected '" + std::string(1, text_[at_]) + "' after the value");
    return value;
  }

 private:
  Result<json> fail(const std::string& what) const {
    return make_error("not a Python literal at offset " + std::to_string(at_) + ": " + what);
  }
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool take_word(const std::string& word) {
    if (text_.compare(at_, word.size(), word) != 0) return false;
    size_t end = at_ + word.size();
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) return false;
    at_ = end;
    return true;
  }

  Result<json> read_value() {
    skip_space();
    if (at_ >= text_.size()) return fail("the text ends before a value");
    char c = text_[at_];
    if (c == '[' || c == '(' || c == '{') {
      if (depth_ >= kMaxNesting) return fail("nested deeper than " + std::to_string(kMaxNesting) + " levels");
      ++depth_;
      Result<json> nested = c == '{' ? read_dict() : read_sequence(c == '[' ? ']' : ')');
      --depth_;
      return nested;
    }
    if (c == '\'' || c == '"') return read_string();
    if (take_word("True")) return json(true);
    if (take_word("False")) return json(false);
    if (take_word("None")) return json(nullptr);
    return read_number();
  }

  Result<json> read_sequence(char close) {
    ++at_;
    json out = json::array();
    while (!take(close)) {
      if (!out.empty() && !take(',')) return fail(std::string("expected ',' or '") + close + "'");
      if (take(close)) break;  // a trailing comma
      Result<json> item = read_value();
      if (!item) return item;
      out.push_back(std::move(*item));
    }
    return out;
  }

  Result<json> read_dict() {
    ++at_;
    json out = json::object();
    while (!take('}')) {
      if (!out.empty() && !take(',')) return fail("expected ',' or '}'");
      if (take('}')) break;
      Result<json> key = read_value();
      if (!key) return key;
      if (!take(':')) return fail("expected ':' after a dict key");
      Result<json> value = read_value();
      if (!value) return value;
      out[key->is_string() ? key->get<std::string>() : key->dump()] = std::move(*value);
    }
    return out;
  }

  Result<json> read_string() {
    char quote = text_[at_++];
    std::string out;
    while (at_ < text_.size() && text_[at_] != quote) {
      char c = text_[at_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) break;
      char e = text_[at_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'x': {
          if (at_ + 2 > text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[at_])) ||
              !std::isxdigit(static_cast<unsigned char>(text_[at_ + 1]))) {
            return fail("\\x needs two hex digits");
          }
          out += static_cast<char>(std::stoi(text_.substr(at_, 2), nullptr, 16));
          at_ += 2;
          break;
        }
        default: out += e;  // \\, \', \" and anything else stand for themselves
      }
    }
    if (at_ >= text_.size()) return fail("a string is not closed");
    ++at_;
    return json(out);
  }

  Result<json> read_number() {
    static const text::Regex number(R"([-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?))");
    text::Match match;
    std::string rest = text_.substr(at_, 64);
    if (!text::regex_search(rest, match, number, text::match_continuous)) {
      return fail("expected a number, a string, a list, a dict, True, False or None");
    }
    std::string digits = match[0];
    at_ += digits.size();
    bool is_float = digits.find_first_of(".eE") != std::string::npos;
    try {
      if (!is_float) return json(std::stoll(digits));
      return json(std::stod(digits));
    } catch (const std::out_of_range&) {
      if (!is_float && digits[0] != '-') {
        try {
          return json(std::stoull(digits));
        } catch (const std::out_of_range&) {
        }
      }
      return fail("the number " + digits + " is out of range");
    }
  }

  const std::string& text_;
  size_t at_ = 0;
  size_t depth_ = 0;
};

// The deepest nesting of arrays and objects in `value`, walked without recursion (copying or
// dumping a JSON value recurses once per level).
size_t nesting_depth(const json& value) {
  size_t deepest = 0;
  std::vector<std::pair<const json*, size_t>> pending = {{&value, 0}};
  while (!pending.empty()) {
    auto [node, depth] = pending.back();
    pending.pop_back();
    if (!node->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const json& child : *node) pending.emplace_back(&child, depth + 1);
  }
  return deepest;
}

bool is_identifier(const std::string& name) {
  return !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// The object {var: value} of one ExeBench IO side ({"var": [...], "value": [...]}).
Result<json> io_object(const json& side, const std::string& field) {
  if (!side.is_object() || !side.contains("var") || !side.contains("value") || !side["var"].is_array() ||
      !side["value"].is_array() || side["var"].size() != side["value"].size()) {
    return make_error(field + ": needs 'var' and 'value' lists of the same length");
  }
  json out = json::object();
  for (size_t i = 0; i < side["var"].size(); ++i) {
    if (!side["var"][i].is_string()) return make_error(field + ".var[" + std::to_string(i) + "] is not a string");
    const json& value = side["value"][i];
    if (value.is_string()) {
      Result<json> parsed = python_literal_to_json(value.get<std::string>());
      if (!parsed) return make_error(field + ".value[" + std::to_string(i) + "]: " + parsed.message());
      out[side["var"][i].get<std::string>()] = std::move(*parsed);
    } else {
      out[side["var"][i].get<std::string>()] = value;
    }
  }
  return out;
}

std::string string_field(const json& record, const std::string& key) {
  if (!record.contains(key)) return "";
  const json& value = record[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array() && !value.empty() && value[0].is_string()) return value[0].get<std::string>();
  return "";
}

// The main() that feeds a wrapper: stdin to input.json, the wrapper's main, output.json to stdout.
const char* kAdapterMain = R"(
// tailforge: the IO case's input JSON arrives on stdin; the wrapper's outputs go to stdout.
#include <fstream>
#include <iostream>
#include <sstream>
int main() {
  std::stringstream input;
  input << std::cin.rdbuf();
  std::ofstream("input.json") << input.str();
  char program[] = "program", in[] = "input.json", out[] = "output.json";
  char* argv[] = {program, in, out, nullptr};
  int status = exebench_wrapper_main(3, argv);
  if (status != 0) return status;
  std::ifstream written("output.json");
  nlohmann::json outputs = nlohmann::json::parse(written, nullptr, false);
  if (outputs.is_discarded()) {
    std::cerr << "the wrapper wrote no JSON to output.json\n";
    return 3;
  }
  std::cout << outputs.dump() << "\n";
  return 0;
}
)";

// The wrapper as a driver: the extern "C" block holds the declarations, json.hpp is the system's
// nlohmann header, and its main() is called by the adapter's.
Result<std::string> driver_from_wrapper(std::string wrapper, const std::string& declarations) {
  static const text::Regex extern_block(R"(extern\s+"C"\s*\{[^}]*\})");
  static const text::Regex json_include(R"(#\s*include\s*[<"](nlohmann/)?json\.hpp[>"])");
  static const text::Regex main_definition(R"(\bint\s+main\s*\()");
  text::Match block;
  if (!text::regex_search(wrapper, block, extern_block)) {
    return make_error("the exe wrapper has no extern \"C\" { } block for the function's declarations");
  }
  if (!text::regex_search(wrapper, main_definition)) return make_error("the exe wrapper has no int main(");
  wrapper.replace(static_cast<size_t>(block.position()), static_cast<size_t>(block.length()),
                  "extern \"C\" {\n" + declarations + "\n}");
  wrapper = text::regex_replace(wrapper, json_include, "#include <nlohmann/json.hpp>");
  wrapper = text::regex_replace(wrapper, main_definition, "int exebench_wrapper_main(");
  if (wrapper.find("<nlohmann/json.hpp>") == std::string::npos) wrapper = "#include <nlohmann/json.hpp>\n" + wrapper;
  return wrapper + kAdapterMain;
}

bool has(const std::string& source, const char* pattern) { return text::regex_search(source, text::Regex(pattern)); }

}  // namespace

Result<json> python_literal_to_json(const std::string& text) { return LiteralReader(text).read_all(); }

std::vector<std::string> c_feature_tags_of_source(const std::string& source, const std::string& name) {
  std::vector<std::string> tags;
  auto tag = [&tags](bool present, const char* name) {
    if (present) tags.push_back(name);
  };
  size_t body = source.find('{');
  std::string inside = body == std::string::npos ? "" : source.substr(body);
  tag(has(source, R"([-+*/%]|\+\+|--)"), "arithmetic");
  tag(has(inside, R"(\b(for|while|do)\b)"), "loops");
  tag(has(source, R"(\w\s*\[)"), "arrays");
  tag(has(source, R"(\*\s*\w|->)"), "pointers");
  tag(has(source, R"(\bstruct\b|->|\.\w+\s*[=;,)])"), "structs");
  tag(has(source, R"(\bchar\s*\*|\bstr\w*\s*\(|'\\0')"), "strings");
  // The name goes into a pattern: only a C identifier, never regex syntax from the record.
  tag(is_identifier(name) && text::regex_search(inside, text::Regex("\\b" + name + "\\s*\\(")), "recursion");
  tag(has(inside, R"(\bswitch\s*\()"), "switch");
  tag(has(source, R"(\bfloat\b|\d\.\d*f\b)"), "float");
  tag(has(source, R"(\bdouble\b)"), "double");
  tag(has(inside, R"(<<|>>|[^&]&[^&]|[^|]\|[^|]|\^|~)"), "bit_operations");
  tag(has(inside, R"(\b(printf|puts|malloc|calloc|free|memcpy|memset|strlen|strcmp|strcpy|qsort|abs|sqrt|pow|exp|log|sin|cos|fabs|floor|ceil)\s*\()"),
      "library_calls");
  std::sort(tags.begin(), tags.end());
  return tags;
}

Result<CFunction> c_function_from_exebench(const json& record, size_t max_cases) {
  if (!record.is_object()) return make_error("the record is not a JSON object");
  if (nesting_depth(record) > kMaxNesting) {
    return make_error("the record nests deeper than " + std::to_string(kMaxNesting) + " levels");
  }
  CFunction function;
  function.name = string_field(record, "fname");
  std::string definition = string_field(record, "func_def");
  if (function.name.empty()) return make_error("fname: missing or not a string");
  if (definition.empty()) return make_error("func_def: missing or not a string");

  // Real IO pairs where the record has them, else synthetic ones; each with its own deps and wrapper.
  std::string prefix;
  for (const char* side : {"real", "synth"}) {
    std::string pairs = std::string(side) + "_io_pairs";
    if (record.contains(pairs) && record[pairs].is_object() && record[pairs].contains("input") &&
        record[pairs]["input"].is_array() && !record[pairs]["input"].empty()) {
      prefix = side;
      break;
    }
  }
  if (prefix.empty()) return make_error("real_io_pairs/synth_io_pairs: the record has no IO pairs");
  const json& pairs = record[prefix + "_io_pairs"];
  std::string wrapper = string_field(record, prefix + "_exe_wrapper");
  if (wrapper.empty()) return make_error(prefix + "_exe_wrapper: missing or not a string");
  std::string deps = string_field(record, prefix + "_deps");
  std::string dummies = pairs.contains("dummy_funcs") ? string_field(pairs, "dummy_funcs") : "";

  size_t brace = definition.find('{');
  if (brace == std::string::npos) return make_error("func_def: no function body");
  std::string signature = definition.substr(0, brace);
  signature.erase(signature.find_last_not_of(" \t\r\n") + 1);
  function.declarations = deps;
  function.function = deps + "\n" + definition + "\n";
  Result<std::string> driver = driver_from_wrapper(wrapper, deps + "\n" + dummies + "\nextern " + signature + ";\n");
  if (!driver) return make_error(prefix + "_exe_wrapper: " + driver.error().message);
  function.driver = *driver;
  function.driver_is_cpp = true;

  if (!pairs.contains("output") || !pairs["output"].is_array() || pairs["output"].size() != pairs["input"].size()) {
    return make_error(prefix + "_io_pairs: 'output' must list one entry per input");
  }
  for (size_t i = 0; i < pairs["input"].size() && function.cases.size() < max_cases; ++i) {
    std::string at = prefix + "_io_pairs case " + std::to_string(i + 1);
    Result<json> input = io_object(pairs["input"][i], at + " input");
    if (!input) return input.error();
    Result<json> output = io_object(pairs["output"][i], at + " output");
    if (!output) return output.error();
    function.cases.push_back({input->dump(), output->dump() + "\n"});
  }
  function.features = c_feature_tags_of_source(definition, function.name);
  return function;
}

}  // namespace tailforge
