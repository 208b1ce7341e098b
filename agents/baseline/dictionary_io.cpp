// Persistence of a baseline dictionary and reading the training rows of an exported snapshot
// (the functions declared at the end of agents/baseline/dictionary.h).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "agents/baseline/dictionary.h"
#include "base/files.h"

namespace tailforge {
namespace {

using nlohmann::json;

const char kFormatTag[] = "tailforge-baseline-dictionary/1";

std::string kind_name(TokenKind kind) { return kind == TokenKind::number ? "number" : "identifier"; }

bool is_whitespace_only(const std::string& text) { return text.find_first_not_of(" \t\n\r\v\f") == std::string::npos; }

json tokens_to_json(const std::vector<RuleToken>& tokens, bool to_side) {
  json list = json::array();
  for (const RuleToken& token : tokens) {
    json item = token.slot != 0 ? json{{"slot", token.slot}} : json{{"text", token.text}};
    if (token.slot != 0 && !to_side) item["kind"] = kind_name(token.slot_kind);
    if (to_side) item["whitespace"] = token.whitespace;
    list.push_back(item);
  }
  return list;
}

// Reads fields of one JSON document, remembering the first error with the file and JSON path.
class FieldReader {
 public:
  explicit FieldReader(std::string file) : file_(std::move(file)) {}

  // The value at object[key] when it has the type (number_float: any number), else null.
  const json* field(const json& object, const std::string& key, const std::string& path, json::value_t type,
                    const char* expected) {
    auto it = object.find(key);
    if (it == object.end()) return fail(path + key, "missing");
    bool integer_wanted = type == json::value_t::number_integer;
    bool fits = integer_wanted ? it->is_number_integer()
                               : (type == json::value_t::number_float ? it->is_number() : it->type() == type);
    return fits ? &*it : fail(path + key, std::string("expected ") + expected);
  }
  const json* fail(const std::string& path, const std::string& what) {
    if (error_.empty()) error_ = file_ + ": " + path + ": " + what;
    return nullptr;
  }
  bool ok() const { return error_.empty(); }
  Error error() const { return make_error(error_); }

 private:
  std::string file_;
  std::string error_;
};

std::vector<RuleToken> tokens_from_json(FieldReader& reader, const json& list, const std::string& path, bool to_side) {
  std::vector<RuleToken> tokens;
  for (size_t i = 0; i < list.size() && reader.ok(); ++i) {
    const json& item = list[i];
    std::string at = path + "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      reader.fail(at, "expected an object");
      break;
    }
    RuleToken token;
    if (item.contains("slot")) {
      const json* slot = reader.field(item, "slot", at + ".", json::value_t::number_integer, "an integer");
      if (slot && slot->get<int>() < 1) reader.fail(at + ".slot", "must be 1 or more");
      if (slot) token.slot = slot->get<int>();
      if (!to_side) {
        const json* kind = reader.field(item, "kind", at + ".", json::value_t::string, "a string");
        if (kind && *kind != "identifier" && *kind != "number")
          reader.fail(at + ".kind", "expected identifier or number");
        if (kind) token.slot_kind = *kind == "number" ? TokenKind::number : TokenKind::identifier;
      }
    } else {
      const json* text = reader.field(item, "text", at + ".", json::value_t::string, "a string");
      if (text && text->get<std::string>().empty()) reader.fail(at + ".text", "must not be empty");
      if (text) token.text = text->get<std::string>();
    }
    if (to_side) {
      const json* whitespace = reader.field(item, "whitespace", at + ".", json::value_t::string, "a string");
      if (whitespace && !is_whitespace_only(*whitespace)) reader.fail(at + ".whitespace", "must be whitespace only");
      if (whitespace) token.whitespace = whitespace->get<std::string>();
    }
    tokens.push_back(token);
  }
  return tokens;
}

TranslationRule rule_from_json(FieldReader& reader, const json& item, const std::string& at) {
  TranslationRule rule;
  if (!item.is_object()) {
    reader.fail(at, "expected an object");
    return rule;
  }
  std::string prefix = at + ".";
  if (const json* from = reader.field(item, "from", prefix, json::value_t::array, "an array")) {
    rule.from = tokens_from_json(reader, *from, prefix + "from", false);
    if (rule.from.empty() || rule.from.front().slot != 0)
      reader.fail(prefix + "from", "must start with a literal token");
  }
  if (const json* to = reader.field(item, "to", prefix, json::value_t::array, "an array")) {
    rule.to = tokens_from_json(reader, *to, prefix + "to", true);
  }
  for (size_t i = 0; i < rule.to.size(); ++i) {
    int slot = rule.to[i].slot;
    bool bound = slot == 0 ||
                 std::any_of(rule.from.begin(), rule.from.end(), [&](const RuleToken& t) { return t.slot == slot; });
    if (!bound) reader.fail(prefix + "to[" + std::to_string(i) + "].slot", "no such slot in from");
  }
  if (const json* support = reader.field(item, "support", prefix, json::value_t::number_integer, "an integer")) {
    rule.support = support->get<int64_t>();
  }
  if (const json* precision = reader.field(item, "precision", prefix, json::value_t::number_float, "a number")) {
    rule.precision = precision->get<double>();
    if (rule.precision < 0 || rule.precision > 1) reader.fail(prefix + "precision", "must be in [0, 1]");
  }
  if (item.contains("next_whitespace")) {
    const json* next = reader.field(item, "next_whitespace", prefix, json::value_t::string, "a string");
    if (next && !is_whitespace_only(*next)) reader.fail(prefix + "next_whitespace", "must be whitespace only");
    if (next) rule.next_whitespace = next->get<std::string>();
  }
  return rule;
}

// The HIP answer of one sharegpt record: the human turn is the instruction, a blank line, then the source.
Result<TrainingPair> sharegpt_pair(const json& record, const std::string& at) {
  const json* conversations =
      record.is_object() && record.contains("conversations") ? &record["conversations"] : nullptr;
  if (conversations == nullptr || !conversations->is_array())
    return make_error(at + ".conversations: expected an array");
  std::optional<std::string> human, gpt;
  for (const json& turn : *conversations) {
    if (!turn.is_object() || !turn.contains("from") || !turn.contains("value") || !turn["value"].is_string()) continue;
    if (turn["from"] == "human" && !human) human = turn["value"].get<std::string>();
    if (turn["from"] == "gpt" && !gpt) gpt = turn["value"].get<std::string>();
  }
  if (!human || !gpt) return make_error(at + ".conversations: needs a human and a gpt turn with string values");
  size_t blank_line = human->find("\n\n");
  if (blank_line == std::string::npos)
    return make_error(at + ".conversations: the human turn has no blank line after the instruction");
  return TrainingPair{human->substr(blank_line + 2), *gpt};
}

Result<TrainingPair> alpaca_pair(const json& record, const std::string& at) {
  if (!record.is_object()) return make_error(at + ": expected an object");
  for (const char* key : {"input", "output"}) {
    if (!record.contains(key) || !record[key].is_string()) return make_error(at + "." + key + ": expected a string");
  }
  return TrainingPair{record["input"].get<std::string>(), record["output"].get<std::string>()};
}

}  // namespace

json dictionary_to_json(const BaselineDictionary& dictionary) {
  json rules = json::array();
  for (const TranslationRule& rule : dictionary.rules) {
    json item = {{"from", tokens_to_json(rule.from, false)},
                 {"to", tokens_to_json(rule.to, true)},
                 {"support", rule.support},
                 {"precision", rule.precision}};
    if (rule.next_whitespace) item["next_whitespace"] = *rule.next_whitespace;
    rules.push_back(item);
  }
  const LearnOptions& options = dictionary.options;
  return {{"format", kFormatTag},
          {"options",
           {{"max_context", options.max_context},
            {"merge_gap", options.merge_gap},
            {"min_support", options.min_support},
            {"min_precision", options.min_precision}}},
          {"training_rows", dictionary.training_rows},
          {"rules", rules}};
}

Result<BaselineDictionary> dictionary_from_json(const json& document, const std::string& source_name) {
  FieldReader reader(source_name);
  BaselineDictionary dictionary;
  if (!document.is_object()) return make_error(source_name + ": expected a JSON object");
  const json* format = reader.field(document, "format", "", json::value_t::string, "a string");
  if (format && *format != kFormatTag) reader.fail("format", std::string("expected \"") + kFormatTag + "\"");
  if (const json* options = reader.field(document, "options", "", json::value_t::object, "an object")) {
    LearnOptions& o = dictionary.options;
    for (auto [key, target] : {std::pair{"max_context", &o.max_context}, std::pair{"merge_gap", &o.merge_gap},
                               std::pair{"min_support", &o.min_support}}) {
      if (const json* value = reader.field(*options, key, "options.", json::value_t::number_integer, "an integer")) {
        *target = value->get<int>();
      }
    }
    const json* precision =
        reader.field(*options, "min_precision", "options.", json::value_t::number_float, "a number");
    if (precision) o.min_precision = precision->get<double>();
  }
  const json* rows = reader.field(document, "training_rows", "", json::value_t::number_integer, "an integer");
  if (rows) dictionary.training_rows = rows->get<int64_t>();
  if (const json* rules = reader.field(document, "rules", "", json::value_t::array, "an array")) {
    for (size_t i = 0; i < rules->size() && reader.ok(); ++i) {
      dictionary.rules.push_back(rule_from_json(reader, (*rules)[i], "rules[" + std::to_string(i) + "]"));
    }
  }
  if (!reader.ok()) return reader.error();
  return dictionary;
}

Status save_dictionary(const BaselineDictionary& dictionary, const std::string& path) {
  std::string text;
  try {
    text = dictionary_to_json(dictionary).dump(1) + "\n";
  } catch (const nlohmann::json::exception& e) {  // a token that is not valid UTF-8
    return make_error(path + ": cannot encode the dictionary as JSON: " + e.what());
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error(path + ": cannot write");
  out << text;
  out.close();
  if (!out) return make_error(path + ": writing failed (disk full?)");
  return {};
}

Result<BaselineDictionary> load_dictionary(const std::string& path) {
  Result<std::string> text = read_text_file(path);
  if (!text) return text.error();
  Result<json> document = parse_json_text(*text, path);
  if (!document) return document.error();
  return dictionary_from_json(*document, path);
}

Result<std::vector<TrainingPair>> read_snapshot_pairs(const std::string& snapshot_dir) {
  std::string manifest_path = snapshot_dir + "/manifest.json";
  Result<std::string> manifest_text = read_text_file(manifest_path);
  if (!manifest_text) return manifest_text.error();
  Result<json> manifest = parse_json_text(*manifest_text, manifest_path);
  if (!manifest) return manifest.error();
  FieldReader reader(manifest_path);
  const json* format = reader.field(*manifest, "format", "", json::value_t::string, "a string");
  const json* files = reader.field(*manifest, "files", "", json::value_t::object, "an object");
  const json* train = files ? reader.field(*files, "train", "files.", json::value_t::string, "a string") : nullptr;
  if (format && *format != "alpaca" && *format != "sharegpt" && *format != "jsonl") {
    reader.fail("format", "expected alpaca, sharegpt or jsonl");
  }
  if (!reader.ok()) return reader.error();

  std::string train_path = snapshot_dir + "/" + train->get<std::string>();
  Result<std::string> text = read_text_file(train_path);
  if (!text) return text.error();
  std::vector<json> records;
  std::vector<std::string> places;  // where each record is, for messages
  if (*format == "jsonl") {
    std::istringstream lines(*text);
    std::string line;
    for (size_t number = 1; std::getline(lines, line); ++number) {
      if (is_whitespace_only(line)) continue;
      std::string place = "line " + std::to_string(number);
      Result<json> record = parse_json_text(line, train_path + ": " + place);
      if (!record) return record.error();
      records.push_back(std::move(*record));
      places.push_back(place);
    }
  } else {
    Result<json> document = parse_json_text(*text, train_path);
    if (!document) return document.error();
    if (!document->is_array()) return make_error(train_path + ": expected a JSON array of records");
    for (size_t i = 0; i < document->size(); ++i) {
      records.push_back(std::move((*document)[i]));
      places.push_back("[" + std::to_string(i) + "]");
    }
  }
  std::vector<TrainingPair> pairs;
  for (size_t i = 0; i < records.size(); ++i) {
    Result<TrainingPair> pair =
        *format == "sharegpt" ? sharegpt_pair(records[i], places[i]) : alpaca_pair(records[i], places[i]);
    if (!pair) return make_error(train_path + ": " + pair.message());
    pairs.push_back(std::move(*pair));
  }
  return pairs;
}

}  // namespace tailforge
