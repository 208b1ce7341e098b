// Checking one C function the way the c2x86 track does, from nothing but the function and its IO
// cases: a private scratch folder, the expected outputs recorded from the gcc build when the cases
// carry none, the track's stages (io_tests.h) on the oracle assembly or on a candidate's, and the
// oracle's symbolic form (float_constants.h). The daemon's verify and evaluate jobs and
// `generate --track c2x86` all check through here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "verifier/c2x86/c_function.h"
#include "verifier/c2x86/float_constants.h"
#include "verifier/options.h"
#include "verifier/stage.h"
#include "verifier/toolchains.h"

namespace tailforge {

struct C2x86CheckOptions {
  const VerifierOptions& verifier;
  const Toolchains& toolchains;
  Database* cache_db = nullptr;  // the compile cache; nullptr: none
  ResourceGate* gate = nullptr;
};

struct C2x86Check {
  std::vector<IoCase> cases;        // with their expected outputs (given or recorded)
  // In order: c2x86.record (only when the outputs were recorded), c2x86.float_constant (only for a
  // candidate), then c2x86.oracle, jump_table, assemble, link and io as far as they got.
  std::vector<StageResult> stages;
  std::string oracle_assembly;      // gcc's, when it made one
  std::optional<SymbolicAssembly> symbolic;  // the oracle's symbolic form, when it could be made
  bool float_round_trip = true;     // interpreting the symbolic form gives the oracle back, bit for bit
  // Why the program could not be run at all (the sandbox could not start it), which says nothing
  // about the function: the caller tries again later instead of storing a verdict. Empty otherwise.
  std::string not_run;

  const StageResult* stage(const std::string& name) const;
  bool passed() const;  // every stage that ran is ok, and the IO stage ran
};

// Checks `function`. Cases whose expected outputs are all empty are recorded from the gcc -O0
// build first (stage c2x86.record; a function that fails to build or run there fails it, and
// nothing else runs). With `candidate` (a model's assembly in the symbolic form) its float and
// double literals are interpreted first (stage c2x86.float_constant, failing on a literal that is
// not one), and the result is assembled, linked and IO-tested instead of the oracle's assembly.
C2x86Check check_c_function(const CFunction& function, const C2x86CheckOptions& options,
                            const std::string* candidate = nullptr);

}  // namespace tailforge
