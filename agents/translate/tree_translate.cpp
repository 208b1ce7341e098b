#include "agents/translate/tree_translate.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_set>

#include "base/files.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

bool is_source(const fs::path& path) {
  static const std::set<std::string> extensions = {".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".cxx", ".c", ".inl", ".hxx"};
  return extensions.count(path.extension().string()) > 0;
}

bool is_inside(const fs::path& inner, const fs::path& outer) {
  auto [end, ignored] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return end == outer.end();
}

struct Entry {
  fs::path absolute, relative;
  TreeFileReport report;
};

// `#include <tailforge_x.h>` becomes `#include "../tailforge_compat/tailforge_x.h"`, relative to
// the file, so the translated tree compiles with no include path of tailforge's.
std::string local_compat_includes(const std::string& hip, const std::vector<std::string>& headers,
                                  const fs::path& relative) {
  std::string up;
  for (const fs::path& part : relative.parent_path()) {
    (void)part;
    up += "../";
  }
  std::string out = hip;
  for (const std::string& header : headers) {
    std::string local = "\"" + up + kCompatSubdir + "/" + header + "\"";
    for (const std::string& form : {"<" + header + ">", "\"" + header + "\""}) {
      for (size_t at = out.find(form); at != std::string::npos; at = out.find(form, at + 1)) {
        size_t line_start = out.rfind('\n', at);
        line_start = line_start == std::string::npos ? 0 : line_start + 1;
        std::string_view before(out.data() + line_start, at - line_start);
        size_t hash = before.find('#');
        if (hash == std::string_view::npos || before.find("include", hash) == std::string_view::npos) continue;
        out.replace(at, form.size(), local);
      }
    }
  }
  return out;
}

}  // namespace

Result<TreeTranslation> translate_tree(const HipifyRules& rules, const std::string& source, const std::string& out,
                                       const TreeTranslateOptions& options) {
  std::error_code error;
  fs::path root = fs::weakly_canonical(source, error);
  if (error || !fs::is_directory(root)) return make_error("not a directory: " + source);
  fs::path destination = fs::weakly_canonical(out, error);
  if (error) return make_error("bad output folder: " + out);
  if (is_inside(destination, root)) return make_error("the output folder " + out + " is inside the tree " + source);

  // One walk: what each path is, and the tree's header names and defined names for the context.
  std::vector<Entry> entries;
  std::unordered_set<std::string> header_names, tree_names;
  std::vector<std::pair<size_t, std::string>> texts;  // entry index -> source text
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error), last;
  if (error) return make_error("cannot walk " + source + ": " + error.message());
  for (; it != last; it.increment(error)) {
    if (error) break;
    const fs::directory_entry& item = *it;
    Entry entry{item.path(), item.path().lexically_relative(root), {}};
    entry.report.path = entry.relative.generic_string();
    std::error_code status_error;
    if (item.is_symlink(status_error)) {
      entry.report = {entry.report.path, "skipped", "symlink"};
      if (item.is_directory(status_error)) it.disable_recursion_pending();
    } else if (item.is_directory(status_error)) {
      continue;
    } else if (!item.is_regular_file(status_error)) {
      entry.report = {entry.report.path, "skipped", "special"};
    } else if (item.file_size(status_error) > options.max_file_bytes) {
      entry.report = {entry.report.path, "skipped", "too_large"};
    } else {
      Result<std::string> text = read_text_file(item.path().string());
      if (!text) {
        entry.report = {entry.report.path, "skipped", "unreadable"};
      } else if (is_source(item.path()) && text->find('\0') == std::string::npos) {
        entry.report.action = "translated";
        header_names.insert(item.path().filename().string());
        header_names.insert(entry.report.path);
        collect_defined_names(*text, tree_names);
        texts.emplace_back(entries.size(), std::move(*text));
      } else {
        entry.report.action = "copied";
      }
    }
    entries.push_back(std::move(entry));
  }
  if (error) return make_error("cannot walk " + source + ": " + error.message());

  TranslationContext context;
  context.tree_has_header = [&](const std::string& include) {
    return header_names.count(include) > 0 || header_names.count(fs::path(include).filename().string()) > 0;
  };
  context.tree_names = &tree_names;

  TreeTranslation translation;
  std::set<std::string> compat;
  for (auto& [index, text] : texts) {
    Entry& entry = entries[index];
    TranslationResult result = translate_cuda_to_hip(rules, text, context);
    entry.report.ok = result.ok;
    entry.report.issues = std::move(result.issues);
    entry.report.untranslated = std::move(result.untranslated);
    entry.report.warnings = std::move(result.warnings);
    compat.insert(result.compat_headers.begin(), result.compat_headers.end());
    std::string hip = local_compat_includes(result.hip_source, result.compat_headers, entry.relative);
    if (Status written = write_text_file((destination / entry.relative).string(), hip); !written) return written.error();
  }
  for (Entry& entry : entries) {
    if (entry.report.action == "copied") {
      fs::create_directories((destination / entry.relative).parent_path(), error);
      fs::copy_file(entry.absolute, destination / entry.relative, fs::copy_options::overwrite_existing, error);
      if (error) return make_error("cannot copy " + entry.absolute.string() + ": " + error.message());
    }
    if (entry.report.action == "translated") {
      ++translation.translated;
      if (!entry.report.ok) ++translation.with_issues;
    } else if (entry.report.action == "copied") {
      ++translation.copied;
    } else {
      ++translation.skipped;
    }
    translation.files.push_back(std::move(entry.report));
  }
  std::sort(translation.files.begin(), translation.files.end(),
            [](const TreeFileReport& a, const TreeFileReport& b) { return a.path < b.path; });
  for (const std::string& header : compat) {
    fs::path from = fs::path(options.compat_dir) / header;
    fs::create_directories(destination / kCompatSubdir, error);
    fs::copy_file(from, destination / kCompatSubdir / header, fs::copy_options::overwrite_existing, error);
    if (error) return make_error("cannot copy compatibility header " + from.string() + ": " + error.message());
    translation.compat_headers.push_back(header);
  }
  Status report = write_text_file((destination / "tailforge_translate.json").string(), tree_translation_to_json(translation).dump(1) + "\n");
  if (!report) return report.error();
  return translation;
}

nlohmann::ordered_json tree_translation_to_json(const TreeTranslation& translation) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const TreeFileReport& file : translation.files) {
    nlohmann::ordered_json item = {{"path", file.path}, {"action", file.action}};
    if (!file.reason.empty()) item["reason"] = file.reason;
    if (file.action == "translated") {
      item["ok"] = file.ok;
      nlohmann::ordered_json issues = nlohmann::ordered_json::array();
      for (const TranslationIssue& issue : file.issues)
        issues.push_back({{"category", issue.category}, {"line", issue.line}, {"message", issue.message}});
      item["issues"] = issues;
      item["untranslated"] = file.untranslated;
      item["warnings"] = file.warnings;
    }
    files.push_back(item);
  }
  return {{"translated", translation.translated}, {"with_issues", translation.with_issues},
          {"copied", translation.copied},         {"skipped", translation.skipped},
          {"compat_headers", translation.compat_headers}, {"compat_include", kCompatSubdir},
          {"files", files}};
}

}  // namespace tailforge
