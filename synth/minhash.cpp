#include "synth/minhash.h"

#include <algorithm>
#include <cctype>
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

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

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

// Length of the comment starting at text[i], or 0.
size_t comment_length(std::string_view text, size_t i) {
  if (i + 1 >= text.size() || text[i] != '/') return 0;
  if (text[i + 1] == '/') {
    size_t end = text.find('\n', i);
    return (end == std::string_view::npos ? text.size() : end) - i;
  }
  if (text[i + 1] == '*') {
    size_t end = text.find("*/", i + 2);
    return (end == std::string_view::npos ? text.size() : end + 2) - i;
  }
  return 0;
}

size_t quoted_length(std::string_view text, size_t i) {
  char quote = text[i];
  size_t j = i + 1;
  while (j < text.size() && text[j] != quote && text[j] != '\n') {
    j += (text[j] == '\\' && j + 1 < text.size()) ? 2 : 1;
  }
  return std::min(j + 1, text.size()) - i;
}

size_t number_length(std::string_view text, size_t i) {
  size_t j = i;
  while (j < text.size()) {
    char c = text[j];
    bool exponent_sign = (c == '+' || c == '-') && j > i && (text[j - 1] == 'e' || text[j - 1] == 'E') &&
                         !(j > i + 1 && (text[i + 1] == 'x' || text[i + 1] == 'X'));
    if (!is_identifier_char(c) && c != '.' && !exponent_sign) break;
    ++j;
  }
  return j - i;
}

}  // namespace

std::vector<std::string> normalized_tokens(std::string_view text, const MinHashOptions& options) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (size_t comment = comment_length(text, i)) {
      i += comment;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"' || c == '\'') {
      size_t length = quoted_length(text, i);
      tokens.emplace_back(text.substr(i, length));
      i += length;
    } else if (is_digit(c) || (c == '.' && i + 1 < text.size() && is_digit(text[i + 1]))) {
      size_t length = number_length(text, i);
      tokens.emplace_back(options.mask_numbers ? std::string_view("0") : text.substr(i, length));
      i += length;
    } else if (is_identifier_start(c)) {
      size_t j = i;
      while (j < text.size() && is_identifier_char(text[j])) ++j;
      std::string_view word = text.substr(i, j - i);
      bool masked = options.mask_identifiers && !keywords().count(word);
      tokens.emplace_back(masked ? std::string_view("id") : word);
      i = j;
    } else {
      tokens.emplace_back(1, c);
      ++i;
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
  std::vector<uint64_t> x = shingle_hashes(a, options);
  std::vector<uint64_t> y = shingle_hashes(b, options);
  if (x.empty() && y.empty()) return 1.0;
  std::vector<uint64_t> common;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(common));
  return static_cast<double>(common.size()) / static_cast<double>(x.size() + y.size() - common.size());
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
  auto integrate = [](auto f, double from, double to) {
    const int steps = 200;
    double width = (to - from) / steps, area = 0;
    for (int i = 0; i < steps; ++i) area += f(from + (i + 0.5) * width) * width;
    return area;
  };
  LshBands best{1, std::max(1, permutations)};
  double best_error = std::numeric_limits<double>::max();
  for (int bands = 1; bands <= permutations; ++bands) {
    for (int rows = 1; bands * rows <= permutations; ++rows) {
      auto collide = [&](double s) { return 1.0 - std::pow(1.0 - std::pow(s, rows), bands); };
      double false_positive = integrate(collide, 0.0, threshold);
      double false_negative = integrate([&](double s) { return 1.0 - collide(s); }, threshold, 1.0);
      double error = false_positive + false_negative;
      if (error < best_error) {
        best_error = error;
        best = {bands, rows};
      }
    }
  }
  return best;
}

NearDuplicateIndex::NearDuplicateIndex(const MinHashOptions& options)
    : hasher_(options), bands_(choose_lsh_bands(hasher_.options().permutations, options.threshold)) {}

uint64_t lsh_band_key(const MinHashSignature& signature, const LshBands& bands, int band) {
  uint64_t h = splitmix64(static_cast<uint64_t>(band) + 1);
  for (int row = 0; row < bands.rows; ++row) h = splitmix64(h ^ signature[band * bands.rows + row]);
  return h;
}

size_t NearDuplicateIndex::add(std::string_view text) { return add_signature(hasher_.signature(text)); }

size_t NearDuplicateIndex::add_signature(MinHashSignature signature) {
  size_t index = signatures_.size();
  for (int band = 0; band < bands_.bands; ++band) {
    uint32_t& head = bucket_head_[lsh_band_key(signature, bands_, band)];
    next_in_bucket_.push_back(head);
    head = static_cast<uint32_t>(index + 1);
  }
  signatures_.push_back(std::move(signature));
  return index;
}

std::vector<size_t> NearDuplicateIndex::near_duplicates(const MinHashSignature& signature) const {
  std::vector<size_t> found;
  for (int band = 0; band < bands_.bands; ++band) {
    auto bucket = bucket_head_.find(lsh_band_key(signature, bands_, band));
    if (bucket == bucket_head_.end()) continue;
    for (uint32_t member = bucket->second; member != 0;
         member = next_in_bucket_[(member - 1) * bands_.bands + band]) {
      size_t index = member - 1;
      if (std::find(found.begin(), found.end(), index) != found.end()) continue;
      if (estimated_jaccard(signature, signatures_[index]) >= hasher_.options().threshold) found.push_back(index);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::optional<size_t> NearDuplicateIndex::find_near_duplicate_of_signature(const MinHashSignature& signature) const {
  std::vector<size_t> found = near_duplicates(signature);
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::optional<size_t> NearDuplicateIndex::find_near_duplicate(std::string_view text) const {
  return find_near_duplicate_of_signature(hasher_.signature(text));
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
    MinHashSignature signature = index.hasher().signature(texts[i]);
    for (size_t other : index.near_duplicates(signature)) {
      size_t a = root(i), b = root(other);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
    index.add_signature(std::move(signature));
  }
  std::vector<size_t> labels(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) labels[i] = root(i);
  return labels;
}

uint64_t mix64(uint64_t x) { return splitmix64(x); }

uint64_t token_hash64(std::string_view token) { return splitmix64(fnv1a(token)); }

}  // namespace tailforge
