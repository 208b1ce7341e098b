// `tailforge slurm submit|script`: workers (tailforge worker) placed by Slurm as a job array on a
// GPU partition (daemon/cluster/slurm.h). `script` prints the sbatch script; `submit` hands it to
// sbatch and prints the job id. Scaling down is Slurm's: scancel the array, or some of its tasks.
#include <iostream>

#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/cluster/slurm.h"

namespace tailforge {

int command_slurm(const CommandLine& args) {
  std::string action = args.positionals.empty() ? "" : args.positionals[0];
  if (action != "submit" && action != "script") {
    std::cerr << "tailforge slurm: say 'submit' (sbatch the worker array) or 'script' (print it)\n";
    return 2;
  }
  SlurmWorkerArray array;
  array.server = args.get("--server");
  array.token_file = args.get("--token-file");
  array.partition = args.get("--partition");
  array.tasks = args.get_int("--array", 1);
  array.gpus_per_task = args.get_int("--gpus-per-task", 1);
  array.cpus_per_task = args.get_int("--cpus-per-task", 4);
  array.binary = args.get("--binary");
  array.time_limit = args.get("--time", array.time_limit);
  array.output = args.get("--output", array.output);
  array.without = args.get("--without");
  array.jobs = args.get("--jobs");
  Result<std::string> script = slurm_worker_script(array);
  if (!script) return report_failure(script.message());
  if (action == "script") {
    std::cout << *script;
    return 0;
  }
  Result<std::string> job_id = submit_to_slurm(*script);
  if (!job_id) return report_failure(job_id.message());
  std::cout << "submitted job array " << *job_id << ": " << array.tasks << " workers on partition " << array.partition
            << "; they appear in `tailforge status` as they connect. Scale down: scancel " << *job_id << "\n";
  return 0;
}

}  // namespace tailforge
