// Bundles: a sample made of several files, a program and the headers it includes from its
// source tree, stored as the sample row (text = the program), a "bundle" manifest artifact and one
// "bundle_file" artifact per header. It reads and writes bundles; it does not find or filter them
// (agents/importer.h does).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/samples.h"

namespace tailforge {

// Where a bundle's artifacts are linked: the manifest under (kBundleStage, kBundleManifestName),
// each header under (kBundleFileStage, its relative path), so no header name can shadow the manifest.
inline constexpr const char* kBundleStage = "import";
inline constexpr const char* kBundleManifestName = "bundle";
inline constexpr const char* kBundleManifestKind = "bundle";
inline constexpr const char* kBundleFileStage = "import.files";
inline constexpr const char* kBundleFileKind = "bundle_file";

struct BundleFile {
  std::string path;  // relative to the tree root, '/'-separated, no '..'
  std::string content;
};

// The licence file of the tree a program came from, found at import: the nearest LICENSE*,
// LICENCE* or COPYING* file in the program's folder or a parent folder up to the tree's root.
struct BundleLicense {
  std::string file;        // relative to the tree root
  std::string first_line;  // its first non-empty line, at most 200 characters ("MIT License")
  std::string sha256;      // of the whole file
};

struct Bundle {
  std::string tree_name;
  std::optional<std::string> commit;  // the tree's git commit, when it was a checkout
  std::string program_path;           // relative to the tree root
  std::string program_text;
  std::vector<std::string> include_dirs;  // relative to the tree root ("." for the root), sorted
  std::vector<BundleFile> headers;        // sorted by path
  std::optional<BundleLicense> license;   // provenance, kept in the manifest; not part of the id
};

// The bundle's sample id. A bundle without headers has the id of its program text alone
// (sample_id_for), like any other sample. With headers it is the SHA-256 of a versioned key over
// the program's path and normalized text, the include directories, and every header's path and
// content hash: a changed header makes a new sample, the same tree imported twice the same ids.
// Tree name and commit are not part of it (they are provenance, kept in the manifest).
std::string bundle_id_for(const Bundle& bundle);

// The manifest JSON: format, tree, commit, program, include_dirs, files [{path, sha256}] (the
// program first, then the headers), and license {file, first_line, sha256} when one was found.
std::string bundle_manifest_json(const Bundle& bundle);

// Stores the bundle as `sample` (its id and text are set from the bundle) with its manifest and
// header artifacts, in one transaction, unless a sample with the bundle's id is already stored
// (then nothing is written and `inserted` is false). Must not be called inside a transaction.
Result<InsertOutcome> store_bundle(Database& db, const Bundle& bundle, Sample sample);

// The stored bundle of a sample: empty when the sample has no manifest (it is not a bundle). An
// error when the sample is unknown, the manifest is malformed, or a header is missing or does not
// match its recorded hash.
Result<std::optional<Bundle>> read_bundle(Database& db, const std::string& sample_id);

// Where a bundle sample came from, read from its manifest alone (no header is read).
struct BundleProvenance {
  std::string tree_name;
  std::optional<std::string> commit;
  std::string program_path;
  std::optional<BundleLicense> license;  // none: no licence file was recorded at import
};
// Nothing when the sample has no bundle manifest (it was not imported from a tree). An error when
// the manifest is malformed.
Result<std::optional<BundleProvenance>> bundle_provenance(Database& db, const std::string& sample_id);

struct MaterializedBundle {
  std::string program_path;               // absolute path of the written program
  std::vector<std::string> include_dirs;  // absolute paths, to pass as -I
  std::vector<std::string> files;         // every file written, absolute, the program first
};

// Writes the sample into `dir` (created when absent): a bundle's program and headers at their
// relative paths, or a sample that is no bundle as program.<ext> by its language (.cu, .hip, .c,
// .s). Refuses a stored path that is absolute or climbs out with "..".
Result<MaterializedBundle> materialize_bundle(Database& db, const std::string& sample_id, const std::string& dir);
// Writes a bundle read earlier into `dir`, with the same checks.
Result<MaterializedBundle> write_bundle(const Bundle& bundle, const std::string& dir);

}  // namespace tailforge
