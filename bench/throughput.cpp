// The daemon's verified samples per minute against the same toolchain commands run by
// `xargs -P <cores>` on the same programs, with a cold and with a warm compile cache.
//   1. daemon cold: `tailforge daemon --cycles 1` on a fresh database (synthesis, retraining and
//      model evaluation off: the replay has only the chains' work; compile_slots = cores), timed by
//      the wall clock;
//   2. xargs: the same programs verified once in-process (each chain and its kernel pairs, as the
//      daemon's verify job does) with a launch observer recording every child process (argv, cwd);
//      one shell line per program replays its commands in launch order, and
//      `xargs -P <cores> -n 1 sh -c` runs the lines;
//   3. daemon warm: the dataset cleared, the compile cache kept, the same cycle run again;
//   4. ideal: cores x 60 / (the stage seconds the cold run recorded per program), the programs a
//      minute that every core kept busy with verifier stages would finish, against the cold run's.
// With R repetitions, cold daemon runs (each on a fresh database) alternate with xargs replays,
// then R warm runs follow; the medians give the ratios.
// Usage: throughput [samples_per_cycle=8] [repetitions=1] [seed=7] [tailforge binary] [--keep]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/ptx2cuda/ptx_pairs.h"
#include "agents/sass2rdna3/kernel_pairs.h"
#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "base/process.h"
#include "policies/config.h"
#include "store/cache.h"
#include "store/cycles.h"
#include "store/maintenance.h"
#include "store/samples.h"
#include "store/status.h"
#include "verifier/chain.h"
#include "verifier/stage_runner.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

struct DaemonRun {
  bool ok = false;
  double wall_seconds = 0;
  double cycle_seconds = 0;  // the cycle row's started_ms .. finished_ms
  int64_t samples = 0;
  int64_t verified = 0;
  int64_t programs_finished = 0;  // cuda2hip samples verified or failed
  double stage_seconds = 0;       // every verifier stage's own seconds (slot waits not counted)
  std::set<std::string> sample_ids;
  std::string error;
};

struct Program {
  std::string id;
  std::string file;
  std::vector<ProcessSpec> commands;  // toolchain and sandboxed launches, in order
  int sandboxed = 0;                  // of them, program runs under bwrap (GPU programs, x86 tests)
  bool verified = false;
  int verified_pairs = 0;             // its kernel pairs (ptx2cuda, sass2rdna3) that passed their checks
};

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string extension_for(const std::string& language) {
  if (language == "c") return ".c";
  if (language == "hip") return ".hip";
  if (language == "rdna3" || language == "sass") return ".s";
  return ".cu";
}

DaemonRun run_daemon_cycle(const std::string& tailforge, const std::string& db_path, const std::string& config_path) {
  DaemonRun run;
  ProcessSpec spec;
  spec.argv = {tailforge, "daemon", "--cycles", "1", "--db", db_path, "--config", config_path, "--no-progress"};
  spec.cwd = fs::path(db_path).parent_path();
  spec.timeout_seconds = 3600;
  ProcessResult process = run_process(spec);
  run.wall_seconds = process.wall_seconds;
  if (!process.succeeded()) {
    run.error = command_line(spec.argv) + ": exit " + std::to_string(process.exit_code) + " " + process.spawn_error +
                process.stderr_text.substr(process.stderr_text.size() > 2000 ? process.stderr_text.size() - 2000 : 0);
    return run;
  }
  Result<Database> db = Database::open(db_path);
  if (!db) return run.error = db.message(), run;
  Result<StatusSummary> status = query_status(*db);
  if (!status) return run.error = status.message(), run;
  run.samples = status->samples;
  run.verified = status->verified;
  Result<Statement> work = db->prepare(
      "SELECT (SELECT count(*) FROM sample WHERE track = 'cuda2hip' AND status IN ('verified', 'failed')),"
      " (SELECT coalesce(sum(seconds), 0) FROM verification)");
  if (!work) return run.error = work.message(), run;
  if (work->step()) {
    run.programs_finished = work->int64(0);
    run.stage_seconds = work->real(1);
  }
  if (status->last_cycle && status->last_cycle->finished_ms) {
    run.cycle_seconds = (*status->last_cycle->finished_ms - status->last_cycle->started_ms) / 1000.0;
  }
  Result<std::vector<std::string>> ids = sample_ids_with_prefix(*db, "", 1000000);
  if (!ids) return run.error = ids.message(), run;
  run.sample_ids.insert(ids->begin(), ids->end());
  run.ok = true;
  return run;
}

// Writes every program of the database (its cuda2hip samples) to <dir>/<id16>/program.<ext>, as
// the daemon does.
Result<std::vector<Program>> write_programs(const std::string& db_path, const std::string& dir) {
  Result<Database> db = Database::open(db_path);
  if (!db) return db.error();
  Result<std::vector<std::string>> ids = sample_ids_with_prefix(*db, "", 1000000);
  if (!ids) return ids.error();
  std::vector<Program> programs;
  for (const std::string& id : *ids) {
    Result<std::optional<Sample>> sample = find_sample(*db, id);
    if (!sample) return sample.error();
    // The derived tracks' samples (ptx2cuda, sass2rdna3 pairs) are made by verifying a program.
    if (!sample->has_value() || (*sample)->track != "cuda2hip") continue;
    fs::path folder = fs::path(dir) / id.substr(0, 16);
    fs::create_directories(folder);
    Program program{.id = id, .file = (folder / ("program" + extension_for((*sample)->language))).string()};
    std::ofstream out(program.file, std::ios::binary);
    out << (*sample)->text;
    if (!out) return make_error("cannot write " + program.file);
    programs.push_back(std::move(program));
  }
  return programs;
}

// The program a launch belongs to: the one whose scratch root its working directory or an
// argument lies under (a chain runs its branches on several threads, so a thread says nothing).
Program* program_of(std::vector<Program>& programs, const std::vector<std::string>& roots, const ProcessSpec& spec) {
  for (size_t i = 0; i < roots.size(); ++i) {
    if (spec.cwd.rfind(roots[i], 0) == 0) return &programs[i];
    for (const std::string& arg : spec.argv) {
      if (arg.find(roots[i]) != std::string::npos) return &programs[i];
    }
  }
  return nullptr;
}

// Verifies every program as the daemon's verify handler does (no cache, scratch kept), recording
// each program's child processes in launch order. Runs on `threads` threads.
Status record_commands(std::vector<Program>& programs, const nlohmann::json& config, const std::string& scratch,
                       int threads) {
  Result<VerifierOptions> verifier = verifier_options_from_json(config);
  if (!verifier) return verifier.error();
  Result<HipifyRules> rules = load_hipify_rules(data_path(config["translator"]["rules_file"].get<std::string>()));
  if (!rules) return rules.error();
  ChainOptions options;
  options.verifier = *verifier;
  options.verifier.keep_scratch = true;
  options.track = "cuda2hip";
  options.translate = [&rules](const std::string& cuda) {
    TranslationResult translated = translate_cuda_to_hip(*rules, cuda);
    return TranslateOutcome{translated.ok, translated.hip_source, translated.category, translated.message};
  };
  (void)detected_toolchains();  // probes run once, before the recording
  (void)sandbox_self_test(options.verifier.sandbox);
  // Each program's chain gets a scratch root of its own, which names it in every launch.
  std::vector<std::string> roots;
  for (size_t i = 0; i < programs.size(); ++i) {
    roots.push_back(scratch + "/p" + std::to_string(i) + "/");
    fs::create_directories(roots.back());
    fs::permissions(roots.back(), fs::perms::all, fs::perm_options::add);
  }
  std::mutex recording;
  int64_t unattributed = 0;
  std::string first_unattributed;
  set_process_launch_observer([&](const ProcessSpec& spec) {
    std::lock_guard lock(recording);
    Program* program = program_of(programs, roots, spec);
    if (!program) {
      if (unattributed++ == 0) first_unattributed = command_line(spec.argv) + " (in " + spec.cwd + ")";
      return;
    }
    if (fs::path(spec.argv.at(0)).filename() == "bwrap") ++program->sandboxed;
    program->commands.push_back(spec);
  });
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < programs.size(); i = next++) {
      ChainOptions own = options;
      own.verifier.scratch_root = roots[i];
      ChainResult result = verify_file(programs[i].file, own);
      const StageResult* translated = result.stage("translate.hip");
      bool any_ok = std::any_of(result.stages.begin(), result.stages.end(), [](const StageResult& s) { return s.ok(); });
      programs[i].verified = result.ok && any_ok && translated && translated->ok();
      if (!programs[i].verified) continue;
      // As the daemon's verify job: a verified program's kernel pairs of both derived tracks.
      own.cache_db = nullptr;
      KernelPairing kernels = pair_kernels(result, own, roots[i] + "kernels");
      PtxPairing ptx = pair_ptx_kernels(read_text_file_or_empty(programs[i].file), result, own, roots[i] + "ptx2cuda");
      for (const KernelPair& pair : kernels.pairs) programs[i].verified_pairs += pair.ok;
      for (const PtxPair& pair : ptx.pairs) programs[i].verified_pairs += pair.ok;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& thread : pool) thread.join();
  set_process_launch_observer(nullptr);
  if (unattributed > 0) {
    std::printf("not replayed: %lld launches outside every program's scratch root (helpers such as c++filt), the first: %s\n",
                static_cast<long long>(unattributed), first_unattributed.c_str());
  }
  return {};
}

std::string replay_line(const Program& program) {
  std::string line;
  for (const ProcessSpec& spec : program.commands) {
    if (!line.empty()) line += " ; ";
    if (!spec.cwd.empty()) line += "cd " + shell_quote(spec.cwd) + " && ";
    if (!spec.stdin_text.empty()) line += "printf '%s' " + shell_quote(spec.stdin_text) + " | ";
    if (!spec.extra_env.empty()) {
      line += "env";
      for (const auto& [key, value] : spec.extra_env) line += " " + key + "=" + shell_quote(value);
      line += " ";
    }
    // A sandboxed run drops to the sandbox's user as the daemon's child does.
    if (spec.run_as_uid >= 0) {
      line += "setpriv --reuid " + std::to_string(spec.run_as_uid) + " --regid " + std::to_string(spec.run_as_gid) +
              " --clear-groups ";
    }
    for (size_t i = 0; i < spec.argv.size(); ++i) line += (i ? " " : "") + shell_quote(spec.argv[i]);
    line += " >/dev/null 2>&1";
  }
  return line.empty() ? "true" : line;
}

double per_minute(int64_t count, double seconds) { return seconds > 0 ? 60.0 * count / seconds : 0; }

void print_ratio(const char* name, double ratio, double target) {
  std::printf("%-5s ratio (daemon / xargs, verified per minute): %6.2f   target >= %-4g %s\n", name, ratio, target,
              ratio >= target ? "PASS" : "BELOW");
}


ProcessResult replay_with_xargs(const std::string& replay_file, int cores) {
  ProcessSpec xargs;
  xargs.argv = {"xargs", "-a", replay_file, "-P", std::to_string(cores), "-d", "\n", "-n", "1", "sh", "-c"};
  xargs.timeout_seconds = 3600;
  return run_process(xargs);
}

// Empties the dataset of `db_path`, keeping the compile cache; returns the cache's entry count.
Result<int64_t> clear_keeping_cache(const std::string& db_path) {
  Result<Database> db = Database::open(db_path);
  if (!db) return db.error();
  if (Status cleared = clear_dataset_keep_cache(*db); !cleared) return cleared.error();
  Result<StatusSummary> status = query_status(*db);
  if (!status) return status.error();
  int64_t entries = cache_count(*db, "compile");
  if (status->samples != 0 || status->cycles != 0 || entries == 0) {
    return make_error("clearing the dataset left samples or lost the compile cache (" + std::to_string(entries) +
                      " entries)");
  }
  return entries;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

std::string listed(const std::vector<double>& values) {
  std::string text;
  char buffer[32];
  for (double value : values) {
    std::snprintf(buffer, sizeof buffer, text.empty() ? "%.1f" : " %.1f", value);
    text += buffer;
  }
  return text;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "throughput: %s\n", message.c_str());
  return 1;
}

// The replay file: one line per program, its toolchain and sandboxed commands run in order.
struct ReplayFile {
  std::string path;
  int64_t commands = 0, sandboxed = 0, recorded_verified = 0;
};

ReplayFile write_replay_file(const std::vector<Program>& programs, const std::string& path) {
  ReplayFile file{path};
  std::ofstream replay(path);
  for (const Program& program : programs) {
    replay << replay_line(program) << "\n";
    file.commands += static_cast<int64_t>(program.commands.size());
    file.sandboxed += program.sandboxed;
    file.recorded_verified += program.verified + program.verified_pairs;
  }
  return file;
}

// The cold daemon runs (the first one given) and the xargs replays, each run's wall seconds.
struct ColdRuns {
  std::vector<double> cold_seconds, cold_cycle_seconds, xargs_seconds;
  int replay_exit = 0;
};

// Cold daemon runs and xargs replays alternate, so a busy neighbour slows both alike.
Result<ColdRuns> run_cold_and_replays(const DaemonRun& first, int repetitions, const std::string& tailforge,
                                      const std::function<std::string(int)>& db_of, const std::string& config_path,
                                      const std::string& replay_file, int cores) {
  ColdRuns runs;
  runs.cold_seconds = {first.wall_seconds};
  runs.cold_cycle_seconds = {first.cycle_seconds};
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    if (repetition > 0) {
      DaemonRun cold = run_daemon_cycle(tailforge, db_of(repetition), config_path);
      if (!cold.ok) return make_error("daemon cold run failed: " + cold.error);
      if (cold.sample_ids != first.sample_ids || cold.verified != first.verified) {
        return make_error("cold repetition " + std::to_string(repetition) + " made other programs or verdicts");
      }
      runs.cold_seconds.push_back(cold.wall_seconds);
      runs.cold_cycle_seconds.push_back(cold.cycle_seconds);
    }
    ProcessResult replayed = replay_with_xargs(replay_file, cores);
    if (!replayed.spawned || replayed.timed_out || replayed.signal != 0) {
      return make_error("xargs replay did not finish: " + replayed.spawn_error + replayed.stderr_text);
    }
    runs.replay_exit = std::max(runs.replay_exit, replayed.exit_code);
    runs.xargs_seconds.push_back(replayed.wall_seconds);
  }
  return runs;
}

// The warm daemon runs: the first cold run's store emptied but for its compile cache, each time.
struct WarmRuns {
  std::vector<double> seconds, cycle_seconds;
  int64_t cache_entries = 0, verified = 0, samples = 0;
  bool same_programs = true;
};

Result<WarmRuns> run_warm(const DaemonRun& first, int repetitions, const std::string& tailforge,
                          const std::string& db_path, const std::string& config_path) {
  WarmRuns runs;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    Result<int64_t> entries = clear_keeping_cache(db_path);
    if (!entries) return entries.error();
    runs.cache_entries = *entries;
    DaemonRun warm = run_daemon_cycle(tailforge, db_path, config_path);
    if (!warm.ok) return make_error("daemon warm run failed: " + warm.error);
    runs.same_programs = runs.same_programs && warm.sample_ids == first.sample_ids;
    runs.verified = warm.verified;
    runs.samples = warm.samples;
    runs.seconds.push_back(warm.wall_seconds);
    runs.cycle_seconds.push_back(warm.cycle_seconds);
  }
  return runs;
}

// The table of the three kinds of run, and the ratios of the daemon's rates to the replay's.
void print_runs(const DaemonRun& first, size_t programs, const ColdRuns& cold, const WarmRuns& warm,
                const ReplayFile& replay) {
  double cold_s = median(cold.cold_seconds), xargs_s = median(cold.xargs_seconds), warm_s = median(warm.seconds);
  double rate_cold = per_minute(first.verified, cold_s);
  double rate_warm = per_minute(warm.verified, warm_s);
  // The replay verifies nothing itself: it does the same work on the same programs, so it is
  // credited with the cold run's verified count.
  double rate_xargs = per_minute(first.verified, xargs_s);
  std::printf("%-12s %9s %9s %10s %11s %12s   %s\n", "run (median)", "programs", "verified", "wall s", "cycle s",
              "verified/min", "each run's wall s");
  std::printf("%-12s %9lld %9lld %10.1f %11.1f %12.2f   %s\n", "daemon cold", static_cast<long long>(first.samples),
              static_cast<long long>(first.verified), cold_s, median(cold.cold_cycle_seconds), rate_cold,
              listed(cold.cold_seconds).c_str());
  std::printf("%-12s %9zu %9s %10.1f %11s %12.2f   %s\n", "xargs -P", programs, "(same)", xargs_s, "-",
              rate_xargs, listed(cold.xargs_seconds).c_str());
  std::printf("%-12s %9lld %9lld %10.2f %11.2f %12.2f   %s\n", "daemon warm", static_cast<long long>(warm.samples),
              static_cast<long long>(warm.verified), warm_s, median(warm.cycle_seconds), rate_warm,
              listed(warm.seconds).c_str());
  std::printf("daemon wall s: the whole `tailforge daemon --cycles 1` process (start-up, generation, verification,\n"
              "storage); cycle s: the cycle row's start to finish. xargs replayed the %lld commands of the\n"
              "programs' chains and kernel pairs (%lld of them sandboxed program runs; the in-process CUDA->HIP\n"
              "translation is left out); replay exit %d. In-process recording\n"
              "verified %lld samples of %zu programs, the daemon %lld.\n"
              "Warm runs: same programs %s, %lld compile cache entries kept.\n",
              static_cast<long long>(replay.commands), static_cast<long long>(replay.sandboxed), cold.replay_exit,
              static_cast<long long>(replay.recorded_verified), programs, static_cast<long long>(first.verified),
              warm.same_programs ? "yes" : "NO", static_cast<long long>(warm.cache_entries));
  print_ratio("cold", rate_xargs > 0 ? rate_cold / rate_xargs : 0, 1.0);
  print_ratio("warm", rate_xargs > 0 ? rate_warm / rate_xargs : 0, 10);
}

// Against the ideal: every core busy with verifier stages from start to end of the process.
void print_ideal(const DaemonRun& first, int cores) {
  if (first.programs_finished <= 0 || first.stage_seconds <= 0) return;
  double per_program = first.stage_seconds / first.programs_finished;
  double ideal = cores * 60.0 / per_program;
  double achieved = per_minute(first.programs_finished, first.wall_seconds);
  std::printf("stage seconds per program (its chain and its kernel pairs, slot waits not counted): %.2f over %lld\n"
              "programs; ideal = %d cores x 60 / %.2f = %.1f programs/min; the first cold run finished %.1f/min\n",
              per_program, static_cast<long long>(first.programs_finished), cores, per_program, ideal, achieved);
  std::printf("ideal ratio (daemon programs/min / ideal):          %6.2f   target >= %-4g %s\n", achieved / ideal, 0.9,
              achieved / ideal >= 0.9 ? "PASS" : "BELOW");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--keep") keep = true;
    else args.push_back(argv[i]);
  }
  int samples = args.size() > 0 ? std::max(1, std::atoi(args[0].c_str())) : 8;
  int repetitions = args.size() > 1 ? std::max(1, std::atoi(args[1].c_str())) : 1;
  int seed = args.size() > 2 ? std::atoi(args[2].c_str()) : 7;
  std::string tailforge = args.size() > 3 ? args[3] : (fs::canonical("/proc/self/exe").parent_path().parent_path() / "tailforge").string();
  if (!fs::exists(tailforge)) return fail("no tailforge binary at " + tailforge + " (pass its path as the fourth argument)");
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  fs::path dir = fs::path(fs::temp_directory_path()) / ("tf-throughput-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string config_path = (dir / "config.json").string();
  nlohmann::json overrides = {{"daemon", {{"samples_per_cycle", samples}, {"seed", seed}, {"compile_slots", cores}}},
                              {"synth", {{"enabled", false}}},
                              {"retrain", {{"enabled", false}}},
                              {"eval", {{"enabled", false}}}};
  std::ofstream(config_path) << overrides.dump(2);
  Result<nlohmann::json> config = load_config(config_path);
  if (!config) return fail(config.message());
  auto db_of = [&](int repetition) { return (dir / ("cold-" + std::to_string(repetition) + ".db")).string(); };

  std::printf("throughput: %d programs per cycle, seed %d, %d cores, %d repetition(s), tailforge %s\n", samples, seed,
              cores, repetitions, tailforge.c_str());
  std::fflush(stdout);
  // Repetition 0's cold run supplies the programs; the replay file is recorded from them.
  DaemonRun first = run_daemon_cycle(tailforge, db_of(0), config_path);
  if (!first.ok) return fail("daemon cold run failed: " + first.error);
  Result<std::vector<Program>> programs = write_programs(db_of(0), (dir / "programs").string());
  if (!programs) return fail(programs.message());
  fs::create_directories(dir / "scratch");
  if (Status recorded = record_commands(*programs, *config, (dir / "scratch").string(), cores); !recorded) {
    return fail("recording the toolchain commands: " + recorded.message());
  }
  ReplayFile replay = write_replay_file(*programs, (dir / "replay.txt").string());
  Result<ColdRuns> cold = run_cold_and_replays(first, repetitions, tailforge, db_of, config_path, replay.path, cores);
  if (!cold) return fail(cold.message());
  Result<WarmRuns> warm = run_warm(first, repetitions, tailforge, db_of(0), config_path);
  if (!warm) return fail(warm.message());
  print_runs(first, programs->size(), *cold, *warm, replay);
  print_ideal(first, cores);
  if (!keep) {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  } else {
    std::printf("kept %s\n", dir.c_str());
  }
  return 0;
}
