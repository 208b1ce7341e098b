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

// Style 0 is the prelude's own spelling; the others rename every helper it defines.
const std::vector<Renames>& styles() {
  static const std::vector<Renames> table = {
      {},
      {{"check_cuda", "cuda_check_status"}, {"CHECK", "CUDA_CHECK"}, {"g_stream", "g_work_stream"}, {"g_start", "g_timer_begin"}, {"g_stop", "g_timer_end"},
       {"g_device_buffers", "g_allocations"}, {"device_begin", "setup_device"}, {"device_end", "teardown_device"},
       {"device_alloc", "gpu_alloc"}, {"upload", "copy_to_device"}, {"download", "copy_to_host"},
       {"after_launch", "check_last_launch"}, {"g_input_state", "g_rng_state"}, {"next_random", "next_bits"},
       {"random_int", "uniform_int"}, {"random_dyadic", "uniform_dyadic"}, {"close_enough", "approx_equal"},
       {"report_value", "print_value"}, {"report_count", "print_count"}, {"finish", "pass_or_fail"}},
      {{"check_cuda", "checkCudaStatus"}, {"CHECK", "checkCuda"},
       {"g_stream", "gStream"}, {"g_start", "gStartEvent"}, {"g_stop", "gStopEvent"},
       {"g_device_buffers", "gBuffers"}, {"device_begin", "beginDevice"}, {"device_end", "endDevice"},
       {"device_alloc", "deviceMalloc"}, {"upload", "hostToDevice"}, {"download", "deviceToHost"},
       {"after_launch", "checkKernel"}, {"g_input_state", "gSeed"}, {"next_random", "nextRandom"},
       {"random_int", "randomInt"}, {"random_dyadic", "randomDyadic"}, {"close_enough", "nearlyEqual"},
       {"report_value", "printValue"}, {"report_count", "printCount"}, {"finish", "finishRun"}},
      {{"check_cuda", "gpu_assert"}, {"CHECK", "GPU_CHECK"},
       {"g_stream", "stream0"}, {"g_start", "tic"}, {"g_stop", "toc"},
       {"g_device_buffers", "gpu_buffers"}, {"device_begin", "gpu_init"}, {"device_end", "gpu_shutdown"},
       {"device_alloc", "dev_alloc"}, {"upload", "h2d"}, {"download", "d2h"},
       {"after_launch", "sync_check"}, {"g_input_state", "lcg_state"}, {"next_random", "lcg_next"},
       {"random_int", "rand_int"}, {"random_dyadic", "rand_dyadic"}, {"close_enough", "within_tolerance"},
       {"report_value", "show_value"}, {"report_count", "show_count"}, {"finish", "complete"}},
  };
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
