#include "verifier/work_label.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tailforge {
namespace {

constexpr size_t kStageNameSize = 64;
// Plain thread-locals of trivial types: a signal handler reads them without allocating.
thread_local int64_t job_id_of_thread = 0;
thread_local char stage_of_thread[kStageNameSize] = {};

struct AlternateSignalStack {
  void* memory = nullptr;
  ~AlternateSignalStack() {
    if (!memory) return;
    stack_t disable{};
    disable.ss_flags = SS_DISABLE;
    sigaltstack(&disable, nullptr);
    std::free(memory);
  }
};
thread_local AlternateSignalStack alternate_stack;

}  // namespace

int64_t current_job_id() { return job_id_of_thread; }
void set_current_job_id(int64_t job_id) { job_id_of_thread = job_id; }

const char* current_stage_name() { return stage_of_thread; }

void set_current_stage_name(std::string_view stage) {
  size_t length = std::min(stage.size(), kStageNameSize - 1);
  std::memcpy(stage_of_thread, stage.data(), length);
  stage_of_thread[length] = '\0';
}

void ensure_alternate_signal_stack() {
  if (alternate_stack.memory) return;
  constexpr size_t kSize = 64 * 1024;
  void* memory = std::malloc(kSize);
  if (!memory) return;
  stack_t stack{};
  stack.ss_sp = memory;
  stack.ss_size = kSize;
  if (sigaltstack(&stack, nullptr) != 0) {
    std::free(memory);
    return;
  }
  alternate_stack.memory = memory;
}

JobLabel::JobLabel(int64_t job_id) : previous_(job_id_of_thread) {
  job_id_of_thread = job_id;
  stage_of_thread[0] = '\0';
}

JobLabel::~JobLabel() {
  job_id_of_thread = previous_;
  stage_of_thread[0] = '\0';
}

}  // namespace tailforge
