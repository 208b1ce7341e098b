#include "daemon/cluster/slurm.h"

#include <unistd.h>

#include <filesystem>

#include "base/files.h"
#include "base/process.h"

extern char** environ;

namespace tailforge {

namespace {

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Result<std::string> slurm_worker_script(const SlurmWorkerArray& array) {
  if (array.server.rfind("http://", 0) != 0 && array.server.rfind("https://", 0) != 0) {
    return make_error("--server needs the daemon's URL as the compute nodes reach it, e.g. http://head:8470");
  }
  if (array.token_file.empty()) return make_error("--token-file is required (a path the compute nodes can read)");
  if (array.partition.empty()) return make_error("--partition is required");
  std::error_code ec;
  std::string binary = array.binary.empty() ? std::filesystem::read_symlink("/proc/self/exe", ec).string() : array.binary;
  std::string token_file = std::filesystem::absolute(array.token_file, ec).string();

  std::string script = "#!/bin/bash\n";
  script += "# tailforge workers as a Slurm job array, rendered by `tailforge slurm`.\n";
  script += "# Each array task is one `tailforge worker`; scale down with scancel JOBID (or JOBID_TASK).\n";
  script += "#SBATCH --job-name=tailforge-worker\n";
  script += "#SBATCH --partition=" + array.partition + "\n";
  script += "#SBATCH --array=0-" + std::to_string(array.tasks - 1) + "\n";
  script += "#SBATCH --ntasks=1\n";
  script += "#SBATCH --cpus-per-task=" + std::to_string(array.cpus_per_task) + "\n";
  if (array.gpus_per_task > 0) script += "#SBATCH --gpus-per-task=" + std::to_string(array.gpus_per_task) + "\n";
  script += "#SBATCH --time=" + array.time_limit + "\n";
  script += "#SBATCH --output=" + array.output + "\n";
  script += "export TAILFORGE_HOME=" + shell_quoted(data_dir()) + "\n";
  script += "task=\"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n";
  script += "exec " + shell_quoted(binary) + " worker --server " + shell_quoted(array.server) + " --token-file " +
            shell_quoted(token_file) + " --name \"$(hostname):slurm-$task\" --work-dir \"${TMPDIR:-/tmp}/tailforge-worker-$task\"";
  if (!array.without.empty()) script += " --without " + shell_quoted(array.without);
  if (!array.jobs.empty()) script += " --jobs " + shell_quoted(array.jobs);
  script += "\n";
  return script;
}

Result<std::string> submit_to_slurm(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"sbatch", "--parsable"};
  spec.stdin_text = script;
  spec.timeout_seconds = 60;
  // sbatch hands its environment to the job (--export=ALL): pass all of it, SLURM_CONF and the
  // library path included.
  spec.env_allowlist.clear();
  for (char** variable = environ; *variable; ++variable) {
    std::string entry = *variable;
    spec.env_allowlist.push_back(entry.substr(0, entry.find('=')));
  }
  ProcessResult result = run_process(spec);
  if (!result.spawned) return make_error("sbatch could not start: " + result.spawn_error + " (is Slurm's client installed?)");
  if (result.timed_out) return make_error("sbatch did not answer within 60 s");
  if (!result.succeeded()) return make_error("sbatch failed: " + result.stderr_text + result.stdout_text);
  return result.stdout_text.substr(0, result.stdout_text.find_first_of(";\n"));
}

}  // namespace tailforge
