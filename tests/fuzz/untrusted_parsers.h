// Every parser of untrusted text (program output, tool diagnostics, assembly, PTX, model answers,
// imported files, request bodies) as "name -> run it on one string", with the real policies loaded
// and the real HTTP API serving on 127.0.0.1. Shared by the fuzz test and bench/fuzz_parsers.cpp.
// It judges nothing: a parser that returns, with a value or an error, has passed.
#pragma once

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/c2x86/exebench.h"
#include "agents/importer.h"
#include "agents/llm/client.h"
#include "agents/llm/response.h"
#include "agents/translate/header_names.h"
#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "daemon/cluster/verify_wire.h"
#include "daemon/http/http_api.h"
#include "policies/categorizer.h"
#include "policies/config.h"
#include "policies/feature_tags.h"
#include "store/failures.h"
#include "text/cpp_lexer.h"
#include "verifier/c2x86/float_constants.h"
#include "verifier/c2x86/io_tests.h"
#include "verifier/c2x86/jump_tables.h"
#include "verifier/compare.h"
#include "verifier/ptx2cuda/launch_harness.h"
#include "verifier/ptx2cuda/reroll.h"
#include "verifier/sass2rdna3/kernel_split.h"
#include "verifier/sass2rdna3/normalize.h"

namespace tailforge::fuzz {

// The fuzzed store holds no jobs, so the worker endpoints parse and refuse bodies without ever
// reaching a pipeline; this one says so if they did.
class NoJobsPipeline : public Pipeline {
 public:
  int worker_count() const override { return 0; }
  std::map<std::string, JobHandler> handlers() override { return {}; }
  Result<VerifyInput> verify_input(Database&, const Job& job) override {
    return make_error("fuzzing: no job to verify (job " + std::to_string(job.id) + ")");
  }
  Status store_verify_output(Database&, JobQueue&, const Job& job, const std::string&, const VerifyOutput&,
                             const std::string&) override {
    return make_error("fuzzing: no job to store (job " + std::to_string(job.id) + ")");
  }
  Status fail_crashed_job(Database&, const Job& job, const std::string&, const std::string&) override {
    return make_error("fuzzing: no job to fail (job " + std::to_string(job.id) + ")");
  }
};

struct UntrustedParser {
  std::string name;
  size_t max_bytes = 0;  // longer inputs are cut to this: the size the parser handles in seconds
  std::function<void(const std::string&)> run;
};

// Runs `parser` on `text` cut to its max_bytes; the seconds it took. Exceptions propagate.
inline double run_parser(const UntrustedParser& parser, const std::string& text) {
  auto start = std::chrono::steady_clock::now();
  if (text.size() > parser.max_bytes) {
    parser.run(text.substr(0, parser.max_bytes));
  } else {
    parser.run(text);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class UntrustedParsers {
 public:
  // Loads the policies from the source tree and starts the HTTP API (worker endpoints included)
  // with a store in `scratch_dir`, which must exist and outlive this object.
  static Result<std::unique_ptr<UntrustedParsers>> start(const std::string& scratch_dir) {
    std::unique_ptr<UntrustedParsers> p(new UntrustedParsers());
    p->scratch_ = scratch_dir;
    if (Status s = p->load_policies(); !s) return s.error();
    if (Status s = p->start_api(); !s) return s.error();
    p->add_text_parsers();
    p->add_code_parsers();
    p->add_body_parsers();
    return p;
  }
  ~UntrustedParsers() {
    if (api_) api_->stop();
  }

  const std::vector<UntrustedParser>& parsers() const { return parsers_; }
  // The HTTP API's port on 127.0.0.1, its token and its store.
  int port() const { return port_; }
  const std::string& token() const { return token_; }
  const std::string& db_path() const { return db_path_; }

 private:
  UntrustedParsers() = default;

  Status load_policies() {
    const std::string policies = std::string(TAILFORGE_SOURCE_DIR) + "/policies/";
    Result<Taxonomy> taxonomy = load_taxonomy(policies + "taxonomy.json");
    if (!taxonomy) return taxonomy.error();
    taxonomy_ = std::move(*taxonomy);
    Result<HipifyRules> hipify = load_hipify_rules(policies + "hipify_rules.json");
    if (!hipify) return hipify.error();
    hipify_ = std::move(*hipify);
    Result<FeatureRules> features = load_feature_rules(policies + "feature_rules.json");
    if (!features) return features.error();
    features_ = std::move(*features);
    Result<DomainRules> domains = load_domain_rules(policies + "domains.json");
    if (!domains) return domains.error();
    domains_ = std::move(*domains);
    Result<ImportFilters> filters = load_import_filters(policies + "import_filters.json");
    if (!filters) return filters.error();
    filters_ = std::move(*filters);
    return {};
  }

  Status start_api() {
    db_path_ = scratch_ + "/fuzz.db";
    Result<Database> db = Database::open(db_path_);
    if (!db) return db.error();
    Result<nlohmann::json> config = load_config("");
    if (!config) return config.error();
    std::ofstream(scratch_ + "/token") << token_ << "\n";
    (*config)["http"]["token_file"] = scratch_ + "/token";
    (*config)["http"]["token_env"] = "";
    Result<WorkerSettings> settings = worker_settings(*config);
    if (!settings) return settings.error();
    WorkerApiContext workers{db_path_, "", *config, *settings, QueuePolicy{}, std::make_shared<NoJobsPipeline>(), [] {}};
    Result<std::unique_ptr<HttpApi>> api =
        HttpApi::start("127.0.0.1:0", *config, db_path_, control_, [] {}, false, workers);
    if (!api) return api.error();
    api_ = std::move(*api);
    port_ = std::stoi(api_->address().substr(api_->address().rfind(':') + 1));
    return {};
  }

  void add(std::string name, size_t max_bytes, std::function<void(const std::string&)> run) {
    parsers_.push_back({std::move(name), max_bytes, std::move(run)});
  }

  // Program output, diagnostics and the failure taxonomy.
  void add_text_parsers() {
    constexpr size_t kAll = size_t{64} << 20;
    add("compare.output_tokens", kAll, [](const std::string& s) { output_tokens(s); });
    add("compare.compare_outputs", kAll, [](const std::string& s) {
      compare_outputs(s, s);
      compare_outputs(s, "1 2.5 x");
      compare_outputs("0.5 y[10]=2.5", s);
    });
    add("compare.unstable_tokens", kAll, [](const std::string& s) { unstable_tokens(s, s); });
    add("compare.measurement_tokens", kAll, [](const std::string& s) { measurement_tokens(s, {"ms", "s", "us", "GB/s"}); });
    add("c2x86.io_outputs_match", kAll, [](const std::string& s) { io_outputs_match(s, s + "\n"); });
    add("categorizer.categorize", kAll, [this](const std::string& s) {
      for (const char* stage : {"nvidia.compile", "amd.assemble.gfx1100", "nvidia.run", "c2x86.assemble", "ptx2cuda.compile",
                                "translate", "agent.translator"}) {
        categorize(taxonomy_, {.stage = stage, .diagnostics = s, .exit_code = 1, .reason = s.substr(0, 4096)});
      }
    });
    add("categorizer.normalize_message", kAll, [](const std::string& s) { normalize_message(s); });
    add("failures.normalize_failure_message", kAll, [](const std::string& s) { normalize_failure_message(s); });
    add("failures.taxonomy_query_from_args", kAll, [](const std::string& s) {
      for (const char* key : {"since", "until", "examples", "clusters", "trend", "model"}) (void)taxonomy_query_from_args({{key, s}});
    });
    add("http.parse_listen_address", kAll, [](const std::string& s) { (void)parse_listen_address(s); });
  }

  // Source, assembly and PTX.
  void add_code_parsers() {
    constexpr size_t kAll = size_t{64} << 20;
    add("feature_tags.feature_tags", kAll, [this](const std::string& s) {
      feature_tags(features_, "cuda", s);
      feature_tags(features_, "c", s);
    });
    add("feature_tags.classify_domain", kAll, [this](const std::string& s) { classify_domain(domains_, s); });
    add("hipify.translate_cuda_to_hip", kAll, [this](const std::string& s) {
      translate_cuda_to_hip(hipify_, s);
      std::unordered_set<std::string> names;
      collect_defined_names(s, names);
    });
    add("text.cpp_lexer", kAll, [](const std::string& s) {
      for (size_t at = 0; at < s.size();) at = text::next_cpp_token(s, at).end;
    });
    add("headers.scan_declared_names", kAll, [](const std::string& s) {
      std::set<std::string> names;
      scan_declared_names(s, names);
    });
    add("sass.split_sass_functions", kAll, [](const std::string& s) { split_sass_functions_by_arch(s, "sm_80"); });
    add("sass.normalize_sass", kAll, [](const std::string& s) { sass_stats(normalize_sass(s)); });
    add("rdna3.split_rdna3_kernels", kAll, [](const std::string& s) { split_rdna3_kernels(s); });
    add("rdna3.normalize_rdna3", kAll, [](const std::string& s) {
      normalize_rdna3(s);
      rdna3_stats(s);
    });
    add("ptx.parse_ptx_statements", kAll, [](const std::string& s) {
      for (const PtxStatement& statement : parse_ptx_statements(s)) {
        is_straight_line_statement(statement);
        numeric_template(statement);
      }
    });
    add("ptx.reroll_ptx", kAll, [](const std::string& s) { reroll_ptx(s); });
    add("ptx.unroll_rolled_ptx", kAll, [](const std::string& s) {
      (void)unroll_rolled_ptx(s);
      count_rolled_loops(s);
    });
    add("ptx.launch_txt", kAll, [this](const std::string& s) {
      StoredLaunch stored;
      stored.launch_txt = s;
      keep_module_variables(stored, {"g"});
      stored.launch_txt = s;
      std::string dir = fresh_dir();
      (void)restore_captured_launch(stored, dir);
      std::filesystem::remove_all(dir);
      for (const char* type : {"f32", "f64", "i32", "u64", "i8", "bytes"}) compare_buffers(s, s + "x", type);
    });
    add("c2x86.find_jump_tables", kAll, [](const std::string& s) { find_jump_tables(s); });
    add("c2x86.float_constants", kAll, [](const std::string& s) {
      (void)symbolize_float_constants(s);
      (void)interpret_float_constants(s);
      (void)parse_float_literal(s);
      (void)parse_double_literal(s);
    });
    add("llm.extract_code_blocks", kAll, [](const std::string& s) { extract_code_blocks(s); });
    add("importer.code_rules", kAll, [](const std::string& s) {
      code_without_comments(s, true);
      has_kernel_or_launch(s);
      is_hello_world(s, {"printf"});
    });
    add("importer.import_tree", kAll, [this](const std::string& s) { import_text(s); });
  }

  // JSON: model answers, ExeBench records, the worker protocol and the HTTP API's bodies.
  void add_body_parsers() {
    constexpr size_t kAll = size_t{64} << 20;
    add("llm.parse_chat_completion", kAll, [](const std::string& s) {
      (void)parse_chat_completion(s);
      nlohmann::json answer = {{"choices", {{{"message", {{"content", s}}}, {"finish_reason", s}}}}};
      (void)parse_chat_completion(answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });
    add("llm.server_message", kAll, [](const std::string& s) {
      (void)server_message(s);
      (void)server_message(nlohmann::json{{"error", {{"message", s}}}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });
    add("llm.parse_model_list", kAll, [](const std::string& s) {
      (void)parse_model_list(s);
      (void)parse_model_list(nlohmann::json{{"data", {{{"id", s}}}}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });
    add("exebench.python_literal_to_json", kAll, [](const std::string& s) { (void)python_literal_to_json(s); });
    add("exebench.c_function_from_exebench", kAll, [](const std::string& s) {
      (void)c_function_from_exebench(nlohmann::json::parse(s, nullptr, false));
      nlohmann::json side = {{"var", {"x"}}, {"value", {s}}};
      nlohmann::json record = {{"fname", s.substr(0, 256)},
                               {"func_def", "int f(int x) {" + s + "}"},
                               {"real_deps", s},
                               {"real_io_pairs", {{"input", {side}}, {"output", {side}}}},
                               {"real_exe_wrapper", "extern \"C\" {" + s + "}\nint main(int argc, char** argv) {}"}};
      (void)c_function_from_exebench(record);
      c_feature_tags_of_source(s, s.substr(0, 256));
    });
    add("verify_wire.from_json", kAll, [](const std::string& s) {
      nlohmann::json json = nlohmann::json::parse(s, nullptr, false);
      auto lookup = [&s](const std::string&) { return std::optional<std::string>(s); };
      (void)verify_input_from_json(json, lookup);
      (void)verify_output_from_json(json, lookup);
      blob_addresses(json);
      Blobs blobs;
      VerifyInput input;
      input.sample.text = s;
      input.sample.id = s.substr(0, 64);
      (void)verify_input_from_json(verify_input_to_json(input, blobs), [&blobs](const std::string& address) {
        auto found = blobs.find(address);
        return found == blobs.end() ? std::nullopt : std::optional<std::string>(found->second);
      });
    });
    add("http.post_bodies", kAll, [this](const std::string& s) { post_everywhere(s); });
  }

  std::string fresh_dir() {
    std::string dir = scratch_ + "/run" + std::to_string(++runs_);
    std::filesystem::create_directories(dir);
    return dir;
  }

  // A tree of one program and one header holding `s`, imported into the store.
  void import_text(const std::string& s) {
    std::string root = fresh_dir();
    std::filesystem::create_directories(root + "/include");
    std::ofstream(root + "/prog.cu", std::ios::binary) << "#include \"h.cuh\"\n" << s;
    std::ofstream(root + "/include/h.cuh", std::ios::binary) << s;
    std::ofstream(root + "/raw.cpp", std::ios::binary) << s;
    Result<Database> db = Database::open(db_path_);
    if (db) {
      ImportRequest request;
      request.root = root;
      request.filters = filters_;
      request.feature_rules = &features_;
      request.domain_rules = &domains_;
      (void)import_tree(*db, request);
    }
    std::filesystem::remove_all(root);
  }

  // Posts `s` as the body of every POST endpoint (authorized), and as a taxonomy query.
  void post_everywhere(const std::string& s) {
    httplib::Client client("127.0.0.1", port_);
    client.set_bearer_token_auth(token_);
    client.set_read_timeout(60, 0);
    client.set_write_timeout(60, 0);
    for (const char* path : {"/v1/models", "/v1/workers/lease", "/v1/workers/heartbeat", "/v1/workers/result",
                             "/v1/artifacts/missing"}) {
      client.Post(path, s, "application/json");
    }
    client.Get("/v1/taxonomy?since=" + httplib::detail::encode_query_param(s.substr(0, 4096)));
  }

  std::string scratch_;
  std::string db_path_;
  std::string token_ = "fuzz-token";
  Taxonomy taxonomy_;
  HipifyRules hipify_;
  FeatureRules features_;
  DomainRules domains_;
  ImportFilters filters_;
  DaemonControl control_;
  std::unique_ptr<HttpApi> api_;
  int port_ = 0;
  int runs_ = 0;
  std::vector<UntrustedParser> parsers_;
};

}  // namespace tailforge::fuzz
