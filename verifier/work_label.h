// What the calling thread is working on — a job id and the stage it is in — kept where a fatal
// signal handler can read it (daemon/crash_recorder.h), so that a crash of the whole process is
// blamed on the job whose thread crashed, not on every job that happened to be leased. It only
// labels; it records nothing and handles no signal.
#pragma once

#include <cstdint>
#include <string_view>

namespace tailforge {

// The job of the calling thread; 0 for none.
int64_t current_job_id();
void set_current_job_id(int64_t job_id);

// The stage the calling thread is in ("" for none). Longer names are cut at 63 characters.
const char* current_stage_name();
void set_current_stage_name(std::string_view stage);

// Gives the calling thread an alternate signal stack, so that a handler of SIGSEGV still runs when
// the thread overflowed its own stack. Idempotent per thread; freed when the thread ends.
void ensure_alternate_signal_stack();

// Labels the calling thread with a job for the scope's life (its stage cleared at both ends).
class JobLabel {
 public:
  explicit JobLabel(int64_t job_id);
  ~JobLabel();
  JobLabel(const JobLabel&) = delete;
  JobLabel& operator=(const JobLabel&) = delete;

 private:
  int64_t previous_;
};

}  // namespace tailforge
