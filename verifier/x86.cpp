#include "verifier/x86.h"

#include "verifier/compare.h"

namespace tailforge {

void run_x86_stages(StageContext& context, const std::string& c_path, const std::string& driver_path,
                    const std::optional<std::string>& expected_stdout) {
  std::string dir = context.scratch_dir;
  std::string assembly = dir + "/x86.s";
  context.add(run_tool_stage(context, {"x86.asm", "gcc", {"-O0", "-fno-jump-tables", "-S", c_path, "-o", assembly},
                                       {c_path}, {{"x86_asm", assembly, false}}, "x86_64", {}, ""}));
  if (!dependencies_ok(context, "x86.link", {"x86.asm"})) return;
  std::string program = dir + "/x86.exe";
  std::vector<std::string> args = {assembly};
  std::vector<std::string> inputs = {assembly};
  if (!driver_path.empty()) {
    args.push_back(driver_path);
    inputs.push_back(driver_path);
  }
  args.insert(args.end(), {"-o", program, "-lm"});
  context.add(run_tool_stage(context, {"x86.link", "gcc", args, inputs, {{"executable", program, true}}, "x86_64", {}, ""}));
  if (!stage_enabled_here(context, "x86.run") || !dependencies_ok(context, "x86.run", {"x86.link"})) return;
  StageResult run = run_program_stage(context, "x86.run", program, false);
  if (run.ok() && expected_stdout) {
    CompareResult comparison = compare_outputs(*expected_stdout, run.artifact("stdout")->content,
                                               {context.options.compare_tolerance});
    if (!comparison.equal) {
      run.status = "fail";
      run.reason = "output mismatch: " + comparison.message;
    }
  }
  context.add(std::move(run));
}

}  // namespace tailforge
