// write_generated_programs: a batch of generated programs on disk plus manifest.jsonl.
#include <filesystem>
#include <fstream>

#include "agents/generator/generator.h"
#include "base/sha256.h"

namespace tailforge {

Result<std::vector<std::string>> write_generated_programs(const GeneratorCatalog& catalog,
                                                          size_t count, uint64_t seed,
                                                          const std::string& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) return make_error(out_dir + ": cannot create directory: " + error.message());
  std::string manifest_path = out_dir + "/manifest.jsonl";
  std::ofstream manifest(manifest_path, std::ios::binary | std::ios::trunc);
  if (!manifest) return make_error(manifest_path + ": cannot open for writing");

  std::vector<std::string> files;
  for (size_t index = 0; index < count; ++index) {
    GenerationRequest request = batch_request(seed, index);
    auto program = generate_program(catalog, request);
    if (!program) {
      return make_error("program " + std::to_string(index) + ": " + program.message());
    }
    std::string file = std::to_string(index) + "_" + program->domain + ".cu";
    std::string path = out_dir + "/" + file;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << program->source;
    out.close();
    if (!out) return make_error(path + ": write failed");
    nlohmann::json line = {{"file", file},
                           {"domain", program->domain},
                           {"template", program->template_id},
                           {"persona", program->persona.id},
                           {"features", program->features},
                           {"seed", program->seed},
                           {"variables", program->variables},
                           {"source_sha256", sha256_hex(program->source)}};
    manifest << line.dump() << '\n';
    files.push_back(file);
  }
  manifest.close();
  if (!manifest) return make_error(manifest_path + ": write failed");
  return files;
}

}  // namespace tailforge
