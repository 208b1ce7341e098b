// What one synthesis job pays to drop near-duplicates against a grown corpus: the in-memory
// index rebuilt from every sample text (as each cycle did) against the index kept in the store
// (synth/stored_index), which only catches up on new samples and reads the buckets it is asked
// about. Both answer the same queries; the bench checks that, then prints the time per job and
// the heap each holds while it runs, as ratios.
// Usage: corpus_index [--samples 20000] [--queries 200] [--db PATH]
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "agents/c2x86/c_generator.h"
#include "agents/c2x86/c_samples.h"
#include "base/clock.h"
#include "base/process.h"  // seconds_since
#include "store/corpus.h"
#include "store/database.h"
#include "store/samples.h"
#include "synth/minhash.h"
#include "synth/stored_index.h"

using namespace tailforge;

namespace {

size_t heap_in_use() { return mallinfo2().uordblks + mallinfo2().hblkhd; }

std::string function_text(uint64_t seed, uint64_t index) {
  Result<CFunction> function = generate_c_function({.seed = seed, .index = index});
  return function ? function->function : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t samples = 20000, queries = 200;
  std::string path = (std::filesystem::temp_directory_path() / "tailforge-corpus-index.db").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--samples")) samples = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--queries")) queries = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--db")) path = argv[i + 1];
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  Result<Database> opened = Database::open(path);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.message().c_str());
    return 1;
  }
  Database& db = *opened;
  auto start = std::chrono::steady_clock::now();
  {
    Transaction transaction(db);
    for (int64_t i = 0; i < samples; ++i) {
      Result<CFunction> function = generate_c_function({.seed = 1000 + static_cast<uint64_t>(i), .index = static_cast<uint64_t>(i)});
      if (!function) continue;
      if (!insert_sample_if_absent(db, c2x86_sample(*function, "bench", "template", std::nullopt))) return 1;
    }
    if (!transaction.commit()) return 1;
  }
  Statement& count = db.cached("SELECT count(*) FROM sample");
  int64_t distinct = count.step() ? count.int64(0) : 0;
  count.reset();
  std::printf("corpus: %lld generated c2x86 functions, %lld distinct stored, in %.1f s\n", static_cast<long long>(samples),
              static_cast<long long>(distinct), seconds_since(start));

  MinHashOptions options;
  std::vector<std::vector<uint64_t>> asked;  // shingle sets: half near copies of stored functions, half new ones
  for (int64_t q = 0; q < queries; ++q) {
    std::string text = q % 2 ? function_text(1000 + static_cast<uint64_t>(q * 37 % samples), static_cast<uint64_t>(q * 37 % samples))
                             : function_text(9000000 + static_cast<uint64_t>(q), static_cast<uint64_t>(q));
    asked.push_back(shingle_hashes(text + (q % 4 == 1 ? "\n// copy\n" : ""), options));
  }

  // The old way: every job reads and hashes the whole corpus into memory.
  size_t heap_before = heap_in_use();
  start = std::chrono::steady_clock::now();
  std::vector<bool> memory_answers;
  size_t memory_heap = 0;
  {
    NearDuplicateIndex index(options);
    if (!for_each_sample_text(db, "c2x86", [&](const std::string&, const std::string& text) { index.add(text); })) return 1;
    for (const std::vector<uint64_t>& shingles : asked) memory_answers.push_back(index.find_near_duplicate_of_shingles(shingles).has_value());
    memory_heap = heap_in_use() - heap_before;
  }
  double memory_seconds = seconds_since(start);

  // The stored index: signed once (the first job after an upgrade pays this), then each job only
  // catches up and looks up buckets.
  StoredNearDuplicateIndex stored(db, "c2x86", options);
  start = std::chrono::steady_clock::now();
  Result<int64_t> signed_now = stored.catch_up();
  if (!signed_now) return 1;
  double first_seconds = seconds_since(start);
  heap_before = heap_in_use();
  start = std::chrono::steady_clock::now();
  std::vector<bool> stored_answers;
  size_t stored_heap = 0;
  {
    StoredNearDuplicateIndex job(db, "c2x86", options);
    if (!job.catch_up()) return 1;
    for (const std::vector<uint64_t>& shingles : asked) {
      Result<std::optional<std::string>> found = job.find_near_duplicate(shingles);
      if (!found) return 1;
      stored_answers.push_back(found->has_value());
    }
    stored_heap = heap_in_use() > heap_before ? heap_in_use() - heap_before : 0;
  }
  double stored_seconds = seconds_since(start);

  int64_t agree = 0, near = 0;
  for (size_t i = 0; i < asked.size(); ++i) {
    agree += memory_answers[i] == stored_answers[i];
    near += stored_answers[i];
  }
  std::printf("queries: %lld (%lld near-duplicates); both indexes agree on %lld\n", static_cast<long long>(queries),
              static_cast<long long>(near), static_cast<long long>(agree));
  std::printf("one-time signing of the stored index: %lld samples in %.2f s\n", static_cast<long long>(*signed_now),
              first_seconds);
  std::printf("per synthesis job:  in-memory rebuild %.3f s, %.1f MB heap | stored index %.3f s, %.1f KB heap\n",
              memory_seconds, memory_heap / 1048576.0, stored_seconds, stored_heap / 1024.0);
  std::printf("ratio (rebuild / stored): time %.1fx, heap %.0fx\n", memory_seconds / std::max(stored_seconds, 1e-6),
              static_cast<double>(memory_heap) / std::max<double>(static_cast<double>(stored_heap), 1.0));
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return agree == queries ? 0 : 1;
}
