// `tailforge slurm submit|script`: workers (tailforge worker) placed by Slurm as a job array on a
// GPU partition. `script` prints the sbatch script; `submit` hands it to sbatch and prints the job
// id. Scaling down is Slurm's: scancel the array, or some of its tasks.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "daemon/commands.h"
#include "daemon/context.h"
#include "policies/config.h"
#include "verifier/process.h"

extern char** environ;

namespace tailforge {

namespace {

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result<std::string> render_script(const CommandLine& args) {
  std::string server = args.get("--server");
  if (server.rfind("http://", 0) != 0 && server.rfind("https://", 0) != 0) {
    return make_error("--server needs the daemon's URL as the compute nodes reach it, e.g. http://head:8470");
  }
  if (!args.has("--token-file")) return make_error("--token-file is required (a path the compute nodes can read)");
  if (!args.has("--partition")) return make_error("--partition is required");
  int64_t array = args.get_int("--array", 1), gpus = args.get_int("--gpus-per-task", 1),
          cpus = args.get_int("--cpus-per-task", 4);
  std::error_code ec;
  std::string binary = args.get("--binary", std::filesystem::read_symlink("/proc/self/exe", ec).string());
  std::string token_file = std::filesystem::absolute(args.get("--token-file"), ec).string();

  std::string script = "#!/bin/bash\n";
  script += "# tailforge workers as a Slurm job array, rendered by `tailforge slurm`.\n";
  script += "# Each array task is one `tailforge worker`; scale down with scancel JOBID (or JOBID_TASK).\n";
  script += "#SBATCH --job-name=tailforge-worker\n";
  script += "#SBATCH --partition=" + args.get("--partition") + "\n";
  script += "#SBATCH --array=0-" + std::to_string(array - 1) + "\n";
  script += "#SBATCH --ntasks=1\n";
  script += "#SBATCH --cpus-per-task=" + std::to_string(cpus) + "\n";
  if (gpus > 0) script += "#SBATCH --gpus-per-task=" + std::to_string(gpus) + "\n";
  script += "#SBATCH --time=" + args.get("--time", "1-00:00:00") + "\n";
  script += "#SBATCH --output=" + args.get("--output", "tailforge-worker-%A_%a.log") + "\n";
  script += "export TAILFORGE_HOME=" + shell_quoted(data_dir()) + "\n";
  script += "task=\"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n";
  script += "exec " + shell_quoted(binary) + " worker --server " + shell_quoted(server) + " --token-file " +
            shell_quoted(token_file) + " --name \"$(hostname):slurm-$task\" --work-dir \"${TMPDIR:-/tmp}/tailforge-worker-$task\"";
  if (args.has("--without")) script += " --without " + shell_quoted(args.get("--without"));
  if (args.has("--jobs")) script += " --jobs " + shell_quoted(args.get("--jobs"));
  script += "\n";
  return script;
}

}  // namespace

int command_slurm(const CommandLine& args) {
  std::string action = args.positionals.empty() ? "" : args.positionals[0];
  if (action != "submit" && action != "script") {
    std::cerr << "tailforge slurm: say 'submit' (sbatch the worker array) or 'script' (print it)\n";
    return 2;
  }
  Result<std::string> script = render_script(args);
  if (!script) return report_failure(script.message());
  if (action == "script") {
    std::cout << *script;
    return 0;
  }
  ProcessSpec spec;
  spec.argv = {"sbatch", "--parsable"};
  spec.stdin_text = *script;
  spec.timeout_seconds = 60;
  // sbatch hands its environment to the job (--export=ALL): pass all of it, SLURM_CONF and the
  // library path included.
  spec.env_allowlist.clear();
  for (char** variable = environ; *variable; ++variable) {
    std::string entry = *variable;
    spec.env_allowlist.push_back(entry.substr(0, entry.find('=')));
  }
  ProcessResult result = run_process(spec);
  if (!result.spawned) return report_failure("sbatch could not start: " + result.spawn_error + " (is Slurm's client installed?)");
  if (result.timed_out) return report_failure("sbatch did not answer within 60 s");
  if (!result.succeeded()) return report_failure("sbatch failed: " + result.stderr_text + result.stdout_text);
  std::string job_id = result.stdout_text.substr(0, result.stdout_text.find_first_of(";\n"));
  std::cout << "submitted job array " << job_id << ": " << args.get_int("--array", 1) << " workers on partition "
            << args.get("--partition") << "; they appear in `tailforge status` as they connect. Scale down: scancel "
            << job_id << "\n";
  return 0;
}

}  // namespace tailforge
