// verifier.nvcc_single_pass: a CUDA program's PTX, cubins, executable and host assembly from one
// nvcc run give the artifacts the separate runs give, byte for byte, and a failure still says which
// output failed. (Two nvcc runs of one command already write different executables, so an
// executable is checked as a non-empty ELF file, not byte for byte. The host assembly is the host
// object's of the executable: it is compared without its embedded device image, whose targets are
// the executable's, without the `.file` line, which names nvcc's temporary file, and without gcc's
// -O0 `nop`s and second labels at one place, which it emits when it compiles its saved preprocessed
// file (another gcc emits them elsewhere), and with the scratch
// folder's random name, which each run has its own of, as a path where the program says __FILE__.)
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "agents/generator/generator.h"
#include "agents/generator/personas.h"
#include "base/files.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "test_support/varied_programs.h"
#include "verifier/chain.h"
#include "verifier/toolchains.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTwoTargets = {"sm_80", "sm_90"};

// The stages one nvcc run stands in for, with `sm_targets`.
std::vector<std::string> output_stages(const std::vector<std::string>& sm_targets = kTwoTargets) {
  std::vector<std::string> stages = {"nvidia.ptx", "nvidia.exe", "nvidia.host_asm"};
  for (const std::string& sm : sm_targets) stages.push_back("nvidia.cubin." + sm);
  return stages;
}

ChainResult compile(const std::string& path, bool single_pass, const std::vector<std::string>& include_dirs = {},
                    const std::vector<std::string>& sm_targets = kTwoTargets) {
  ChainOptions options;
  options.verifier.nvcc_single_pass = single_pass;
  options.verifier.sm_targets = sm_targets;
  options.verifier.stages = {"nvidia.ptx", "nvidia.cubin", "nvidia.exe", "nvidia.host_asm"};
  options.include_dirs = include_dirs;
  return verify_file(path, options);
}

std::string status_of(const ChainResult& result, const std::string& name) {
  const StageResult* stage = result.stage(name);
  return stage ? stage->status : "<missing>";
}

bool is_local_label(const std::string& line) {
  return line.size() > 3 && line.rfind(".L", 0) == 0 && line.back() == ':' && line.find_first_of(" \t") == std::string::npos;
}

// `lines` with each run of adjacent local labels as its last label alone, and every jump to one
// of the others aimed at that label: gcc may put a second label where one already is.
std::string merge_adjacent_labels(const std::vector<std::string>& lines) {
  auto name_of = [](const std::string& label) { return label.substr(0, label.size() - 1); };
  std::map<std::string, std::string> alias;
  for (size_t i = lines.size(); i-- > 1;) {  // backwards: a run resolves to its last label
    if (!is_local_label(lines[i - 1]) || !is_local_label(lines[i])) continue;
    auto further = alias.find(name_of(lines[i]));
    alias[name_of(lines[i - 1])] = further == alias.end() ? name_of(lines[i]) : further->second;
  }
  std::string text;
  for (const std::string& line : lines) {
    if (is_local_label(line) && alias.count(name_of(line))) continue;
    size_t tab = line.rfind('\t');  // a jump's target is its last word
    auto target = tab == std::string::npos ? alias.end() : alias.find(line.substr(tab + 1));
    text += (target == alias.end() ? line : line.substr(0, tab + 1) + target->second) + "\n";
  }
  return text;
}

// Host assembly without what may differ between the two ways (see the top of the file).
std::string host_code(const std::string& assembly) {
  std::vector<std::string> kept;
  bool in_device_image = false;
  size_t start = 0;
  while (start < assembly.size()) {
    size_t end = assembly.find('\n', start);
    if (end == std::string::npos) end = assembly.size();
    std::string line = assembly.substr(start, end - start);
    start = end + 1;
    if (line == "fatbinData:") in_device_image = true;
    else if (line.find(".section") != std::string::npos) in_device_image = false;
    if (in_device_image || line.rfind("\t.file\t", 0) == 0 || line == "\tnop") continue;
    // The source's path (__FILE__) is in each run's own scratch folder.
    for (size_t at = line.find("tailforge-verify-"); at != std::string::npos; at = line.find("tailforge-verify-", at + 1)) {
      line.replace(at + 17, std::min<size_t>(6, line.size() - at - 17), "XXXXXX");
    }
    kept.push_back(line);
  }
  return merge_adjacent_labels(kept);
}

// The same status for every output stage, and for each that succeeded the same artifacts.
// Where `must_compile`, both ways must build every output: two failures never agree.
void check_same_outputs(const ChainResult& one_run, const ChainResult& separate, const std::string& label,
                        bool must_compile, const std::vector<std::string>& sm_targets = kTwoTargets) {
  for (const std::string& name : output_stages(sm_targets)) {
    INFO(label << ": " << name);
    const StageResult* a = one_run.stage(name);
    const StageResult* b = separate.stage(name);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->status == b->status);
    if (must_compile) {
      CHECK_MESSAGE(a->ok(), a->diagnostics);
      CHECK_MESSAGE(b->ok(), b->diagnostics);
    }
    if (!a->ok() || !b->ok()) continue;
    REQUIRE(a->artifacts.size() == b->artifacts.size());
    for (size_t i = 0; i < a->artifacts.size(); ++i) {
      const Artifact& x = a->artifacts[i];
      const Artifact& y = b->artifacts[i];
      CHECK(x.kind == y.kind);
      CHECK(x.name == y.name);
      CHECK(x.binary == y.binary);
      if (x.kind == "executable") {
        CHECK(x.content.rfind("\x7f" "ELF", 0) == 0);
        CHECK(y.content.rfind("\x7f" "ELF", 0) == 0);
      } else if (x.kind == "host_asm") {
        CHECK(x.content.find("fatbinData:") != std::string::npos);
        CHECK(host_code(x.content).size() > 1000);
        CHECK(host_code(x.content) == host_code(y.content));
      } else {
        CHECK(x.content == y.content);
      }
    }
  }
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE("one nvcc run gives the PTX and cubins the separate runs give, byte for byte; a failure names its output") {
  if (!testing::nvcc_here()) return;
  TempDir dir;
  for (size_t i = 0; i < 2; ++i) {
    fs::path file = fs::path(dir.path()) / ("program" + std::to_string(i) + ".cu");
    write(file, varied_programs()[i]);
    ChainResult one_run = compile(file.string(), true);
    ChainResult separate = compile(file.string(), false);
    for (const std::string& name : output_stages()) REQUIRE(status_of(one_run, name) == "ok");
    check_same_outputs(one_run, separate, file.filename().string(), true);
    // One nvcc command made them all; the executable's stage carries its seconds.
    const StageResult* exe = one_run.stage("nvidia.exe");
    CHECK(exe->command.find("--keep") != std::string::npos);
    for (const char* name : {"nvidia.ptx", "nvidia.cubin.sm_80", "nvidia.cubin.sm_90", "nvidia.host_asm"}) {
      const StageResult* stage = one_run.stage(name);
      CHECK(stage->command == exe->command);
      CHECK(stage->seconds == 0);
      CHECK(stage->reason.find("nvidia.exe's nvcc run") != std::string::npos);
    }
    CHECK(separate.stage("nvidia.ptx")->command.find("--keep") == std::string::npos);
    const StageResult* ptx = one_run.stage("nvidia.ptx");
    CHECK(std::count_if(ptx->artifacts.begin(), ptx->artifacts.end(),
                        [](const Artifact& a) { return a.kind == "ptx_kernel"; }) >= 1);
  }

  // A device compile error: every output fails, as with the separate runs.
  fs::path broken = fs::path(dir.path()) / "broken.cu";
  write(broken, "__global__ void k(float* x) { x[0] = undeclared_name; }\nint main() { return 0; }\n");
  ChainResult broken_one = compile(broken.string(), true);
  check_same_outputs(broken_one, compile(broken.string(), false), "broken.cu", false);
  for (const std::string& name : output_stages()) CHECK(status_of(broken_one, name) == "fail");

  // A link error: the PTX and cubins are fine, only the executable fails.
  fs::path unlinked = fs::path(dir.path()) / "unlinked.cu";
  write(unlinked, "void defined_nowhere();\n__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n"
                  "int main() { defined_nowhere(); k<<<1, 32>>>(nullptr); return 0; }\n");
  ChainResult unlinked_one = compile(unlinked.string(), true);
  check_same_outputs(unlinked_one, compile(unlinked.string(), false), "unlinked.cu", false);
  CHECK(status_of(unlinked_one, "nvidia.ptx") == "ok");
  CHECK(status_of(unlinked_one, "nvidia.cubin.sm_80") == "ok");
  CHECK(status_of(unlinked_one, "nvidia.exe") == "fail");
  CHECK(status_of(unlinked_one, "nvidia.host_asm") == "ok");
  CHECK(unlinked_one.stage("nvidia.exe")->diagnostics.find("defined_nowhere") != std::string::npos);
}

TEST_CASE("one nvcc run stands in for the separate compiles with one, two or three sm targets") {
  // nvcc --keep names its files by how many virtual architectures and codes the flags ask for
  // (p.ptx and p.sm_80.cubin for one target; p.compute_80.ptx and p.compute_90.cubin for two):
  // one run must find them in every case, not fall back to the separate compiles.
  if (!testing::nvcc_here()) return;
  TempDir dir;
  fs::path file = fs::path(dir.path()) / "program.cu";
  write(file, varied_programs()[0]);
  for (const std::vector<std::string>& targets :
       std::vector<std::vector<std::string>>{{"sm_80"}, {"sm_90"}, {"sm_75", "sm_80", "sm_90"}}) {
    ChainResult one_run = compile(file.string(), true, {}, targets);
    ChainResult separate = compile(file.string(), false, {}, targets);
    check_same_outputs(one_run, separate, file.filename().string() + " for " + targets.front(), true, targets);
    const StageResult* exe = one_run.stage("nvidia.exe");
    REQUIRE(exe);
    CHECK(exe->command.find("--keep") != std::string::npos);
    for (const std::string& name : output_stages(targets)) {
      if (name == "nvidia.exe") continue;
      INFO(name << " with " << targets.size() << " target(s)");
      const StageResult* stage = one_run.stage(name);
      REQUIRE(stage);
      CHECK(stage->command == exe->command);
      CHECK(stage->reason.find("nvidia.exe's nvcc run") != std::string::npos);
    }
  }
}

TEST_CASE("one nvcc run and the separate runs agree on generated programs and the shared corpus" *
          doctest::test_suite("long")) {
  if (!testing::nvcc_here()) return;
  TempDir dir;
  Result<GeneratorCatalog> catalog = load_default_generator_catalog(data_dir());
  REQUIRE(catalog.ok());
  int compared = 0;
  for (size_t index = 0; index < 6; ++index) {
    Result<GeneratedProgram> program = generate_program(*catalog, batch_request(44, index));
    REQUIRE(program.ok());
    fs::path file = fs::path(dir.path()) / ("generated" + std::to_string(index) + ".cu");
    write(file, program->source);
    check_same_outputs(compile(file.string(), true), compile(file.string(), false), file.filename().string(), true);
    ++compared;
  }
  // Programs people wrote, compiled with their own folder and the tree's root on the include path.
  fs::path corpus = fs::path(TAILFORGE_TEST_DATA) / "../../../shared/corpus";
  if (!fs::exists(corpus)) {
    testing::skip(testing::Missing::shared_checkout, "the corpus part: ../shared/corpus not found");
    return;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
    if (entry.path().extension() == ".cu" && entry.file_size() < 24000) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int corpus_built = 0, corpus_tried = 0;
  size_t step = std::max<size_t>(1, files.size() / 8);
  for (size_t i = 0; i < files.size(); i += step) {
    std::vector<std::string> includes = {files[i].parent_path().string()};
    for (fs::path up = files[i].parent_path(); up != corpus && up.has_parent_path(); up = up.parent_path()) {
      includes.push_back(up.parent_path().string());
    }
    // A program people wrote may need what is not here (cuDNN, NCCL, MPI, a generated header); the
    // separate runs say which build.
    ChainResult separate = compile(files[i].string(), false, includes);
    std::vector<std::string> stages = output_stages();
    bool builds = std::all_of(stages.begin(), stages.end(), [&](const std::string& name) {
      return status_of(separate, name) == "ok";
    });
    check_same_outputs(compile(files[i].string(), true, includes), separate, files[i].string(), false);
    ++compared;
    corpus_built += builds;
    ++corpus_tried;
  }
  // A sample where none built would have compared only failures.
  CHECK_MESSAGE(corpus_built > 0, corpus_built << " of " << corpus_tried << " corpus programs built");
  MESSAGE(corpus_built << " of " << corpus_tried << " corpus programs built and compared");
  MESSAGE(compared << " programs compared");
}
