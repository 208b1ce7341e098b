// store_bench: sample inserts per second (batched in transactions) and job lease+complete
// cycles per second on a real SQLite file, against the targets (20,000 and 5,000/s).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "base/clock.h"
#include "bench/bench_support.h"
#include "store/queue.h"
#include "store/samples.h"

using namespace tailforge;

int main(int argc, char** argv) {
  int samples = argc > 1 ? std::stoi(argv[1]) : 100000;
  int jobs = argc > 2 ? std::stoi(argv[2]) : 20000;
  Result<Database> db = open_fresh_bench_database("tailforge_store_bench.db", "store_bench: ");
  if (!db) return 1;

  const int batch = 1000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < samples; i += batch) {
    Transaction transaction(*db);
    for (int j = i; j < i + batch && j < samples; ++j) {
      Sample sample;
      sample.track = "cuda2hip";
      sample.origin = "template";
      sample.language = "cuda";
      sample.domain = "reduction";
      sample.features = {"shared_memory", "atomics"};
      sample.text = "__global__ void k" + std::to_string(j) + "(float* x) { x[threadIdx.x] *= 2.0f; }\n";
      if (!insert_sample_if_absent(*db, sample)) return 1;
    }
    if (!transaction.commit()) return 1;
  }
  double insert_seconds = seconds_since(start);
  double inserts_per_second = samples / insert_seconds;

  JobQueue queue(*db);
  for (int i = 0; i < jobs; i += batch) {
    Transaction transaction(*db);
    for (int j = i; j < i + batch && j < jobs; ++j) {
      if (!queue.enqueue({.kind = "verify", .idempotency_key = "bench:" + std::to_string(j)})) return 1;
    }
    if (!transaction.commit()) return 1;
  }
  start = std::chrono::steady_clock::now();
  int cycles = 0;
  for (;;) {
    Result<std::optional<Job>> job = queue.lease("bench", 60000);
    if (!job) {
      std::fprintf(stderr, "store_bench: %s\n", job.message().c_str());
      return 1;
    }
    if (!job->has_value()) break;
    if (!queue.complete((*job)->id, "bench")) return 1;
    ++cycles;
  }
  double queue_seconds = seconds_since(start);
  double cycles_per_second = cycles / queue_seconds;

  std::printf("sample inserts:      %d in %.3f s = %.0f/s (target 20000/s, ratio %.2f)\n", samples, insert_seconds,
              inserts_per_second, inserts_per_second / 20000.0);
  std::printf("lease+complete:      %d in %.3f s = %.0f/s (target 5000/s, ratio %.2f)\n", cycles, queue_seconds,
              cycles_per_second, cycles_per_second / 5000.0);
  remove_bench_database(db->path());
  return 0;
}
