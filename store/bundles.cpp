#include "store/bundles.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/sha256.h"
#include "store/evaluations.h"

namespace tailforge {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char kManifestFormat[] = "tailforge-bundle/1";

// A stored relative path is safe to write below a folder: not empty, not absolute, no '..'.
bool is_safe_relative_path(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (const fs::path& part : fs::path(path)) {
    if (part == "..") return false;
  }
  return true;
}

std::string program_file_name(const std::string& language) {
  static const std::map<std::string, std::string> extensions = {{"cuda", ".cu"}, {"hip", ".hip"}, {"c", ".c"},
                                                                {"ptx", ".ptx"}, {"sass", ".s"},  {"rdna3", ".s"}};
  auto found = extensions.find(language);
  return "program" + (found == extensions.end() ? std::string(".txt") : found->second);
}

std::optional<BundleLicense> license_from_manifest(const json& manifest) {
  auto license = manifest.find("license");
  if (license == manifest.end() || !license->is_object()) return std::nullopt;
  return BundleLicense{license->value("file", ""), license->value("first_line", ""), license->value("sha256", "")};
}

Result<Bundle> bundle_from_manifest(const std::string& sample_id, const std::string& manifest_text,
                                    const std::string& program_text,
                                    const std::map<std::string, std::string>& header_contents) {
  std::string where = "bundle manifest of sample " + sample_id;
  json manifest = json::parse(manifest_text, nullptr, false);
  if (!manifest.is_object() || manifest.value("format", "") != kManifestFormat || !manifest["program"].is_string() ||
      !manifest["files"].is_array() || !manifest["include_dirs"].is_array()) {
    return make_error(where + ": not a " + std::string(kManifestFormat) + " manifest");
  }
  Bundle bundle;
  bundle.tree_name = manifest.value("tree", "");
  if (manifest["commit"].is_string()) bundle.commit = manifest["commit"].get<std::string>();
  bundle.program_path = manifest["program"].get<std::string>();
  bundle.program_text = program_text;
  bundle.license = license_from_manifest(manifest);
  for (const json& dir : manifest["include_dirs"]) {
    if (!dir.is_string()) return make_error(where + ": include_dirs holds a non-string");
    bundle.include_dirs.push_back(dir.get<std::string>());
  }
  for (const json& file : manifest["files"]) {
    if (!file.is_object() || !file["path"].is_string() || !file["sha256"].is_string()) {
      return make_error(where + ": files holds an entry without path and sha256");
    }
    std::string path = file["path"].get<std::string>();
    if (path == bundle.program_path) continue;
    auto content = header_contents.find(path);
    if (content == header_contents.end()) return make_error(where + ": header " + path + " is not stored");
    if (sha256_hex(content->second) != file["sha256"].get<std::string>()) {
      return make_error(where + ": header " + path + " does not match its sha256");
    }
    bundle.headers.push_back({path, content->second});
  }
  return bundle;
}

}  // namespace

std::string bundle_id_for(const Bundle& bundle) {
  if (bundle.headers.empty()) return sample_id_for(bundle.program_text);
  std::string key = std::string(kManifestFormat) + "\nprogram " + bundle.program_path + " " +
                    sha256_hex(normalize_program_text(bundle.program_text)) + "\n";
  for (const std::string& dir : bundle.include_dirs) key += "include_dir " + dir + "\n";
  for (const BundleFile& header : bundle.headers)
    key += "file " + header.path + " " + sha256_hex(header.content) + "\n";
  return sha256_hex(key);
}

std::string bundle_manifest_json(const Bundle& bundle) {
  json files = json::array({{{"path", bundle.program_path}, {"sha256", sha256_hex(bundle.program_text)}}});
  for (const BundleFile& header : bundle.headers) {
    files.push_back({{"path", header.path}, {"sha256", sha256_hex(header.content)}});
  }
  json manifest = {{"format", kManifestFormat},
                   {"tree", bundle.tree_name},
                   {"commit", bundle.commit ? json(*bundle.commit) : json(nullptr)},
                   {"program", bundle.program_path},
                   {"include_dirs", bundle.include_dirs},
                   {"files", files}};
  if (bundle.license) {
    manifest["license"] = {{"file", bundle.license->file},
                           {"first_line", bundle.license->first_line},
                           {"sha256", bundle.license->sha256}};
  }
  return manifest.dump();
}

Result<InsertOutcome> store_bundle(Database& db, const Bundle& bundle, Sample sample) {
  sample.id = bundle_id_for(bundle);
  sample.text = bundle.program_text;
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  Result<InsertOutcome> outcome = insert_sample_if_absent(db, std::move(sample));
  if (!outcome || !outcome->inserted) return outcome;
  ArtifactRecord manifest{kBundleStage, kBundleManifestName, kBundleManifestKind, bundle_manifest_json(bundle)};
  if (Result<std::string> stored = insert_artifact(db, outcome->id, std::move(manifest)); !stored) {
    return make_error("storing the bundle manifest of " + bundle.program_path + ": " + stored.message());
  }
  for (const BundleFile& header : bundle.headers) {
    if (Result<std::string> stored =
            insert_artifact(db, outcome->id, {kBundleFileStage, header.path, kBundleFileKind, header.content});
        !stored) {
      return make_error("storing header " + header.path + " of " + bundle.program_path + ": " + stored.message());
    }
  }
  if (Status s = transaction.commit(); !s) return s.error();
  return outcome;
}

Result<std::optional<Bundle>> read_bundle(Database& db, const std::string& sample_id) {
  Result<std::optional<Sample>> sample = find_sample(db, sample_id);
  if (!sample) return sample.error();
  if (!*sample) return make_error("no sample " + sample_id);
  Result<std::vector<ArtifactRecord>> artifacts = artifacts_of(db, sample_id);
  if (!artifacts) return artifacts.error();
  std::optional<std::string> manifest;
  std::map<std::string, std::string> header_contents;
  for (ArtifactRecord& artifact : *artifacts) {
    if (artifact.stage == kBundleStage && artifact.name == kBundleManifestName) manifest = std::move(artifact.content);
    if (artifact.stage == kBundleFileStage) header_contents[artifact.name] = std::move(artifact.content);
  }
  if (!manifest) return std::optional<Bundle>();
  Result<Bundle> bundle = bundle_from_manifest(sample_id, *manifest, (*sample)->text, header_contents);
  if (!bundle) return bundle.error();
  return std::optional<Bundle>(std::move(*bundle));
}

Result<std::optional<BundleProvenance>> bundle_provenance(Database& db, const std::string& sample_id) {
  Result<std::optional<std::string>> artifact = sample_artifact_id(db, sample_id, kBundleStage, kBundleManifestKind);
  if (!artifact) return artifact.error();
  if (!*artifact) return std::optional<BundleProvenance>();
  Result<std::optional<std::string>> text = artifact_text(db, **artifact);
  if (!text) return text.error();
  json manifest = json::parse(text->value_or(""), nullptr, false);
  if (!manifest.is_object() || manifest.value("format", "") != kManifestFormat || !manifest["program"].is_string()) {
    return make_error("bundle manifest of sample " + sample_id + ": not a " + std::string(kManifestFormat) + " manifest");
  }
  BundleProvenance provenance;
  provenance.tree_name = manifest.value("tree", "");
  if (manifest["commit"].is_string()) provenance.commit = manifest["commit"].get<std::string>();
  provenance.program_path = manifest["program"].get<std::string>();
  provenance.license = license_from_manifest(manifest);
  return std::optional<BundleProvenance>(std::move(provenance));
}

Result<MaterializedBundle> materialize_bundle(Database& db, const std::string& sample_id, const std::string& dir) {
  Result<std::optional<Bundle>> bundle = read_bundle(db, sample_id);
  if (!bundle) return bundle.error();
  if (*bundle) return write_bundle(**bundle, dir);
  Result<std::optional<Sample>> sample = find_sample(db, sample_id);
  if (!sample) return sample.error();
  if (!*sample) return make_error("no sample " + sample_id);
  fs::path program = fs::absolute(dir) / program_file_name((*sample)->language);
  if (Status s = write_text_file(program.string(), (*sample)->text); !s) return s.error();
  MaterializedBundle out;
  out.program_path = program.string();
  out.files.push_back(out.program_path);
  return out;
}

Result<MaterializedBundle> write_bundle(const Bundle& bundle, const std::string& dir) {
  fs::path root = fs::absolute(dir);
  MaterializedBundle out;
  std::vector<std::pair<std::string, const std::string*>> files = {{bundle.program_path, &bundle.program_text}};
  for (const BundleFile& header : bundle.headers) files.push_back({header.path, &header.content});
  for (const auto& [relative, content] : files) {
    if (!is_safe_relative_path(relative)) return make_error("bundle names an unsafe path '" + relative + "'");
    fs::path path = (root / relative).lexically_normal();
    if (Status s = write_text_file(path.string(), *content); !s) return s.error();
    out.files.push_back(path.string());
  }
  out.program_path = out.files.front();
  for (const std::string& include_dir : bundle.include_dirs) {
    if (!is_safe_relative_path(include_dir)) return make_error("bundle names an unsafe include dir '" + include_dir + "'");
    std::string path = (root / include_dir).lexically_normal().string();
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    out.include_dirs.push_back(path);
  }
  return out;
}

}  // namespace tailforge
