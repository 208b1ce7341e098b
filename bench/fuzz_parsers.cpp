// Fuzzes every parser of untrusted text (tests/fuzz/untrusted_parsers.h) with random hostile inputs
// (tests/fuzz/hostile_text.h) until a time budget is spent, and prints per parser the inputs run,
// the slowest input, the largest input and the crashes. A crash of the process names the parser
// and the input (seed and index reproduce it); an escaping exception is counted and printed.
//
//   fuzz_parsers [--seed N] [--seconds S] [--max-bytes B] [--only PARSER] [--fixed]
// --only runs one parser on the same input sequence, to reproduce a crash. --fixed runs the fuzz
// test's fixed hostile inputs instead, once, printing the seconds of each.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "tests/fuzz/hostile_text.h"
#include "tests/fuzz/untrusted_parsers.h"

using namespace tailforge;
using namespace tailforge::fuzz;

namespace {

struct Options {
  uint64_t seed = 20261127;
  double seconds = 60;
  size_t max_bytes = 4 * kMiB;
  std::string only;
  bool fixed = false;
};

struct ParserStats {
  int64_t inputs = 0;
  double max_seconds = 0;
  size_t max_bytes = 0;
  double total_seconds = 0;
  size_t total_bytes = 0;
  int64_t crashes = 0;
};

// What runs now, for the fatal-signal handler: it may only write() plain buffers.
char g_running[256] = "starting";

void on_fatal_signal(int signal) {
  char line[400];
  int n = std::snprintf(line, sizeof line, "\nCRASH: signal %d while running %s\n", signal, g_running);
  if (n > 0) (void)!write(STDERR_FILENO, line, static_cast<size_t>(std::min(n, static_cast<int>(sizeof line) - 1)));
  std::signal(signal, SIG_DFL);
  raise(signal);
}

// The handler runs on its own stack, so a stack overflow is reported too.
void report_fatal_signals() {
  static std::vector<char> stack(1 << 16);
  stack_t alternate{};
  alternate.ss_sp = stack.data();
  alternate.ss_size = stack.size();
  sigaltstack(&alternate, nullptr);
  struct sigaction action{};
  action.sa_handler = on_fatal_signal;
  action.sa_flags = SA_ONSTACK;
  for (int signal : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) sigaction(signal, &action, nullptr);
}

bool parse_options(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--fixed") {
      options.fixed = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    char* end = nullptr;
    const char* value = argv[++i];
    if (arg == "--seed") {
      options.seed = std::strtoull(value, &end, 10);
    } else if (arg == "--seconds") {
      options.seconds = std::strtod(value, &end);
    } else if (arg == "--max-bytes") {
      options.max_bytes = std::strtoull(value, &end, 10);
    } else if (arg == "--only") {
      options.only = value;
      continue;
    } else {
      return false;
    }
    if (end == value || *end != '\0') return false;
  }
  return options.max_bytes > 0;
}

void print_table(const std::vector<UntrustedParser>& parsers, const std::map<std::string, ParserStats>& stats) {
  std::printf("\n%-38s %8s %10s %12s %10s %8s\n", "parser", "inputs", "max s", "max bytes", "MB/s", "crashes");
  int64_t crashes = 0;
  for (const UntrustedParser& parser : parsers) {
    const ParserStats& s = stats.at(parser.name);
    double rate = s.total_seconds > 0 ? static_cast<double>(s.total_bytes) / kMiB / s.total_seconds : 0;
    std::printf("%-38s %8lld %10.3f %12zu %10.1f %8lld\n", parser.name.c_str(), static_cast<long long>(s.inputs),
                s.max_seconds, s.max_bytes, rate, static_cast<long long>(s.crashes));
    crashes += s.crashes;
  }
  std::printf("crashes in all: %lld\n", static_cast<long long>(crashes));
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, options)) {
    std::fprintf(stderr, "usage: fuzz_parsers [--seed N] [--seconds S] [--max-bytes B] [--only PARSER] [--fixed]\n");
    return 2;
  }
  report_fatal_signals();
  spdlog::set_level(spdlog::level::warn);  // the HTTP API logs every request it refuses
  std::string scratch = (std::filesystem::temp_directory_path() / ("tailforge-fuzz-" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(scratch);
  Result<std::unique_ptr<UntrustedParsers>> started = UntrustedParsers::start(scratch);
  if (!started) {
    std::fprintf(stderr, "fuzz_parsers: %s\n", started.message().c_str());
    return 1;
  }
  const std::vector<UntrustedParser>& parsers = (*started)->parsers();
  std::map<std::string, ParserStats> stats;
  for (const UntrustedParser& parser : parsers) stats[parser.name];

  if (options.fixed) {
    for (const UntrustedParser& parser : parsers) {
      if (!options.only.empty() && parser.name != options.only) continue;
      for (const HostileInput& input : hostile_inputs()) {
        std::printf("%-38s %-45s ", parser.name.c_str(), input.name.c_str());
        std::fflush(stdout);
        std::snprintf(g_running, sizeof g_running, "%s on %s", parser.name.c_str(), input.name.c_str());
        std::printf("%8.3f s\n", run_parser(parser, input.text));
      }
    }
    return 0;
  }
  std::printf("fuzz_parsers: seed %llu, %.0f s, inputs up to %zu bytes, %zu parsers\n",
              static_cast<unsigned long long>(options.seed), options.seconds, options.max_bytes, parsers.size());
  std::fflush(stdout);
  std::mt19937_64 random(options.seed);
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  double next_progress = 0;
  for (int64_t index = 0; elapsed() < options.seconds; ++index) {
    std::string input = random_hostile_input(random, options.max_bytes);
    if (elapsed() >= next_progress) {  // as it goes, so that a crash leaves the progress before it
      std::printf("%6.1f s: input %lld, %zu bytes\n", elapsed(), static_cast<long long>(index), input.size());
      std::fflush(stdout);
      next_progress += 5;
    }
    for (const UntrustedParser& parser : parsers) {
      if (elapsed() >= options.seconds) break;
      if (!options.only.empty() && parser.name != options.only) continue;
      std::snprintf(g_running, sizeof g_running, "%s on input %lld (seed %llu, %zu bytes)", parser.name.c_str(),
                    static_cast<long long>(index), static_cast<unsigned long long>(options.seed), input.size());
      ParserStats& s = stats[parser.name];
      size_t bytes = std::min(input.size(), parser.max_bytes);
      try {
        double seconds = run_parser(parser, input);
        s.max_seconds = std::max(s.max_seconds, seconds);
        s.total_seconds += seconds;
      } catch (const std::exception& e) {
        ++s.crashes;
        std::printf("EXCEPTION: %s: %s\n", g_running, e.what());
        std::fflush(stdout);
      }
      ++s.inputs;
      s.max_bytes = std::max(s.max_bytes, bytes);
      s.total_bytes += bytes;
    }
  }
  std::snprintf(g_running, sizeof g_running, "the end of the run");
  print_table(parsers, stats);
  started->reset();
  std::filesystem::remove_all(scratch);
  return 0;
}
