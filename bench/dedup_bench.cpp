// MinHash/LSH near-duplicate detection over 100,000 synthetic programs with planted
// near-duplicates: time, peak memory, recall on the planted pairs, and the speed-up of the LSH
// index over a brute-force exact scan measured on the same queries.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/process.h"  // seconds_since
#include "synth/minhash.h"

using namespace tailforge;

namespace {

std::string random_program(std::mt19937_64& random, int index) {
  static const char* ops[] = {"+", "-", "*", "/", "^", "&", "|"};
  static const char* calls[] = {"sqrtf", "fabsf", "__expf", "min", "max", "__shfl_down_sync", "atomicAdd"};
  std::string text = "__global__ void kernel_" + std::to_string(index) + "(float* out, const float* in, int n) {\n"
                     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n";
  int statements = 6 + static_cast<int>(random() % 10);
  for (int s = 0; s < statements; ++s) {
    std::string var = "v" + std::to_string(random() % 50);
    switch (random() % 4) {
      case 0:
        text += "  float " + var + " = in[(i + " + std::to_string(random() % 997) + ") % n] " + ops[random() % 7] +
                " " + std::to_string(random() % 1000) + ".0f;\n";
        break;
      case 1:
        text += "  for (int k = 0; k < " + std::to_string(random() % 64) + "; ++k) out[i] += " + calls[random() % 7] +
                "(in[k]);\n";
        break;
      case 2:
        text += "  if (in[i] > " + std::to_string(random() % 100) + ") { out[i] = " + calls[random() % 7] + "(out[i]) " +
                ops[random() % 7] + " in[i]; }\n";
        break;
      default:
        text += "  switch (i % " + std::to_string(2 + random() % 7) + ") { case 0: out[i] = " +
                std::to_string(random() % 500) + "; break; default: out[i] = in[i]; }\n";
    }
  }
  return text + "}\n";
}

// A near-duplicate: a comment, one constant changed, one statement appended.
std::string mutate(std::mt19937_64& random, const std::string& text) {
  std::string copy = "// tuned variant\n" + text;
  size_t digit = copy.find_first_of("0123456789", copy.size() / 2);
  if (digit != std::string::npos) copy[digit] = static_cast<char>('0' + random() % 10);
  return copy.substr(0, copy.size() - 2) + "  out[i] *= 1.0f;\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100000;
  std::mt19937_64 random(20240601);
  std::vector<std::string> programs;
  std::vector<long> planted_source(count, -1);
  programs.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (i > 100 && random() % 20 == 0) {  // 5% planted near-duplicates of an earlier program
      size_t source = random() % i;
      programs.push_back(mutate(random, programs[source]));
      planted_source[i] = static_cast<long>(source);
    } else {
      programs.push_back(random_program(random, static_cast<int>(i)));
    }
  }

  MinHashOptions options;
  NearDuplicateIndex index(options);
  size_t planted = 0, found_planted = 0, flagged = 0;
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < count; ++i) {
    std::vector<uint64_t> shingles = shingle_hashes(programs[i], options);
    bool duplicate = index.find_near_duplicate_of_shingles(shingles).has_value();
    flagged += duplicate;
    if (planted_source[i] >= 0) {
      ++planted;
      found_planted += duplicate;
    }
    index.add_shingles(std::move(shingles));
  }
  double lsh_seconds = seconds_since(start);

  // Baseline: a brute-force exact comparison with every stored text for the last 200 queries.
  size_t queries = std::min<size_t>(200, count);
  auto brute_start = std::chrono::steady_clock::now();
  size_t brute_hits = 0;
  for (size_t q = count - queries; q < count; ++q) {
    for (size_t j = 0; j < q; ++j) {
      if (shingle_set_jaccard(index.shingles_at(q), index.shingles_at(j)) >= options.threshold) {
        ++brute_hits;
        break;
      }
    }
  }
  double brute_per_query = seconds_since(brute_start) / static_cast<double>(queries);
  auto lsh_start = std::chrono::steady_clock::now();
  size_t lsh_hits = 0;
  for (size_t q = count - queries; q < count; ++q) {
    std::vector<size_t> found = index.near_duplicates(index.shingles_at(q));
    lsh_hits += found.size() > 1 || (found.size() == 1 && found[0] != q);
  }
  double lsh_per_query = seconds_since(lsh_start) / static_cast<double>(queries);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("programs: %zu (planted near-duplicates: %zu), bands x rows: %d x %d, threshold %.2f\n", count, planted,
              index.bands().bands, index.bands().rows, options.threshold);
  std::printf("signature + LSH insert/query: %.2f s (%.1f us per program)\n", lsh_seconds,
              1e6 * lsh_seconds / static_cast<double>(count));
  std::printf("recall on planted near-duplicates: %.4f (%zu/%zu); flagged in total: %zu\n",
              planted ? double(found_planted) / double(planted) : 1.0, found_planted, planted, flagged);
  std::printf("query vs brute-force scan (last %zu queries): %.1f us vs %.1f us, ratio %.0fx (hits %zu vs %zu)\n",
              queries, 1e6 * lsh_per_query, 1e6 * brute_per_query, brute_per_query / std::max(lsh_per_query, 1e-9),
              lsh_hits, brute_hits);
  std::printf("peak RSS: %.1f MiB\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
  return 0;
}
