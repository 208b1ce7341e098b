// How busy `tailforge eval` keeps a model's server and this host's compile slots. A local
// OpenAI-compatible server answers every chat request after a fixed latency (the answer is the
// rule translator's HIP of the quoted CUDA, so judging is real work); a store gets N evaluation
// items from one daemon cycle; then `tailforge eval` judges them all, once with few requests in
// flight (server bound) and once with many (compile bound). For each run:
//   items/min        the items over the eval command's wall time;
//   server bound     llm.max_concurrent_requests / latency: the most a server of that latency
//                    can answer when the client keeps that many requests in flight;
//   compile bound    compile slots / judging seconds per item (the evaluation stages' own
//                    seconds, from the store, of this same run);
//   ideal            min(server bound, compile bound); ratio: items/min over the ideal. The first
//                    answer cannot come before one latency, so N should be large beside
//                    latency x rate (the fill time is printed).
// Usage: eval_throughput [--items 160] [--latency-ms 2000] [--compile-slots 2] [--tailforge PATH] [--keep]
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "base/process.h"
#include "bench/daemon_process.h"
#include "store/database.h"

using namespace tailforge;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "eval_throughput: %s\n", message.c_str());
  return 1;
}

// The CUDA source a translation prompt quotes in its last ```cuda block.
std::string quoted_cuda(const std::string& prompt) {
  size_t open = prompt.rfind("```cuda\n");
  if (open == std::string::npos) return "";
  size_t close = prompt.find("\n```", open + 8);
  return close == std::string::npos ? "" : prompt.substr(open + 8, close - open - 8);
}

// A chat completions server with a fixed answer latency and no limit of its own on requests in
// flight (a batching server far from its batch limit).
class FixedLatencyServer {
 public:
  FixedLatencyServer(const HipifyRules& rules, int latency_ms) : rules_(rules), latency_ms_(latency_ms) {
    server_.new_task_queue = [] { return new httplib::ThreadPool(128); };
    server_.Post("/v1/chat/completions", [this](const httplib::Request& request, httplib::Response& response) {
      int now = ++in_flight_;
      for (int seen = most_in_flight_.load(); now > seen && !most_in_flight_.compare_exchange_weak(seen, now);) {
      }
      json body = json::parse(request.body, nullptr, false);
      std::string prompt;
      if (body.is_object() && body.contains("messages") && body["messages"].is_array() && !body["messages"].empty()) {
        prompt = body["messages"].back().value("content", "");
      }
      TranslationResult hip = translate_cuda_to_hip(rules_, quoted_cuda(prompt));
      std::this_thread::sleep_for(std::chrono::milliseconds(latency_ms_));
      // Each answer differs (a numbered comment), so judging compiles it instead of finding the
      // verification of the same text in the store's cache.
      std::string code = "// answer " + std::to_string(++answers_) + "\n" + (hip.ok ? hip.hip_source : "// refused\n");
      json message = {{"role", "assistant"}, {"content", "```hip\n" + code + "```\n"}};
      json answer = {{"id", "chatcmpl-bench"}, {"object", "chat.completion"},
                     {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
                     {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 100}, {"total_tokens", 200}}}};
      --in_flight_;
      response.set_content(answer.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FixedLatencyServer() {
    server_.stop();
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int most_in_flight() const { return most_in_flight_.load(); }
  void reset_most() { most_in_flight_ = 0; }

 private:
  const HipifyRules& rules_;
  int latency_ms_;
  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
  std::atomic<int> in_flight_{0}, most_in_flight_{0}, answers_{0};
};

double query_double(Database& db, const std::string& sql) {
  Result<Statement> statement = db.prepare(sql);
  if (!statement || !statement->step()) return -1;
  return statement->real(0);
}

}  // namespace

int main(int argc, char** argv) {
  int items = 160, latency_ms = 2000, compile_slots = 2;
  bool keep = false;
  std::string tailforge = default_tailforge_binary();
  auto number = [](int& target) { return [&target](const std::string& v) { target = std::max(1, std::atoi(v.c_str())); }; };
  if (!parse_bench_flags(argc, argv,
                         {{"--items", number(items)}, {"--latency-ms", number(latency_ms)},
                          {"--compile-slots", number(compile_slots)}, {"--tailforge", [&](const std::string& v) { tailforge = v; }}},
                         keep)) {
    return fail("usage: eval_throughput [--items 160] [--latency-ms 2000] [--compile-slots 2] [--tailforge PATH] [--keep]");
  }
  Result<HipifyRules> rules = load_hipify_rules(data_path("policies/hipify_rules.json"));
  if (!rules) return fail(rules.message());
  fs::path dir = fs::temp_directory_path() / ("tailforge-eval-throughput-" + std::to_string(getpid()));
  if (!enter_run_dir(dir, tailforge)) return 1;
  FixedLatencyServer server(*rules, latency_ms);

  // The items: verified samples of one daemon cycle, every one frozen into the evaluation set.
  // Judging runs the verifier chain the configuration names (here the gfx1100 compile): the
  // cost of a judgment is what the compile bound is made of.
  auto write_config = [&](int concurrency) {
    std::ofstream(dir / "config.json")
        << json{{"log_level", "warn"},
                {"daemon", {{"samples_per_cycle", items}, {"progress", false}, {"compile_slots", compile_slots}}},
                {"eval", {{"fraction", 1.0}, {"max_items", items}}},
                {"synth", {{"enabled", false}}},
                {"retrain", {{"enabled", false}}},
                {"llm", {{"api_key_env", ""}, {"max_concurrent_requests", concurrency}, {"timeout_ms", 60000}}},
                {"verifier", {{"stages", {"translate", "amd.asm"}}}}}
               .dump(2);
  };
  write_config(2);
  std::printf("making %d evaluation items (one daemon cycle)...\n", items);
  std::fflush(stdout);
  FinishedRun made = run_daemon_to_end({tailforge, "daemon", "--cycles", "1", "--db", "bench.db", "--config", "config.json",
                                        "--no-progress"},
                                       "daemon.log");
  if (made.status != 0) return fail("the daemon exited " + std::to_string(made.status) + "; see " + (dir / "daemon.log").string());

  std::printf("server latency %d ms, %d compile slots\n\n", latency_ms, compile_slots);
  std::printf("%-14s %6s %9s %10s %12s %13s %10s %7s %9s\n", "run", "items", "wall s", "items/min", "server/min",
              "compile/min", "ideal/min", "ratio", "in flight");
  bool all_ok = true;
  for (int concurrency : {2, 16}) {
    write_config(concurrency);
    std::string name = "fixed-latency-c" + std::to_string(concurrency);
    ProcessSpec add;
    add.argv = {tailforge, "model", "add", "--name", name, "--endpoint", server.base_url(), "--no-check",
                "--db", "bench.db", "--config", "config.json"};
    add.timeout_seconds = 60;
    if (ProcessResult added = run_process(add); !added.succeeded()) return fail("model add: " + added.stderr_text);
    server.reset_most();
    ProcessSpec eval;
    eval.argv = {tailforge, "eval", "--model", name, "--json", "--no-progress", "--db", "bench.db", "--config", "config.json"};
    eval.timeout_seconds = 3600;
    ProcessResult judged = run_process(eval);
    if (!judged.succeeded()) return fail("eval: exit " + std::to_string(judged.exit_code) + ": " + judged.stderr_text);
    json out = json::parse(judged.stdout_text, nullptr, false);
    int64_t count = out.is_object() ? out.value("judged", int64_t{0}) : 0;
    Result<Database> db = Database::open("bench.db");
    if (!db) return fail(db.message());
    int64_t eval_items = static_cast<int64_t>(query_double(*db, "SELECT count(*) * 1.0 FROM eval_item WHERE track = 'cuda2hip'"));
    double judge_seconds = query_double(
        *db, "SELECT sum(s.seconds) * 1.0 FROM evaluation_stage s JOIN evaluation e ON e.id = s.evaluation_id"
             " JOIN model m ON m.id = e.model_id WHERE m.name = '" + name + "' AND s.stage <> 'answer'");
    double per_item = count > 0 ? judge_seconds / static_cast<double>(count) : 0;
    double rate = count / judged.wall_seconds * 60;
    double server_bound = concurrency * 60000.0 / latency_ms;
    double compile_bound = per_item > 0 ? compile_slots * 60 / per_item : 0;
    double ideal = std::min(server_bound, compile_bound);
    double ratio = ideal > 0 ? rate / ideal : 0;
    all_ok = all_ok && count == eval_items && count > 0;
    std::printf("%-14s %6lld %9.1f %10.1f %12.1f %13.1f %10.1f %7.2f %9d\n", name.c_str(), static_cast<long long>(count),
                judged.wall_seconds, rate, server_bound, compile_bound, ideal, ratio, server.most_in_flight());
    std::fflush(stdout);
  }
  std::printf("\njudging: the gfx1100 compile of each answer; fill time (one latency before the first answer): %.1f s\n",
              latency_ms / 1000.0);
  leave_run_dir(dir, keep);
  return all_ok ? 0 : fail("not every item was judged");
}
