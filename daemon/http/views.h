// JSON views of stored records shared by the CLI and the HTTP API: a sample with its
// artifacts and verifications, a job. (Lineage is synth/lineage.h.)
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/queue.h"
#include "store/samples.h"

namespace tailforge {

bool looks_like_sample_id(const std::string& id);
nlohmann::json sample_json(Database& db, const Sample& sample);
nlohmann::json job_json(const Job& job);

}  // namespace tailforge
