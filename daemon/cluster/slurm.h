// Workers placed by Slurm: the sbatch script of a job array whose every task is one
// `tailforge worker` connected to the daemon, and its submission through sbatch.
#pragma once

#include <string>

#include "base/result.h"

namespace tailforge {

struct SlurmWorkerArray {
  std::string server;      // the daemon's URL as the compute nodes reach it (http:// or https://)
  std::string token_file;  // a path the compute nodes can read
  std::string partition;
  int64_t tasks = 1;       // workers in the array
  int64_t gpus_per_task = 1;
  int64_t cpus_per_task = 4;
  std::string binary;      // the tailforge the nodes run; empty: this one
  std::string time_limit = "1-00:00:00";
  std::string output = "tailforge-worker-%A_%a.log";
  std::string without;     // passed to each worker's --without, when set
  std::string jobs;        // passed to each worker's --jobs, when set
};

// The sbatch script, or what is missing or malformed in `array`.
Result<std::string> slurm_worker_script(const SlurmWorkerArray& array);

// Hands the script to `sbatch --parsable` (with this process's whole environment, which sbatch
// passes on to the job) and returns the job id.
Result<std::string> submit_to_slurm(const std::string& script);

}  // namespace tailforge
