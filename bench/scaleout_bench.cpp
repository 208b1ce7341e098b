// Scale-out: verified samples per minute of `tailforge daemon --cycles C` on one workload, run as
//   single-process   the daemon verifies with its own threads (workers.local_verify true, compile
//                    slots at their default: one per core), no HTTP listener; the baseline;
//   N workers        the daemon with workers.local_verify false, listening on a free loopback port,
//                    and N local `tailforge worker --jobs J` processes (--jobs-per-worker, default 1) that lease its verify jobs.
// Every configuration gets a fresh database, verifier cache and worker work dirs, the same seed and
// the same configuration otherwise (synthesis, evaluation and retraining off, one cycle in flight,
// no fill). verified/min = status --json "verified" over the wall time from the daemon's start to
// its exit; the ratio is that over the single-process daemon's. Worker spread: each worker's
// jobs_done and jobs_failed from status --json. Each configuration is bounded by --timeout-minutes.
// Build: cmake --build build --target scaleout_bench (needs build/tailforge, which it copies into its run folder).
// Usage: build/bench/scaleout_bench [--samples 16] [--cycles 1] [--workers 1,2,4] [--jobs-per-worker 1] [--seed 1] [--timeout-minutes 20]
//                                   [--tailforge PATH] [--keep DIR]
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/process.h"
#include "base/result.h"
#include "bench/daemon_process.h"

using namespace tailforge;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

volatile sig_atomic_t interrupted = 0;
void on_interrupt(int) { interrupted = 1; }

struct BenchOptions {
  int samples = 16;
  int cycles = 1;
  std::vector<int> worker_counts = {1, 2, 4};
  int jobs_per_worker = 1;  // each worker's --jobs
  int seed = 1;
  double timeout_minutes = 20;
  std::string tailforge = default_tailforge_binary();
  std::string keep_dir;  // empty: a temporary folder, removed at the end
};

struct WorkerSpread {
  std::string name;
  int64_t jobs_done = 0;
  int64_t jobs_failed = 0;
};

struct Measurement {
  std::string config;
  bool ok = false;
  std::string error;
  int64_t verified = 0;
  double seconds = 0;
  nlohmann::json jobs_by_state;
  std::vector<WorkerSpread> workers;
  std::vector<std::string> notes;  // e.g. a worker that exited before the daemon did
};

// One started child: its name for messages, its log, and once reaped its exit status.
struct Child {
  std::string name;
  pid_t pid = -1;
  std::string log;
  std::optional<int> exit_status;  // 128 + signal when killed
};

// The processes one configuration started. Whatever still runs when it goes away gets SIGTERM,
// then SIGKILL after kGraceSeconds, so no path out of a configuration leaves a child behind.
class ChildProcesses {
 public:
  static constexpr double kGraceSeconds = 5;
  ChildProcesses() = default;
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;
  ~ChildProcesses() { stop_all(); }

  Result<Child*> start(const std::string& name, const std::vector<std::string>& argv, const std::string& log) {
    pid_t pid = spawn_daemon(argv, log);
    if (pid < 0) return make_error("cannot start " + command_line(argv));
    children_.push_back(Child{name, pid, log, std::nullopt});
    return &children_.back();
  }

  // Reaps `child` if it has exited; true when it has.
  static bool exited(Child& child) {
    if (child.exit_status) return true;
    int status = 0;
    if (waitpid(child.pid, &status, WNOHANG) != child.pid) return false;
    child.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }

  std::deque<Child>& children() { return children_; }

  void stop_all() {
    for (Child& child : children_) {
      if (!exited(child)) kill(child.pid, SIGTERM);
    }
    auto deadline = Clock::now() + std::chrono::duration<double>(kGraceSeconds);
    while (Clock::now() < deadline && !all_exited()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (Child& child : children_) {
      if (exited(child)) continue;
      std::fprintf(stderr, "scaleout: %s (pid %d) still running %.0f s after SIGTERM: SIGKILL\n", child.name.c_str(),
                   child.pid, kGraceSeconds);
      kill(child.pid, SIGKILL);
      int status = 0;
      waitpid(child.pid, &status, 0);
      child.exit_status = 128 + SIGKILL;
    }
  }

 private:
  bool all_exited() {
    bool all = true;
    for (Child& child : children_) all = exited(child) && all;
    return all;
  }

  std::deque<Child> children_;  // a deque: start() hands out pointers that must stay valid
};

std::string log_tail(const std::string& path, size_t bytes = 1500) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() > bytes ? "..." + all.substr(all.size() - bytes) : all;
}

// A loopback TCP port nobody listens on now (bound to port 0, then released for the daemon).
Result<int> free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return make_error("socket: " + std::string(strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
               getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  std::string why = bound ? "" : strerror(errno);
  close(fd);
  if (!bound) return make_error("binding a free loopback port: " + why);
  return static_cast<int>(ntohs(address.sin_port));
}

// Writes a random 64-hex-digit token to `path`, readable by its owner only.
Status write_token_file(const std::string& path) {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 8; ++i) {
    char chunk[9];
    std::snprintf(chunk, sizeof chunk, "%08x", static_cast<unsigned>(random()));
    token += chunk;
  }
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return make_error("cannot create " + path + ": " + strerror(errno));
  token += "\n";
  bool written = write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size());
  close(fd);
  if (!written) return make_error("cannot write " + path);
  return {};
}

// Waits until the daemon answers GET /healthz; an error when it exits first, the deadline passes
// or the bench is interrupted.
Status wait_for_health(int port, Child& daemon, Clock::time_point deadline) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(0, 200000);
  client.set_read_timeout(2, 0);
  while (true) {
    if (httplib::Result reply = client.Get("/healthz"); reply && reply->status == 200) return {};
    if (ChildProcesses::exited(daemon)) {
      return make_error("the daemon exited (status " + std::to_string(*daemon.exit_status) +
                        ") before answering /healthz:\n" + log_tail(daemon.log));
    }
    if (interrupted) return make_error("interrupted");
    if (Clock::now() > deadline) return make_error("timed out waiting for the daemon's /healthz");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Reads `tailforge status --db DB --json` into the measurement: verified, jobs by state, workers.
Status read_status(const std::string& tailforge, const std::string& db_path, Measurement& measured) {
  ProcessSpec spec;
  spec.argv = {tailforge, "status", "--db", db_path, "--json"};
  spec.timeout_seconds = 120;
  ProcessResult process = run_process(spec);
  if (!process.succeeded()) {
    return make_error(command_line(spec.argv) + (process.timed_out ? ": timed out" : ": failed") + " " +
                      process.spawn_error + process.stderr_text);
  }
  nlohmann::json status = nlohmann::json::parse(process.stdout_text, nullptr, false);
  if (status.is_discarded() || !status.contains("verified")) {
    return make_error(command_line(spec.argv) + ": no JSON with \"verified\"");
  }
  measured.verified = status["verified"].get<int64_t>();
  measured.jobs_by_state = status.value("jobs_by_state", nlohmann::json::object());
  for (const nlohmann::json& worker : status.value("workers", nlohmann::json::array())) {
    measured.workers.push_back(
        {worker.value("name", "?"), worker.value("jobs_done", int64_t{0}), worker.value("jobs_failed", int64_t{0})});
  }
  return {};
}

std::string config_name(int workers) {
  if (workers == 0) return "single-process";
  return std::to_string(workers) + (workers == 1 ? " worker" : " workers");
}

// The shared workload; with workers > 0 also the scale-out keys (no local verification, the token).
nlohmann::json configuration(const BenchOptions& options, const fs::path& dir, int workers) {
  nlohmann::json config = {
      {"daemon",
       {{"samples_per_cycle", options.samples}, {"cycles_in_flight", 1}, {"fill_samples", 0}, {"seed", options.seed}}},
      {"synth", {{"enabled", false}}},
      {"eval", {{"enabled", false}}},
      {"retrain", {{"enabled", false}}},
      {"verifier", {{"cache_dir", (dir / "verifier-cache").string()}}}};
  if (workers > 0) {
    config["workers"] = {{"local_verify", false}, {"lease_seconds", 10}};
    config["http"] = {{"token_file", (dir / "token").string()}};
  }
  return config;
}

// Runs one configuration in `dir`: the daemon, and with workers > 0 that many worker processes.
Measurement run_configuration(const BenchOptions& options, const fs::path& dir, int workers) {
  Measurement measured;
  measured.config = config_name(workers);
  auto failed = [&](const std::string& why) {
    measured.error = why;
    return measured;
  };
  std::error_code ignored;
  fs::remove_all(dir, ignored);  // a kept folder of an earlier run: start fresh all the same
  fs::create_directories(dir);
  std::string config_path = (dir / "config.json").string();
  std::string db_path = (dir / "bench.db").string();
  std::ofstream(config_path) << configuration(options, dir, workers).dump(2);
  std::vector<std::string> daemon_argv = {options.tailforge, "daemon", "--cycles", std::to_string(options.cycles)};
  daemon_argv.insert(daemon_argv.end(), {"--db", db_path, "--config", config_path, "--no-progress"});
  int port = 0;
  if (workers > 0) {
    if (Status token = write_token_file((dir / "token").string()); !token) return failed(token.message());
    Result<int> free_port = free_loopback_port();
    if (!free_port) return failed(free_port.message());
    port = *free_port;
    daemon_argv.insert(daemon_argv.end(), {"--listen", "127.0.0.1:" + std::to_string(port)});
  }

  ChildProcesses children;
  auto started = Clock::now();
  Clock::time_point deadline = started + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options.timeout_minutes * 60));
  Result<Child*> daemon = children.start("daemon", daemon_argv, (dir / "daemon.log").string());
  if (!daemon) return failed(daemon.message());
  if (workers > 0) {
    if (Status up = wait_for_health(port, **daemon, deadline); !up) return failed(up.message());
    std::string server = "http://127.0.0.1:" + std::to_string(port);
    // A worker outlives a vanished bench by at most the run's bound: it exits once idle that long.
    std::string idle_exit = std::to_string(static_cast<int>(options.timeout_minutes * 60));
    for (int i = 1; i <= workers; ++i) {
      std::string name = "w" + std::to_string(i);
      Result<Child*> worker = children.start(
          name,
          {options.tailforge, "worker", "--server", server, "--token-file", (dir / "token").string(), "--name", name,
           "--idle-exit", idle_exit, "--jobs", std::to_string(options.jobs_per_worker), "--work-dir", (dir / ("work-" + name)).string()},
          (dir / (name + ".log")).string());
      if (!worker) return failed(worker.message());
    }
  }

  // Waits for the daemon's own exit; a worker that exits first is noted, all of them exiting fails.
  std::set<std::string> noted_exits;
  while (!ChildProcesses::exited(**daemon)) {
    if (interrupted) return failed("interrupted");
    if (Clock::now() > deadline) {
      char why[160];
      std::snprintf(why, sizeof why,
                    "timed out: the daemon had not finished after %g minutes (--timeout-minutes); "
                    "stopped it and its workers",
                    options.timeout_minutes);
      return failed(why);
    }
    int running_workers = 0;
    for (Child& child : children.children()) {
      if (&child == *daemon) continue;
      if (!ChildProcesses::exited(child)) {
        ++running_workers;
      } else if (noted_exits.insert(child.name).second) {
        measured.notes.push_back(child.name + " exited (status " + std::to_string(*child.exit_status) +
                                 ") before the daemon:\n" + log_tail(child.log, 600));
      }
    }
    if (workers > 0 && running_workers == 0) return failed("every worker exited before the daemon finished");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  measured.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (*(*daemon)->exit_status != 0) {
    return failed("the daemon exited with status " + std::to_string(*(*daemon)->exit_status) + ":\n" +
                  log_tail((*daemon)->log));
  }
  children.stop_all();  // the workers, idle now; their counts are in the database already
  if (Status status = read_status(options.tailforge, db_path, measured); !status) return failed(status.message());
  measured.ok = true;
  return measured;
}

std::optional<BenchOptions> parse_options(int argc, char** argv) {
  BenchOptions options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    try {
      if (flag == "--samples") {
        options.samples = std::max(1, std::stoi(value));
      } else if (flag == "--cycles") {
        options.cycles = std::max(1, std::stoi(value));
      } else if (flag == "--seed") {
        options.seed = std::stoi(value);
      } else if (flag == "--timeout-minutes") {
        options.timeout_minutes = std::max(0.1, std::stod(value));
      } else if (flag == "--tailforge") {
        options.tailforge = fs::absolute(value).string();
      } else if (flag == "--keep") {
        options.keep_dir = fs::absolute(value).string();
      } else if (flag == "--jobs-per-worker") {
        options.jobs_per_worker = std::max(1, std::stoi(value));
      } else if (flag == "--workers") {
        options.worker_counts.clear();
        std::stringstream list(value);
        for (std::string item; std::getline(list, item, ',');)
          options.worker_counts.push_back(std::max(1, std::stoi(item)));
      } else {
        return std::nullopt;
      }
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  if (argc % 2 == 0) return std::nullopt;  // a flag without its value
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<BenchOptions> parsed = parse_options(argc, argv);
  if (!parsed) {
    std::fprintf(stderr,
                 "usage: scaleout_bench [--samples 16] [--cycles 1] [--workers 1,2,4] [--jobs-per-worker 1] [--seed 1] "
                 "[--timeout-minutes 20] [--tailforge PATH] [--keep DIR]\n");
    return 2;
  }
  BenchOptions options = *parsed;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  bool keep = !options.keep_dir.empty();
  fs::path dir =
      keep ? fs::path(options.keep_dir) : fs::temp_directory_path() / ("tf-scaleout-" + std::to_string(getpid()));
  std::string source_binary = options.tailforge;
  if (!enter_run_dir(dir, source_binary)) return 1;
  // Every configuration runs this copy, so a rebuild of the build tree meanwhile cannot mix binaries.
  options.tailforge = (dir / "tailforge").string();
  std::error_code copy_error;
  fs::copy_file(source_binary, options.tailforge, fs::copy_options::overwrite_existing, copy_error);
  if (copy_error) {
    std::fprintf(stderr, "scaleout: cannot copy %s into %s: %s\n", source_binary.c_str(), dir.c_str(),
                 copy_error.message().c_str());
    leave_run_dir(dir, keep);
    return 1;
  }

  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf(
      "scaleout: verified samples per minute of `tailforge daemon --cycles %d`, %d samples per cycle, seed %d, "
      "on %d cores;\n  single-process: local verification, compile_slots = cores (%d); N workers: local_verify "
      "false + N local `tailforge worker --jobs %d`;\n  wall time = daemon start to exit; each configuration "
      "bounded by %g minutes\n",
      options.cycles, options.samples, options.seed, cores, cores, options.jobs_per_worker, options.timeout_minutes);
  std::fflush(stdout);

  std::vector<int> configurations = {0};
  configurations.insert(configurations.end(), options.worker_counts.begin(), options.worker_counts.end());
  std::vector<Measurement> results;
  auto total_started = Clock::now();
  for (int workers : configurations) {
    if (interrupted) break;
    results.push_back(run_configuration(options, dir / ("config-" + std::to_string(workers)), workers));
  }
  double total_seconds = std::chrono::duration<double>(Clock::now() - total_started).count();

  auto rate = [](const Measurement& m) { return m.seconds > 0 ? 60.0 * m.verified / m.seconds : 0; };
  const Measurement& baseline = results.front();
  std::printf("%-16s %9s %9s %13s %24s\n", "config", "verified", "seconds", "verified/min", "ratio_to_single_process");
  bool all_ok = true;
  for (const Measurement& m : results) {
    if (!m.ok) {
      all_ok = false;
      std::printf("%-16s FAILED: %s\n", m.config.c_str(), m.error.c_str());
      continue;
    }
    char ratio[32] = "-";
    if (baseline.ok && rate(baseline) > 0) std::snprintf(ratio, sizeof ratio, "%.2f", rate(m) / rate(baseline));
    std::printf("%-16s %9lld %9.1f %13.2f %24s\n", m.config.c_str(), static_cast<long long>(m.verified), m.seconds,
                rate(m), ratio);
  }
  std::printf(
      "worker spread (status --json workers: jobs_done/jobs_failed; \"local\" is the daemon's own threads) "
      "and jobs_by_state:\n");
  for (const Measurement& m : results) {
    if (!m.ok) continue;
    std::string spread;
    for (const WorkerSpread& w : m.workers) {
      spread += (spread.empty() ? "" : ", ") + w.name + " " + std::to_string(w.jobs_done) + "/" +
                std::to_string(w.jobs_failed);
    }
    std::printf("  %-16s %s   jobs %s\n", m.config.c_str(), spread.c_str(), m.jobs_by_state.dump().c_str());
    for (const std::string& note : m.notes) std::printf("    note: %s\n", note.c_str());
  }
  for (const Measurement& m : results) {
    if (m.ok && baseline.ok && m.verified != baseline.verified) {
      std::printf("note: %s verified %lld samples, the single-process daemon %lld: the workloads' outcomes differ\n",
                  m.config.c_str(), static_cast<long long>(m.verified), static_cast<long long>(baseline.verified));
    }
  }
  std::printf("total %.0f s%s\n", total_seconds, interrupted ? " (interrupted)" : "");
  std::error_code ignored;
  fs::remove(options.tailforge, ignored);  // the copy; a kept folder keeps databases and logs
  leave_run_dir(dir, keep);
  if (interrupted) return 130;
  return all_ok ? 0 : 1;
}
