// c2x86 samples as the store keeps them: the function's translation unit is the sample's text
// (what a model compiles), its kind the domain, its C feature tags the features, and its name,
// declarations, driver and IO cases the variables. A generated function's cases carry inputs
// only; the verify job records the expected outputs from the gcc build and stores them as the
// sample's "io_cases" artifact, which evaluation and export read. It runs nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "store/database.h"
#include "store/samples.h"
#include "verifier/c2x86/c_function.h"

namespace tailforge {

inline constexpr const char* kIoCasesArtifact = "io_cases";

// The sample of `function` (track c2x86, language c), with origin, kind and cycle.
Sample c2x86_sample(const CFunction& function, const std::string& kind, const std::string& origin,
                    std::optional<int64_t> cycle);

// The function a c2x86 sample stores; the error names the missing or malformed variable.
Result<CFunction> c_function_of(const Sample& sample);

// The function a verified c2x86 sample stores, with the IO cases its verify job recorded (its
// "io_cases" artifact): what evaluation runs a model's answer on and export writes. The error says
// what is missing or malformed.
Result<CFunction> c_function_with_recorded_cases(Database& db, const Sample& sample);

// IO cases as JSON ([{"input": ..., "expected": ...}]) and back.
nlohmann::json io_cases_to_json(const std::vector<IoCase>& cases);
Result<std::vector<IoCase>> io_cases_from_json(const std::string& text);

// The kinds of the built-in generator that write `tag`, in generator order; empty for a tag no
// kind writes.
std::vector<std::string> c_kinds_with_feature(const std::string& tag);

}  // namespace tailforge
