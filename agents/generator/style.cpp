// Naming styles of a generated program's shared helpers (agents/generator/domain.h): people name
// their error check, buffer helpers and reporting differently, and a corpus whose every program
// spells them one way teaches that spelling. A style renames those identifiers in the finished
// text (code only: comments and strings keep their words), so programs of one domain differ in
// more than their kernels.
#include <string>
#include <utility>
#include <vector>

#include "agents/generator/domain.h"
#include "text/cpp_lexer.h"

namespace tailforge {
namespace {

using Renames = std::vector<std::pair<std::string, std::string>>;

// Style 0 is the prelude's own spelling; the others rename every helper it defines: each lists its
// spellings in the order of the prelude's names.
const std::vector<Renames>& styles() {
  static const std::vector<Renames> table = [] {
    const std::vector<std::string> prelude_names = {
        "check_cuda", "CHECK", "g_stream", "g_start", "g_stop", "g_device_buffers", "device_begin",
        "device_end", "device_alloc", "upload", "download", "after_launch", "g_input_state", "next_random",
        "random_int", "random_dyadic", "close_enough", "report_value", "report_count", "finish"};
    const std::vector<std::vector<std::string>> spellings = {
        {"cuda_check_status", "CUDA_CHECK", "g_work_stream", "g_timer_begin", "g_timer_end", "g_allocations",
         "setup_device", "teardown_device", "gpu_alloc", "copy_to_device", "copy_to_host",
         "check_last_launch", "g_rng_state", "next_bits", "uniform_int", "uniform_dyadic", "approx_equal",
         "print_value", "print_count", "pass_or_fail"},
        {"checkCudaStatus", "checkCuda", "gStream", "gStartEvent", "gStopEvent", "gBuffers", "beginDevice",
         "endDevice", "deviceMalloc", "hostToDevice", "deviceToHost", "checkKernel", "gSeed", "nextRandom",
         "randomInt", "randomDyadic", "nearlyEqual", "printValue", "printCount", "finishRun"},
        {"gpu_assert", "GPU_CHECK", "stream0", "tic", "toc", "gpu_buffers", "gpu_init", "gpu_shutdown",
         "dev_alloc", "h2d", "d2h", "sync_check", "lcg_state", "lcg_next", "rand_int", "rand_dyadic",
         "within_tolerance", "show_value", "show_count", "complete"}};
    std::vector<Renames> built(1);
    for (const std::vector<std::string>& spelling : spellings) {
      Renames renames;
      for (size_t k = 0; k < prelude_names.size(); ++k) renames.emplace_back(prelude_names[k], spelling[k]);
      built.push_back(renames);
    }
    return built;
  }();
  return table;
}

}  // namespace

size_t helper_style_count() { return styles().size(); }

std::string apply_helper_style(const std::string& source, size_t style) {
  const Renames& renames = styles()[style % styles().size()];
  if (renames.empty()) return source;
  std::string out;
  out.reserve(source.size() + source.size() / 8);
  size_t at = 0;
  while (at < source.size()) {
    text::CppToken token = text::next_cpp_token(source, at);
    std::string_view word(source.data() + token.begin, token.end - token.begin);
    const std::string* renamed = nullptr;
    if (token.kind == text::CppTokenKind::identifier) {
      for (const auto& [from, to] : renames) {
        if (word == from) renamed = &to;
      }
    }
    if (renamed) {
      out += *renamed;
    } else {
      out.append(word);
    }
    at = token.end;
  }
  return out;
}

}  // namespace tailforge
