// dashboard_bench: how long each dashboard page takes to load on a big store (100,000 samples and
// 1,000,000 failures by default, spread over 3 days, 300 cycles, model versions with
// evaluations, lineage and artifacts), served by a real `tailforge serve`.
// A page's load is what its browser does: the page and its script and style (in parallel), then
// the JSON requests the page makes, in the same order and parallelism as dashboard/web/app.js
// (the tails page asks for the list, then the five top tails' series at once). Each page is
// loaded 5 times over fresh connections; the median is printed with its ratio to the 300 ms
// target. What the browser then spends drawing is not in these figures.
// Usage: dashboard_bench [--samples N] [--db FILE] [--tailforge PATH] [--keep]
//   --db FILE  time the pages on an existing store instead of building one
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "base/clock.h"
#include "bench/bench_support.h"
#include "bench/daemon_process.h"
#include "dashboard/dashboard.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/evaluations.h"
#include "store/failures.h"
#include "store/models.h"
#include "store/samples.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kStages = {"nvidia.ptx", "nvidia.cubin.sm_80", "translate.hip", "amd.asm.gfx1100",
                                          "amd.assemble.gfx1100", "nvidia.run", "compare", "x86.run",
                                          "hip_on_nvidia.exe", "amd.codeobject.gfx1100"};
const std::vector<std::string> kCategories = {
    "amd.asm.invalid_instruction", "amd.asm.register_alignment", "amd.asm.vgpr_bank", "amd.asm.literal_limit",
    "amd.asm.undefined_label", "amd.asm.operand_type", "amd.compile.undeclared_identifier", "nvidia.compile.syntax",
    "translate.unsupported.inline_ptx", "translate.unsupported.wmma", "run.timeout", "run.crash.sigsegv",
    "run.output_mismatch.numeric", "sandbox.memory_limit", "c2x86.io_mismatch"};
const std::vector<std::string> kTracks = {"cuda2hip", "ptx2cuda", "sass2rdna3", "c2x86"};
const std::vector<std::string> kOrigins = {"template", "synthesized", "llm", "imported", "mutated"};
const std::vector<std::string> kDomains = {"reduction", "scan", "stencil_1d", "histogram", "nbody", "monte_carlo",
                                           "graph_bfs", "sha256_hash"};
const std::vector<std::string> kFeatures = {"atomics", "shared_memory", "warp_shuffle", "cooperative_groups",
                                            "streams_events", "templates"};

// The store's shape: samples over `span` milliseconds to `now`, in `cycles` cycles.
struct StoreShape {
  int samples = 0;
  int cycles = 300;
  int64_t now = 0;
  int64_t span = 3LL * 86400000;
};

// Every sample's failures, one per stage, their categories skewed to a long tail.
void insert_failures(Database& db, const Sample& s, const std::string& id, std::mt19937_64& random) {
  for (const std::string& stage : kStages) {
    size_t c = static_cast<size_t>(std::min<double>(kCategories.size() - 1, std::exponential_distribution<>(0.3)(random)));
    (void)insert_failure(db, sample_failure(s, id, stage, kCategories[c], "error: evidence of " + kCategories[c],
                                            s.created_ms));
  }
}

// The samples, with their lineage, artifacts and failures, in one transaction; the cycles run one
// after another, as the daemon's do. Returns a sample with lineage and artifacts for the sample
// page, and leaves `cycle` at the last cycle, still open.
std::string insert_samples(Database& db, const StoreShape& shape, std::mt19937_64& random, int64_t& cycle) {
  const int samples = shape.samples, cycles = shape.cycles;
  const int64_t now = shape.now, span = shape.span;
  Transaction transaction(db);
  cycle = start_cycle(db, 1, samples / cycles).value();
  std::string showcase;
  std::vector<std::string> templates;
  for (int i = 0; i < samples; ++i) {
    Sample s;
    s.track = kTracks[random() % kTracks.size()];
    s.origin = i % 3 == 0 ? "template" : kOrigins[random() % kOrigins.size()];
    s.language = "cuda";
    s.text = "__global__ void k" + std::to_string(i) + "(float* a) { a[threadIdx.x] *= " + std::to_string(i) + "; }\n";
    s.domain = kDomains[random() % kDomains.size()];
    s.features = {kFeatures[random() % kFeatures.size()]};
    int roll = static_cast<int>(random() % 100);
    s.status = roll < 60 ? "verified" : roll < 95 ? "failed" : "pending";
    // Cycles run one after another, as the daemon's do: each closes before the next starts.
    if (1 + static_cast<int64_t>(i) * cycles / samples > cycle) {
      CycleRecord record = find_cycle(db, cycle).value().value();
      record.state = "done";
      record.finished_ms = now - span + span * i / samples;
      (void)finish_cycle(db, record);
      cycle = start_cycle(db, 1, samples / cycles).value();
    }
    s.cycle_id = cycle;
    s.created_ms = now - span + span * i / samples;
    std::string id = insert_sample_if_absent(db, s).value().id;
    if (s.origin == "template" && templates.size() < 1000) templates.push_back(id);
    if (s.origin != "template" && !templates.empty()) {
      (void)insert_lineage_edge(db, {templates[random() % templates.size()], id, "synthesized_from",
                                     "builtin-synthesizer", std::nullopt, std::nullopt, "\"bench\"", s.created_ms});
    }
    if (i % 100 == 0) {
      std::string body(4000, ' ');
      for (size_t k = 0; k < body.size(); k += 40) body.replace(k, 12, "v_add_f32 v1");
      (void)insert_artifact(db, id, {"translate.hip", "hip", "hip", "// hip\n" + s.text});
      (void)insert_artifact(db, id, {"nvidia.ptx", "ptx", "ptx", ".version 9.0\n" + body});
      (void)insert_artifact(db, id, {"amd.asm.gfx1100", "rdna3_asm", "rdna3_asm", body});
      if (s.origin != "template") showcase = id;
    }
    insert_failures(db, s, id, random);
  }
  (void)transaction.commit();
  return showcase;
}

// Closes the last cycle, then a retrain event every 30 cycles and each cycle's tail list.
void insert_cycle_reports(Database& db, const StoreShape& shape, int64_t last_cycle) {
  const int cycles = shape.cycles;
  const int64_t now = shape.now, span = shape.span;
  Transaction rest(db);
  CycleRecord last = find_cycle(db, last_cycle).value().value();
  last.state = "done";
  last.finished_ms = now;
  (void)finish_cycle(db, last);
  for (int c = 1; c <= cycles; ++c) {
    if (c % 30 == 0) {
      RetrainEventRecord event;
      event.cycle_id = c;
      event.reason = R"({"conditions":[{"condition":"min_tail_gain","category":"domain:scan","gain":60,"threshold":50}]})";
      event.snapshot_hash = "bench-" + std::to_string(c);
      event.status = "ok";
      event.created_ms = now - span + span * c / cycles;
      (void)insert_retrain_event_if_new(db, event);
    }
  }
  if (Status committed = rest.commit(); !committed) std::fprintf(stderr, "%s\n", committed.message().c_str());
  for (int c = 1; c <= cycles; ++c) {  // each in a transaction of its own
    std::vector<TailReportRow> rows;
    for (int r = 0; r < 20; ++r) {
      rows.push_back({r + 1, r % 2 ? "feature" : "domain", r % 2 ? kFeatures[r % kFeatures.size()] : kDomains[r % kDomains.size()],
                      "corpus_share", 1.0 / (r + 1), R"({"share":0.1})"});
    }
    if (Status stored = replace_tail_report(db, c, rows); !stored) std::fprintf(stderr, "%s\n", stored.message().c_str());
  }
}

// Ten model versions, each judged on 500 evaluation items.
void insert_models(Database& db, std::mt19937_64& random) {
  std::vector<std::string> items;
  {
    Result<Statement> select = db.prepare("SELECT id FROM sample WHERE track = 'cuda2hip' AND status = 'verified' LIMIT 500");
    while (select->step()) items.push_back(select->text(0));
  }
  std::vector<EvalItem> eval_items;
  for (const std::string& id : items) eval_items.push_back({"cuda2hip", id, 1, std::nullopt, std::nullopt, 0});
  (void)add_eval_items(db, eval_items);
  std::optional<int64_t> parent;
  for (int v = 1; v <= 10; ++v) {
    ModelRecord model;
    model.name = "bench-v" + std::to_string(v);
    model.kind = "builtin";
    model.parent_id = parent;
    Result<int64_t> inserted = insert_model(db, model);
    if (!inserted) {
      std::fprintf(stderr, "%s\n", inserted.message().c_str());
      break;
    }
    int64_t id = *inserted;
    Transaction judged(db);
    for (size_t i = 0; i < items.size(); ++i) {
      EvaluationRecord e;
      e.model_id = id;
      e.sample_id = items[i];
      e.track = "cuda2hip";
      e.ok = random() % 100 < static_cast<uint64_t>(60 + 3 * v);
      e.status = e.ok ? "ok" : "fail";
      if (!e.ok) e.category = kCategories[random() % kCategories.size()];
      e.checked = "compile";
      (void)insert_evaluation(db, e);
    }
    if (Status committed = judged.commit(); !committed) std::fprintf(stderr, "%s\n", committed.message().c_str());
    parent = id;
  }
}

// Fills the store; returns a sample with lineage and artifacts for the sample page.
std::string build_store(Database& db, int samples) {
  use_big_cache(db);
  std::mt19937_64 random(7);
  StoreShape shape;
  shape.samples = samples;
  shape.now = now_ms();
  auto started = std::chrono::steady_clock::now();
  int64_t cycle = 0;
  std::string showcase = insert_samples(db, shape, random, cycle);
  std::printf("  samples and failures: %.0f s\n", seconds_since(started));
  std::fflush(stdout);
  insert_cycle_reports(db, shape, cycle);
  std::printf("  cycles, retrains and tail lists: %.0f s\n", seconds_since(started));
  insert_models(db, random);
  std::printf("  models and evaluations: %.0f s\n", seconds_since(started));
  (void)db.exec("ANALYZE");
  return showcase;
}

// A port nothing listens on now (bound to port 0, then closed).
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(address.sin_port);
}

// One request over a fresh connection; its time in seconds (negative on failure).
double timed_get(int port, const std::string& path) {
  auto start = std::chrono::steady_clock::now();
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  // As a browser asks: compressed, and the body decompressed here.
  auto answer = client.Get(path, {{"Accept-Encoding", "gzip"}});
  if (!answer || answer->status != 200) {
    std::fprintf(stderr, "GET %s: %s\n", path.c_str(),
                 answer ? ("HTTP " + std::to_string(answer->status)).c_str() : httplib::to_string(answer.error()).c_str());
    return -1;
  }
  return seconds_since(start);
}

// Requests in parallel; the time until the last one answered.
double parallel_gets(int port, const std::vector<std::string>& paths) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::future<double>> answers;
  for (const std::string& path : paths) answers.push_back(std::async(std::launch::async, timed_get, port, path));
  bool ok = true;
  for (auto& answer : answers) ok = answer.get() >= 0 && ok;
  return ok ? seconds_since(start) : -1;
}

struct PageLoad {
  std::string name;
  std::vector<std::vector<std::string>> stages;  // each stage's requests run in parallel
};

}  // namespace

int main(int argc, char** argv) {
  int samples = 100000;
  std::string existing_db;
  std::string tailforge = default_tailforge_binary();
  bool keep = false;
  if (!parse_bench_flags(argc, argv,
                         {{"--samples", [&](const std::string& v) { samples = std::max(1000, std::atoi(v.c_str())); }},
                          {"--db", [&](const std::string& v) { existing_db = fs::absolute(v).string(); }},
                          {"--tailforge", [&](const std::string& v) { tailforge = v; }}},
                         keep)) {
    std::fprintf(stderr, "usage: dashboard_bench [--samples N] [--db FILE] [--tailforge PATH] [--keep]\n");
    return 2;
  }
  fs::path dir = bench_run_dir("dashboard-bench");
  if (!enter_run_dir(dir, tailforge)) return 1;
  std::string db_path = existing_db.empty() ? (dir / "big.db").string() : existing_db;
  auto build_started = std::chrono::steady_clock::now();
  std::string showcase;
  {
    Result<Database> db = Database::open(db_path);
    if (!db) {
      std::fprintf(stderr, "%s\n", db.message().c_str());
      return 1;
    }
    if (existing_db.empty()) {
      showcase = build_store(*db, samples);
    } else {  // a sample with stored code, for the sample page
      Result<Statement> any = db->prepare("SELECT sample_id FROM sample_artifact ORDER BY sample_id LIMIT 1");
      if (any && any->step()) showcase = any->text(0);
    }
    Result<Statement> counts = db->prepare("SELECT (SELECT count(*) FROM sample), (SELECT count(*) FROM failure)");
    counts->step();
    std::printf("store: %lld samples, %lld failures, %s in %.0f s\n", static_cast<long long>(counts->int64(0)),
                static_cast<long long>(counts->int64(1)), existing_db.empty() ? "built" : "opened",
                seconds_since(build_started));
  }

  int port = free_port();
  pid_t served = spawn_daemon({tailforge, "serve", "--db", db_path, "--listen", "127.0.0.1:" + std::to_string(port)},
                              (dir / "serve.log").string());
  bool up = false;
  for (int i = 0; i < 200 && !up; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    httplib::Client client("127.0.0.1", port);
    auto answer = client.Get("/healthz");
    up = answer && answer->status == 200;
  }
  if (!up) {
    std::fprintf(stderr, "tailforge serve did not start (see %s)\n", (dir / "serve.log").c_str());
    kill(served, SIGTERM);
    return 1;
  }

  // The top five tails of the newest list, as the tails page asks for them.
  std::vector<std::string> tail_series;
  {
    Result<Database> db = Database::open(db_path);
    Result<std::optional<int64_t>> cycle = latest_tail_report_cycle(*db);
    Result<std::vector<TailReportRow>> rows = tail_report_rows(*db, cycle->value());
    for (size_t i = 0; i < 5 && i < rows->size(); ++i) {
      tail_series.push_back("/v1/tails?cycle=" + std::to_string(cycle->value()) + "&series=" + (*rows)[i].dimension +
                            "/" + (*rows)[i].name);
    }
  }
  // The page, its script and style, and Debian's highlight.js where it is installed (every page
  // loads it; a browser that has it cached skips it, this bench never does).
  std::vector<std::string> shell = {"/", "/dashboard/app.js", "/dashboard/style.css"};
  if (fs::exists(std::string(kSystemJavascriptDir) + "/highlight.js/highlight.min.js")) {
    shell.push_back("/dashboard/vendor/highlight.min.js");
  }
  std::vector<PageLoad> pages = {
      {"overview", {shell, {"/v1/status"}}},
      {"taxonomy", {shell, {"/v1/taxonomy?trend=hour&examples=3"}}},
      {"tails", {shell, {"/v1/tails"}, tail_series}},
      {"models", {shell, {"/v1/models?track=cuda2hip"}}},
      {"samples", {shell, {"/v1/samples?limit=20", "/v1/samples?status=failed&limit=10"}}},
      {"sample",
       {shell, {"/v1/samples/" + showcase, "/v1/samples/" + showcase + "/lineage"}}},
  };
  std::printf("page        median ms   (5 loads)                       target 300 ms   ratio\n");
  bool all_under = true;
  for (const PageLoad& page : pages) {
    std::vector<double> loads;
    for (int round = 0; round < 5; ++round) {
      double total = 0;
      for (const auto& stage : page.stages) {
        double t = parallel_gets(port, stage);
        if (t < 0) {
          std::fprintf(stderr, "a request failed; the server's log is %s\n", (dir / "serve.log").c_str());
          kill(served, SIGTERM);
          return 1;
        }
        total += t;
      }
      loads.push_back(total * 1000);
    }
    std::vector<double> sorted = loads;
    std::sort(sorted.begin(), sorted.end());
    double median = sorted[2];
    all_under = all_under && median < 300;
    std::printf("%-10s %8.1f   (%6.1f %6.1f %6.1f %6.1f %6.1f)   %-13s  %.2f\n", page.name.c_str(), median, loads[0],
                loads[1], loads[2], loads[3], loads[4], median < 300 ? "under" : "OVER", median / 300);
  }

  std::printf("every page under 300 ms (HTTP median): %s\n", all_under ? "yes" : "NO");
  kill(served, SIGTERM);
  int status = 0;
  waitpid(served, &status, 0);
  leave_run_dir(dir, keep);
  return 0;
}
