// The JSON a remote worker and the daemon exchange for a verify job: its input (the sample and
// bundle) and its output (daemon/verify/verify_io.h). Long or non-UTF-8 strings (artifacts,
// tool output, launch buffers, headers) travel content-addressed: in the JSON as
// {"sha256": HEX}, their bytes separately, so a receiver that holds them already is not sent them
// again. Binary artifacts travel without their bytes (the store keeps text artifacts only).
// Decoding asks a lookup for each address and fails naming every one it lacks.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/verify/sample_verification.h"

namespace tailforge {

// Content by SHA-256, filled while encoding.
using Blobs = std::map<std::string, std::string>;
// The bytes of an address, or nothing when unknown.
using BlobLookup = std::function<std::optional<std::string>(const std::string& sha256)>;

nlohmann::json verify_input_to_json(const VerifyInput& input, Blobs& blobs);
Result<VerifyInput> verify_input_from_json(const nlohmann::json& json, const BlobLookup& lookup);

nlohmann::json verify_output_to_json(const VerifyOutput& output, Blobs& blobs);
Result<VerifyOutput> verify_output_from_json(const nlohmann::json& json, const BlobLookup& lookup);

// Every content address a JSON document refers to.
std::vector<std::string> blob_addresses(const nlohmann::json& json);

}  // namespace tailforge
