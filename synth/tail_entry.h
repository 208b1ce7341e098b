// One entry of a cycle's tail list: a weak feature, domain, failure category or CUDA API family
// or name, the signal that found it and its score with the figures behind it. Shared by the
// detectors (synth/tails.h, synth/api_tails.h); it computes nothing beyond a weight lookup.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace tailforge {

struct TailEntry {
  std::string dimension;  // feature, domain, category, api_family (synth/api_tails.h), api
  std::string name;
  std::string signal;     // corpus_share, pipeline_yield, model_failure
  double score = 0;       // signal weight x severity in [0, 1]; higher is a longer tail
  nlohmann::json numbers = nlohmann::json::object();  // the figures behind the score
};

// The weight `weights` gives `key`: 1 where it names none.
inline double weight_of(const std::map<std::string, double>& weights, const std::string& key) {
  auto found = weights.find(key);
  return found == weights.end() ? 1.0 : found->second;
}

}  // namespace tailforge
