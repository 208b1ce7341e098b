// Verifies a few programs cold (empty compile cache) and warm (same cache), and prints the
// cold/warm ratio, each stage's median cold time, and the share of wall time spent outside
// child processes. Usage: verify_bench [repetitions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "store/database.h"
#include "verifier/chain.h"

using namespace tailforge;

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::string data = std::string(TAILFORGE_SOURCE_DIR) + "/tests/data/verifier";
  std::vector<std::string> files = {data + "/saxpy.cu", data + "/saxpy.hip", data + "/sum_squares.c",
                                    data + "/cass_asm/register_alignment.s"};
  ChainOptions options;
  (void)detected_toolchains();  // probe once, outside the measurement
  (void)sandbox_self_test(options.verifier.sandbox);

  std::map<std::string, std::vector<double>> stage_seconds;
  double cold_wall = 0, warm_wall = 0, cold_child = 0;
  int warm_runs = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    std::string db_path = "/tmp/tf-verify-bench-" + std::to_string(getpid()) + ".db";
    std::filesystem::remove(db_path);
    {
      auto db = Database::open(db_path);
      if (!db) {
        std::fprintf(stderr, "cannot open %s: %s\n", db_path.c_str(), db.message().c_str());
        return 1;
      }
      options.cache_db = &db.value();
      for (const auto& file : files) {
        double start = now_seconds();
        ChainResult result = verify_file(file, options);
        cold_wall += now_seconds() - start;
        for (const auto& stage : result.stages) {
          cold_child += stage.child_seconds;
          if (stage.status != "skipped") stage_seconds[stage.name].push_back(stage.seconds);
        }
      }
      for (int warm = 0; warm < 3; ++warm) {
        for (const auto& file : files) {
          double start = now_seconds();
          ChainResult result = verify_file(file, options);
          warm_wall += now_seconds() - start;
        }
        ++warm_runs;
      }
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_path + suffix);
  }
  double cold_per_pass = cold_wall / repetitions;
  double warm_per_pass = warm_wall / warm_runs;
  std::printf("files: %zu, repetitions: %d (cold), %d (warm)\n", files.size(), repetitions, warm_runs);
  std::printf("cold pass: %.3f s   warm pass: %.4f s   cold/warm ratio: %.1f (target >= 20)\n",
              cold_per_pass, warm_per_pass, cold_per_pass / warm_per_pass);
  std::printf("cold wall time outside child processes: %.2f%% (target < 2%%)\n",
              100.0 * (cold_wall - cold_child) / cold_wall);
  std::printf("%-26s %10s %6s\n", "stage (cold)", "median s", "runs");
  for (const auto& [name, seconds] : stage_seconds) {
    std::printf("%-26s %10.3f %6zu\n", name.c_str(), median(seconds), seconds.size());
  }
  return 0;
}
