#include "agents/translate/hipify_names.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "agents/translate/header_guards.h"
#include "agents/translate/header_names.h"
#include "base/files.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

bool file_exists(const fs::path& path) {
  std::error_code error;
  return fs::exists(path, error);
}

// The value of `#define NAME value` in `text` ("" when absent): the first word after the name.
std::string define_value(const std::string& text, const std::string& name) {
  std::string key = "#define " + name;
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    size_t p = at + key.size();
    if (p >= text.size() || (text[p] != ' ' && text[p] != '\t')) continue;
    while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
    size_t end = p;
    while (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) ++end;
    return text.substr(p, end - p);
  }
  return "";
}

void add_headers_of(const fs::path& folder, bool recursive, const std::vector<std::string>& skipped_folders,
                    const std::vector<std::string>& skipped_files, std::vector<std::string>& files) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) return;
  auto consider = [&](const fs::directory_entry& entry) {
    std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(error)) return;
    if (!(name.ends_with(".h") || name.ends_with(".hpp"))) return;
    for (const std::string& skipped : skipped_files)
      if (name == skipped || (skipped.starts_with("*") && name.ends_with(skipped.substr(1)))) return;
    files.push_back(entry.path().string());
  };
  if (!recursive) {
    for (const auto& entry : fs::directory_iterator(folder, error)) consider(entry);
    return;
  }
  for (auto it = fs::recursive_directory_iterator(folder, error); it != fs::recursive_directory_iterator();
       it.increment(error)) {
    if (error) break;
    std::string name = it->path().filename().string();
    if (it->is_directory(error) &&
        std::find(skipped_folders.begin(), skipped_folders.end(), name) != skipped_folders.end()) {
      it.disable_recursion_pending();
      continue;
    }
    consider(*it);
  }
}

}  // namespace

Result<std::vector<std::string>> cuda_header_files(const std::string& cuda_include) {
  fs::path root(cuda_include);
  if (!file_exists(root / "cuda_runtime_api.h"))
    return make_error("no CUDA headers: " + (root / "cuda_runtime_api.h").string() + " does not exist");
  std::vector<std::string> files;
  for (const char* name : {"cuda_runtime_api.h", "cuda_runtime.h", "driver_types.h", "cuda.h", "library_types.h",
                           "vector_types.h", "texture_types.h", "surface_types.h", "cuda_profiler_api.h", "cusparse.h"})
    if (file_exists(root / name)) files.push_back((root / name).string());
  std::vector<std::string> curand;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(root, error)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("curand") && name.ends_with(".h")) curand.push_back(entry.path().string());
  }
  std::sort(curand.begin(), curand.end());
  files.insert(files.end(), curand.begin(), curand.end());
  return files;
}

std::vector<std::string> cuda_api_header_files(const std::string& cuda_include) {
  fs::path root(cuda_include);
  return {(root / "cuda_runtime_api.h").string(), (root / "driver_types.h").string(), (root / "cuda.h").string()};
}

Result<std::vector<std::string>> hip_header_files(const std::vector<std::string>& hip_includes) {
  std::vector<std::string> files;
  bool found = false;
  for (const std::string& include : hip_includes) {
    fs::path root(include);
    found = found || file_exists(root / "hip" / "hip_runtime_api.h");
    add_headers_of(root / "hip", true, {"nvidia_detail", "nvcc_detail", "hcc_detail"}, {"hip_prof_str.h"}, files);
    add_headers_of(root / "hiprand", false, {}, {"*_nvcc.h"}, files);
    add_headers_of(root / "rocrand", false, {}, {}, files);
    add_headers_of(root / "hipsparse", false, {}, {}, files);
  }
  if (!found) {
    std::string folders;
    for (const std::string& include : hip_includes) folders += (folders.empty() ? "" : ", ") + include;
    return make_error("no HIP headers: no hip/hip_runtime_api.h under " + (folders.empty() ? "(none given)" : folders));
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

std::vector<std::string> hip_header_libraries(const std::vector<std::string>& hip_includes) {
  std::set<std::string> libraries;
  std::error_code error;
  for (const std::string& include : hip_includes)
    for (const char* library : {"hip", "hiprand", "rocrand", "hipsparse"})
      if (fs::is_directory(fs::path(include) / library, error)) libraries.insert(library);
  return {libraries.begin(), libraries.end()};
}

Result<std::set<std::string>> declared_names(const std::vector<std::string>& files) {
  std::set<std::string> names;
  for (const std::string& file : files) {
    Result<std::string> text = read_text_file(file);
    if (!text) return make_error("cannot read header '" + file + "'");
    scan_declared_names(*text, names);
  }
  return names;
}

std::string cuda_version(const std::string& cuda_include) {
  Result<std::string> text = read_text_file((fs::path(cuda_include) / "cuda.h").string());
  std::string value = text ? define_value(*text, "CUDA_VERSION") : "";
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return "";
  int number = std::stoi(value.substr(0, 9));
  return std::to_string(number / 1000) + "." + std::to_string(number % 1000 / 10);
}

std::string hip_version(const std::vector<std::string>& hip_includes) {
  for (const std::string& include : hip_includes) {
    Result<std::string> text = read_text_file((fs::path(include) / "hip" / "hip_version.h").string());
    if (!text) continue;
    std::string major = define_value(*text, "HIP_VERSION_MAJOR"), minor = define_value(*text, "HIP_VERSION_MINOR"),
                patch = define_value(*text, "HIP_VERSION_PATCH");
    if (!major.empty()) return major + "." + minor + (patch.empty() ? "" : "." + patch);
  }
  return "";
}

bool is_cuda_family_name(std::string_view name) {
  if (starts_with(name, "cuda") || starts_with(name, "CUDA_") || starts_with(name, "curand") ||
      starts_with(name, "CURAND_") || starts_with(name, "cusparse") || starts_with(name, "CUSPARSE_"))
    return true;
  if (name.size() < 3) return false;
  if (name[0] == 'c' && name[1] == 'u') return is_upper(name[2]);
  return name[0] == 'C' && name[1] == 'U' && (is_upper(name[2]) || is_lower(name[2]) || name[2] == '_');
}

std::string cuda_name_kind(std::string_view name) {
  if (starts_with(name, "curand") || starts_with(name, "CURAND_")) return "random";
  if (starts_with(name, "cusparse") || starts_with(name, "CUSPARSE_")) return "sparse";
  if (starts_with(name, "cuda")) return "runtime_api";
  return "driver_api";
}

std::string camel_case(std::string_view upper_snake) {
  std::string out;
  for (size_t i = 0; i < upper_snake.size(); ++i) {
    char c = upper_snake[i];
    if (c == '_') continue;
    bool after_letter = i > 0 && std::isalpha(static_cast<unsigned char>(upper_snake[i - 1]));
    out += after_letter ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
  }
  return out;
}

std::vector<std::string> hip_name_candidates(std::string_view cuda_name) {
  std::string name(cuda_name);
  auto rest = [&](size_t prefix) { return name.substr(prefix); };
  if (starts_with(name, "cuda")) return {"hip" + rest(4), "hip" + rest(4) + "_t"};
  if (starts_with(name, "CUDA_ERROR_")) return {"hipError" + camel_case(rest(11))};
  if (starts_with(name, "CUDA_")) return {"HIP_" + rest(5)};
  if (starts_with(name, "curand")) return {"hiprand" + rest(6)};
  if (starts_with(name, "CURAND_")) return {"HIPRAND_" + rest(7)};
  if (starts_with(name, "cusparse")) return {"hipsparse" + rest(8)};
  if (starts_with(name, "CUSPARSE_")) return {"HIPSPARSE_" + rest(9)};
  if (starts_with(name, "CU_")) return {"HIP_" + rest(3), "hip" + camel_case(rest(3))};
  if (name.size() > 2 && name[0] == 'C' && name[1] == 'U' && is_lower(name[2])) {
    std::string x = rest(2), capitalized = x;
    capitalized[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(x[0])));
    return {"HIP" + x, "hip" + capitalized + "_t", "hip" + capitalized};
  }
  if (name.size() > 2 && name[0] == 'c' && name[1] == 'u' && is_upper(name[2])) return {"hip" + rest(2)};
  return {};
}

std::string hip_counterpart(std::string_view cuda_name, const NameExceptions& exceptions,
                            const std::set<std::string>& hip_names) {
  for (const NameUnmapped& unmapped : exceptions.unmapped)
    if (unmapped.prefix ? starts_with(cuda_name, unmapped.from) : cuda_name == unmapped.from) return "";
  for (const NameRename& rename : exceptions.renames)
    if (cuda_name == rename.from) return rename.to;
  const NameRename* longest = nullptr;
  for (const NameRename& rename : exceptions.prefix_renames)
    if (starts_with(cuda_name, rename.from) && (!longest || rename.from.size() > longest->from.size()))
      longest = &rename;
  if (longest) {
    std::string_view rest = cuda_name.substr(longest->from.size());
    std::string to = longest->to + (longest->from.ends_with('_') ? camel_case(rest) : std::string(rest));
    if (hip_names.count(to)) return to;
  }
  for (const std::string& candidate : hip_name_candidates(cuda_name))
    if (hip_names.count(candidate)) return candidate;
  return "";
}

Result<HipifyTable> derive_hipify_table(const HipifyTableSources& sources) {
  Result<NameExceptions> exceptions = load_name_exceptions(sources.exceptions_path);
  if (!exceptions) return exceptions.error();
  Result<std::vector<std::string>> cuda_files = cuda_header_files(sources.cuda_include);
  if (!cuda_files) return cuda_files.error();
  Result<std::vector<std::string>> hip_files = hip_header_files(sources.hip_includes);
  if (!hip_files) return hip_files.error();
  Result<std::set<std::string>> cuda_names = declared_names(*cuda_files);
  if (!cuda_names) return cuda_names.error();
  Result<std::set<std::string>> hip_names = declared_names(*hip_files);
  if (!hip_names) return hip_names.error();

  HipifyTable table;
  table.sources = sources;
  table.cuda_version = cuda_version(sources.cuda_include);
  table.hip_version = hip_version(sources.hip_includes);
  table.hip_libraries = hip_header_libraries(sources.hip_includes);
  for (size_t i = 0; i < exceptions->renames.size(); ++i) {
    const NameRename& rename = exceptions->renames[i];
    if (!hip_names->count(rename.to))
      return make_error(sources.exceptions_path + ": renames[" + std::to_string(i) + "].to: '" + rename.to +
                        "' is not declared in the HIP headers under the given include folders");
    if (!cuda_names->count(rename.from)) table.renames_not_declared.push_back(rename.from);
  }
  std::map<std::string, std::string> kinds;
  for (const NameRename& rename : exceptions->renames)
    if (!rename.kind.empty()) kinds[rename.from] = rename.kind;
  for (const std::string& name : *cuda_names) {
    if (!is_cuda_family_name(name)) continue;
    ++table.cuda_names;
    std::string to = hip_counterpart(name, *exceptions, *hip_names);
    if (to.empty()) {
      table.without_hip.push_back(name);
      continue;
    }
    auto kind = kinds.find(name);
    table.identifiers.push_back({name, to, kind == kinds.end() ? cuda_name_kind(name) : kind->second, ""});
  }
  if (!sources.rules) return table;  // std::set iterates in order: sorted by `from`

  const HipifyRules* rules = sources.rules;
  // A macro HIP declares itself, or one the identifier rules rename, needs no guard rule.
  std::set<std::string> leave = *hip_names;
  for (const IdentifierRule& rule : table.identifiers) leave.insert(rule.from);
  for (const IdentifierRule& rule : rules->identifiers) leave.insert(rule.from);
  for (const NameUnmapped& unmapped : exceptions->guards_unmapped) leave.insert(unmapped.from);
  Result<std::vector<GuardRule>> guards =
      derive_guard_rules({sources.cuda_include, sources.hip_includes, sources.compat_dir, rules->headers}, leave);
  if (!guards) return guards.error();
  table.guards = std::move(*guards);
  for (size_t i = 0; i < exceptions->guard_renames.size(); ++i) {
    const NameRename& rename = exceptions->guard_renames[i];
    auto rule = std::find_if(table.guards.begin(), table.guards.end(),
                             [&](const GuardRule& guard) { return guard.from == rename.from; });
    std::string at = sources.exceptions_path + ": guard_renames[" + std::to_string(i) + "]";
    if (rule == table.guards.end())
      return make_error(at + ".from: '" + rename.from + "' is no macro the CUDA headers define unconditionally");
    if (!hip_names->count(rename.to)) return make_error(at + ".to: '" + rename.to + "' is not declared in the HIP headers");
    rule->to = rename.to;
  }
  return table;
}

}  // namespace tailforge
