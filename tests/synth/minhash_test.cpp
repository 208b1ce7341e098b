#include <doctest/doctest.h>

#include <string>

#include "synth/minhash.h"

using namespace tailforge;

namespace {

std::string kernel(const std::string& name, int size, const std::string& body) {
  return "__global__ void " + name + "(float* out, const float* in, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) { " + body + " }\n}\n"
         "int main() {\n  const int n = " + std::to_string(size) + ";\n"
         "  float* d; cudaMalloc(&d, n * sizeof(float));\n"
         "  " + name + "<<<(n + 255) / 256, 256>>>(d, d, n);\n  cudaDeviceSynchronize();\n"
         "  printf(\"done %d\\n\", n);\n  return 0;\n}\n";
}

}  // namespace

TEST_CASE("comments and whitespace do not change the tokens, masking folds literals and names") {
  MinHashOptions options;
  std::string a = "int x = 42; // the answer\n/* block */ return x;";
  std::string b = "int   x=42;\n\n return x ;";
  CHECK(normalized_tokens(a, options) == normalized_tokens(b, options));
  options.mask_numbers = true;
  options.mask_identifiers = true;
  CHECK(normalized_tokens("int y = 7; return y;", options) == normalized_tokens(a, options));
  CHECK(normalized_tokens("float f = 1.5e-3f;", options).size() == 5);
}

TEST_CASE("similar texts collide and different texts do not") {
  MinHashOptions options;
  NearDuplicateIndex index(options);
  std::string original = kernel("scale", 1024, "out[i] = in[i] * 2.0f + 1.0f; out[i] += in[i] * in[i] - 3.0f;");
  std::string commented = "// reformatted copy\n" + original;
  std::string different =
      "#include <cstdio>\nstruct Node { int key; Node* next; };\nint walk(Node* n) { int s = 0; while (n) { s += n->key;"
      " n = n->next; } return s; }\nint main() { Node a{1, nullptr}; Node b{2, &a}; printf(\"%d\\n\", walk(&b)); }\n";
  size_t first = index.add(original);
  REQUIRE(index.find_near_duplicate(commented).has_value());
  CHECK(*index.find_near_duplicate(commented) == first);
  CHECK_FALSE(index.find_near_duplicate(different).has_value());
  CHECK(shingle_jaccard(original, commented, options) == doctest::Approx(1.0));
  CHECK(shingle_jaccard(original, different, options) < 0.1);
  MESSAGE("bands x rows for threshold 0.8: " << index.bands().bands << " x " << index.bands().rows);
  CHECK(index.bands().bands * index.bands().rows <= 128);
}

TEST_CASE("signatures are deterministic and estimate the Jaccard similarity") {
  MinHashOptions options;
  MinHasher hasher(options);
  std::string a = kernel("add", 4096, "out[i] = in[i] + 1.0f;");
  std::string b = kernel("add", 4096, "out[i] = in[i] + 1.0f; out[i] = out[i] * out[i];");
  CHECK(hasher.signature(a) == MinHasher(options).signature(a));
  double exact = shingle_jaccard(a, b, options);
  double estimate = estimated_jaccard(hasher.signature(a), hasher.signature(b));
  MESSAGE("exact " << exact << " estimated " << estimate);
  CHECK(std::abs(exact - estimate) < 0.15);
}

TEST_CASE("clustering groups near-duplicates transitively and keeps distinct texts apart") {
  MinHashOptions options;
  std::string base = kernel("saxpy", 2048, "out[i] = 2.5f * in[i] + out[i]; out[i] = out[i] - in[i] / 3.0f;");
  std::vector<std::string> texts = {base, "/* copy */\n" + base, kernel("other", 7, "out[i] = in[n - i - 1];"),
                                    "int main() { return 0; }", base + "\n// tail comment\n"};
  std::vector<size_t> labels = cluster_texts(texts, options);
  CHECK(labels[0] == 0);
  CHECK(labels[1] == 0);
  CHECK(labels[4] == 0);
  CHECK(labels[2] == 2);
  CHECK(labels[3] == 3);
}

TEST_CASE("a stricter threshold needs more rows per band") {
  LshBands loose = choose_lsh_bands(128, 0.5);
  LshBands strict = choose_lsh_bands(128, 0.9);
  CHECK(strict.rows > loose.rows);
}

TEST_CASE("a raw string is one token and a digit-separated number one number") {
  MinHashOptions options;
  CHECK(normalized_tokens("s = R\"x(a \"b\" // c)x\"; n = 1'000'000;", options) ==
        std::vector<std::string>{"s", "=", "R\"x(a \"b\" // c)x\"", ";", "n", "=", "1'000'000", ";"});
  options.mask_numbers = true;
  CHECK(normalized_tokens("m = 0x1'F;", options) == std::vector<std::string>{"m", "=", "0", ";"});
}

TEST_CASE("ordinary code keeps the tokens and signature it had before the shared lexer") {
  // Stored signatures were made with these tokens: an encoding prefix is a word of its own, a
  // hex float's sign ends its number, a // comment ends at its newline even after a backslash, and
  // a literal left open keeps its newline.
  MinHashOptions options;
  CHECK(normalized_tokens("L\"w\" u8'c' 0x1p-3f 0x1e+5 1e+5", options) ==
        std::vector<std::string>{"L", "\"w\"", "u8", "'c'", "0x1p", "-", "3f", "0x1e", "+", "5", "1e+5"});
  CHECK(normalized_tokens("// a \\\nb \"open\nc", options) == std::vector<std::string>{"b", "\"open\n", "c"});
  std::string text =
      "// ordinary CUDA: a prefix, an escape, a hex float and a continued comment\n"
      "__global__ void scale(float* out, const float* in, int n) { // in place \\\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = in[i] * 0x1p-3f + 1.5e-3f; /* block */\n"
      "}\n"
      "const wchar_t* name = L\"scale\\\"d\"; char c = '\\n';\n";
  // Computed by the tokenizer minhash had before the shared lexer.
  MinHashSignature plain = MinHasher(options).signature(text);
  CHECK(std::vector<uint32_t>(plain.begin(), plain.begin() + 4) ==
        std::vector<uint32_t>{9445234, 180344997, 79019907, 9255922});
  options.mask_numbers = options.mask_identifiers = true;
  MinHashSignature masked = MinHasher(options).signature(text);
  CHECK(std::vector<uint32_t>(masked.begin(), masked.begin() + 4) ==
        std::vector<uint32_t>{55973337, 10349597, 5892487, 61199639});
}
