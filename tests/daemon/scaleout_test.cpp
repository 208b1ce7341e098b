// Scale-out: the daemon with `tailforge worker` processes leasing its verify jobs over HTTP. One
// worker hides nvcc and must get no job the configuration says needs it, one is stopped for
// longer than its lease, one takes that job over and is SIGKILLed holding it; every job still
// completes once, its result stored by one post. The worker protocol itself: the token, content-addressed uploads, a
// result posted twice, a post from a worker that no longer holds the lease.
#include <doctest/doctest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <filesystem>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "store/database.h"
#include "test_support/free_port.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "test_support/translatable_personas.h"
#include "verifier/toolchains.h"

using namespace tailforge;

namespace {

constexpr const char* kToken = "scaleout-test-token";

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool wait_until(const std::function<bool()>& ready, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ready();
}

// A daemon listening with a token, and the workers a test starts; everything left running is
// killed when the test ends.
struct Cluster {
  TempDir dir;
  int port = free_port();
  std::string db = dir.file("store.db");
  std::string token_file = dir.file("token");
  pid_t daemon = -1;
  std::map<std::string, pid_t> workers;

  explicit Cluster(const nlohmann::json& overrides, int cycles) {
    std::ofstream(token_file) << kToken << "\n";
    nlohmann::json config = overrides;
    config["http"]["token_file"] = token_file;
    // The cluster's tests count verified samples of a cycle of two to four programs.
    if (!config.contains("generator")) config["generator"]["personas_file"] = write_translatable_personas(dir);
    std::ofstream(dir.file("config.json")) << config.dump();
    daemon = spawn_in_background({TAILFORGE_BINARY, "daemon", "--db", db, "--config", dir.file("config.json"), "--cycles",
                                  std::to_string(cycles), "--listen", "127.0.0.1:" + std::to_string(port), "--no-progress"},
                                 dir.file("daemon.log"));
    httplib::Client client("127.0.0.1", port);
    REQUIRE_MESSAGE(wait_until([&] { return client.Get("/healthz") != nullptr; }, 30), read_all(dir.file("daemon.log")));
  }
  ~Cluster() {
    for (auto& [name, pid] : workers) stop(pid, SIGKILL);
    stop(daemon, SIGKILL);
  }

  static void stop(pid_t& pid, int signal) {
    if (pid <= 0) return;
    kill(pid, SIGCONT);
    kill(pid, signal);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }

  void start_worker(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {TAILFORGE_BINARY, "worker", "--server", "http://127.0.0.1:" + std::to_string(port),
                                     "--token-file", token_file, "--name", name, "--poll", "0.2",
                                     "--work-dir", dir.file("work-" + name)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    workers[name] = spawn_in_background(argv, log_of(name));
  }
  std::string log_of(const std::string& name) const { return dir.file("worker-" + name + ".log"); }

  nlohmann::json status() const {
    ProcessResult result = run_tailforge({"status", "--db", db, "--json"});
    nlohmann::json json = nlohmann::json::parse(result.stdout_text, nullptr, false);
    return json.is_discarded() ? nlohmann::json::object() : json;
  }
  static nlohmann::json worker(const nlohmann::json& status, const std::string& name) {
    for (const nlohmann::json& w : status.value("workers", nlohmann::json::array()))
      if (w.value("name", "") == name) return w;
    return nlohmann::json::object();
  }

  // The job a worker holds, once it holds one within `seconds`; 0 when it does not.
  int64_t held_job(const std::string& name, double seconds) const {
    int64_t job = 0;
    wait_until([&] {
      nlohmann::json w = worker(status(), name);
      if (w.contains("job_id") && w["job_id"].is_number()) job = w["job_id"].get<int64_t>();
      return job > 0;
    }, seconds);
    return job;
  }

  // Waits for the daemon to finish its cycles; false when it did not within `seconds`.
  bool daemon_exits(double seconds) {
    int exit_status = 0;
    bool exited = wait_until([&] { return waitpid(daemon, &exit_status, WNOHANG) == daemon; }, seconds);
    if (exited) daemon = -1;
    return exited && WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0;
  }
};

nlohmann::json small_loop(const nlohmann::json& workers, int samples = 4) {
  return {{"daemon", {{"samples_per_cycle", samples}, {"cycles_in_flight", 1}, {"fill_samples", 0}}},
          {"synth", {{"enabled", false}}},
          {"eval", {{"enabled", false}}},
          {"retrain", {{"enabled", false}}},
          {"workers", workers}};
}

}  // namespace

TEST_CASE("three workers, one without nvcc, one slow, one killed holding the slow one's job: every verify job completes once" *
          doctest::test_suite("long")) {
  if (!testing::nvcc_here()) return;
  Cluster cluster(small_loop({{"local_verify", false}, {"verify_needs", {"nvidia.ptx"}}, {"lease_seconds", 3}}), 1);

  // Alone, the worker without nvcc gets nothing, and status says why the jobs wait.
  cluster.start_worker("no-nvcc", {"--without", "nvcc"});
  std::string reason;
  CHECK(wait_until([&] {
    for (const nlohmann::json& w : cluster.status().value("waiting", nlohmann::json::array()))
      if (w.value("kind", "") == "verify") reason = w.value("reason", "");
    return reason.find("no-nvcc lacks nvidia.ptx") != std::string::npos;
  }, 60));
  CHECK(reason.find("local does not take them") != std::string::npos);
  CHECK(run_tailforge({"status", "--db", cluster.db}).stdout_text.find("waiting: ") != std::string::npos);

  // The slow worker is stopped for longer than its lease while it holds a job; the second worker
  // takes that job over, and is killed (SIGKILL) while it holds it.
  cluster.start_worker("slow");
  int64_t taken_over = cluster.held_job("slow", 60);
  REQUIRE(taken_over > 0);
  kill(cluster.workers["slow"], SIGSTOP);
  cluster.start_worker("doomed");
  // Stopped before the status is read, the doomed worker cannot post what it holds meanwhile.
  REQUIRE(wait_until([&] {
    if (Cluster::worker(cluster.status(), "doomed").value("job_id", nlohmann::json()) != taken_over) return false;
    kill(cluster.workers["doomed"], SIGSTOP);
    if (Cluster::worker(cluster.status(), "doomed").value("job_id", nlohmann::json()) == taken_over) return true;
    kill(cluster.workers["doomed"], SIGCONT);
    return false;
  }, 120));
  Cluster::stop(cluster.workers["doomed"], SIGKILL);
  // The slow worker goes on: its post for the job is refused, the doomed worker's lease runs
  // out, and it verifies the job again with every other.
  kill(cluster.workers["slow"], SIGCONT);

  REQUIRE_MESSAGE(cluster.daemon_exits(400), read_all(cluster.dir.file("daemon.log")));
  nlohmann::json status = cluster.status();
  for (const std::string name : {"no-nvcc", "slow"}) Cluster::stop(cluster.workers[name], SIGTERM);

  Result<Database> db = Database::open(cluster.db);
  REQUIRE(db.ok());
  int64_t verify_jobs = query_int(*db, "SELECT count(*) FROM job WHERE kind = 'verify'");
  CHECK(verify_jobs == 4);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE state <> 'done'") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM sample WHERE track = 'cuda2hip' AND status = 'pending'") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM sample s WHERE track = 'cuda2hip' AND NOT EXISTS "
                       "(SELECT 1 FROM verification v WHERE v.sample_id = s.id AND v.stage LIKE 'nvidia.ptx%')") == 0);
  // Leased by slow, taken over by doomed, done by slow.
  CHECK(query_int(*db, "SELECT attempts FROM job WHERE id = " + std::to_string(taken_over)) == 3);

  nlohmann::json no_nvcc = Cluster::worker(status, "no-nvcc");
  nlohmann::json doomed = Cluster::worker(status, "doomed");
  nlohmann::json slow = Cluster::worker(status, "slow");
  CHECK(no_nvcc["jobs_done"] == 0);
  CHECK(no_nvcc["jobs_failed"] == 0);
  CHECK(no_nvcc["missing"]["verify"] == nlohmann::json{"nvidia.ptx"});
  // Every result stored once, counted for the worker whose post stored it; the slow worker's late
  // post for the job taken over was refused, and it verified that job again.
  CHECK(slow["jobs_done"].get<int64_t>() >= 1);
  CHECK(doomed["jobs_done"].get<int64_t>() + slow["jobs_done"].get<int64_t>() == verify_jobs);
  CHECK(read_all(cluster.log_of("slow")).find("job " + std::to_string(taken_over) + " not stored: HTTP 409: lease lost") !=
        std::string::npos);
  CHECK(status["verified"].get<int64_t>() >= 1);
  CHECK(read_all(cluster.log_of("no-nvcc")).find("offers this worker no job") != std::string::npos);
}

TEST_CASE("the worker protocol: token, content-addressed uploads, a result posted twice, a lost lease") {
  Cluster cluster(small_loop({{"local_verify", false}, {"lease_seconds", 30}}), 1);
  httplib::Client client("127.0.0.1", cluster.port);
  httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kToken}};
  auto post = [&](const std::string& path, const nlohmann::json& body) {
    auto answer = client.Post(path, auth, body.dump(), "application/json");
    REQUIRE(answer);
    return std::pair{answer->status, nlohmann::json::parse(answer->body, nullptr, false)};
  };

  CHECK(client.Get("/v1/workers/config")->status == 401);
  CHECK(client.Get("/v1/workers/config", {{"Authorization", "Bearer wrong"}})->status == 401);
  auto config = client.Get("/v1/workers/config", auth);
  REQUIRE(config->status == 200);
  CHECK(nlohmann::json::parse(config->body)["config"]["workers"]["local_verify"] == false);

  nlohmann::json hello = {{"name", "probe"}, {"host", "test"}, {"capabilities", {{"stages", nlohmann::json::array()}}}};
  auto lease_a_job = [&] {  // polls until the daemon's generation gives a verify job
    nlohmann::json answer;
    REQUIRE(wait_until([&] {
      answer = post("/v1/workers/lease", hello).second;
      return answer.contains("job") && !answer["job"].is_null();
    }, 60));
    return answer;
  };
  nlohmann::json leased = lease_a_job();
  int64_t job = leased["job"]["id"].get<int64_t>();
  std::string sample_id = leased["input"]["sample"]["id"].get<std::string>();
  CHECK(leased["input"]["sample"]["track"] == "cuda2hip");

  // An output whose artifact the daemon does not hold yet.
  std::string content = "// an artifact of the probe\n" + std::string(3000, 'x');
  std::string address = sha256_hex(content);
  nlohmann::json stage = {{"name", "nvidia.ptx.sm_80"}, {"status", "fail"}, {"seconds", 0.5}, {"reason", "probe"},
                          {"diagnostics", "error: probe"}, {"signal", 0}, {"peak_rss_kb", 1}, {"cached", false},
                          {"toolchain_version", "13.0"}, {"command", "nvcc"}, {"child_seconds", 0.4}, {"exit_code", 1},
                          {"artifacts", {{{"kind", "ptx"}, {"name", "ptx"}, {"content", {{"sha256", address}}}, {"command", ""},
                                          {"toolchain_version", "13.0"}, {"binary", false}}}}};
  std::string lease = leased["lease"].get<std::string>();
  nlohmann::json result = {{"name", "probe"}, {"job_id", job}, {"lease", lease},
                           {"output", {{"chain", {{"file", "program.cu"}, {"track", "cuda2hip"}, {"ok", false}, {"stages", {stage}}}},
                                       {"verified", false}, {"not_run", ""}, {"kernel_pairs", nullptr}, {"ptx_pairs", nullptr}}}};
  auto [missing_status, missing] = post("/v1/workers/result", result);
  CHECK(missing_status == 409);
  CHECK(missing["missing"] == nlohmann::json{address});
  CHECK(post("/v1/artifacts/missing", {{"sha256", {address}}}).second["missing"] == nlohmann::json{address});
  CHECK(client.Put("/v1/artifacts/" + address, auth, "not the content", "application/octet-stream")->status == 400);
  CHECK(client.Put("/v1/artifacts/" + address, content, "application/octet-stream")->status == 401);
  CHECK(client.Put("/v1/artifacts/" + address, auth, content, "application/octet-stream")->status == 201);
  CHECK(post("/v1/artifacts/missing", {{"sha256", {address}}}).second["missing"].empty());

  CHECK(post("/v1/workers/heartbeat", {{"name", "probe"}, {"job_id", job}, {"lease", lease}}).first == 200);
  // Another lease (of this worker or another) neither extends nor completes the job.
  CHECK(post("/v1/workers/heartbeat", {{"name", "probe"}, {"job_id", job}, {"lease", "remote:probe/0"}}).first == 409);
  CHECK(post("/v1/workers/heartbeat", {{"name", "intruder"}, {"job_id", job}, {"lease", lease}}).first == 400);
  nlohmann::json stolen = result;
  stolen["lease"] = "remote:probe/0";
  CHECK(post("/v1/workers/result", stolen).first == 409);

  auto [stored_status, stored] = post("/v1/workers/result", result);
  CHECK(stored_status == 200);
  CHECK(stored["stored"] == true);
  auto [again_status, again] = post("/v1/workers/result", result);
  CHECK(again_status == 200);
  CHECK(again["duplicate"] == true);

  Result<Database> db = Database::open(cluster.db);
  REQUIRE(db.ok());
  CHECK(query_int(*db, "SELECT count(*) FROM verification WHERE sample_id = '" + sample_id + "'") == 1);
  CHECK(query_text(*db, "SELECT host FROM verification WHERE sample_id = '" + sample_id + "'") == "test\n");
  CHECK(query_text(*db, "SELECT status FROM sample WHERE id = '" + sample_id + "'") == "failed\n");
  CHECK(query_text(*db, "SELECT state FROM job WHERE id = " + std::to_string(job)) == "done\n");
  CHECK(query_int(*db, "SELECT count(*) FROM artifact WHERE id = '" + address + "'") == 1);
  CHECK(query_int(*db, "SELECT count(*) FROM artifact_upload") == 0);
  auto download = client.Get("/v1/artifacts/" + address, auth);
  REQUIRE(download);
  CHECK(download->body == content);
  CHECK(Cluster::worker(cluster.status(), "probe")["jobs_done"] == 1);

  // A stopping worker gives its job back: pending again at once, the attempt not counted.
  nlohmann::json next = lease_a_job();
  int64_t given_back = next["job"]["id"].get<int64_t>();
  auto [release_status, released] = post("/v1/workers/result", {{"name", "probe"}, {"job_id", given_back},
                                                                {"lease", next["lease"]}, {"release", "stopping"}});
  CHECK(release_status == 200);
  CHECK(released["released"] == true);
  CHECK(query_text(*db, "SELECT state || ' ' || attempts FROM job WHERE id = " + std::to_string(given_back)) == "pending 0\n");

  // So does a worker process stopped with SIGTERM (Slurm's scancel) while it verifies.
  cluster.start_worker("stopped");
  int64_t held = cluster.held_job("stopped", 60);
  REQUIRE(held > 0);
  kill(cluster.workers["stopped"], SIGTERM);
  int exit_status = -1;
  REQUIRE(wait_until([&] { return waitpid(cluster.workers["stopped"], &exit_status, WNOHANG) > 0; }, 60));
  cluster.workers.erase("stopped");
  CHECK((WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0));
  CHECK(query_text(*db, "SELECT state || ' ' || attempts FROM job WHERE id = " + std::to_string(held)) == "pending 0\n");
  CHECK(read_all(cluster.log_of("stopped")).find("job " + std::to_string(held) + " given back") != std::string::npos);
}

namespace {

// A one-node Slurm cluster under a test's folder (scripts/slurm_one_node.sh), stopped at the end.
struct SlurmCluster {
  std::string dir;
  std::string conf;
  std::string why_not;  // why it could not start, when it could not

  explicit SlurmCluster(std::string folder) : dir(std::move(folder)) {
    // munged wants every folder above its socket searchable by all (a test folder is 0700).
    chmod(std::filesystem::path(dir).parent_path().c_str(), 0755);
    ProcessResult started = script("start");
    if (!started.succeeded()) {
      why_not = started.spawned ? started.stderr_text : started.spawn_error;
      while (!why_not.empty() && why_not.back() == '\n') why_not.pop_back();
      if (why_not.empty()) why_not = "scripts/slurm_one_node.sh start exited " + std::to_string(started.exit_code);
      return;
    }
    conf = dir + "/slurm.conf";
  }
  ~SlurmCluster() {
    if (!conf.empty()) script("stop");
  }

  ProcessResult script(const std::string& action) const {
    ProcessSpec spec;
    spec.argv = {"bash", std::string(TAILFORGE_SOURCE_DIR) + "/scripts/slurm_one_node.sh", action, dir};
    spec.timeout_seconds = 90;
    return run_process(spec);
  }
  ProcessResult run(std::vector<std::string> argv, double timeout = 60) const {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.extra_env = {{"SLURM_CONF", conf}};
    spec.timeout_seconds = timeout;
    return run_process(spec);
  }
};

}  // namespace

TEST_CASE("workers placed by Slurm: a job array on a one-node cluster verifies the daemon's samples" *
          doctest::test_suite("long")) {
  Cluster cluster(small_loop({{"local_verify", false}, {"lease_seconds", 10}}, 2), 1);
  SlurmCluster slurm(cluster.dir.file("slurm"));
  if (!testing::program_here("sbatch", "Slurm")) return;
  REQUIRE_MESSAGE(slurm.why_not.empty(), "Slurm is installed but did not start: " << slurm.why_not);
  std::string server = "http://127.0.0.1:" + std::to_string(cluster.port);
  ProcessResult script = run_tailforge({"slurm", "script", "--partition", "tf", "--array", "2", "--gpus-per-task", "1",
                                        "--cpus-per-task", "1", "--server", server, "--token-file", cluster.token_file});
  REQUIRE(script.succeeded());
  CHECK(script.stdout_text.find("#SBATCH --array=0-1\n") != std::string::npos);
  CHECK(script.stdout_text.find("#SBATCH --gpus-per-task=1\n") != std::string::npos);

  ProcessResult submitted = slurm.run({TAILFORGE_BINARY, "slurm", "submit", "--partition", "tf", "--array", "2",
                                       "--gpus-per-task", "1", "--cpus-per-task", "1", "--server", server, "--token-file",
                                       cluster.token_file, "--output", cluster.dir.file("slurm-worker-%A_%a.log")});
  REQUIRE_MESSAGE(submitted.succeeded(), submitted.stderr_text);
  std::smatch match;
  REQUIRE(std::regex_search(submitted.stdout_text, match, std::regex(R"(submitted job array (\d+))")));
  std::string job = match[1];

  // Both array tasks connect as workers, named after their Slurm task, and verify the cycle.
  CHECK(wait_until([&] {
    int slurm_workers = 0;
    for (const nlohmann::json& w : cluster.status().value("workers", nlohmann::json::array()))
      if (w.value("name", "").find(":slurm-" + job + "_") != std::string::npos && w.value("live", false)) ++slurm_workers;
    return slurm_workers == 2;
  }, 60));
  REQUIRE_MESSAGE(cluster.daemon_exits(400), read_all(cluster.dir.file("daemon.log")));
  nlohmann::json status = cluster.status();
  int64_t done_by_slurm = 0;
  for (const nlohmann::json& w : status["workers"])
    if (w.value("name", "").find(":slurm-" + job + "_") != std::string::npos) done_by_slurm += w["jobs_done"].get<int64_t>();
  Result<Database> db = Database::open(cluster.db);
  REQUIRE(db.ok());
  CHECK(done_by_slurm == query_int(*db, "SELECT count(*) FROM job WHERE kind = 'verify'"));
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE state <> 'done'") == 0);
  CHECK(status["verified"].get<int64_t>() >= 1);

  // Scaling down is Slurm's: cancelling the array stops every worker.
  CHECK(slurm.run({"scancel", job}).succeeded());
  CHECK(wait_until([&] { return slurm.run({"squeue", "-h", "-j", job}).stdout_text.empty(); }, 30));
}

namespace {

// A TLS reverse proxy in front of the daemon's plain listener, as a user would put nginx there.
struct TlsProxy {
  httplib::SSLServer server;
  int port = 0;
  std::thread thread;

  TlsProxy(const std::string& cert, const std::string& key, int upstream_port) : server(cert.c_str(), key.c_str()) {
    auto forward = [upstream_port](const httplib::Request& req, httplib::Response& res) {
      httplib::Client upstream("127.0.0.1", upstream_port);
      upstream.set_read_timeout(120, 0);
      httplib::Headers headers = {{"Authorization", req.get_header_value("Authorization")}};
      std::string type = req.get_header_value("Content-Type");
      httplib::Result answer = req.method == "GET"    ? upstream.Get(req.path, headers)
                               : req.method == "PUT" ? upstream.Put(req.path, headers, req.body, type)
                                                     : upstream.Post(req.path, headers, req.body, type);
      if (!answer) {
        res.status = 502;
        return;
      }
      res.status = answer->status;
      res.set_content(answer->body, answer->get_header_value("Content-Type"));
    };
    server.Get(".*", forward);
    server.Post(".*", forward);
    server.Put(".*", forward);
    server.set_payload_max_length(64 << 20);
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~TlsProxy() {
    server.stop();
    thread.join();
  }
};

}  // namespace

TEST_CASE("a worker reaches the daemon through a TLS proxy, and refuses a certificate it cannot verify" *
          doctest::test_suite("long")) {
  Cluster cluster(small_loop({{"local_verify", false}, {"lease_seconds", 10}}, 2), 1);
  ProcessSpec openssl;
  openssl.argv = {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                  "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", cluster.dir.file("key.pem"),
                  "-out", cluster.dir.file("cert.pem")};
  ProcessResult made = run_process(openssl);
  if (!made.spawned) {
    testing::skip(testing::Missing::setup_tool, "openssl not found: " + made.spawn_error);
    return;
  }
  REQUIRE_MESSAGE(made.succeeded(), "openssl could not make a test certificate: " << made.stderr_text);
  TlsProxy proxy(cluster.dir.file("cert.pem"), cluster.dir.file("key.pem"), cluster.port);
  REQUIRE(proxy.port > 0);
  std::string server = "https://127.0.0.1:" + std::to_string(proxy.port);

  ProcessResult refused = run_tailforge({"worker", "--server", server, "--token-file", cluster.token_file, "--name", "no-ca",
                                         "--work-dir", cluster.dir.file("work-no-ca")});
  CHECK(refused.exit_code == 1);
  CHECK(refused.stderr_text.find("--ca-file") != std::string::npos);

  ProcessResult worked = run_tailforge({"worker", "--server", server, "--token-file", cluster.token_file, "--ca-file",
                                        cluster.dir.file("cert.pem"), "--name", "tls", "--idle-exit", "15", "--poll", "0.2",
                                        "--work-dir", cluster.dir.file("work-tls")},
                                       300);
  CHECK_MESSAGE(worked.exit_code == 0, worked.stderr_text);
  REQUIRE_MESSAGE(cluster.daemon_exits(60), read_all(cluster.dir.file("daemon.log")));
  Result<Database> db = Database::open(cluster.db);
  REQUIRE(db.ok());
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE state <> 'done'") == 0);
  CHECK(Cluster::worker(cluster.status(), "tls")["jobs_done"] == query_int(*db, "SELECT count(*) FROM job WHERE kind = 'verify'"));
}
