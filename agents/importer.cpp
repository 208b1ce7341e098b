#include "agents/importer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/process.h"
#include "base/sha256.h"
#include "store/corpus.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

// A file's text read with a size cap, or why it could not be.
struct FileRead {
  std::string text;
  std::string failure;  // empty, or too_large, unreadable, binary
  std::string detail;
};

FileRead read_source_file(const fs::path& path, const ImportFilters& filters) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > static_cast<uintmax_t>(filters.max_file_bytes)) {
    return {"", "too_large", std::to_string(size) + " bytes"};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return {"", "unreadable", std::strerror(errno)};
  FileRead read;
  read.text.resize(static_cast<size_t>(filters.max_file_bytes) + 1);
  in.read(read.text.data(), static_cast<std::streamsize>(read.text.size()));
  if (in.bad()) return {"", "unreadable", "read error"};
  read.text.resize(static_cast<size_t>(in.gcount()));
  read.text.shrink_to_fit();  // headers are cached: keep only what was read
  if (read.text.size() > static_cast<size_t>(filters.max_file_bytes)) {
    return {"", "too_large", "more than " + std::to_string(filters.max_file_bytes) + " bytes"};
  }
  size_t probe = std::min(read.text.size(), static_cast<size_t>(filters.binary_probe_bytes));
  if (read.text.find('\0') < probe) return {"", "binary", "NUL byte"};
  return read;
}

int64_t line_count(const std::string& text) {
  int64_t lines = std::count(text.begin(), text.end(), '\n');
  return !text.empty() && text.back() != '\n' ? lines + 1 : lines;
}

// LICENSE, LICENCE, COPYING, any case, with or without an extension (LICENSE.txt, COPYING.LIB).
bool is_license_file_name(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const char* prefix : {"LICENSE", "LICENCE", "COPYING"}) {
    if (upper.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool has_extension(const fs::path& path, const std::vector<std::string>& extensions) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return std::find(extensions.begin(), extensions.end(), extension) != extensions.end();
}

// `path` relative to `root` when it lies inside it (both canonical), else empty.
std::string relative_inside(const fs::path& path, const fs::path& root) {
  std::string text = path.string();
  std::string prefix = root.string() == "/" ? "/" : root.string() + "/";
  if (text.rfind(prefix, 0) != 0 || text.size() == prefix.size()) return "";
  return text.substr(prefix.size());
}

std::string parent_of(const std::string& relative) {
  std::string parent = fs::path(relative).parent_path().string();
  return parent.empty() ? "." : parent;
}

struct IncludeDirective {
  std::string name;
  bool angled;
};

std::vector<IncludeDirective> include_directives(const std::string& code) {
  std::vector<IncludeDirective> found;
  size_t start = 0;
  while (start < code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    size_t i = code.find_first_not_of(" \t", start);
    if (i < end && code[i] == '#') {
      i = code.find_first_not_of(" \t", i + 1);
      if (i < end && code.compare(i, 7, "include") == 0) {
        i = code.find_first_not_of(" \t", i + 7);
        if (i < end && (code[i] == '"' || code[i] == '<')) {
          size_t close = code.find(code[i] == '"' ? '"' : '>', i + 1);
          if (close < end && close > i + 1) found.push_back({code.substr(i + 1, close - i - 1), code[i] == '<'});
        }
      }
    }
    start = end + 1;
  }
  return found;
}

// One import's walk and decisions. Not thread-safe; lives for one import_tree call.
class TreeImport {
 public:
  TreeImport(Database& db, const ImportRequest& request, fs::path root, ImportSummary& summary)
      : db_(db), request_(request), filters_(request.filters), root_(std::move(root)), summary_(summary) {}

  void walk(const fs::path& dir, const std::string& relative_dir) {
    std::error_code ec;
    fs::directory_iterator entries(dir, ec);
    if (ec) return skip(relative_dir, "unreadable", ec.message());
    std::vector<fs::directory_entry> sorted;
    for (auto it = entries; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) break;
      sorted.push_back(*it);
    }
    if (ec) skip(relative_dir, "unreadable", ec.message());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
    for (const fs::directory_entry& entry : sorted) {
      std::string name = entry.path().filename().string();
      std::string relative = relative_dir == "." ? name : relative_dir + "/" + name;
      fs::file_status status = entry.symlink_status(ec);
      if (fs::is_directory(status)) {
        if (std::count(filters_.skip_dir_names.begin(), filters_.skip_dir_names.end(), name)) continue;
        if (std::count(filters_.include_dir_names.begin(), filters_.include_dir_names.end(), name)) {
          include_dirs_.push_back(relative);
        }
        walk(entry.path(), relative);
        continue;
      }
      ++summary_.files_seen;
      report_progress(relative);
      if (fs::is_symlink(status)) {
        skip_symlink(entry.path(), relative);
      } else if (!fs::is_regular_file(status)) {
        skip(relative, ec ? "unreadable" : "not_regular", ec ? ec.message() : "a fifo, socket or device");
      } else if (has_extension(entry.path(), filters_.program_extensions) ||
                 has_extension(entry.path(), filters_.kernel_source_extensions)) {
        candidates_.push_back(relative);
      } else {
        if (is_license_file_name(name)) license_files_.emplace(relative_dir, relative);  // the first by name
        skip(relative, "not_source", "");
      }
    }
  }

  Status load_corpus() {
    return for_each_sample_text(db_, filters_.track, [this](const std::string& id, const std::string& text) {
      std::string text_id = sample_id_for(text);
      text_owner_.emplace(text_id, "sample " + id.substr(0, 12));
      if (request_.near_duplicates.remember) request_.near_duplicates.remember(text);
    });
  }

  Status import_candidates() {
    for (const std::string& relative : candidates_) {
      report_progress(relative);
      if (Status s = import_candidate(relative); !s) return s;
    }
    return {};
  }

 private:
  void skip(const std::string& relative, const std::string& reason, const std::string& detail) {
    ++summary_.skipped[reason];
    summary_.skips.push_back({relative, reason, detail});
  }

  Status skipped(const std::string& relative, const std::string& reason, const std::string& detail) {
    skip(relative, reason, detail);
    return {};
  }

  void report_progress(const std::string& relative) {
    if (request_.on_progress) request_.on_progress({summary_.files_seen, summary_.programs_kept, relative});
  }

  // A symlink is never followed: its target, when inside the tree, is imported at its own path.
  void skip_symlink(const fs::path& link, const std::string& relative) {
    std::error_code ec;
    fs::path target = fs::canonical(link, ec);
    if (ec == std::errc::too_many_symbolic_link_levels) return skip(relative, "symlink_loop", ec.message());
    if (ec) return skip(relative, "broken_symlink", ec.message());
    std::string inside = target == root_ ? "." : relative_inside(target, root_);
    if (inside.empty()) return skip(relative, "outside_tree", target.string());
    std::string link_dir = parent_of(relative);
    bool ancestor = inside == "." || link_dir == inside || link_dir.rfind(inside + "/", 0) == 0;
    if (fs::is_directory(target, ec) && ancestor) return skip(relative, "symlink_loop", "points at " + inside);
    skip(relative, "symlink", "points at " + inside);
  }

  // The header `name` included from the file at `from` (relative), resolved inside the tree:
  // the including file's folder first, then the root and the tree's include folders. Returns the
  // header's relative path and the include folder it needs ("" when none), or nothing.
  std::optional<std::pair<std::string, std::string>> resolve(const std::string& from, const IncludeDirective& include) {
    std::string own_dir = parent_of(from);
    std::vector<std::string> search = {own_dir, "."};
    search.insert(search.end(), include_dirs_.begin(), include_dirs_.end());
    for (size_t i = 0; i < search.size(); ++i) {
      std::error_code ec;
      fs::path target = fs::canonical(root_ / search[i] / include.name, ec);
      if (ec || !fs::is_regular_file(target, ec)) continue;
      std::string relative = relative_inside(target, root_);
      if (relative.empty()) continue;
      bool needs_dir = i > 0 || include.angled;
      return std::make_pair(relative, needs_dir ? search[i] : std::string());
    }
    return std::nullopt;
  }

  // The licence of the program at `relative`: the nearest licence file in its folder or a parent.
  std::optional<BundleLicense> license_for(const std::string& relative) {
    std::string dir = parent_of(relative);
    while (true) {
      auto found = license_files_.find(dir);
      if (found != license_files_.end()) {
        auto read = licenses_.find(found->second);
        if (read == licenses_.end()) read = licenses_.emplace(found->second, read_license(found->second)).first;
        return read->second;
      }
      if (dir == ".") return std::nullopt;
      dir = parent_of(dir);
    }
  }

  std::optional<BundleLicense> read_license(const std::string& relative) {
    FileRead read = read_source_file(root_ / relative, filters_);
    if (!read.failure.empty()) return std::nullopt;
    std::string first_line;
    size_t start = 0;
    while (start < read.text.size() && first_line.empty()) {
      size_t end = std::min(read.text.find('\n', start), read.text.size());
      size_t begin = read.text.find_first_not_of(" \t\r", start);
      if (begin < end) {
        size_t last = read.text.find_last_not_of(" \t\r", end - 1);
        first_line = read.text.substr(begin, std::min<size_t>(last + 1 - begin, 200));
      }
      start = end + 1;
    }
    return BundleLicense{relative, first_line, sha256_hex(read.text)};
  }

  const FileRead& header(const std::string& relative) {
    auto cached = headers_.find(relative);
    if (cached == headers_.end())
      cached = headers_.emplace(relative, read_source_file(root_ / relative, filters_)).first;
    return cached->second;
  }

  // Gathers the program's headers transitively into `bundle`; a reason when one cannot be read.
  std::optional<ImportSkip> gather_headers(const std::string& program, const std::string& code, Bundle& bundle) {
    std::set<std::string> seen = {program};
    std::set<std::string> include_dirs;
    std::vector<std::pair<std::string, std::string>> pending = {{program, code}};
    while (!pending.empty()) {
      auto [from, text] = std::move(pending.back());
      pending.pop_back();
      for (const IncludeDirective& include : include_directives(text)) {
        auto resolved = resolve(from, include);
        if (!resolved || !seen.insert(resolved->first).second) continue;
        if (!resolved->second.empty()) include_dirs.insert(resolved->second);
        if (static_cast<int64_t>(seen.size()) - 1 > filters_.max_headers) {
          return ImportSkip{program, "too_many_headers", "more than " + std::to_string(filters_.max_headers)};
        }
        const FileRead& read = header(resolved->first);
        if (!read.failure.empty())
          return ImportSkip{program, "header_" + read.failure, resolved->first + ": " + read.detail};
        bundle.headers.push_back({resolved->first, read.text});
        pending.push_back({resolved->first, code_without_comments(read.text, false)});
      }
    }
    std::sort(bundle.headers.begin(), bundle.headers.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    bundle.include_dirs.assign(include_dirs.begin(), include_dirs.end());
    return std::nullopt;
  }

  Status import_candidate(const std::string& relative) {
    FileRead read = read_source_file(root_ / relative, filters_);
    if (!read.failure.empty()) return skipped(relative, read.failure, read.detail);
    int64_t lines = line_count(read.text);
    if (lines < filters_.min_lines) return skipped(relative, "too_short", std::to_string(lines) + " lines");
    if (lines > filters_.max_lines) return skipped(relative, "too_long", std::to_string(lines) + " lines");
    std::string code = code_without_comments(read.text, true);
    if (!has_kernel_or_launch(code)) return skipped(relative, "no_kernel", "");
    if (filters_.skip_hello_world && is_hello_world(code, filters_.print_functions)) {
      return skipped(relative, "hello_world", "every kernel only prints");
    }
    Bundle bundle{request_.name, summary_.commit, relative, read.text};
    bundle.license = license_for(relative);
    if (std::optional<ImportSkip> bad = gather_headers(relative, code_without_comments(read.text, false), bundle)) {
      return skipped(bad->path, bad->reason, bad->detail);
    }
    return keep_unless_duplicate(relative, bundle);
  }

  Status keep_unless_duplicate(const std::string& relative, const Bundle& bundle) {
    std::string id = bundle_id_for(bundle);
    if (auto earlier = seen_bundles_.find(id); earlier != seen_bundles_.end()) {
      return skipped(relative, "duplicate", "same bundle as " + earlier->second);
    }
    Result<std::optional<Sample>> stored = find_sample(db_, id);
    if (!stored) return stored.error();
    if (*stored) {
      seen_bundles_.emplace(id, relative);
      return skipped(relative, "already_present", "sample " + id.substr(0, 12));
    }
    std::string text_id = sample_id_for(bundle.program_text);
    if (auto owner = text_owner_.find(text_id); owner != text_owner_.end()) {
      return skipped(relative, "duplicate", "same program text as " + owner->second);
    }
    const NearDuplicateScreen& screen = request_.near_duplicates;
    if (screen.seen_similar && screen.seen_similar(bundle.program_text)) {
      return skipped(relative, "near_duplicate", "");
    }
    Result<InsertOutcome> outcome = store_bundle(db_, bundle, sample_for(bundle));
    if (!outcome) return make_error("importing " + relative + ": " + outcome.message());
    if (!outcome->inserted) {
      summary_.present_ids.push_back(outcome->id);
      return skipped(relative, "already_present", "sample " + id.substr(0, 12));
    }
    seen_bundles_.emplace(id, relative);
    text_owner_.emplace(text_id, relative);
    if (screen.remember) screen.remember(bundle.program_text);
    ++summary_.programs_kept;
    summary_.sample_ids.push_back(outcome->id);
    return {};
  }

  Sample sample_for(const Bundle& bundle) const {
    Sample sample;
    sample.track = filters_.track;
    sample.origin = "imported";
    sample.language = filters_.language;
    sample.status = "pending";
    if (request_.domain_rules) {
      sample.variables =
          nlohmann::json{{"cass_domain", classify_domain(*request_.domain_rules, bundle.program_text)}}.dump();
    }
    if (request_.feature_rules)
      sample.features = feature_tags(*request_.feature_rules, filters_.language, bundle.program_text);
    return sample;
  }

  Database& db_;
  const ImportRequest& request_;
  const ImportFilters& filters_;
  fs::path root_;  // canonical
  ImportSummary& summary_;
  std::vector<std::string> include_dirs_;  // relative, in walking order
  std::vector<std::string> candidates_;    // relative paths of possible programs
  std::map<std::string, FileRead> headers_;
  std::map<std::string, std::string> seen_bundles_;  // bundle id -> the path kept or found present
  std::map<std::string, std::string> text_owner_;    // program text id -> who has it
  std::map<std::string, std::string> license_files_;  // folder (relative) -> its licence file
  std::map<std::string, std::optional<BundleLicense>> licenses_;  // licence file -> what it says
};

}  // namespace

std::optional<std::string> git_commit_of(const std::string& root, double timeout_seconds) {
  ProcessSpec spec;
  spec.timeout_seconds = timeout_seconds;
  spec.output_cap_bytes = 4096;
  // A folder inside a checkout whose files git does not track (an ignored copy of another tree)
  // is not at the checkout's commit.
  spec.argv = {"git", "-C", root, "ls-files", "--error-unmatch", "--", "."};
  if (!run_process(spec).succeeded()) return std::nullopt;
  spec.argv = {"git", "-C", root, "rev-parse", "HEAD"};
  ProcessResult result = run_process(spec);
  if (!result.succeeded()) return std::nullopt;
  std::string commit = result.stdout_text.substr(0, result.stdout_text.find_first_of(" \t\r\n"));
  bool hex = commit.size() >= 40 &&
             std::all_of(commit.begin(), commit.end(), [](unsigned char c) { return std::isxdigit(c); });
  return hex ? std::optional<std::string>(commit) : std::nullopt;
}

Result<ImportSummary> import_tree(Database& db, const ImportRequest& request) {
  std::error_code ec;
  fs::path root = fs::canonical(request.root, ec);
  if (ec) return make_error("import: " + request.root + ": " + ec.message());
  if (!fs::is_directory(root, ec)) return make_error("import: " + request.root + " is not a folder");
  ImportSummary summary;
  summary.root = root.string();
  summary.tree_name = request.name.empty() ? root.filename().string() : request.name;
  summary.commit = git_commit_of(root.string(), request.git_timeout_seconds);
  ImportRequest named = request;
  named.name = summary.tree_name;
  TreeImport import(db, named, root, summary);
  import.walk(root, ".");
  if (Status s = import.load_corpus(); !s) return make_error("import: reading the corpus: " + s.message());
  if (Status s = import.import_candidates(); !s) return s.error();
  return summary;
}

}  // namespace tailforge
