#include "agents/model_runner.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "agents/kernelopt/model_candidates.h"
#include "agents/kernelopt/strategy_model.h"
#include "base/clock.h"
#include "base/process.h"

namespace tailforge {
namespace {

using nlohmann::json;

ModelAnswer failed(std::string category, std::string message) {
  ModelAnswer answer;
  answer.category = std::move(category);
  answer.message = std::move(message);
  return answer;
}

json parameters_of(const ModelRecord& model) {
  json parameters = json::parse(model.parameters, nullptr, false);
  return parameters.is_object() ? parameters : json::object();
}

class BuiltinModel : public ModelUnderTest {
 public:
  explicit BuiltinModel(const HipifyRules& rules) : rules_(rules) {}
  ModelAnswer answer(Database&, const std::string& source) override {
    auto start = std::chrono::steady_clock::now();
    TranslationResult translated = translate_cuda_to_hip(rules_, source);
    ModelAnswer answer = translated.ok ? ModelAnswer{.ok = true, .output = translated.hip_source}
                                       : failed(translated.category, "line " + std::to_string(translated.line) +
                                                                         ": " + translated.message);
    answer.seconds = seconds_since(start);
    return answer;
  }

 private:
  const HipifyRules& rules_;
};

// The built-in strategies (kernelopt): the task of the question's task line, answered with the
// built-in candidate of the strategy the model's parameters learned for it.
class KernelStrategyModel : public ModelUnderTest {
 public:
  explicit KernelStrategyModel(StrategyTable table) : table_(std::move(table)) {}
  ModelAnswer answer(Database&, const std::string& question) override {
    auto start = std::chrono::steady_clock::now();
    ModelAnswer answer;
    Result<KernelTask> task = task_in_question(question);
    Result<KernelCandidate> chosen = task ? answer_with_strategy(table_, *task) : Result<KernelCandidate>(task.error());
    if (chosen) {
      answer.ok = true;
      answer.output = chosen->source;
      answer.reasoning = "strategy " + chosen->strategy + ": " + chosen->reasoning;
    } else {
      answer = failed("model.builtin.no_strategy", chosen.message());
    }
    answer.seconds = seconds_since(start);
    return answer;
  }

 private:
  StrategyTable table_;
};

class CommandModel : public ModelUnderTest {
 public:
  CommandModel(std::vector<std::string> argv, double timeout_seconds, ResourceGate* gate)
      : argv_(std::move(argv)), timeout_seconds_(timeout_seconds), gate_(gate) {}

  ModelAnswer answer(Database&, const std::string& source) override {
    ProcessSpec spec;
    spec.argv = argv_;
    spec.stdin_text = source;
    spec.timeout_seconds = timeout_seconds_;
    ProcessResult result;
    {
      ResourceSlot slot(gate_, ResourceKind::cpu);
      result = run_process(spec);
    }
    std::string stderr_tail = result.stderr_text.substr(result.stderr_text.size() > 2000 ? result.stderr_text.size() - 2000 : 0);
    ModelAnswer answer;
    if (!result.spawned) {
      answer = failed("model.command.not_started", command_line(argv_) + ": " + result.spawn_error);
    } else if (result.timed_out) {
      answer = failed("model.command.timeout",
                      command_line(argv_) + ": no answer within " + std::to_string(timeout_seconds_) + " s");
    } else if (result.signal != 0) {
      answer = failed("model.command.crash", command_line(argv_) + ": killed by signal " +
                                                 std::to_string(result.signal) + "\n" + stderr_tail);
    } else if (result.exit_code != 0) {
      answer = failed("model.command.exit", command_line(argv_) + ": exit code " + std::to_string(result.exit_code) +
                                                "\n" + stderr_tail);
    } else if (result.stdout_truncated) {
      answer = failed("model.command.output_too_large", command_line(argv_) + ": the answer exceeds the output cap");
    } else if (result.stdout_text.find_first_not_of(" \t\r\n") == std::string::npos) {
      answer = failed("model.command.empty", command_line(argv_) + ": printed nothing on stdout");
    } else {
      answer.ok = true;
      answer.output = result.stdout_text;
    }
    answer.seconds = result.wall_seconds;
    return answer;
  }

 private:
  std::vector<std::string> argv_;
  double timeout_seconds_;
  ResourceGate* gate_;
};

class OpenAiModel : public ModelUnderTest {
 public:
  OpenAiModel(LlmOptions options, const LlmPrompts& prompts, std::string track)
      : client_(std::move(options)), prompts_(prompts), track_(std::move(track)) {}

  ModelAnswer answer(Database& db, const std::string& source) override {
    auto start = std::chrono::steady_clock::now();
    // Requests in flight are limited per endpoint by the client (llm.max_concurrent_requests),
    // not by the daemon's llm slots, so that evaluation keeps a batching server busy.
    AgentOutput output = llm_translate(client_, prompts_, track_, source, &db);
    record_llm_requests(db, client_.options(), "model_under_test", output);
    const ChatResponse& response = output.response;
    ModelAnswer answer;
    if (!response.ok) {
      bool fault = endpoint_fault(response.category);
      // A fault is reported with its category beside it; a judged failure carries it in its text.
      answer = failed(response.category, fault ? response.message : response.category + ": " + response.message);
      answer.unavailable = fault;
      answer.retry_after_ms = response.retry_after_ms;
    } else {
      answer.output = preferred_code_block(response, {"hip", "cpp", "c++", "cuda"});
      answer.reasoning = response.reasoning.empty() ? text_outside_code(response.content) : response.reasoning;
      answer.ok = answer.output.find_first_not_of(" \t\r\n") != std::string::npos;
      if (!answer.ok) answer = failed("agent.llm.no_code_block", "the reply's code block is empty");
    }
    answer.prompt_hash = output.prompt_hash;
    answer.seconds = seconds_since(start);
    return answer;
  }

 private:
  LlmClient client_;
  const LlmPrompts& prompts_;
  std::string track_;
};

}  // namespace

Status validate_model_definition(const ModelRecord& model) {
  std::string at = "model '" + model.name + "': ";
  if (model.name.empty()) return make_error("a model needs a name");
  if (model.name.find_first_of(" \t\r\n/") != std::string::npos) {
    return make_error(at + "a name may not hold spaces or '/'");
  }
  json parameters = json::parse(model.parameters, nullptr, false);
  if (!parameters.is_object()) return make_error(at + "parameters must be a JSON object");
  if (parameters.contains("timeout_seconds") &&
      (!parameters["timeout_seconds"].is_number() || parameters["timeout_seconds"].get<double>() <= 0)) {
    return make_error(at + "timeout_seconds must be a positive number");
  }
  if (model.kind == "openai") {
    const std::string endpoint = model.endpoint.value_or("");
    if (endpoint.rfind("http://", 0) != 0 && endpoint.rfind("https://", 0) != 0) {
      return make_error(at + "an openai model needs --endpoint http(s)://HOST:PORT, got '" + endpoint + "'");
    }
    if (Result<LlmEndpoint> parsed = parse_llm_endpoint(endpoint); !parsed) return make_error(at + parsed.message());
    for (const char* key : {"model_id", "api_key_env", "ca_file"}) {
      if (parameters.contains(key) && !parameters[key].is_string()) return make_error(at + key + " must be a string");
    }
    if (parameters.contains("request_fields") && !parameters["request_fields"].is_object()) {
      return make_error(at + "request_fields must be a JSON object");
    }
    return {};
  }
  if (model.kind == "command") {
    const json& argv = parameters.contains("command") ? parameters["command"] : json();
    bool strings = argv.is_array() && !argv.empty();
    for (const json& word : argv) strings = strings && word.is_string() && !word.get<std::string>().empty();
    if (!strings) return make_error(at + "a command model needs --command ARGV... (program and its arguments)");
    return {};
  }
  if (model.kind == "builtin") return {};
  return make_error(at + "kind '" + model.kind + "' is not openai, command or builtin");
}

LlmOptions model_llm_options(const ModelRecord& model, const LlmOptions& base) {
  json parameters = parameters_of(model);
  LlmOptions options = base;
  options.base_url = model.endpoint.value_or("");
  options.model = parameters.value("model_id", model.name);
  options.api_key_env = parameters.value("api_key_env", options.api_key_env);
  options.ca_file = parameters.value("ca_file", options.ca_file);
  if (parameters.contains("request_fields")) options.request_fields = parameters["request_fields"].dump();
  if (parameters.contains("timeout_seconds") && parameters["timeout_seconds"].is_number()) {
    options.timeout_ms = static_cast<int>(parameters["timeout_seconds"].get<double>() * 1000);
  }
  return options;
}

Result<std::unique_ptr<ModelUnderTest>> make_model_under_test(const ModelRecord& model, const ModelRuntime& runtime) {
  if (Status valid = validate_model_definition(model); !valid) return valid.error();
  json parameters = parameters_of(model);
  if (is_strategy_model(model)) {
    return std::unique_ptr<ModelUnderTest>(new KernelStrategyModel(strategy_table_from_json(parameters.value("learned", json::object()))));
  }
  if (model.kind == "builtin") {
    if (!runtime.hipify_rules) return make_error("model '" + model.name + "': no translation rules loaded");
    return std::unique_ptr<ModelUnderTest>(new BuiltinModel(*runtime.hipify_rules));
  }
  if (model.kind == "command") {
    double timeout = parameters.value("timeout_seconds", runtime.command_timeout_seconds);
    return std::unique_ptr<ModelUnderTest>(
        new CommandModel(parameters["command"].get<std::vector<std::string>>(), timeout, runtime.gate));
  }
  if (!runtime.prompts || !runtime.prompts->translators.count(model.track)) {
    return make_error("model '" + model.name + "': no translators." + model.track + " prompt in the LLM prompt file");
  }
  LlmOptions options = model_llm_options(model, runtime.llm);
  return std::unique_ptr<ModelUnderTest>(new OpenAiModel(options, *runtime.prompts, model.track));
}

}  // namespace tailforge
