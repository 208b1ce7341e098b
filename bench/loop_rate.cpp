// How much of the machine the whole loop keeps busy: `tailforge daemon --cycles N` on the embedded
// default (or a given config), with the host's busy cores sampled every half second.
//   verified/min          the verified samples over the daemon's wall time;
//   stage s per sample    every verifier stage's and evaluation stage's own seconds (slot waits not
//                         counted), summed over the run, per verified sample;
//   ideal                 cores x 60 / stage s per sample: the verified samples a minute that every
//                         core kept busy with stages would give;
//   ratio                 verified/min over the ideal, which is the stage seconds over cores x wall.
// Then each verifier stage's seconds per verified sample, its share and the CPU seconds of its
// processes per stage second (status --json's stage_seconds), so a regression shows where it is
// and a stage keeping more or less than one core busy shows too.
// The busy-core timeline (10 s buckets) shows where cores sat idle: cycle ends and the barriers
// between a cycle's steps (verify, evaluate, synthesize, verify the synthesized, evaluate again).
// Beside it, from the queue, the jobs running (split: the current cycle's samples, an early
// cycle's, evaluations, steps) and the jobs waiting for a worker in each bucket; then the worker
// seconds of each job kind, and for the verify jobs those seconds less the stage seconds they ran
// (their program's and its pairs'): slot waits and the job's own work, less the overlap of branches.
// The CPU seconds of the daemon itself and of the processes it ran, against the stage seconds,
// show how much of the busy time no stage accounts for (the daemon's own work, processes outside
// the stages, children using more than one core).
// Usage: loop_rate [--cycles 3] [--config FILE] [--tailforge PATH] [--keep]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/process.h"
#include "bench/bench_support.h"
#include "store/cycles.h"
#include "store/database.h"
#include "store/status.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const char* const kUsage = "loop_rate [--cycles N] [--config FILE] [--tailforge PATH] [--keep]";

struct CpuTimes {
  long long busy = 0;
  long long total = 0;
};

CpuTimes read_cpu_times() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  CpuTimes times;
  times.busy = user + nice + system + irq + softirq + steal;
  times.total = times.busy + idle + iowait;
  return times;
}

struct BusySample {
  double at_seconds = 0;
  double cores = 0;
};

// The user + system CPU seconds of a process itself (not its children), from /proc/<pid>/stat;
// negative when it cannot be read.
double own_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  size_t name_end = line.rfind(')');
  if (name_end == std::string::npos) return -1;
  std::istringstream fields(line.substr(name_end + 1));
  std::string field;
  long long utime = 0, stime = 0;
  for (int index = 3; fields >> field && index <= 15; ++index) {  // field 3 is the state
    if (index == 14) utime = std::atoll(field.c_str());
    if (index == 15) stime = std::atoll(field.c_str());
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A child of `parent`, or 0.
pid_t child_of(pid_t parent) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line) || line.rfind(')') == std::string::npos) continue;
    std::istringstream fields(line.substr(line.rfind(')') + 1));
    std::string state;
    long long ppid = 0;
    if (fields >> state >> ppid && ppid == parent) return static_cast<pid_t>(std::atoll(name.c_str()));
  }
  return 0;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "loop_rate: %s\n", message.c_str());
  return 1;
}

struct Options {
  int cycles = 3;
  std::string config;
  std::string tailforge;
  bool keep = false;
};

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.tailforge = (fs::canonical("/proc/self/exe").parent_path().parent_path() / "tailforge").string();
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cycles" && i + 1 < argc) options.cycles = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--config" && i + 1 < argc) options.config = fs::absolute(argv[++i]).string();
    else if (arg == "--tailforge" && i + 1 < argc) options.tailforge = argv[++i];
    else if (arg == "--keep") options.keep = true;
    else return std::nullopt;
  }
  return options;
}

// The daemon's run, with the host's busy cores sampled every half second while it ran.
struct SampledRun {
  ProcessResult process;
  std::vector<BusySample> busy;
  double daemon_own_cpu = 0;  // the last reading while the daemon ran
  int64_t started_ms = 0;     // the jobs' times are wall-clock milliseconds
};

SampledRun run_sampled_daemon(const Options& options, const fs::path& dir, const std::string& db_path, int cores,
                              ProcessSpec& spec) {
  SampledRun run;
  std::atomic<bool> running{true};
  auto started = std::chrono::steady_clock::now();
  run.started_ms = now_ms();
  std::thread sampler([&] {
    CpuTimes previous = read_cpu_times();
    pid_t daemon = 0;
    while (running) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      // run_process's keeper is this process's child, the daemon the keeper's.
      if (pid_t keeper = daemon ? 0 : child_of(getpid()); keeper != 0) daemon = child_of(keeper);
      if (double own = daemon ? own_cpu_seconds(daemon) : -1; own >= 0) {
        run.daemon_own_cpu = std::max(run.daemon_own_cpu, own);
      }
      CpuTimes now = read_cpu_times();
      long long total = now.total - previous.total;
      double share = total > 0 ? static_cast<double>(now.busy - previous.busy) / static_cast<double>(total) : 0;
      run.busy.push_back(
          {std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), share * cores});
      previous = now;
    }
  });
  spec.argv = {options.tailforge, "daemon", "--cycles", std::to_string(options.cycles), "--db", db_path, "--no-progress"};
  if (!options.config.empty()) {
    spec.argv.push_back("--config");
    spec.argv.push_back(options.config);
  }
  spec.cwd = dir;
  spec.timeout_seconds = 6 * 3600;
  run.process = run_process(spec);
  running = false;
  sampler.join();
  return run;
}

// The store's totals: verified and finished samples, and the verifier's and evaluation's stage seconds.
struct Totals {
  int64_t verified = 0;
  int64_t finished = 0;
  double verifier_seconds = 0;
  double evaluation_seconds = 0;
};

Result<Totals> read_totals(Database& db) {
  Result<Statement> totals = db.prepare(
      "SELECT (SELECT count(*) FROM sample WHERE status = 'verified'),"
      " (SELECT count(*) FROM sample WHERE status IN ('verified', 'failed')),"
      " (SELECT coalesce(sum(seconds), 0) FROM verification),"
      " (SELECT coalesce(sum(seconds), 0) FROM evaluation_stage)");
  if (!totals) return totals.error();
  if (!totals->step()) return make_error("no totals: " + totals->status().message());
  return Totals{totals->int64(0), totals->int64(1), totals->real(2), totals->real(3)};
}

// planned: the cycle's generate jobs, its samples_per_cycle and what the fill added.
void print_cycles(const std::vector<CycleRecord>& list) {
  std::printf("cycle  planned  generated  synthesized  verified  failed    seconds\n");
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    double seconds = it->finished_ms ? (*it->finished_ms - it->started_ms) / 1000.0 : 0;
    std::printf("%5lld  %7lld  %9lld  %11lld  %8lld  %6lld  %9.1f\n", static_cast<long long>(it->id),
                static_cast<long long>(it->planned), static_cast<long long>(it->generated), static_cast<long long>(it->synthesized),
                static_cast<long long>(it->verified), static_cast<long long>(it->failed), seconds);
  }
}

// Each cycle's job kinds: when the first was queued and the last finished, from the run's start
// (the queue keeps created_ms and updated_ms): the serial steps show as kinds that start only
// after the one before has ended.
Status print_cycle_steps(Database& db) {
  Result<Statement> steps = db.prepare(
      "SELECT json_extract(payload, '$.cycle') AS cycle, kind, count(*), min(created_ms), max(updated_ms)"
      " FROM job WHERE json_extract(payload, '$.cycle') IS NOT NULL GROUP BY cycle, kind ORDER BY cycle, min(created_ms)");
  if (!steps) return steps.error();
  Result<Statement> first_job = db.prepare("SELECT min(created_ms) FROM job");
  if (!first_job || !first_job->step()) return make_error("no jobs");
  int64_t origin = first_job->int64(0);
  std::printf("cycle steps (seconds from the first job: queued-finished, jobs):");
  int64_t shown_cycle = -1;
  while (steps->step()) {
    if (steps->int64(0) != shown_cycle) {
      shown_cycle = steps->int64(0);
      std::printf("\n  cycle %lld:", static_cast<long long>(shown_cycle));
    }
    std::printf("  %s %.1f-%.1f (%lld)", steps->text(1).c_str(), (steps->int64(3) - origin) / 1000.0,
                (steps->int64(4) - origin) / 1000.0, static_cast<long long>(steps->int64(2)));
  }
  std::printf("\n");
  return Status();
}

// The busy cores in 10 s buckets, printed; and over all samples, their sum and how many had fewer
// than half the cores busy.
struct BusyTotals {
  double sum = 0;
  int under_half = 0;
};

BusyTotals print_busy_cores(const std::vector<BusySample>& busy, int cores) {
  std::printf("busy cores, mean of each 10 s (of %d):\n ", cores);
  BusyTotals totals;
  for (size_t i = 0; i < busy.size();) {
    double bucket_end = (static_cast<int>(busy[i].at_seconds / 10) + 1) * 10.0;
    double sum = 0;
    int n = 0;
    for (; i < busy.size() && busy[i].at_seconds < bucket_end; ++i, ++n) {
      sum += busy[i].cores;
      totals.sum += busy[i].cores;
      if (busy[i].cores < cores / 2.0) ++totals.under_half;
    }
    std::printf(" %.0f", n ? sum / n : 0);
  }
  std::printf("\n");
  return totals;
}

// The same buckets from the queue: jobs running (leased until done) and jobs waiting for a
// worker. Idle cores beside waiting jobs point at something the jobs wait for (slots, locks,
// the GPU driver); idle cores with none waiting, at the cycle's order of steps.
Status print_job_buckets(Database& db, const std::vector<CycleRecord>& list, int64_t started_ms, double wall) {
  size_t buckets = static_cast<size_t>(wall / 10) + 1;
  std::vector<double> jobs_running(buckets), jobs_waiting(buckets);
  auto add_interval = [&](std::vector<double>& into, double from, double to) {
    for (size_t b = static_cast<size_t>(std::max(0.0, from) / 10); b < buckets && b * 10.0 < to; ++b) {
      double overlap = std::min(to, (b + 1) * 10.0) - std::max(from, b * 10.0);
      if (overlap > 0) into[b] += overlap / 10.0;
    }
  };
  // The running jobs split by what they are: the current cycle's samples (generate, verify), an
  // early cycle's (started beside it, its fill), evaluations, and the serial steps. A job counts
  // as the current cycle's when no earlier cycle was still open at its lease.
  enum Kind { kCurrent, kEarly, kEvaluation, kStep, kKinds };
  std::vector<std::vector<double>> running_by_kind(kKinds, std::vector<double>(buckets));
  auto current_at = [&](int64_t at_ms) {
    int64_t current = -1;
    for (const CycleRecord& cycle : list) {
      if (cycle.started_ms <= at_ms && (!cycle.finished_ms || *cycle.finished_ms > at_ms) &&
          (current < 0 || cycle.id < current)) {
        current = cycle.id;
      }
    }
    return current;
  };
  Result<Statement> job_times = db.prepare(
      "SELECT created_ms, started_ms, CASE WHEN state IN ('done', 'dead') THEN updated_ms END, kind,"
      " json_extract(payload, '$.cycle') FROM job WHERE started_ms IS NOT NULL");
  if (!job_times) return job_times.error();
  while (job_times->step()) {
    double queued = (job_times->int64(0) - started_ms) / 1000.0, leased = (job_times->int64(1) - started_ms) / 1000.0;
    double ended = job_times->optional_int64(2) ? (*job_times->optional_int64(2) - started_ms) / 1000.0 : wall;
    add_interval(jobs_waiting, queued, leased);
    add_interval(jobs_running, leased, ended);
    std::string kind = job_times->text(3);
    Kind group = kStep;
    if (kind == "evaluate") group = kEvaluation;
    else if (kind == "generate" || kind == "verify") {
      std::optional<int64_t> cycle = job_times->optional_int64(4);
      group = cycle && *cycle > current_at(job_times->int64(1)) ? kEarly : kCurrent;
    }
    add_interval(running_by_kind[group], leased, ended);
  }
  std::printf("jobs running, mean of each 10 s:\n ");
  for (double n : jobs_running) std::printf(" %.0f", n);
  const char* kind_names[kKinds] = {"the current cycle's samples", "an early cycle's samples (its fill too)",
                                    "evaluations", "steps (evaluate_models, synthesize, retrain)"};
  for (int kind = 0; kind < kKinds; ++kind) {
    std::printf("\n  of them %s:\n ", kind_names[kind]);
    for (double n : running_by_kind[kind]) std::printf(" %.0f", n);
  }
  std::printf("\njobs waiting for a worker, mean of each 10 s:\n ");
  for (double n : jobs_waiting) std::printf(" %.0f", n);
  std::printf("\n");
  return Status();
}

// A worker on a verify job is in a stage, waiting for a compile or GPU slot, or in the daemon's
// own work (storing results); idle cores beside busy workers point at the slot waits. The chain's
// branches run side by side, so the difference is a lower bound on that time. A verify
// job's stages are its sample's and those of the pairs cut from it (compiled_to), which the same
// job ran; a pair that two programs yield counts under both.
Status print_worker_seconds(Database& db) {
  Result<Statement> held = db.prepare(
      "SELECT j.kind, count(*), coalesce(sum(j.updated_ms - j.started_ms), 0) / 1000.0,"
      " coalesce(sum(v.seconds), 0) FROM job j LEFT JOIN (SELECT owner, sum(seconds) AS seconds FROM"
      " (SELECT sample_id AS owner, seconds FROM verification UNION ALL SELECT l.parent_id, v.seconds FROM lineage l"
      " JOIN verification v ON v.sample_id = l.child_id WHERE l.relation = 'compiled_to') GROUP BY owner) v"
      " ON j.kind = 'verify' AND v.owner = json_extract(j.payload, '$.sample_id')"
      " WHERE j.state = 'done' AND j.started_ms IS NOT NULL GROUP BY j.kind ORDER BY 3 DESC");
  if (!held) return held.error();
  std::printf("worker seconds by job kind (jobs; seconds from lease to done):\n");
  while (held->step()) {
    std::printf("  %-16s %6lld jobs %8.0f s", held->text(0).c_str(), static_cast<long long>(held->int64(1)),
                held->real(2));
    if (held->text(0) == "verify") {
      std::printf(", %.0f s of stages (its program's and its pairs'), %.0f s less (slot waits and the job's own work,"
                  " less the overlap of branches run side by side): %.2f s a job",
                  held->real(3), held->real(2) - held->real(3),
                  (held->real(2) - held->real(3)) / std::max<double>(1, static_cast<double>(held->int64(1))));
    }
    std::printf("\n");
  }
  return Status();
}

// The verified rate against the ideal, and each verifier stage's seconds per verified sample.
Status print_rates(Database& db, const Totals& totals, double wall, int cores) {
  double stage_seconds = totals.verifier_seconds + totals.evaluation_seconds;
  double verifier_seconds = totals.verifier_seconds;
  double per_sample = stage_seconds / static_cast<double>(totals.verified);
  double ideal = cores * 60.0 / per_sample;
  double rate = totals.verified * 60.0 / wall;
  std::printf("verified %lld of %lld finished samples in %.1f s: %.1f verified/min\n",
              static_cast<long long>(totals.verified), static_cast<long long>(totals.finished), wall, rate);
  std::printf("stage seconds: verifier %.0f, evaluation %.0f; %.2f per verified sample; ideal = %d x 60 / %.2f = "
              "%.1f/min\n", verifier_seconds, totals.evaluation_seconds, per_sample, cores, per_sample, ideal);
  std::printf("ratio (verified/min / ideal):  %.2f   target >= 0.9   %s\n", rate / ideal, rate / ideal >= 0.9 ? "PASS" : "BELOW");
  Result<StatusSummary> status = query_status(db);
  if (!status) return status.error();
  std::printf("the verifier stages' processes used %.0f CPU seconds in their %.0f seconds (%.2f)\n",
              status->stage_cpu_seconds, verifier_seconds, status->stage_cpu_seconds / std::max(verifier_seconds, 1e-9));
  std::printf("verifier stage seconds per verified sample, by stage (share of the verifier's; CPU seconds of its\n"
              "processes per stage second; runs, cached):\n");
  for (const StageSeconds& stage : status->stage_seconds_by_stage) {
    if (stage.seconds <= 0) continue;
    std::printf("  %-28s %7.3f  %5.1f%%  cpu %.2f  (%lld, %lld)\n", stage.stage.c_str(),
                stage.seconds / static_cast<double>(totals.verified), 100.0 * stage.seconds / std::max(verifier_seconds, 1e-9),
                stage.cpu_seconds / stage.seconds, static_cast<long long>(stage.runs), static_cast<long long>(stage.cached));
  }
  return Status();
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options = parse_options(argc, argv);
  if (!options) return bench_usage(kUsage);
  if (!fs::exists(options->tailforge)) {
    return fail("no tailforge binary at " + options->tailforge + " (pass --tailforge PATH)");
  }
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  fs::path dir = bench_run_dir("loop-rate");
  fs::create_directories(dir);
  std::string db_path = (dir / "loop.db").string();
  std::printf("loop_rate: %d cycles of `tailforge daemon` on %s, %d cores\n", options->cycles,
              options->config.empty() ? "the embedded default" : options->config.c_str(), cores);
  std::fflush(stdout);

  ProcessSpec spec;
  SampledRun run = run_sampled_daemon(*options, dir, db_path, cores, spec);
  const ProcessResult& process = run.process;
  if (!process.succeeded()) {
    return fail(command_line(spec.argv) + ": exit " + std::to_string(process.exit_code) + " " + process.spawn_error +
                process.stderr_text.substr(process.stderr_text.size() > 2000 ? process.stderr_text.size() - 2000 : 0));
  }

  Result<Database> db = Database::open(db_path);
  if (!db) return fail(db.message());
  Result<Totals> totals = read_totals(*db);
  if (!totals) return fail(totals.message());
  double stage_seconds = totals->verifier_seconds + totals->evaluation_seconds;
  double wall = process.wall_seconds;
  if (totals->verified == 0) return fail("no verified samples");

  Result<std::vector<CycleRecord>> list = list_cycles(*db, 1000000);
  if (!list) return fail(list.message());
  print_cycles(*list);
  if (Status s = print_cycle_steps(*db); !s) return fail(s.message());
  BusyTotals busy = print_busy_cores(run.busy, cores);
  if (Status s = print_job_buckets(*db, *list, run.started_ms, wall); !s) return fail(s.message());
  if (Status s = print_worker_seconds(*db); !s) return fail(s.message());
  double busy_share = run.busy.empty() ? 0 : busy.sum / static_cast<double>(run.busy.size()) / cores;
  std::printf("host CPU busy %.0f%% of the run; fewer than half the cores busy for %.0f s of %.0f s\n",
              busy_share * 100, busy.under_half * 0.5, wall);
  std::printf("CPU seconds: busy cores %.0f; the daemon's own %.0f, the processes it ran %.0f; stage seconds %.0f "
              "(processes / stage seconds %.2f)\n",
              busy_share * cores * wall, run.daemon_own_cpu, process.cpu_seconds - run.daemon_own_cpu, stage_seconds,
              (process.cpu_seconds - run.daemon_own_cpu) / std::max(stage_seconds, 1e-9));
  if (Status s = print_rates(*db, *totals, wall, cores); !s) return fail(s.message());
  if (options->keep) {
    std::printf("kept %s\n", dir.c_str());
  } else {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  return 0;
}
