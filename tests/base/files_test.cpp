#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/files.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

TEST_CASE("a written file reads back byte for byte, its parent folders created") {
  TempDir dir;
  std::string path = dir.file("a/b/c.bin");
  std::string bytes("line\n\0binary\xff", 13);
  REQUIRE(write_text_file(path, bytes).ok());
  Result<std::string> read = read_text_file(path);
  REQUIRE(read.ok());
  CHECK(*read == bytes);
  CHECK(read_text_file_or_empty(path) == bytes);
  REQUIRE(write_text_file(path, "shorter").ok());  // truncates
  CHECK(read_text_file_or_empty(path) == "shorter");
}

TEST_CASE("a missing or unwritable file is an error that names the path") {
  TempDir dir;
  Result<std::string> missing = read_text_file(dir.file("absent.txt"));
  CHECK_FALSE(missing.ok());
  CHECK(missing.message() == dir.file("absent.txt") + ": cannot open file");
  CHECK(read_text_file_or_empty(dir.file("absent.txt")).empty());

  REQUIRE(write_text_file(dir.file("plain"), "x").ok());
  Status under_a_file = write_text_file(dir.file("plain/inside.txt"), "y");  // a parent that is a file
  CHECK_FALSE(under_a_file.ok());
  CHECK(under_a_file.message().find(dir.file("plain")) != std::string::npos);
  if (geteuid() != 0) {  // root writes through permissions
    std::filesystem::create_directory(dir.file("locked"));
    chmod(dir.file("locked").c_str(), 0500);
    Status denied = write_text_file(dir.file("locked/f.txt"), "z");
    CHECK_FALSE(denied.ok());
    CHECK(denied.message() == "cannot write " + dir.file("locked/f.txt"));
    chmod(dir.file("locked").c_str(), 0700);
  }
}

TEST_CASE("JSON files may hold comments; a syntax error names the file") {
  TempDir dir;
  REQUIRE(write_text_file(dir.file("ok.json"), "// a comment\n{\"a\": [1, 2] /* inline */}\n").ok());
  Result<nlohmann::json> parsed = read_json_file(dir.file("ok.json"));
  REQUIRE(parsed.ok());
  CHECK((*parsed)["a"][1] == 2);

  REQUIRE(write_text_file(dir.file("bad.json"), "{\"a\": }").ok());
  Result<nlohmann::json> bad = read_json_file(dir.file("bad.json"));
  CHECK_FALSE(bad.ok());
  CHECK(bad.message().rfind(dir.file("bad.json") + ": invalid JSON: ", 0) == 0);
  CHECK_FALSE(read_json_file(dir.file("none.json")).ok());

  Result<nlohmann::json> text = parse_json_text("[1,", "reply from the server");
  CHECK_FALSE(text.ok());
  CHECK(text.message().rfind("reply from the server: invalid JSON: ", 0) == 0);
  CHECK(parse_json_text("{\"k\": true}", "x")->at("k") == true);
}

TEST_CASE("data_path follows TAILFORGE_HOME, else the source tree holding config/default.json") {
  const char* before = std::getenv("TAILFORGE_HOME");
  std::string saved = before ? before : "";
  TempDir dir;
  setenv("TAILFORGE_HOME", dir.path().c_str(), 1);
  CHECK(data_dir() == dir.path());
  CHECK(data_path("policies/taxonomy.json") == dir.path() + "/policies/taxonomy.json");
  unsetenv("TAILFORGE_HOME");
  CHECK(std::filesystem::exists(data_path("config/default.json")));
  if (before) setenv("TAILFORGE_HOME", saved.c_str(), 1);
}
