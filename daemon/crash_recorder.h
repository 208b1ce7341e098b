// Tells a crash of the daemon from its other ends. A handler of the fatal signals (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL, SIGABRT) appends the crashing thread's job and stage (verifier/work_label.h) to
// a file beside the database, then lets the signal end the process as it would have. The next
// start reads the records and counts a crash against that job only (store/queue.h record_crash);
// leases found without a record (SIGKILL, power loss) stay interruptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace tailforge {

struct CrashRecord {
  int64_t job_id = 0;  // 0: the thread that crashed worked on no job
  int signal = 0;
  std::string stage;   // "" when the job's thread was between stages
};

// "<db_path>.crashes".
std::string crash_record_path(const std::string& db_path);

// Installs the handler, appending to crash_record_path(db_path). Call once, before the workers
// start; each worker thread calls ensure_alternate_signal_stack() so that a stack overflow is
// recorded too.
Status install_crash_recorder(const std::string& db_path);

// The records left by earlier runs, and the file removed. Malformed lines are skipped.
Result<std::vector<CrashRecord>> take_crash_records(const std::string& db_path);

// "sigsegv" for 11 and so on; "signal N" for others.
std::string fatal_signal_name(int signal);

}  // namespace tailforge
