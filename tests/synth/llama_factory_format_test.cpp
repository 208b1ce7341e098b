// The written datasets as LLaMA-Factory reads them (its data/README and its dataset converters):
// dataset_info.json maps a name to a file, a formatting (alpaca by default) and a column mapping
// with defaults; alpaca rows need the prompt and response columns, sharegpt rows a message list
// whose roles alternate user/assistant from the first (a system turn only first, by its tag), an
// even number of turns. A row that breaks these rules is dropped by LLaMA-Factory; here it fails.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "synth/export.h"
#include "test_support/temp_dir.h"
#include "test_support/varied_programs.h"

using namespace tailforge;
using nlohmann::json;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of a data file the way its loader (Hugging Face datasets' json builder) takes them: a
// JSON array, or JSON lines.
std::vector<json> load_rows(const std::string& path, std::vector<std::string>& problems) {
  std::string text = read_text(path);
  std::vector<json> rows;
  json whole = json::parse(text, nullptr, false);
  if (whole.is_array()) return whole.get<std::vector<json>>();
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    json row = json::parse(line, nullptr, false);
    if (row.is_discarded()) {
      problems.push_back(path + ": a line that is not JSON");
      continue;
    }
    rows.push_back(row);
  }
  return rows;
}

std::string column(const json& attributes, const char* key, const char* fallback) {
  if (attributes.contains("columns") && attributes["columns"].contains(key)) {
    return attributes["columns"][key].get<std::string>();
  }
  return fallback;
}

std::string tag(const json& attributes, const char* key, const char* fallback) {
  if (attributes.contains("tags") && attributes["tags"].contains(key))
    return attributes["tags"][key].get<std::string>();
  return fallback;
}

bool non_empty_string(const json& row, const std::string& key) {
  return row.contains(key) && row[key].is_string() && !row[key].get<std::string>().empty();
}

// Checks every dataset of <dir>/dataset_info.json; returns the problems found, and counts the rows.
std::vector<std::string> check_as_llama_factory(const std::string& dir, int64_t& rows_checked) {
  std::vector<std::string> problems;
  json info = json::parse(read_text(dir + "/dataset_info.json"), nullptr, false);
  if (!info.is_object() || info.empty()) return {"dataset_info.json is not a non-empty object"};
  for (const auto& [name, attributes] : info.items()) {
    if (!attributes.contains("file_name") || !attributes["file_name"].is_string()) {
      problems.push_back(name + ": no file_name");
      continue;
    }
    std::string path = dir + "/" + attributes["file_name"].get<std::string>();
    if (!std::filesystem::exists(path)) {
      problems.push_back(name + ": " + path + " does not exist");
      continue;
    }
    std::string formatting = attributes.value("formatting", "alpaca");
    std::vector<json> rows = load_rows(path, problems);
    for (size_t i = 0; i < rows.size(); ++i) {
      const json& row = rows[i];
      std::string where = name + " row " + std::to_string(i);
      ++rows_checked;
      if (formatting == "alpaca") {
        std::string prompt = column(attributes, "prompt", "instruction"), query = column(attributes, "query", "input");
        std::string response = column(attributes, "response", "output");
        if (!non_empty_string(row, prompt)) problems.push_back(where + ": no text in its prompt column " + prompt);
        if (!non_empty_string(row, response))
          problems.push_back(where + ": no text in its response column " + response);
        if (row.contains(query) && !row[query].is_string())
          problems.push_back(where + ": query column " + query + " is not text");
        if (row.contains(query) && row[query].get<std::string>().empty())
          problems.push_back(where + ": an empty input");
      } else if (formatting == "sharegpt") {
        std::string messages = column(attributes, "messages", "conversations");
        std::string role = tag(attributes, "role_tag", "from"), content = tag(attributes, "content_tag", "value");
        std::string user = tag(attributes, "user_tag", "human"), assistant = tag(attributes, "assistant_tag", "gpt");
        std::string observation = tag(attributes, "observation_tag", "observation");
        std::string function = tag(attributes, "function_tag", "function_call");
        std::string system = tag(attributes, "system_tag", "system");
        if (!row.contains(messages) || !row[messages].is_array() || row[messages].empty()) {
          problems.push_back(where + ": no message list in column " + messages);
          continue;
        }
        json turns = row[messages];
        if (turns[0].is_object() && turns[0].value(role, "") == system) turns.erase(turns.begin());
        if (turns.empty() || turns.size() % 2 != 0) problems.push_back(where + ": an odd number of turns");
        for (size_t t = 0; t < turns.size(); ++t) {
          const json& turn = turns[t];
          std::string said =
              turn.is_object() && turn.contains(role) && turn[role].is_string() ? turn[role].get<std::string>() : "";
          bool user_turn = t % 2 == 0;
          bool allowed = user_turn ? (said == user || said == observation) : (said == assistant || said == function);
          if (!allowed) problems.push_back(where + " turn " + std::to_string(t) + ": role '" + said + "' out of turn");
          if (!turn.is_object() || !non_empty_string(turn, content)) {
            problems.push_back(where + " turn " + std::to_string(t) + ": no text in " + content);
          }
        }
      } else {
        problems.push_back(name + ": formatting '" + formatting + "' is neither alpaca nor sharegpt");
      }
    }
  }
  return problems;
}

}  // namespace

TEST_CASE("every written row reads as LLaMA-Factory reads it, in alpaca, sharegpt and jsonl") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  for (const std::string& program : varied_programs()) store_verified_pair(db, program);
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  policy.eval_fraction = 0.3;
  for (const char* format : {"alpaca", "sharegpt", "jsonl"}) {
    CAPTURE(format);
    ExportOptions options{"cuda2hip", format, dir.file(std::string("out-") + format), policy};
    Result<ExportSummary> summary = export_dataset(db, options);
    REQUIRE_MESSAGE(summary.ok(), summary.message());
    int64_t rows = 0;
    std::vector<std::string> problems = check_as_llama_factory(options.out_dir, rows);
    for (const std::string& problem : problems) FAIL_CHECK(problem);
    CHECK(rows == summary->train_rows + summary->eval_samples);
    CHECK(rows > 0);
    json info = json::parse(read_text(options.out_dir + "/dataset_info.json"));
    CHECK(info.size() == 2);
    CHECK(info["tailforge_cuda2hip_train"].value("formatting", "alpaca") ==
          (std::string(format) == "sharegpt" ? "sharegpt" : "alpaca"));
  }
}

TEST_CASE("the LLaMA-Factory check rejects what LLaMA-Factory drops") {
  TempDir dir;
  json info = {
      {"chat",
       {{"file_name", "chat.json"},
        {"formatting", "sharegpt"},
        {"columns", {{"messages", "turns"}}},
        {"tags",
         {{"role_tag", "role"}, {"content_tag", "text"}, {"user_tag", "user"}, {"assistant_tag", "assistant"}}}}},
      {"plain", {{"file_name", "plain.jsonl"}}}};
  std::ofstream(dir.file("dataset_info.json")) << info.dump();
  json good = {{"turns",
                {{{"role", "system"}, {"text", "be brief"}},
                 {{"role", "user"}, {"text", "hi"}},
                 {{"role", "assistant"}, {"text", "hello"}}}}};
  json swapped = {{"turns", {{{"role", "assistant"}, {"text", "hello"}}, {{"role", "user"}, {"text", "hi"}}}}};
  json odd = {{"turns", {{{"role", "user"}, {"text", "hi"}}}}};
  json empty = {{"turns", {{{"role", "user"}, {"text", "hi"}}, {{"role", "assistant"}, {"text", ""}}}}};
  std::ofstream(dir.file("chat.json")) << json::array({good, swapped, odd, empty}).dump();
  std::ofstream(dir.file("plain.jsonl")) << json{{"instruction", "do"}, {"input", "x"}, {"output", "y"}}.dump() << "\n"
                                         << json{{"instruction", "do"}, {"output", ""}}.dump() << "\n";
  int64_t rows = 0;
  std::vector<std::string> problems = check_as_llama_factory(dir.path(), rows);
  CHECK(rows == 6);
  std::string all;
  for (const std::string& problem : problems) all += problem + "\n";
  MESSAGE(all);
  CHECK(all.find("chat row 0") == std::string::npos);
  CHECK(all.find("chat row 1 turn 0: role 'assistant' out of turn") != std::string::npos);
  CHECK(all.find("chat row 2: an odd number of turns") != std::string::npos);
  CHECK(all.find("chat row 3 turn 1: no text in text") != std::string::npos);
  CHECK(all.find("plain row 0") == std::string::npos);
  CHECK(all.find("plain row 1: no text in its response column output") != std::string::npos);
}
