// `tailforge reroll FILE`: PTX to Rolled-PTX (PtxDec's loop rerolling), or back with --unroll.
// --json's chars_in counts the whitespace-normalized PTX when rerolling (the reduction is the
// rerolling's alone) and the Rolled-PTX as read when unrolling.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/files.h"
#include "daemon/cli/commands.h"
#include "verifier/ptx2cuda/reroll.h"
#include "verifier/stage_runner.h"

namespace tailforge {

namespace {

void print_json(size_t chars_in, size_t chars_out, int loops, const std::string& text) {
  nlohmann::json body = {{"chars_in", chars_in},
                         {"chars_out", chars_out},
                         {"loops", loops},
                         {"reduction", chars_in ? 1.0 - double(chars_out) / double(chars_in) : 0.0},
                         {"text", text}};
  std::cout << body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace

int command_reroll(const CommandLine& args) {
  if (args.positionals.size() != 1) {
    std::cerr << "tailforge: reroll needs one file (.ptx, or Rolled-PTX with --unroll)\n";
    return 2;
  }
  const std::string& path = args.positionals[0];
  if (!std::filesystem::is_regular_file(path)) {
    std::cerr << "tailforge: " << path << ": no such file\n";
    return 1;
  }
  std::string input = read_text_file_or_empty(path);

  if (!args.has("--unroll")) {
    RerolledPtx rolled = reroll_ptx(input);
    if (args.has("--json")) {
      print_json(rolled.chars_in, rolled.chars_out, rolled.loops, rolled.text);
    } else {
      std::cout << rolled.text;
    }
    return 0;
  }
  Result<std::string> unrolled = unroll_rolled_ptx(input);
  if (!unrolled) {
    std::cerr << "tailforge: " << path << ": " << unrolled.message() << "\n";
    return 1;
  }
  if (args.has("--json")) {
    print_json(input.size(), unrolled->size(), count_rolled_loops(input), *unrolled);
  } else {
    std::cout << *unrolled;
  }
  return 0;
}

}  // namespace tailforge
