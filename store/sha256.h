// SHA-256 of text, as lowercase hex: the content address of samples, artifacts and cache keys.
#pragma once

#include <string>
#include <string_view>

namespace tailforge {

std::string sha256_hex(std::string_view data);

}  // namespace tailforge
