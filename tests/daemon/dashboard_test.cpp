// The dashboard in a real browser: `tailforge serve` on a small database, Debian's headless
// Chromium on every page at 1280x800 and at a phone's 390x844. Each page must render without a
// console message or script error, its charts must carry the numbers that `tailforge status
// --json`, `taxonomy --json`, `tails --json` and `models --json` print for the same database,
// and it must have the keyboard and screen-reader basics. Screenshots go to
// build/dashboard-screenshots/. Without chromium the test says so and skips.
#include <doctest/doctest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "agents/kernelopt/builtin_tasks.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/evaluations.h"
#include "store/failures.h"
#include "store/queue.h"
#include "store/samples.h"
#include "store/workers.h"
#include "synth/kernelopt/store.h"
#include "synth/kernelopt/task_samples.h"
#include "synth/model_registry.h"
#include "test_support/run_tailforge.h"
#include "test_support/free_port.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"
#include "test_support/timed_measurement.h"
#include "test_support/tools_here.h"

using namespace tailforge;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kHour = 3600000;

// What the fixture made that the pages must show.
struct Fixture {
  std::string showcase;  // a verified sample with every kind of code, verdicts and lineage
  std::string parent, child;
};

std::string kernel_text(int n, const std::string& extra = "") {
  return "// dashboard fixture " + std::to_string(n) + "\n#include <cuda_runtime.h>\n__global__ void scale_" +
         std::to_string(n) + "(float* x, float a) {\n  x[threadIdx.x] *= a + " + std::to_string(n) + ";\n}\n" + extra +
         "int main() { cudaDeviceSynchronize(); return 0; }\n";
}

Fixture build_store(Database& db) {
  Fixture f;
  int64_t start = now_ms() - 6 * kHour;
  int64_t cycle1 = start_cycle(db, 1, 10).value();
  int64_t cycle2 = start_cycle(db, 1, 10).value();
  const char* origins[] = {"template", "synthesized"};
  const char* tracks[] = {"cuda2hip", "ptx2cuda"};
  const char* domains[] = {"stencil_1d", "reduction", "scan"};
  const char* categories[] = {"amd.asm.invalid_instruction", "translate.unsupported.inline_ptx", "run.timeout",
                              "amd.asm.invalid_instruction"};
  std::vector<std::string> ids;
  for (int n = 0; n < 24; ++n) {
    Sample s;
    s.track = tracks[n % 2];
    s.origin = origins[(n / 2) % 2];
    s.language = "cuda";
    s.text = kernel_text(n);
    s.domain = domains[n % 3];
    s.features = {n % 4 == 0 ? "atomics" : "shared_memory"};
    s.status = n % 4 == 3 ? "failed" : n == 22 ? "pending" : "verified";
    s.cycle_id = n < 12 ? cycle1 : cycle2;
    s.created_ms = start + n * kHour / 4;
    std::string id = insert_sample_if_absent(db, s).value().id;
    ids.push_back(id);
    if (s.status == "failed") {
      FailureRecord failure;
      failure.sample_id = id;
      failure.stage = n % 8 == 3 ? "amd.asm.gfx1100" : "translate.hip";
      failure.category = categories[(n / 4) % 4];
      failure.message = "line 3: evidence of " + failure.category;
      failure.track = s.track;
      failure.origin = s.origin;
      failure.domain = s.domain;
      failure.created_ms = s.created_ms;
      REQUIRE(insert_failure(db, failure).ok());
    }
  }
  for (int64_t cycle : {cycle1, cycle2}) {
    CycleRecord record = find_cycle(db, cycle).value().value();
    REQUIRE(count_cycle_samples(db, record).ok());
    record.state = "done";
    record.finished_ms = start + (cycle == cycle1 ? 3 : 6) * kHour;
    REQUIRE(finish_cycle(db, record).ok());
  }

  // The showcase: untrusted text that would run as HTML if a page inserted it as markup.
  Sample showcase{.track = "cuda2hip", .origin = "synthesized", .language = "cuda",
                  .text = kernel_text(100, "// </pre><img src=x onerror=\"document.title='owned'\">\n")};
  showcase.status = "verified";
  showcase.domain = "reduction";
  showcase.cycle_id = cycle2;
  showcase.created_ms = start + 5 * kHour;
  f.showcase = insert_sample_if_absent(db, showcase).value().id;
  REQUIRE(insert_artifact(db, f.showcase, {"translate.hip", "hip", "hip", "#include <hip/hip_runtime.h>\n// hip\n"}).ok());
  REQUIRE(insert_artifact(db, f.showcase, {"nvidia.ptx", "ptx", "ptx", ".version 9.0\n.target sm_80\n// ptx\n"}).ok());
  REQUIRE(insert_artifact(db, f.showcase, {"ptx2cuda.pair", "rolled_ptx", "rolled_ptx", "for (i = 0; i < 4; ++i)\n"}).ok());
  REQUIRE(insert_artifact(db, f.showcase, {"nvidia.sass", "sass", "sass", "  /*0000*/ MOV R1, c[0x0][0x28] ;\n"}).ok());
  REQUIRE(insert_artifact(db, f.showcase, {"amd.asm.gfx1100", "rdna3_asm", "rdna3_asm", "  s_load_b64 s[0:1], s[0:1], 0x0\n"}).ok());
  VerificationRecord compiled{.sample_id = f.showcase, .stage = "nvidia.ptx", .status = "ok", .exit_code = 0};
  compiled.seconds = 1.25;
  compiled.host = "gpu-node-17";
  REQUIRE(upsert_verification(db, compiled).ok());
  VerificationRecord skipped{.sample_id = f.showcase, .stage = "amd.run", .status = "skipped"};
  skipped.reason = "no AMD GPU";
  skipped.diagnostics = "<script>document.title='owned'</script>";
  REQUIRE(upsert_verification(db, skipped).ok());
  f.parent = ids[0];
  f.child = ids[2];
  json reason = {{"dimension", "domain"}, {"name", "reduction"}, {"signal", "corpus_share"}, {"score", 0.5}};
  REQUIRE(insert_lineage_edge(db, {f.parent, f.showcase, "synthesized_from", "builtin-synthesizer", std::nullopt,
                                   std::nullopt, reason.dump(), 0}).ok());
  REQUIRE(insert_lineage_edge(db, {f.showcase, f.child, "mutated_from", "builtin-mutator", std::nullopt, std::nullopt,
                                   "\"a mutation\"", 0}).ok());

  // The tail list of cycle 2.
  REQUIRE(replace_tail_report(db, cycle2, {{1, "domain", "scan", "corpus_share", 0.8, R"({"share":0.1,"verified":2})"},
                                           {2, "feature", "atomics", "corpus_share", 0.5, R"({"share":0.2})"},
                                           {3, "category", "run.timeout", "pipeline_yield", 0.3, "{}"}})
              .ok());

  // Two model versions, the second retrained in cycle 1, judged on four evaluation items.
  RetrainEventRecord event;
  event.cycle_id = cycle1;
  event.reason = R"({"conditions":[{"condition":"min_tail_gain","category":"domain:scan","gain":60,"threshold":50}],)"
                 R"("track":"cuda2hip","near_duplicate_threshold":0.8,"snapshot":{"evaluation_set_version":1,)"
                 R"("largest_evaluation_item_similarity":0.625,"evaluation_items_with_near_duplicate":0}})";
  event.snapshot_hash = "dashboard-fixture-snapshot";
  event.status = "ok";
  event.created_ms = start + 3 * kHour;
  int64_t event_id = insert_retrain_event_if_new(db, event).value().value();
  ModelRecord v1 = register_model(db, {{"name", "fixture-v1"}, {"kind", "builtin"}}).value();
  ModelRecord v2 =
      register_model(db, {{"name", "fixture-v2"}, {"kind", "builtin"}, {"parent", "fixture-v1"}, {"retrain_event", event_id}})
          .value();
  for (int i = 0; i < 4; ++i) {
    REQUIRE(add_eval_items(db, {{"cuda2hip", ids[i * 4], 1, std::nullopt, std::nullopt, 0}}).ok());
    for (const ModelRecord* model : {&v1, &v2}) {
      EvaluationRecord e;
      e.model_id = model->id;
      e.sample_id = ids[i * 4];
      e.track = "cuda2hip";
      e.ok = model == &v2 ? i != 0 : i % 2 == 0;  // v1: 2 of 4, v2: 3 of 4
      e.status = e.ok ? "ok" : "fail";
      if (!e.ok) e.category = "amd.compile.undeclared_identifier";
      e.checked = "compile";
      REQUIRE(insert_evaluation(db, e).value());
    }
  }
  // A remote worker that runs less than verify jobs need: it and the waiting jobs are on the overview.
  WorkerRecord worker{.name = "node7:slurm-41_0", .host = "node7", .kinds = {}};
  worker.capabilities = {{"stages", {"amd.asm", "x86.run"}}, {"gpus", json::array()}};
  worker.missing["verify"] = {"nvidia.run"};
  REQUIRE(upsert_worker(db, worker).ok());
  REQUIRE(JobQueue(db).enqueue({.kind = "verify", .idempotency_key = "dashboard-waiting"}).ok());
  // A model whose endpoint refused its key: paused, with what the server said.
  ModelRecord remote = register_model(db, {{"name", "remote-coder"}, {"kind", "openai"}, {"track", "ptx2cuda"}, {"endpoint", "http://127.0.0.1:9/v1"}}).value();
  REQUIRE(pause_model_evaluation(db, remote.id, "agent.llm.auth",
                                 "POST http://127.0.0.1:9/v1/chat/completions: HTTP 401: Incorrect API key provided",
                                 now_ms() + 3600 * 1000).ok());
  // Two kernelopt versions timed on one evaluation task (as a GPU host measures them): the first
  // right but slower than the reference, its child 2.5 times faster.
  KernelTask task = builtin_kernel_tasks().front();
  Sample task_sample = kernel_task_sample(task, "template", cycle1, {"operator/" + task.operator_type});
  task_sample.status = "verified";
  std::string task_id = insert_sample_if_absent(db, task_sample).value().id;
  REQUIRE(add_eval_items(db, {{"kernelopt", task_id, 1, std::nullopt, std::nullopt, 0}}).ok());
  REQUIRE(store_kernelopt_task(db, task).ok());
  register_model(db, {{"name", "strategies-v1"}, {"kind", "builtin"}, {"track", "kernelopt"}}).value();
  register_model(db, {{"name", "strategies-v2"}, {"kind", "builtin"}, {"track", "kernelopt"}, {"parent", "strategies-v1"}})
      .value();
  std::vector<KernelCandidate> recipes = builtin_candidates(task);
  for (int v = 0; v < 2; ++v) {
    KernelCandidate candidate = recipes[static_cast<size_t>(v)];
    candidate.origin = "model";
    candidate.model = v == 0 ? "strategies-v1" : "strategies-v2";
    StoredCandidate stored = store_kernelopt_candidate(db, task, candidate).value();
    REQUIRE(store_kernelopt_measurement(db, stored, task, timed_measurement(1.0, v == 0 ? 1.25 : 0.4), "gpu-host").ok());
  }
  return f;
}


// `tailforge serve` in the background, stopped (SIGTERM) at the end of the test.
struct Served {
  pid_t pid = -1;
  int port = 0;
  Served(const std::string& db_path, const std::string& log) {
    port = free_port();
    pid = spawn_in_background({TAILFORGE_BINARY, "serve", "--db", db_path, "--listen", "127.0.0.1:" + std::to_string(port)},
                              log);
    httplib::Client client("127.0.0.1", port);
    for (int i = 0; i < 100; ++i) {
      if (auto answer = client.Get("/healthz"); answer && answer->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL("tailforge serve did not answer on port " << port);
  }
  ~Served() {
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
  }
};

std::string find_chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

struct Page {
  std::string dom;
  std::vector<std::string> console;  // console messages and uncaught errors, as Chromium logs them
};

// Loads the page, lets its fetches finish (virtual time), writes a screenshot and returns the DOM.
Page load_page(const std::string& chromium, const std::string& profile, const std::string& url,
               const std::string& screenshot, int width, int height) {
  ProcessSpec spec;
  spec.argv = {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
               "--window-size=" + std::to_string(width) + "," + std::to_string(height), "--virtual-time-budget=15000",
               "--screenshot=" + screenshot, "--dump-dom", url};
  spec.timeout_seconds = 90;
  ProcessResult run = run_process(spec);
  REQUIRE_MESSAGE(run.succeeded(), "chromium on " << url << ": " << run.stderr_text.substr(0, 3000));
  Page page{run.stdout_text, {}};
  size_t at = 0;
  while ((at = run.stderr_text.find(":CONSOLE", at)) != std::string::npos) {
    size_t end = run.stderr_text.find('\n', at);
    page.console.push_back(run.stderr_text.substr(at, end - at));
    at = end;
  }
  return page;
}

std::string body_attribute(const std::string& dom, const std::string& name) {
  std::smatch match;
  std::regex pattern("<body[^>]*\\s" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, match, pattern) ? match[1].str() : "";
}

// What every page must have: rendered, no script error or console message, a heading, named
// navigation, a label for every form control, no sideways scrolling.
void check_basics(const Page& page, const std::string& what) {
  INFO("page " << what);
  CHECK(body_attribute(page.dom, "data-ready") == "1");
  CHECK(body_attribute(page.dom, "data-errors") == "0");
  CHECK(body_attribute(page.dom, "data-overflow-x") == "false");
  CHECK_MESSAGE(page.console.empty(), (page.console.empty() ? "" : page.console.front()));
  CHECK(page.dom.find("Cannot show this page") == std::string::npos);
  CHECK(page.dom.find("<h1") != std::string::npos);
  CHECK(page.dom.find("<nav aria-label=\"Pages\">") != std::string::npos);
  std::regex control("<(input|select)[^>]*\\sid=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(page.dom.begin(), page.dom.end(), control); it != std::sregex_iterator(); ++it) {
    std::string id = (*it)[2].str();
    CHECK_MESSAGE(page.dom.find("<label for=\"" + id + "\"") != std::string::npos, "no label for #" << id);
  }
}

json cli_json(const std::vector<std::string>& arguments) {
  ProcessResult run = run_tailforge(arguments);
  REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
  return json::parse(run.stdout_text);
}

// Points of a line chart as (series, x, y).
struct Point {
  std::string series;
  double x = 0, y = 0;
};
std::vector<Point> chart_points(const std::string& dom) {
  std::vector<Point> points;
  std::regex pattern("class=\"point\" data-series=\"([^\"]*)\" data-x=\"([^\"]*)\" data-y=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), pattern); it != std::sregex_iterator(); ++it) {
    points.push_back({(*it)[1].str(), std::stod((*it)[2].str()), std::stod((*it)[3].str())});
  }
  return points;
}

}  // namespace

TEST_CASE("the dashboard's pages render in headless Chromium with the numbers the CLI prints") {
  std::string chromium = find_chromium();
  if (chromium.empty()) {
    testing::skip(testing::Missing::setup_tool, "chromium is not installed (scripts/setup.sh installs Debian's chromium)");
    return;
  }
  TempDir dir;
  std::string db_path = dir.file("dashboard.db");
  Fixture fixture;
  {
    Database db = Database::open(db_path).value();
    fixture = build_store(db);
  }
  Served served(db_path, dir.file("serve.log"));
  std::string base = "http://127.0.0.1:" + std::to_string(served.port) + "/";
  fs::path shots = fs::path(TAILFORGE_BUILD_DIR) / "dashboard-screenshots";
  fs::create_directories(shots);
  std::string profile = dir.file("chromium-profile");
  auto load = [&](const std::string& name, const std::string& route, bool phone_too) {
    Page page = load_page(chromium, profile, base + route, (shots / (name + ".png")).string(), 1280, 800);
    check_basics(page, name);
    if (phone_too) {
      Page phone = load_page(chromium, profile, base + route, (shots / (name + "-phone.png")).string(), 390, 844);
      check_basics(phone, name + " (phone)");
    }
    CHECK(fs::file_size(shots / (name + ".png")) > 10000);
    return page;
  };

  SUBCASE("overview: the growth chart and the cards are status --json") {
    json status = cli_json({"status", "--db", db_path, "--json"});
    Page page = load("overview", "#/overview", true);
    CHECK(page.dom.find("data-stat=\"verified\" data-value=\"" + std::to_string(status["verified"].get<int>()) + "\"") !=
          std::string::npos);
    std::vector<Point> points = chart_points(page.dom);
    CHECK(points.size() == status["growth"]["buckets"].size());
    std::map<std::string, int64_t> expected, last;
    for (const json& b : status["growth"]["buckets"]) {
      expected[b["track"].get<std::string>() + " / " + b["origin"].get<std::string>()] += b["verified"].get<int64_t>();
    }
    for (const Point& p : points) last[p.series] = static_cast<int64_t>(p.y);  // cumulative: the last is the total
    CHECK(last == expected);
    int64_t total = 0;
    for (const auto& [series, n] : last) total += n;
    CHECK(total == status["verified"].get<int64_t>());
    CHECK(status["retrains"].size() == 1);
    CHECK(page.dom.find("class=\"mark\" data-x=\"" + std::to_string(status["retrains"][0]["created_ms"].get<int64_t>())) !=
          std::string::npos);
    // Workers and the jobs that wait for one, as status --json has them.
    REQUIRE(status["waiting"].size() == 1);
    CHECK(page.dom.find("<td>" + status["waiting"][0]["reason"].get<std::string>() + "</td>") != std::string::npos);
    CHECK(page.dom.find("<th scope=\"row\">node7:slurm-41_0</th><td>node7</td>") != std::string::npos);
    CHECK(page.dom.find("<td>amd.asm x86.run</td>") != std::string::npos);
    // Paused evaluations, with the fault and what the server said.
    REQUIRE(status["paused_models"].size() == 1);
    CHECK(status["paused_models"][0]["model"] == "remote-coder");
    CHECK(page.dom.find("<th scope=\"row\">remote-coder</th><td>ptx2cuda</td><td>agent.llm.auth</td>") != std::string::npos);
    CHECK(page.dom.find("<td>POST http://127.0.0.1:9/v1/chat/completions: HTTP 401: Incorrect API key provided</td>") !=
          std::string::npos);
  }

  SUBCASE("taxonomy: every category of taxonomy --json, its evidence and a window comparison") {
    json taxonomy = cli_json({"taxonomy", "--db", db_path, "--json", "--examples", "3"});
    REQUIRE(taxonomy["categories"].size() >= 4);
    Page page = load("taxonomy", "#/taxonomy", true);
    for (const json& c : taxonomy["categories"]) {
      std::string node = "data-path=\"" + c["path"].get<std::string>() + "\" data-count=\"" +
                         std::to_string(c["count"].get<int>()) + "\"";
      CHECK_MESSAGE(page.dom.find(node) != std::string::npos, node);
    }
    CHECK(page.dom.find("tabindex=\"0\" role=\"button\" aria-label=\"amd.asm: ") != std::string::npos);
    // Each category of the table links to its evidence.
    CHECK(page.dom.find("href=\"#/taxonomy?category=run.timeout\"") != std::string::npos);
    // A category opened from its link shows the example samples taxonomy --json lists for it.
    Page evidence = load("taxonomy-evidence", "#/taxonomy?category=amd.asm.invalid_instruction", false);
    CHECK(evidence.dom.find("data-examples=\"amd.asm.invalid_instruction\"") != std::string::npos);
    for (const json& e : taxonomy["examples"]["amd.asm.invalid_instruction"]) {
      CHECK(evidence.dom.find("href=\"#/sample/" + e["sample_id"].get<std::string>() + "\"") != std::string::npos);
    }
    json compared = cli_json({"taxonomy", "--db", db_path, "--json", "--since", "3h", "--compare-since", "6h",
                              "--compare-until", "3h"});
    Page comparison = load("taxonomy-compare", "#/taxonomy?since=3h&compare_since=6h&compare_until=3h", false);
    CHECK(comparison.dom.find("data-compare=\"windows\"") != std::string::npos);
    for (const json& row : compared["comparison"]["rows"]) {
      CHECK(comparison.dom.find("<th scope=\"row\">" + row["path"].get<std::string>() + "</th>") != std::string::npos);
    }
    // Two models on the items both evaluated: fixture-v1 failed 2 of 4, fixture-v2 1 of 4.
    json models = cli_json({"taxonomy", "--db", db_path, "--json", "--model", "fixture-v1", "--compare-model", "fixture-v2"});
    REQUIRE(models["model_comparison"]["rows"].size() >= 1);
    Page versus = load("taxonomy-models", "#/taxonomy?model=fixture-v1&compare_model=fixture-v2", false);
    CHECK(versus.dom.find("data-compare=\"models\"") != std::string::npos);
    for (const json& row : models["model_comparison"]["rows"]) {
      std::string cells = "<th scope=\"row\">" + row["path"].get<std::string>() + "</th><td>" +
                          std::to_string(row["count_a"].get<int>()) + "</td><td>" + std::to_string(row["count_b"].get<int>());
      CHECK_MESSAGE(versus.dom.find(cells) != std::string::npos, cells);
    }
  }

  SUBCASE("tails: the list and the top tail's share series are tails --json") {
    json tails = cli_json({"tails", "--db", db_path, "--json"});
    Page page = load("tails", "#/tails", true);
    CHECK(page.dom.find("data-tails=\"" + std::to_string(tails["cycle_id"].get<int>()) + "\"") != std::string::npos);
    std::string top = tails["series"]["dimension"].get<std::string>() + "/" + tails["series"]["name"].get<std::string>();
    std::vector<Point> shown;
    for (const Point& p : chart_points(page.dom)) {
      if (p.series == top) shown.push_back(p);
    }
    REQUIRE(shown.size() == tails["series"]["points"].size());
    for (size_t i = 0; i < shown.size(); ++i) {
      CHECK(shown[i].x == tails["series"]["points"][i]["cycle_id"].get<double>());
      CHECK(std::abs(shown[i].y - tails["series"]["points"][i]["share"].get<double>()) < 1e-9);
    }
  }

  SUBCASE("models of kernelopt: fast_p per version is models --json") {
    json models = cli_json({"models", "--db", db_path, "--json", "--track", "kernelopt"});
    REQUIRE(models["models"].size() == 2);
    CHECK(models["models"][0]["kernels"]["fast_1"] == 0.0);
    CHECK(models["models"][1]["kernels"]["fast_2"] == 1.0);
    Page page = load("models-kernelopt", "#/models?track=kernelopt", false);
    CHECK(page.dom.find("data-kernel-speed=\"kernelopt\"") != std::string::npos);
    CHECK(page.dom.find("<th scope=\"row\">strategies-v1</th><td>1/1</td><td>0.0%</td><td>0.0%</td><td>0.80x</td>") !=
          std::string::npos);
    CHECK(page.dom.find("<th scope=\"row\">strategies-v2</th><td>1/1</td><td>100.0%</td><td>100.0%</td><td>2.50x</td>") !=
          std::string::npos);
  }

  SUBCASE("models: accuracy per version and the delta to the parent are models --json") {
    json models = cli_json({"models", "--db", db_path, "--json", "--track", "cuda2hip"});  // the page's default track
    Page page = load("models", "#/models", true);
    REQUIRE(models["models"].size() == 2);
    for (const json& m : models["models"]) {
      std::regex bar("data-label=\"" + m["name"].get<std::string>() + "\" data-value=\"([^\"]+)\"");
      std::smatch match;
      REQUIRE(std::regex_search(page.dom, match, bar));
      CHECK(std::abs(std::stod(match[1].str()) - m["evaluation"]["accuracy"].get<double>()) < 1e-9);
    }
    CHECK(page.dom.find("+25.0 pts") != std::string::npos);  // fixture-v2 (3 of 4) over fixture-v1 (2 of 4)
    // How near its snapshot's training rows came to the evaluation items, per set version.
    const json& near = models["evaluation_set"]["training_row_similarity"];
    REQUIRE(near.size() == 1);
    CHECK(near[0]["largest_similarity"] == 0.625);
    CHECK(page.dom.find("data-item-leakage=\"cuda2hip\"") != std::string::npos);
    CHECK(page.dom.find("<td>0.625</td>") != std::string::npos);
    // Accuracy per CUDA API family: every item calls cudaDeviceSynchronize (device_management).
    const json& family = models["models"][1]["api_families"]["device_management"];
    REQUIRE(family.is_object());
    CHECK(page.dom.find("data-family-accuracy=\"cuda2hip\"") != std::string::npos);
    std::string cell = "<th scope=\"row\">device_management</th>";
    CHECK(page.dom.find(cell) != std::string::npos);
    CHECK(page.dom.find("(" + std::to_string(family["ok"].get<int>()) + "/" + std::to_string(family["items"].get<int>()) +
                        ")") != std::string::npos);
  }

  SUBCASE("coverage: the family bars and tables are coverage --json") {
    json coverage = cli_json({"coverage", "--db", db_path, "--json", "--names"});
    Page page = load("coverage", "#/coverage", true);
    CHECK(page.dom.find("data-api-families=\"cuda2hip\"") != std::string::npos);
    REQUIRE(coverage["families"].size() >= 25);
    for (const json& f : coverage["families"]) {
      std::regex bar("data-label=\"" + f["name"].get<std::string>() + "\" data-value=\"([^\"]+)\"");
      std::smatch match;
      REQUIRE_MESSAGE(std::regex_search(page.dom, match, bar), f["name"]);
      CHECK(std::abs(std::stod(match[1].str()) - f["share"].get<double>()) < 1e-9);
    }
    CHECK(page.dom.find(std::to_string(coverage["covered_shared"].get<int>()) + " of " +
                        std::to_string(coverage["shared_names"].get<int>())) != std::string::npos);
    Page family = load("coverage-family", "#/coverage?family=device_management", false);
    CHECK(family.dom.find("data-api-names=\"device_management\"") != std::string::npos);
    CHECK(family.dom.find("<th scope=\"row\">cudaDeviceSynchronize</th><td>device_management</td>") != std::string::npos);
  }

  SUBCASE("sample: its code side by side, verdicts and lineage, with untrusted text shown as text") {
    Page list = load("samples", "#/sample", true);
    CHECK(list.dom.find("href=\"#/sample/" + fixture.showcase + "\"") != std::string::npos);
    Page page = load("sample", "#/sample/" + fixture.showcase, true);
    for (const char* pane : {"CUDA", "HIP", "PTX", "Rolled-PTX", "SASS", "RDNA3"}) {
      CHECK_MESSAGE(page.dom.find("data-pane=\"" + std::string(pane) + "\"") != std::string::npos, pane);
    }
    CHECK(page.dom.find("data-verdicts=\"" + fixture.showcase + "\"") != std::string::npos);
    CHECK(page.dom.find("no AMD GPU") != std::string::npos);
    CHECK(page.dom.find("<td>gpu-node-17</td>") != std::string::npos);  // where the stage ran
    CHECK(page.dom.find("data-sample=\"" + fixture.parent + "\"") != std::string::npos);
    CHECK(page.dom.find("data-sample=\"" + fixture.child + "\"") != std::string::npos);
    // The sample's `<img onerror>` and the diagnostics' `<script>` are text, not elements.
    CHECK(page.dom.find("<img") == std::string::npos);
    CHECK(page.dom.find("&lt;img src=x onerror") != std::string::npos);
    CHECK(page.dom.find("&lt;script&gt;document.title") != std::string::npos);
    CHECK(page.dom.find("<title>tailforge: sample</title>") != std::string::npos);
    // With Debian's highlight.js installed, the CUDA and HIP panes are highlighted by it.
    if (fs::exists("/usr/share/javascript/highlight.js/highlight.min.js")) {
      CHECK(page.dom.find("<code class=\"code hljs\">") != std::string::npos);
      CHECK(page.dom.find("class=\"hljs-keyword\"") != std::string::npos);
    } else {
      MESSAGE("highlight.js is not installed: panes shown without its colours");
    }
  }
}

TEST_CASE("tailforge serve is read-only and refuses a database that does not exist") {
  TempDir dir;
  ProcessResult missing = run_tailforge({"serve", "--db", dir.file("nothing.db"), "--listen", "127.0.0.1:0"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.stderr_text.find("no database at") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("nothing.db")));

  std::string db_path = dir.file("served.db");
  {
    Database db = Database::open(db_path).value();
    build_store(db);
  }
  Served served(db_path, dir.file("serve.log"));
  httplib::Client client("127.0.0.1", served.port);
  auto page = client.Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->get_header_value("Content-Type") == "text/html; charset=utf-8");
  CHECK(page->get_header_value("Content-Security-Policy").find("script-src 'self'") != std::string::npos);
  CHECK(page->body.find("<script src=\"/dashboard/app.js\" defer>") != std::string::npos);
  auto script = client.Get("/dashboard/app.js");
  REQUIRE(script);
  CHECK(script->status == 200);
  CHECK(script->body.find("/v1/taxonomy") != std::string::npos);
  auto style = client.Get("/dashboard/style.css");
  REQUIRE(style);
  CHECK(style->status == 200);
  for (const char* path : {"/v1/control/pause", "/v1/models"}) {
    auto refused = client.Post(path, "{}", "application/json");
    REQUIRE(refused);
    CHECK(refused->status == 405);
    CHECK(refused->body.find("read-only") != std::string::npos);
  }
  auto tails = client.Get("/v1/tails?series=domain/scan");
  REQUIRE(tails);
  CHECK(tails->status == 200);
  CHECK(json::parse(tails->body)["series"]["name"] == "scan");
  auto bad = client.Get("/v1/tails?series=scan");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  auto samples = client.Get("/v1/samples?status=failed&limit=3");
  REQUIRE(samples);
  CHECK(samples->status == 200);
  json listed = json::parse(samples->body)["samples"];
  CHECK(listed.size() == 3);
  for (const json& s : listed) CHECK(s["status"] == "failed");
  auto bad_limit = client.Get("/v1/samples?limit=0");
  REQUIRE(bad_limit);
  CHECK(bad_limit->status == 400);
}
