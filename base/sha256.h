// SHA-256 of text, as lowercase hex: the content address of samples, artifacts and cache keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tailforge {

std::string sha256_hex(std::string_view data);

// The first 64 bits of the digest, as a number: a seed derived from text.
uint64_t sha256_prefix64(std::string_view data);

}  // namespace tailforge
