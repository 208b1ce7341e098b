// `generate --track c2x86`: a batch of generated C functions written to disk with their drivers,
// IO tests (expected outputs from the gcc -O0 build) and oracle assembly, each checked as the
// track checks a sample (verifier/c2x86/io_tests.h), with the tallies the track is judged by:
// how many compile, how many of those pass their own IO tests, jump tables in oracle output, and
// the feature tags written.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "verifier/c2x86/c_function.h"
#include "verifier/options.h"
#include "verifier/stage.h"
#include "verifier/toolchains.h"

namespace tailforge {

struct CBatchEntry {
  CFunction function;  // with the recorded expected outputs
  std::string kind;
  std::string file;    // "<index>_<name>.c" in the output folder
  std::vector<StageResult> checks;
  bool compiled = false;    // oracle, assembly and link all ok
  bool io_passed = false;   // every IO case gave the recorded output
  bool jump_table = false;  // the oracle assembly has a jump table
  std::string symbolic_assembly;  // the oracle assembly, float constants as literals
  int64_t float_constants = 0;    // literals written in it
  bool float_round_trip = true;   // interpreting them gives the oracle's words back, bit for bit
  std::string failure;      // the first failing check, when any
};

struct CBatch {
  std::vector<CBatchEntry> entries;
  size_t compiled = 0, io_passed = 0, jump_tables = 0, cases = 0;
  size_t float_constants = 0, float_round_trips = 0, with_float_constants = 0;  // of the symbolic form
  std::map<std::string, size_t> features;  // tag -> functions with it
};

struct CBatchOptions {
  uint64_t count = 10;
  uint64_t seed = 1;
  size_t jobs = 0;  // functions checked at once; 0: one per core
  std::string out_dir;
};

// Writes <out>/<i>_<name>.c, <i>_<name>_driver.c, <i>_<name>.s (the oracle assembly, when gcc made
// one), <i>_<name>.symbolic.s (the same with float constants as literals, the form a model learns;
// verifier/c2x86/float_constants.h) and <out>/manifest.jsonl (one line per function: files, kind,
// features, IO cases, checks, float constants).
Result<CBatch> write_c_batch(const CBatchOptions& options, const VerifierOptions& verifier,
                             const Toolchains& toolchains);

}  // namespace tailforge
