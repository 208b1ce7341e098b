// PTX loop rerolling (PtxDec's Rolled-PTX) on kernels of our own with `#pragma unroll` loops of
// 4 to 64 copies, single and nested, over float, double, int, half and int16: compiles each with
// nvcc -ptx for sm_90, rerolls, unrolls, checks that the round trip gives the PTX back exactly
// (after whitespace normalization) and that ptxas accepts the unrolled text, and prints per kernel
// and in total the characters before and after and the reduction, measured in this run.
// The target: a total reduction of at least 41% with every round trip lossless.
// Usage: reroll [--keep DIR]   (DIR keeps the .cu, .ptx, rolled and unrolled files)
#include "verifier/ptx2cuda/reroll.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "base/files.h"
#include "base/process.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

struct Kernel {
  std::string name;
  std::string source;
};

std::string index_expression(int unroll) {
  return "(blockIdx.x * blockDim.x + threadIdx.x) * " + std::to_string(unroll);
}

// out[base + k] = a * in[base + k] + out[base + k], unrolled `unroll` times.
Kernel axpy(const std::string& type, int unroll) {
  std::string name = "axpy_" + type + "_x" + std::to_string(unroll);
  return {name, "__global__ void " + name + "(" + type + "* out, const " + type + "* in, " + type + " a) {\n" +
                    "  int base = " + index_expression(unroll) + ";\n#pragma unroll\n  for (int k = 0; k < " +
                    std::to_string(unroll) + "; ++k) out[base + k] = a * in[base + k] + out[base + k];\n}\n"};
}

// A strided reduction into one register: sum += in[t + k * 256] * (k + 3).
Kernel strided_sum(const std::string& type, int unroll) {
  std::string name = "strided_sum_" + type + "_x" + std::to_string(unroll);
  return {name, "__global__ void " + name + "(" + type + "* out, const " + type + "* in) {\n" +
                    "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  " + type + " sum = 0;\n#pragma unroll\n" +
                    "  for (int k = 0; k < " + std::to_string(unroll) + "; ++k) sum += in[t + k * 256] * (" + type +
                    ")(k + 3);\n  out[t] = sum;\n}\n"};
}

Kernel half_add(int unroll) {
  std::string name = "half_add_x" + std::to_string(unroll);
  return {name, "#include <cuda_fp16.h>\n__global__ void " + name +
                    "(__half* out, const __half* a, const __half* b) {\n  int base = " + index_expression(unroll) +
                    ";\n#pragma unroll\n  for (int k = 0; k < " + std::to_string(unroll) +
                    "; ++k) out[base + k] = __hfma(a[base + k], b[base + k], out[base + k]);\n}\n"};
}

Kernel short_scale(int unroll) {
  std::string name = "short_scale_x" + std::to_string(unroll);
  return {name, "__global__ void " + name + "(short* out, const short* in, short s) {\n  int base = " +
                    index_expression(unroll) + ";\n#pragma unroll\n  for (int k = 0; k < " + std::to_string(unroll) +
                    "; ++k) out[base + k] = (short)(in[base + k] * s + k);\n}\n"};
}

// out[r][c] = in[c][r] * 3 + r over a tile of `rows` x `cols`, both loops unrolled.
Kernel nested_transpose(const std::string& type, int rows, int cols) {
  std::string name = "transpose_" + type + "_" + std::to_string(rows) + "x" + std::to_string(cols);
  return {name, "__global__ void " + name + "(" + type + "* out, const " + type + "* in) {\n  int base = " +
                    index_expression(rows * cols) + ";\n#pragma unroll\n  for (int r = 0; r < " + std::to_string(rows) +
                    "; ++r) {\n#pragma unroll\n    for (int c = 0; c < " + std::to_string(cols) +
                    "; ++c)\n      out[base + r * " + std::to_string(cols) + " + c] = in[base + c * " +
                    std::to_string(rows) + " + r] * (" + type + ")3 + (" + type + ")r;\n  }\n}\n"};
}

std::vector<Kernel> kernels() {
  return {axpy("float", 4),
          axpy("float", 16),
          axpy("double", 8),
          axpy("int", 32),
          axpy("float", 64),
          strided_sum("float", 16),
          strided_sum("double", 32),
          strided_sum("int", 64),
          half_add(8),
          half_add(32),
          short_scale(16),
          short_scale(64),
          nested_transpose("float", 4, 4),
          nested_transpose("double", 8, 8),
          nested_transpose("int", 8, 8)};
}

ProcessResult run_tool(const std::string& tool, std::vector<std::string> arguments) {
  ProcessSpec spec;
  spec.argv = {tool};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.timeout_seconds = 120;
  return run_process(spec);
}

std::string temporary_folder() {
  std::string pattern = (fs::temp_directory_path() / "tailforge-reroll-XXXXXX").string();
  char* made = mkdtemp(pattern.data());
  return made ? made : "";
}

struct Totals {
  size_t kernels = 0, raw = 0, before = 0, after = 0, lossless = 0, ptxas_ok = 0, ptxas_run = 0;
  double seconds = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const Toolchains& tools = detected_toolchains();
  if (!tools.tool("nvcc").found()) {
    std::printf("reroll: nvcc not found, nothing measured\n");
    return 0;
  }
  std::string ptxas = tools.tool("ptxas").path;
  bool keep = argc > 2 && std::string(argv[1]) == "--keep";
  std::string folder = keep ? argv[2] : temporary_folder();
  fs::create_directories(folder);

  std::printf("%-24s %9s %9s %9s %9s %6s %9s %6s\n", "kernel", "raw", "before", "after", "reduction", "loops",
              "lossless", "ptxas");
  Totals totals;
  for (const Kernel& kernel : kernels()) {
    std::string stem = folder + "/" + kernel.name;
    (void)write_text_file(stem + ".cu", kernel.source);
    ProcessResult compiled =
        run_tool(tools.tool("nvcc").path, {"-ptx", "-arch=sm_90", stem + ".cu", "-o", stem + ".ptx"});
    if (!compiled.succeeded()) {
      std::printf("%-24s nvcc failed: %s\n", kernel.name.c_str(), compiled.stderr_text.c_str());
      continue;
    }
    std::string ptx = read_text_file_or_empty(stem + ".ptx");
    auto start = std::chrono::steady_clock::now();
    RerolledPtx rolled = reroll_ptx(ptx);
    Result<std::string> unrolled = unroll_rolled_ptx(rolled.text);
    totals.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool lossless = unrolled && *unrolled == normalize_ptx(ptx) && !rolled.fell_back;
    (void)write_text_file(stem + ".rolled.ptx", rolled.text);
    (void)write_text_file(stem + ".unrolled.ptx", unrolled ? *unrolled : unrolled.message());
    std::string ptxas_verdict = "skipped";
    if (!ptxas.empty()) {
      bool accepted = run_tool(ptxas, {"-arch=sm_90", stem + ".unrolled.ptx", "-o", stem + ".cubin"}).succeeded();
      ptxas_verdict = accepted ? "ok" : "FAILED";
      ++totals.ptxas_run;
      totals.ptxas_ok += accepted;
    }
    ++totals.kernels;
    totals.raw += ptx.size();
    totals.before += rolled.chars_in;
    totals.after += rolled.chars_out;
    totals.lossless += lossless;
    std::printf("%-24s %9zu %9zu %9zu %8.1f%% %6d %9s %6s\n", kernel.name.c_str(), ptx.size(), rolled.chars_in,
                rolled.chars_out, 100.0 * rolled.reduction(), rolled.loops, lossless ? "yes" : "NO",
                ptxas_verdict.c_str());
  }
  double reduction = totals.before ? 1.0 - double(totals.after) / double(totals.before) : 0;
  std::printf("%-24s %9zu %9zu %9zu %8.1f%%\n", "total", totals.raw, totals.before, totals.after, 100.0 * reduction);
  std::printf(
      "(raw: nvcc's PTX; before: whitespace-normalized PTX, the baseline of the reduction; after: Rolled-PTX)\n");
  std::printf("lossless round trips: %zu/%zu; ptxas -arch=sm_90 accepts the unrolled text: %zu/%zu%s\n",
              totals.lossless, totals.kernels, totals.ptxas_ok, totals.ptxas_run, ptxas.empty() ? " (no ptxas)" : "");
  std::printf("reroll + unroll time: %.1f ms for %zu kernels\n", 1000.0 * totals.seconds, totals.kernels);
  std::printf("target: >= 41%% total reduction with every round trip lossless: %s\n",
              reduction >= 0.41 && totals.lossless == totals.kernels && totals.kernels > 0 ? "met" : "NOT met");
  if (!keep) fs::remove_all(folder);
  return 0;
}
