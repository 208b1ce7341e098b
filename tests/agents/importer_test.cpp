#include "agents/importer.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/files.h"
#include "base/sha256.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A CUDA program of about `lines` lines whose statements depend on `seed`, so programs of other
// seeds are not near-duplicates of it. `includes` go on top.
std::string cuda_program(int seed, int lines = 40, const std::string& includes = "") {
  std::ostringstream out;
  out << includes << "#include <cstdio>\n__global__ void kernel" << seed << "(const float* data, float* out, int n) {\n"
      << "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n  float acc = 0.0f;\n";
  for (int j = 0; j < lines - 20; ++j) {
    out << "  acc += data[(i + " << (seed * 131 + j * 17) % 977 << ") % n] * " << (seed * 37 + j * 11) % 89 << ".5f;\n";
  }
  out << "  out[i] = acc;\n}\n\nint main() {\n  const int n = 1024;\n  float *data, *out;\n"
      << "  cudaMalloc(&data, n * sizeof(float));\n  cudaMalloc(&out, n * sizeof(float));\n"
      << "  kernel" << seed << "<<<(n + 255) / 256, 256>>>(data, out, n);\n  float host[4];\n"
      << "  cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost);\n  printf(\"%f\\n\", host[0]);\n"
      << "  cudaFree(data);\n  cudaFree(out);\n  return 0;\n}\n";
  return out.str();
}

const char* kHelloWorld = R"(#include <cstdio>
// Prints a greeting from every thread.
__global__ void hello(int tag) {
  int tid = threadIdx.x;
  printf("Hello World from thread %d (tag %d)\n", tid, tag);
}

int main() {
  hello<<<1, 8>>>(7);
  cudaDeviceSynchronize();
  return 0;
}
)";

Database open_db(const TempDir& dir) { return std::move(Database::open(dir.file("store.db")).value()); }

ImportRequest request_for(const std::string& root) {
  ImportRequest request;
  request.root = root;
  return request;
}

int64_t skipped(const ImportSummary& summary, const std::string& reason) {
  auto found = summary.skipped.find(reason);
  return found == summary.skipped.end() ? 0 : found->second;
}

std::string reason_of(const ImportSummary& summary, const std::string& path) {
  for (const ImportSkip& skip : summary.skips) {
    if (skip.path == path) return skip.reason;
  }
  return "";
}

}  // namespace

TEST_CASE("a program and the headers it includes from the tree become one pending bundle sample") {
  TempDir dir;
  std::string root = dir.file("tree");
  write_tree_file(root + "/src/main.cu", cuda_program(1, 40, "#include \"util.cuh\"\n#include <shared.h>\n#include <vector>\n"));
  write_tree_file(root + "/src/util.cuh", "#pragma once\n#include \"../common/defs.h\"\n");
  write_tree_file(root + "/common/defs.h", "#define SCALE 2\n");
  write_tree_file(root + "/include/shared.h", "// shared\n");
  write_tree_file(root + "/README.md", "docs\n");
  Database db = open_db(dir);

  ImportRequest request = request_for(root);
  request.name = "demo";
  Result<ImportSummary> summary = import_tree(db, request);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(summary->tree_name == "demo");
  CHECK_FALSE(summary->commit.has_value());
  CHECK(summary->files_seen == 5);
  CHECK(summary->programs_kept == 1);
  CHECK(skipped(*summary, "not_source") == 4);  // the headers and the README are no programs
  REQUIRE(summary->sample_ids.size() == 1);

  Sample sample = find_sample(db, summary->sample_ids[0]).value().value();
  CHECK(sample.origin == "imported");
  CHECK(sample.track == "cuda2hip");
  CHECK(sample.language == "cuda");
  CHECK(sample.status == "pending");
  CHECK(sample.text == read(root + "/src/main.cu"));

  Bundle bundle = read_bundle(db, sample.id).value().value();
  CHECK(bundle.tree_name == "demo");
  CHECK(bundle.program_path == "src/main.cu");
  CHECK(bundle.include_dirs == std::vector<std::string>{"include"});
  std::vector<std::string> paths;
  for (const BundleFile& header : bundle.headers) paths.push_back(header.path);
  CHECK(paths == std::vector<std::string>{"common/defs.h", "include/shared.h", "src/util.cuh"});
  CHECK(bundle_id_for(bundle) == sample.id);
}

TEST_CASE("a program records the nearest licence file of its tree: its folder's, else a parent's") {
  TempDir dir;
  std::string root = dir.file("tree");
  write_tree_file(root + "/LICENSE", "\n\n   MIT License  \n\nCopyright (c) 2024 someone\n");
  write_tree_file(root + "/top.cu", cuda_program(11));
  write_tree_file(root + "/deep/er/inner.cu", cuda_program(12));
  write_tree_file(root + "/vendored/COPYING.txt", "Apache License\nVersion 2.0, January 2004\n");
  write_tree_file(root + "/vendored/src/lib.cu", cuda_program(13));
  Database db = open_db(dir);
  ImportRequest request = request_for(root);
  request.name = "licensed";
  Result<ImportSummary> summary = import_tree(db, request);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  REQUIRE(summary->sample_ids.size() == 3);
  std::map<std::string, BundleLicense> licenses;
  for (const std::string& id : summary->sample_ids) {
    std::optional<BundleProvenance> provenance = bundle_provenance(db, id).value();
    REQUIRE(provenance.has_value());
    CHECK(provenance->tree_name == "licensed");
    REQUIRE(provenance->license.has_value());
    licenses[provenance->program_path] = *provenance->license;
    CHECK(read_bundle(db, id).value()->license->sha256 == provenance->license->sha256);  // the full read agrees
  }
  CHECK(licenses["top.cu"].file == "LICENSE");
  CHECK(licenses["top.cu"].first_line == "MIT License");
  CHECK(licenses["top.cu"].sha256 == sha256_hex(read(root + "/LICENSE")));
  CHECK(licenses["deep/er/inner.cu"].file == "LICENSE");
  CHECK(licenses["vendored/src/lib.cu"].file == "vendored/COPYING.txt");
  CHECK(licenses["vendored/src/lib.cu"].first_line == "Apache License");

  TempDir bare;
  write_tree_file(bare.file("tree/k.cu"), cuda_program(14));
  Database bare_db = open_db(bare);
  Result<ImportSummary> unlicensed = import_tree(bare_db, request_for(bare.file("tree")));
  REQUIRE(unlicensed.ok());
  REQUIRE(unlicensed->sample_ids.size() == 1);
  CHECK_FALSE(bundle_provenance(bare_db, unlicensed->sample_ids[0]).value()->license.has_value());
  Sample generated;
  generated.track = "cuda2hip";
  generated.origin = "template";
  generated.language = "cuda";
  generated.text = cuda_program(15);
  std::string generated_id = insert_sample_if_absent(bare_db, generated).value().id;
  CHECK_FALSE(bundle_provenance(bare_db, generated_id).value().has_value());  // not imported from a tree
}

TEST_CASE("a materialized bundle has the program and headers at their paths and the include folders") {
  TempDir dir;
  std::string root = dir.file("tree");
  write_tree_file(root + "/app/prog.cu", cuda_program(2, 40, "#include <lib/api.h>\n"));
  write_tree_file(root + "/inc/lib/api.h", "#include \"detail.h\"\n");
  write_tree_file(root + "/inc/lib/detail.h", "inline int twice(int x) { return 2 * x; }\n");
  Database db = open_db(dir);
  Result<ImportSummary> summary = import_tree(db, request_for(root));
  REQUIRE(summary.ok());
  REQUIRE(summary->sample_ids.size() == 1);

  std::string out = dir.file("materialized");
  Result<MaterializedBundle> written = materialize_bundle(db, summary->sample_ids[0], out);
  REQUIRE_MESSAGE(written.ok(), written.message());
  CHECK(written->program_path == out + "/app/prog.cu");
  CHECK(written->include_dirs == std::vector<std::string>{out + "/inc"});
  CHECK(written->files.size() == 3);
  for (const char* relative : {"app/prog.cu", "inc/lib/api.h", "inc/lib/detail.h"}) {
    CHECK_MESSAGE(read(out + "/" + relative) == read(root + "/" + relative), relative);
  }
}

TEST_CASE("a sample that is no bundle materializes as its text alone") {
  TempDir dir;
  Database db = open_db(dir);
  Sample plain{"", "cuda2hip", "template", "cuda", cuda_program(3)};
  std::string id = insert_sample_if_absent(db, plain).value().id;
  CHECK_FALSE(read_bundle(db, id).value().has_value());
  MaterializedBundle written = materialize_bundle(db, id, dir.file("out")).value();
  CHECK(written.program_path == dir.file("out") + "/program.cu");
  CHECK(read(written.program_path) == plain.text);
  CHECK(written.include_dirs.empty());
}

TEST_CASE("a bundle's id covers every header: a changed header is a new sample, a header-less one keeps the text id") {
  Bundle bundle{"tree", std::nullopt, "a.cu", cuda_program(4)};
  CHECK(bundle_id_for(bundle) == sample_id_for(bundle.program_text));
  bundle.headers = {{"a.h", "#define N 1\n"}};
  std::string first = bundle_id_for(bundle);
  CHECK(first != sample_id_for(bundle.program_text));
  bundle.headers[0].content = "#define N 2\n";
  CHECK(bundle_id_for(bundle) != first);
  bundle.headers[0].content = "#define N 1\n";
  bundle.tree_name = "renamed";
  bundle.commit = "0123456789abcdef0123456789abcdef01234567";
  CHECK(bundle_id_for(bundle) == first);  // provenance is not content

  TempDir dir;
  Database db = open_db(dir);
  Sample sample{"", "cuda2hip", "imported", "cuda"};
  CHECK(store_bundle(db, bundle, sample).value().inserted);
  CHECK_FALSE(store_bundle(db, bundle, sample).value().inserted);
  bundle.headers[0].content = "#define N 2\n";
  InsertOutcome changed = store_bundle(db, bundle, sample).value();
  CHECK(changed.inserted);
  CHECK(read_bundle(db, changed.id).value()->headers[0].content == "#define N 2\n");
  CHECK(read_bundle(db, first).value()->headers[0].content == "#define N 1\n");
}

TEST_CASE("importing the same tree twice adds nothing the second time") {
  TempDir dir;
  std::string root = dir.file("tree");
  for (int seed = 10; seed < 13; ++seed) write_tree_file(root + "/k" + std::to_string(seed) + ".cu", cuda_program(seed));
  Database db = open_db(dir);
  CHECK(import_tree(db, request_for(root)).value().programs_kept == 3);
  ImportSummary again = import_tree(db, request_for(root)).value();
  CHECK(again.programs_kept == 0);
  CHECK(again.sample_ids.empty());
  CHECK(skipped(again, "already_present") == 3);
}

TEST_CASE("the filters skip short, long, kernel-less, hello-world and duplicate programs, each with its reason") {
  TempDir dir;
  std::string root = dir.file("tree");
  write_tree_file(root + "/keep.cu", cuda_program(20));
  write_tree_file(root + "/host_only.cpp", "#include <cstdio>\nint main() {\n" + std::string(12, '\n') + "  return 0;\n}\n");
  write_tree_file(root + "/launcher.cpp", cuda_program(21));
  write_tree_file(root + "/no_kernel.cu",
        "#include <cstdio>\n// __global__ in a comment\nint main() {\n  printf(\"<<<x>>>\");\n" +
            std::string(10, '\n') + "}\n");
  write_tree_file(root + "/short.cu", "__global__ void k(float* x) { x[0] = 1; }\n");
  write_tree_file(root + "/long.cu", cuda_program(22, 7100));
  write_tree_file(root + "/hello.cu", kHelloWorld);
  write_tree_file(root + "/copy/keep.cu", cuda_program(20));
  write_tree_file(root + "/similar.cu", cuda_program(23));
  write_tree_file(root + "/similar_too.cu", cuda_program(23) + "// one more line\n");
  Database db = open_db(dir);

  // A stand-in screen (the command uses MinHash): texts equal once comments are removed are "similar".
  std::set<std::string> seen;
  auto without_comments = [](const std::string& text) {
    return normalize_program_text(code_without_comments(text, false));
  };
  ImportRequest request = request_for(root);
  request.near_duplicates.remember = [&](const std::string& text) { seen.insert(without_comments(text)); };
  request.near_duplicates.seen_similar = [&](const std::string& text) {
    return seen.count(without_comments(text)) > 0;
  };
  ImportSummary summary = import_tree(db, request).value();
  CHECK(summary.programs_kept == 3);  // keep.cu, launcher.cpp, similar.cu
  CHECK(reason_of(summary, "host_only.cpp") == "no_kernel");
  CHECK(reason_of(summary, "no_kernel.cu") == "no_kernel");
  CHECK(reason_of(summary, "short.cu") == "too_short");
  CHECK(reason_of(summary, "long.cu") == "too_long");
  CHECK(reason_of(summary, "hello.cu") == "hello_world");
  CHECK(reason_of(summary, "keep.cu") == "duplicate");  // copy/keep.cu is walked first
  CHECK(reason_of(summary, "similar_too.cu") == "near_duplicate");
}

TEST_CASE("exact duplicates of the corpus already stored are skipped") {
  TempDir dir;
  std::string root = dir.file("tree");
  write_tree_file(root + "/a.cu", cuda_program(30, 40, "#include \"a.h\"\n"));
  write_tree_file(root + "/a.h", "#define A 1\n");
  Database db = open_db(dir);
  Sample generated{"", "cuda2hip", "template", "cuda", read(root + "/a.cu")};
  REQUIRE(insert_sample_if_absent(db, generated).ok());
  ImportSummary summary = import_tree(db, request_for(root)).value();
  CHECK(summary.programs_kept == 0);
  CHECK(reason_of(summary, "a.cu") == "duplicate");
}

TEST_CASE("the hello-world rule: every kernel only prints and cannot hand a result back") {
  std::vector<std::string> print = {"printf"};
  CHECK(is_hello_world(code_without_comments(kHelloWorld, true), print));
  CHECK_FALSE(is_hello_world("__global__ void k(int* out) { printf(\"hi\"); out[0] = 1; }", print));
  CHECK_FALSE(is_hello_world("__global__ void k(int n) { int x = n * 2; }", print));
  CHECK_FALSE(
      is_hello_world("__global__ void a() { printf(\"hi\"); }\n__global__ void b(float* x) { x[0] = 1; }", print));
  CHECK_FALSE(is_hello_world("int main() { printf(\"hello\"); }", print));
  CHECK(is_hello_world("__global__ void a();\n__global__ void a() { printf(\"hi\"); }", print));
}

TEST_CASE("the program-text rules see a raw string as one string and a digit-separated number as code") {
  // The quotes inside a raw string end nothing; the ' of 1'000 opens no char literal.
  std::string text = "auto s = R\"x(\" __global__ /* \")x\"; int n = 1'000; __global__ void k() {} // end\n";
  CHECK(code_without_comments(text, true) == "auto s = R\"x()x\"; int n = 1'000; __global__ void k() {} \n");
  CHECK(code_without_comments(text, false) ==
        "auto s = R\"x(\" __global__ /* \")x\"; int n = 1'000; __global__ void k() {} \n");
  CHECK_FALSE(has_kernel_or_launch(code_without_comments("const char* s = u8R\"(\" __global__ \")\";\n", true)));
  CHECK(has_kernel_or_launch(code_without_comments("int n = 0x1'F; __global__ void k() {}\n", true)));
}

TEST_CASE("binary, unreadable, oversized, special files and symlink loops are skipped with a reason") {
  TempDir dir;
  std::string root = dir.file("tree");
  write_tree_file(root + "/good.cu", cuda_program(40));
  write_tree_file(root + "/binary.cu", std::string("\x7f"
                                         "ELF\0\0\x01",
                                         7) +
                                 cuda_program(41));
  write_tree_file(root + "/locked.cu", cuda_program(42));
  chmod((root + "/locked.cu").c_str(), 0);
  write_tree_file(dir.file("outside.cu"), cuda_program(43));
  fs::create_directories(root + "/sub");
  fs::create_directory_symlink("..", root + "/sub/loop");
  fs::create_directory_symlink(root + "/sub/self", root + "/sub/self");
  fs::create_symlink(dir.file("outside.cu"), root + "/escape.cu");
  fs::create_symlink(root + "/good.cu", root + "/alias.cu");
  fs::create_symlink(root + "/missing.cu", root + "/dangling.cu");
  REQUIRE(mkfifo((root + "/pipe.cu").c_str(), 0600) == 0);
  {
    std::ofstream big(root + "/big.cu", std::ios::binary);
    big << cuda_program(44);
    big.seekp(50 * 1024 * 1024);
    big << "\n";
  }
  Database db = open_db(dir);
  ImportSummary summary = import_tree(db, request_for(root)).value();
  CHECK(reason_of(summary, "binary.cu") == "binary");
  CHECK(reason_of(summary, "big.cu") == "too_large");
  CHECK(reason_of(summary, "sub/loop") == "symlink_loop");
  CHECK(reason_of(summary, "sub/self") == "symlink_loop");
  CHECK(reason_of(summary, "escape.cu") == "outside_tree");
  CHECK(reason_of(summary, "alias.cu") == "symlink");
  CHECK(reason_of(summary, "dangling.cu") == "broken_symlink");
  CHECK(reason_of(summary, "pipe.cu") == "not_regular");
  if (geteuid() != 0) {
    CHECK(reason_of(summary, "locked.cu") == "unreadable");
    CHECK(summary.programs_kept == 1);
  } else {
    CHECK(summary.programs_kept == 2);  // root reads a file whatever its mode
  }
  chmod((root + "/locked.cu").c_str(), 0644);
}

TEST_CASE("a tree in a git checkout records its commit") {
  TempDir dir;
  std::string root = dir.file("repo");
  write_tree_file(root + "/k.cu", cuda_program(50));
  std::string git = "git -C " + root + " -c user.name=t -c user.email=t@t ";
  if (!testing::program_here("git")) return;
  REQUIRE(std::system((git + "init -q && " + git + "add k.cu && " + git + "commit -q -m x").c_str()) == 0);
  Database db = open_db(dir);
  ImportSummary summary = import_tree(db, request_for(root)).value();
  REQUIRE(summary.commit.has_value());
  CHECK(summary.commit->size() == 40);
  CHECK(read_bundle(db, summary.sample_ids.at(0)).value()->commit == summary.commit);
  CHECK(summary.files_seen == 1);  // .git is not walked

  // A copy of another tree inside the checkout that git does not track is not at its commit.
  write_tree_file(root + "/copied/k2.cu", cuda_program(60));
  CHECK_FALSE(git_commit_of(root + "/copied", 10).has_value());
  CHECK(git_commit_of(root, 10) == summary.commit);
}

TEST_CASE("import filters load from the shipped file, and a bad value names the file and key") {
  Result<ImportFilters> shipped = load_import_filters(data_path("policies/import_filters.json"));
  REQUIRE_MESSAGE(shipped.ok(), shipped.message());
  CHECK(shipped->max_lines == 7000);
  CHECK(shipped->min_lines == 10);

  Result<ImportFilters> wrong_type = import_filters_from_json(R"({"max_lines": "many"})", "f.json");
  REQUIRE_FALSE(wrong_type.ok());
  CHECK(wrong_type.message() == "f.json: key /max_lines has value \"many\", expected an integer");
  Result<ImportFilters> unknown = import_filters_from_json(R"({"hello_world": {"loud": true}})", "f.json");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.message().find("/hello_world/loud") != std::string::npos);
  Result<ImportFilters> range = import_filters_from_json(R"({"near_duplicate": {"threshold": 2}})", "f.json");
  REQUIRE_FALSE(range.ok());
  CHECK(range.message() == "f.json: key /near_duplicate/threshold has value 2, expected a number in (0, 1]");
  Result<ImportFilters> order = import_filters_from_json(R"({"min_lines": 100, "max_lines": 50})", "f.json");
  CHECK(order.message() == "f.json: key /max_lines has value 50, expected at least min_lines");
}
