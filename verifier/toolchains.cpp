#include "verifier/toolchains.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "base/process.h"
#include "text/regex.h"

namespace tailforge {
namespace {

struct ToolCandidates {
  const char* role;
  std::vector<const char*> names;  // newest first
  std::vector<const char*> version_args;
};

// The AMD device compile uses clang 15: Debian's HIP 5.2 headers and hipcc are built for it.
// Assembly and linking use the newest LLVM that knows gfx1100 (clang 15's llvm-mc rejects
// clang 15's own gfx1100 output). llvm-as/llvm-dis match clang 15 so its bitcode reader agrees.
const std::vector<ToolCandidates>& tool_candidates() {
  static const std::vector<ToolCandidates> candidates = {
      {"nvcc", {"nvcc"}, {"--version"}},
      {"ptxas", {"ptxas"}, {"--version"}},
      {"cuobjdump", {"cuobjdump"}, {"--version"}},
      {"nvdisasm", {"nvdisasm"}, {"--version"}},
      {"hipcc", {"hipcc"}, {"--version"}},
      {"hip_clang", {"clang++-15", "clang++"}, {"--version"}},
      {"clang", {"clang-19", "clang-18", "clang-17", "clang"}, {"--version"}},
      {"llvm_mc", {"llvm-mc-19", "llvm-mc-18", "llvm-mc-17", "llvm-mc"}, {"--version"}},
      {"ld_lld", {"ld.lld-19", "ld.lld-18", "ld.lld-17", "ld.lld"}, {"--version"}},
      {"llvm_as", {"llvm-as-15", "llvm-as"}, {"--version"}},
      {"llvm_dis", {"llvm-dis-15", "llvm-dis"}, {"--version"}},
      {"gcc", {"gcc"}, {"--version"}},
      {"nm", {"nm"}, {"--version"}},
      {"bwrap", {"bwrap"}, {"--version"}},
      {"nvidia_smi", {"nvidia-smi"}, {"--version"}},
      {"rocminfo", {"rocminfo"}, {}},
  };
  return candidates;
}

std::string find_in_path(const std::string& name) {
  std::string path_list = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  path_list += ":/usr/local/cuda/bin";
  std::stringstream stream(path_list);
  std::string dir;
  while (std::getline(stream, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

void parse_version(const std::string& text, Tool& tool) {
  static const text::Regex number(R"((\d+\.\d+(\.\d+)?))");
  static const text::Regex keyword("version|release", {.icase = true});
  std::stringstream stream(text);
  std::string line, chosen;
  while (std::getline(stream, line)) {
    if (chosen.empty() && text::regex_search(line, number)) chosen = line;
    if (text::regex_search(line, keyword) && text::regex_search(line, number)) {
      chosen = line;
      break;
    }
  }
  text::Match match;
  if (text::regex_search(chosen, match, number)) tool.version = match[1];
  tool.version_line = chosen;
}

Tool probe(const ToolCandidates& candidates) {
  Tool tool;
  tool.name = candidates.role;
  for (const char* name : candidates.names) {
    std::string path = find_in_path(name);
    if (path.empty()) continue;
    tool.path = path;
    if (!candidates.version_args.empty()) {
      ProcessSpec spec;
      spec.argv = {path};
      spec.argv.insert(spec.argv.end(), candidates.version_args.begin(), candidates.version_args.end());
      spec.timeout_seconds = 10;
      ProcessResult result = run_process(spec);
      parse_version(result.stdout_text + "\n" + result.stderr_text, tool);
    }
    break;
  }
  return tool;
}

void detect_nvidia_gpus(Toolchains& toolchains) {
  const Tool& smi = toolchains.tool("nvidia_smi");
  if (!smi.found()) {
    toolchains.nvidia_gpu_note = std::filesystem::exists("/dev/nvidia0")
                                     ? "/dev/nvidia0 exists but nvidia-smi is missing"
                                     : "no nvidia-smi and no /dev/nvidia0";
    return;
  }
  ProcessSpec spec;
  spec.argv = {smi.path, "-L"};
  spec.timeout_seconds = 15;
  ProcessResult result = run_process(spec);
  if (!result.succeeded()) {
    toolchains.nvidia_gpu_note = "nvidia-smi -L failed: " + result.stdout_text + result.stderr_text;
    return;
  }
  std::stringstream stream(result.stdout_text);
  std::string line;
  while (std::getline(stream, line)) {
    if (line.rfind("GPU ", 0) == 0) toolchains.gpus.push_back({"nvidia", line, ""});
  }
  toolchains.nvidia_gpu_note = toolchains.has_gpu("nvidia") ? "nvidia-smi -L" : "nvidia-smi lists no GPU";
  if (!toolchains.has_gpu("nvidia")) return;
  // The architectures, in the same order (a driver too old for this query leaves them unknown).
  spec.argv = {smi.path, "--query-gpu=compute_cap", "--format=csv,noheader"};
  ProcessResult caps = run_process(spec);
  std::vector<std::string> archs = caps.succeeded() ? parse_compute_capabilities(caps.stdout_text)
                                                    : std::vector<std::string>{};
  if (archs.size() != toolchains.gpus.size()) return;
  for (size_t i = 0; i < archs.size(); ++i) toolchains.gpus[i].arch = archs[i];
  toolchains.nvidia_gpu_note = "nvidia-smi -L and --query-gpu=compute_cap";
}

void detect_nvcc_gpu_codes(Toolchains& toolchains) {
  const Tool& nvcc = toolchains.tool("nvcc");
  if (!nvcc.found()) return;
  ProcessSpec spec;
  spec.argv = {nvcc.path, "--list-gpu-code"};
  spec.timeout_seconds = 15;
  ProcessResult result = run_process(spec);
  if (result.succeeded()) toolchains.nvcc_gpu_codes = parse_gpu_codes(result.stdout_text);
}

// Lines of `text` with surrounding blanks and a carriage return removed.
std::vector<std::string> trimmed_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    size_t first = begin, last = end;
    while (first < last && std::isspace(static_cast<unsigned char>(text[first]))) ++first;
    while (last > first && std::isspace(static_cast<unsigned char>(text[last - 1]))) --last;
    lines.push_back(text.substr(first, last - first));
    begin = end + 1;
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() <= 3 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void detect_amd_gpus(Toolchains& toolchains) {
  if (!std::filesystem::exists("/dev/kfd")) {
    toolchains.amd_gpu_note = "no /dev/kfd (no ROCm-visible AMD GPU)";
    return;
  }
  const Tool& rocminfo = toolchains.tool("rocminfo");
  if (!rocminfo.found()) {
    toolchains.amd_gpu_note = "/dev/kfd exists but rocminfo is missing";
    return;
  }
  ProcessSpec spec;
  spec.argv = {rocminfo.path};
  spec.timeout_seconds = 15;
  ProcessResult result = run_process(spec);
  static const text::Regex agent(R"(Name:\s+(gfx[0-9a-f]+))");
  text::for_each_match(result.stdout_text, agent, [&](const text::Match& match) {
    toolchains.gpus.push_back({"amd", match[1], match[1]});
    return true;
  });
  toolchains.amd_gpu_note = toolchains.has_gpu("amd") ? "rocminfo" : "rocminfo lists no gfx agent";
}

}  // namespace

std::vector<std::string> parse_compute_capabilities(const std::string& text) {
  std::vector<std::string> archs;
  for (const std::string& line : trimmed_lines(text)) {
    size_t dot = line.find('.');
    std::string major = dot == std::string::npos ? "" : line.substr(0, dot);
    std::string minor = dot == std::string::npos ? "" : line.substr(dot + 1);
    bool valid = all_digits(major) && minor.size() == 1 && all_digits(minor);
    archs.push_back(valid ? "sm_" + std::to_string(std::stoi(major)) + minor : "");
  }
  return archs;
}

std::vector<std::string> parse_gpu_codes(const std::string& text) {
  std::vector<std::string> codes;
  for (const std::string& line : trimmed_lines(text)) {
    if (line.rfind("sm_", 0) == 0 && sm_number(line) >= 0) codes.push_back(line);
  }
  return codes;
}

int sm_number(const std::string& target) {
  size_t underscore = target.find('_');
  if (underscore == std::string::npos) return -1;
  std::string prefix = target.substr(0, underscore);
  if (prefix != "sm" && prefix != "compute") return -1;
  std::string digits;
  size_t i = underscore + 1;
  while (i < target.size() && target[i] >= '0' && target[i] <= '9' && digits.size() < 4) digits += target[i++];
  bool suffix_ok = i == target.size() || (i + 1 == target.size() && std::isalpha(static_cast<unsigned char>(target[i])));
  if (digits.empty() || !suffix_ok) return -1;
  return std::stoi(digits);
}

bool nvcc_builds_cubin_for(const GpuInfo& gpu, const Toolchains& toolchains) {
  const std::vector<std::string>& codes = toolchains.nvcc_gpu_codes;
  return !gpu.arch.empty() && std::find(codes.begin(), codes.end(), gpu.arch) != codes.end();
}

std::string unbuildable_gpu_reason(const GpuInfo& gpu, const Toolchains& toolchains) {
  if (gpu.vendor != "nvidia" || gpu.arch.empty() || toolchains.nvcc_gpu_codes.empty()) return "";
  int lowest = -1;
  for (const std::string& code : toolchains.nvcc_gpu_codes) {
    if (code == gpu.arch) return "";
    int number = sm_number(code);
    if (number >= 0 && (lowest < 0 || number < lowest)) lowest = number;
  }
  // A GPU newer than nvcc knows runs the embedded PTX; one older than its oldest target runs nothing.
  if (lowest < 0 || sm_number(gpu.arch) >= lowest) return "";
  const Tool& nvcc = toolchains.tool("nvcc");
  return "the GPU is " + gpu.arch + " and nvcc " + nvcc.version + " builds sm_" + std::to_string(lowest) +
         " and newer (use a CUDA toolkit that still supports " + gpu.arch + ")";
}

const Tool& Toolchains::tool(const std::string& role) const {
  static const Tool missing;
  auto found = tools.find(role);
  return found == tools.end() ? missing : found->second;
}

bool Toolchains::has_gpu(const std::string& vendor) const {
  for (const auto& gpu : gpus) {
    if (gpu.vendor == vendor) return true;
  }
  return false;
}

Toolchains detect_toolchains() {
  Toolchains toolchains;
  for (const auto& candidates : tool_candidates()) toolchains.tools[candidates.role] = probe(candidates);
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/opt/rocm/amdgcn/bitcode",
                          "/usr/lib/amdgcn/bitcode"}) {
    if (std::filesystem::exists(std::string(dir) + "/ocml.bc")) {
      toolchains.rocm_device_libs_dir = dir;
      break;
    }
  }
  detect_nvcc_gpu_codes(toolchains);
  detect_nvidia_gpus(toolchains);
  detect_amd_gpus(toolchains);
  return toolchains;
}

const Toolchains& detected_toolchains() {
  static const Toolchains toolchains = detect_toolchains();
  return toolchains;
}

std::vector<StageAvailability> stage_availability(const Toolchains& t, const std::string& sandbox_mode) {
  auto need = [&](const std::string& role) -> std::string {
    return t.tool(role).found() ? "" : role + " not found";
  };
  auto first = [](std::initializer_list<std::string> reasons) {
    for (const auto& reason : reasons) {
      if (!reason.empty()) return reason;
    }
    return std::string();
  };
  std::string sandbox = sandbox_mode == "rlimits-only" ? "" : need("bwrap");
  std::string sass = (t.tool("cuobjdump").found() || t.tool("nvdisasm").found())
                         ? "" : "neither cuobjdump nor nvdisasm is installed";
  std::string nvidia_gpu = t.has_gpu("nvidia") ? "" : "no NVIDIA GPU (" + t.nvidia_gpu_note + ")";
  if (nvidia_gpu.empty()) {  // a GPU that nothing built here fits fails no run: its runs are skipped
    std::string unbuildable;
    for (const GpuInfo& gpu : t.gpus) {
      if (gpu.vendor != "nvidia") continue;
      std::string why = unbuildable_gpu_reason(gpu, t);
      if (why.empty()) {
        unbuildable.clear();
        break;
      }
      if (unbuildable.empty()) unbuildable = why;
    }
    nvidia_gpu = unbuildable;
  }
  std::string amd_gpu = t.has_gpu("amd") ? "" : "no AMD GPU (" + t.amd_gpu_note + ")";
  std::string device_libs = t.rocm_device_libs_dir.empty() ? "rocm-device-libs bitcode not found" : "";
  std::vector<std::pair<std::string, std::string>> stages = {
      {"nvidia.ptx", need("nvcc")},
      {"nvidia.cubin", need("nvcc")},
      {"nvidia.exe", need("nvcc")},
      {"nvidia.sass", first({need("nvcc"), sass})},
      {"nvidia.run", first({need("nvcc"), nvidia_gpu, sandbox})},
      {"amd.asm", first({need("hip_clang"), device_libs, need("llvm_as"), need("llvm_dis")})},
      {"amd.assemble", need("llvm_mc")},
      {"amd.codeobject", first({need("llvm_mc"), need("ld_lld")})},
      {"amd.run", first({need("hipcc"), amd_gpu})},
      {"hip_on_nvidia.exe", need("nvcc")},
      {"hip_on_nvidia.run", first({need("nvcc"), nvidia_gpu, sandbox})},
      {"x86.asm", need("gcc")},
      {"x86.run", first({need("gcc"), sandbox})},
  };
  std::vector<StageAvailability> result;
  for (auto& [stage, reason] : stages) result.push_back({stage, reason.empty(), reason});
  return result;
}

nlohmann::json toolchains_to_json(const Toolchains& t) {
  nlohmann::json json;
  json["tools"] = nlohmann::json::object();
  for (const auto& [role, tool] : t.tools) {
    json["tools"][role] = {{"found", tool.found()}, {"path", tool.path}, {"version", tool.version},
                           {"version_line", tool.version_line}};
  }
  json["rocm_device_libs"] = t.rocm_device_libs_dir;
  json["gpus"] = nlohmann::json::array();
  for (const auto& gpu : t.gpus) {
    json["gpus"].push_back({{"vendor", gpu.vendor}, {"name", gpu.name}, {"arch", gpu.arch}});
  }
  json["nvcc_gpu_codes"] = t.nvcc_gpu_codes;
  json["nvidia_gpu_note"] = t.nvidia_gpu_note;
  json["amd_gpu_note"] = t.amd_gpu_note;
  json["stages"] = nlohmann::json::array();
  for (const auto& stage : stage_availability(t)) {
    json["stages"].push_back({{"stage", stage.stage}, {"can_run", stage.can_run}, {"reason", stage.reason}});
  }
  return json;
}

std::string format_toolchains_table(const Toolchains& t) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-10s %s\n", "TOOL", "VERSION", "PATH");
  out += line;
  for (const auto& [role, tool] : t.tools) {
    std::snprintf(line, sizeof line, "%-12s %-10s %s\n", role.c_str(),
                  tool.found() ? tool.version.c_str() : "-", tool.found() ? tool.path.c_str() : "(not found)");
    out += line;
  }
  out += "rocm-device-libs: " + (t.rocm_device_libs_dir.empty() ? "(not found)" : t.rocm_device_libs_dir) + "\n";
  out += "GPUs:" + std::string(t.gpus.empty() ? " none" : "") + "\n";
  for (const auto& gpu : t.gpus) {
    out += "  " + gpu.vendor + ": " + gpu.name + (gpu.arch.empty() ? "" : " [" + gpu.arch + "]") + "\n";
  }
  if (!t.nvcc_gpu_codes.empty()) {
    out += "  nvcc builds:";
    for (const std::string& code : t.nvcc_gpu_codes) out += " " + code;
    out += "\n";
  }
  out += "  nvidia: " + t.nvidia_gpu_note + "\n  amd: " + t.amd_gpu_note + "\n";
  std::snprintf(line, sizeof line, "%-18s %-4s %s\n", "STAGE", "RUN", "WHY NOT");
  out += line;
  for (const auto& stage : stage_availability(t)) {
    std::snprintf(line, sizeof line, "%-18s %-4s %s\n", stage.stage.c_str(), stage.can_run ? "yes" : "no",
                  stage.reason.c_str());
    out += line;
  }
  return out;
}

}  // namespace tailforge
