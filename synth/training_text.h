// The text a model reads and writes: a sample's program as stored, less what tailforge itself put
// into it. Earlier generators opened every program with a provenance line ("// tailforge generated
// program: domain D, template T, seed S"); it stays in stores they wrote and in the artifacts made
// from those programs (a translation keeps its comments). A model that trained on it would learn
// to write template ids and seeds, and it would give away which template made an evaluation item.
// Provenance belongs in the store's lineage and in an export's manifest. Export (every track and
// format) and the evaluation prompts go through training_text.
#pragma once

#include <string>

namespace tailforge {

// `text` without the lines tailforge added (each provenance line, wherever a tool moved it).
std::string training_text(const std::string& text);

// Whether `text` holds a line only tailforge writes (the provenance line). For tests and checks.
bool has_tailforge_marker(const std::string& text);

}  // namespace tailforge
