// `tailforge model check`: whether a model answers before it is trusted with an evaluation set.
// For an openai model: the ids the server lists (GET /v1/models), whether the model id is one of
// them, and one short chat request with its latency, tokens and the answer's first line. For a
// command model: one small input of its track, answered within its timeout. Every failure names
// the URL (or command), the HTTP status and what the server (or program) said.
#pragma once

#include <string>
#include <vector>

#include "agents/model_runner.h"

namespace tailforge {

struct ModelCheck {
  bool ok = false;
  std::vector<std::string> lines;  // what was tried and what came back, in order
};

// `small_input`: an input of the model's track, asked of a command model (synth/tracks.h has one
// per track).
ModelCheck check_model(const ModelRecord& model, const ModelRuntime& runtime, const std::string& small_input);

}  // namespace tailforge
