// Whole files in and out, and where tailforge's shipped data lives: the one place that reads a
// file into a string or writes one, so that every module reports a missing or unwritable file
// the same way (the error names the path).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace tailforge {

// A whole file's bytes; the error names the file ("<path>: cannot open file").
Result<std::string> read_text_file(const std::string& path);
// A whole file's bytes, or "" when it cannot be read (a tool's optional output).
std::string read_text_file_or_empty(const std::string& path);
// Writes `content` as the whole file, creating its parent folders; the error names the file.
Status write_text_file(const std::string& path, std::string_view content);

// Parses one JSON file (comments allowed); the error names the file, line and column.
Result<nlohmann::json> read_json_file(const std::string& path);
// Parses JSON text that came from `file` (named in the error with the line and column).
Result<nlohmann::json> parse_json_text(const std::string& text, const std::string& file);

// The folder holding config/ and policies/: $TAILFORGE_HOME, else the source tree this binary
// was built from, else the first folder above the executable's that holds config/default.json.
std::string data_dir();
std::string data_path(const std::string& relative);

}  // namespace tailforge
