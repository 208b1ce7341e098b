#include "synth/minhash.h"

#include "synth/similarity_join.h"
#include "text/cpp_lexer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

namespace tailforge {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Words kept as themselves when identifiers are masked: C/C++/CUDA keywords and builtin types.
const std::unordered_set<std::string_view>& keywords() {
  static const std::unordered_set<std::string_view> words = {
      "auto", "bool", "break", "case", "char", "const", "constexpr", "continue", "default", "do", "double",
      "else", "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int", "long", "nullptr",
      "return", "short", "signed", "sizeof", "static", "struct", "switch", "template", "true", "typedef",
      "typename", "union", "unsigned", "void", "volatile", "while", "size_t", "__global__", "__device__",
      "__host__", "__shared__", "__constant__", "__syncthreads", "__restrict__", "threadIdx", "blockIdx",
      "blockDim", "gridDim", "asm", "include", "define", "pragma", "unroll"};
  return words;
}

// The shingles of every stored signature were made by a tokenizer of minhash's own, before the
// shared lexer; these keep its tokens wherever the lexer's differ for anything but raw strings and
// digit separators. A // comment ended at its newline, even after a backslash.
size_t legacy_comment_end(std::string_view text, const text::CppToken& comment) {
  std::string_view spelled = text.substr(comment.begin, comment.end - comment.begin);
  size_t newline = spelled.find('\n');
  return spelled.starts_with("//") && newline != std::string_view::npos ? comment.begin + newline : comment.end;
}

// A number took a sign only after e or E, and not in a hex number (0x1p+4 was 0x1p, +, 4).
size_t legacy_number_end(std::string_view text, const text::CppToken& number) {
  bool hex = number.end - number.begin > 1 && (text[number.begin + 1] == 'x' || text[number.begin + 1] == 'X');
  for (size_t i = number.begin + 1; i < number.end; ++i) {
    bool sign = text[i] == '+' || text[i] == '-';
    if (sign && (hex || (text[i - 1] != 'e' && text[i - 1] != 'E'))) return i;
  }
  return number.end;
}

}  // namespace

std::vector<std::string> normalized_tokens(std::string_view text, const MinHashOptions& options) {
  std::vector<std::string> tokens;
  auto add_word = [&](std::string_view word) {
    bool masked = options.mask_identifiers && !keywords().count(word);
    tokens.emplace_back(masked ? std::string_view("id") : word);
  };
  size_t at = 0;
  while (at < text.size()) {
    text::CppToken token = text::next_cpp_token(text, at);
    at = token.end;
    std::string_view spelled = text.substr(token.begin, token.end - token.begin);
    switch (token.kind) {
      case text::CppTokenKind::whitespace:
        break;
      case text::CppTokenKind::comment:
        at = legacy_comment_end(text, token);
        break;
      case text::CppTokenKind::string_literal:
      case text::CppTokenKind::char_literal: {
        // Legacy: an encoding prefix was a word of its own, and a literal left open at the end of
        // its line kept the newline. A raw string is one token, its prefix included.
        size_t start = token.raw ? token.begin : token.begin + token.prefix;
        if (start > token.begin) add_word(text.substr(token.begin, start - token.begin));
        if (!token.closed && at < text.size() && text[at] == '\n') ++at;
        tokens.emplace_back(text.substr(start, at - start));
        break;
      }
      case text::CppTokenKind::number:
        at = legacy_number_end(text, token);
        tokens.emplace_back(options.mask_numbers ? std::string_view("0") : text.substr(token.begin, at - token.begin));
        break;
      case text::CppTokenKind::identifier:
        add_word(spelled);
        break;
      case text::CppTokenKind::punctuation:
        tokens.emplace_back(spelled);
        break;
    }
  }
  return tokens;
}

std::vector<uint64_t> shingle_hashes(std::string_view text, const MinHashOptions& options) {
  std::vector<std::string> tokens = normalized_tokens(text, options);
  std::vector<uint64_t> token_hashes(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) token_hashes[i] = fnv1a(tokens[i]);
  size_t k = static_cast<size_t>(std::max(1, options.shingle_tokens));
  std::vector<uint64_t> shingles;
  if (tokens.empty()) return shingles;
  size_t count = tokens.size() >= k ? tokens.size() - k + 1 : 1;
  shingles.reserve(count);
  for (size_t start = 0; start < count; ++start) {
    uint64_t h = 0x5bd1e9955bd1e995ull;
    for (size_t j = start; j < std::min(start + k, tokens.size()); ++j) h = splitmix64(h ^ token_hashes[j]);
    shingles.push_back(h);
  }
  std::sort(shingles.begin(), shingles.end());
  shingles.erase(std::unique(shingles.begin(), shingles.end()), shingles.end());
  return shingles;
}

double shingle_jaccard(std::string_view a, std::string_view b, const MinHashOptions& options) {
  return shingle_set_jaccard(shingle_hashes(a, options), shingle_hashes(b, options));
}

double shingle_set_jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return 1.0;
  return set_jaccard(a, b);
}

MinHasher::MinHasher(const MinHashOptions& options) : options_(options) {
  options_.permutations = std::max(1, options_.permutations);
  uint64_t state = options_.seed;
  for (int i = 0; i < options_.permutations; ++i) {
    state = splitmix64(state);
    multipliers_.push_back(state | 1);  // odd: a bijection on 64-bit words
    state = splitmix64(state);
    offsets_.push_back(state);
  }
}

MinHashSignature MinHasher::signature(std::string_view text) const {
  return signature_of_shingles(shingle_hashes(text, options_));
}

MinHashSignature MinHasher::signature_of_shingles(const std::vector<uint64_t>& shingles) const {
  size_t n = multipliers_.size();
  std::vector<uint64_t> minimum(n, std::numeric_limits<uint64_t>::max());
  for (uint64_t shingle : shingles) {
    for (size_t i = 0; i < n; ++i) minimum[i] = std::min(minimum[i], multipliers_[i] * shingle + offsets_[i]);
  }
  MinHashSignature signature(n);
  for (size_t i = 0; i < n; ++i) signature[i] = static_cast<uint32_t>(minimum[i] >> 32);
  return signature;
}

double estimated_jaccard(const MinHashSignature& a, const MinHashSignature& b) {
  size_t n = std::min(a.size(), b.size());
  if (n == 0) return 0.0;
  size_t equal = 0;
  for (size_t i = 0; i < n; ++i) equal += a[i] == b[i];
  return static_cast<double>(equal) / static_cast<double>(n);
}

LshBands choose_lsh_bands(int permutations, double threshold) {
  const double kMissAtThreshold = 1e-6;
  permutations = std::max(1, permutations);
  LshBands chosen{permutations, 1};
  for (int rows = 1; rows <= permutations; ++rows) {
    int bands = permutations / rows;
    double miss = std::pow(1.0 - std::pow(threshold, rows), bands);
    if (miss > kMissAtThreshold) break;
    chosen = {bands, rows};
  }
  return chosen;
}

NearDuplicateIndex::NearDuplicateIndex(const MinHashOptions& options)
    : hasher_(options), bands_(choose_lsh_bands(hasher_.options().permutations, options.threshold)) {}

uint64_t lsh_band_key(const MinHashSignature& signature, const LshBands& bands, int band) {
  uint64_t h = splitmix64(static_cast<uint64_t>(band) + 1);
  for (int row = 0; row < bands.rows; ++row) h = splitmix64(h ^ signature[band * bands.rows + row]);
  return h;
}

size_t NearDuplicateIndex::add(std::string_view text) { return add_shingles(shingle_hashes(text, hasher_.options())); }

size_t NearDuplicateIndex::add_shingles(std::vector<uint64_t> shingles) {
  size_t index = signatures_.size();
  MinHashSignature signature = hasher_.signature_of_shingles(shingles);
  for (int band = 0; band < bands_.bands; ++band) {
    uint32_t& head = bucket_head_[lsh_band_key(signature, bands_, band)];
    next_in_bucket_.push_back(head);
    head = static_cast<uint32_t>(index + 1);
  }
  signatures_.push_back(std::move(signature));
  shingles_.push_back(std::move(shingles));
  return index;
}

std::vector<size_t> NearDuplicateIndex::near_duplicates(const std::vector<uint64_t>& shingles) const {
  const double threshold = hasher_.options().threshold;
  MinHashSignature signature = hasher_.signature_of_shingles(shingles);
  std::vector<size_t> candidates;
  for (int band = 0; band < bands_.bands; ++band) {
    auto bucket = bucket_head_.find(lsh_band_key(signature, bands_, band));
    if (bucket == bucket_head_.end()) continue;
    for (uint32_t member = bucket->second; member != 0;
         member = next_in_bucket_[(member - 1) * bands_.bands + band]) {
      candidates.push_back(member - 1);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<size_t> found;
  for (size_t index : candidates) {
    if (estimated_jaccard(signature, signatures_[index]) < threshold - kEstimateMargin) continue;
    if (shingle_set_jaccard(shingles, shingles_[index]) >= threshold) found.push_back(index);
  }
  return found;
}

std::optional<size_t> NearDuplicateIndex::find_near_duplicate_of_shingles(const std::vector<uint64_t>& shingles) const {
  std::vector<size_t> found = near_duplicates(shingles);
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::optional<size_t> NearDuplicateIndex::find_near_duplicate(std::string_view text) const {
  return find_near_duplicate_of_shingles(shingle_hashes(text, hasher_.options()));
}

std::vector<size_t> cluster_texts(const std::vector<std::string>& texts, const MinHashOptions& options) {
  std::vector<size_t> parent(texts.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&parent](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  NearDuplicateIndex index(options);
  for (size_t i = 0; i < texts.size(); ++i) {
    std::vector<uint64_t> shingles = shingle_hashes(texts[i], options);
    for (size_t other : index.near_duplicates(shingles)) {
      size_t a = root(i), b = root(other);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
    index.add_shingles(std::move(shingles));
  }
  std::vector<size_t> labels(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) labels[i] = root(i);
  return labels;
}

uint64_t mix64(uint64_t x) { return splitmix64(x); }

uint64_t token_hash64(std::string_view token) { return splitmix64(fnv1a(token)); }

}  // namespace tailforge
