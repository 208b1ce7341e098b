#include "base/sha256.h"

#include <openssl/evp.h>

#include <array>

namespace tailforge {
namespace {

using Digest = std::array<unsigned char, 32>;

Digest sha256(std::string_view data) {
  Digest digest{};
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (unsigned char byte : sha256(data)) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  return hex;
}

uint64_t sha256_prefix64(std::string_view data) {
  Digest digest = sha256(data);
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = value << 8 | digest[i];  // the first 16 hex digits, read as one number
  return value;
}

}  // namespace tailforge
