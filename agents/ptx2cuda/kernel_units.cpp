#include "agents/ptx2cuda/kernel_units.h"

#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "agents/ptx2cuda/top_level_declarations.h"
#include "agents/token_diff.h"
#include "base/process.h"
#include "text/lines.h"

namespace tailforge {
namespace {

using Declarations = std::vector<TopLevelDeclaration>;

Result<Declarations> split_for_units(const std::string& source) {
  Result<Declarations> declarations = split_top_level_declarations(source);
  if (!declarations.ok()) return make_error("kernel units: " + declarations.message());
  for (const TopLevelDeclaration& declaration : *declarations) {
    if (declaration.contains_kernel) {
      return make_error("kernel units: a __global__ kernel inside the namespace or extern \"C\" block at byte " +
                        std::to_string(declaration.begin) + " is not supported");
    }
  }
  return declarations;
}

// Every directive but a #define (kept when something kept uses its name), and using-directives.
bool always_kept(const TopLevelDeclaration& declaration) {
  bool is_define = declaration.kind == DeclarationKind::preprocessor && !declaration.declared_names.empty();
  return (declaration.kind == DeclarationKind::preprocessor && !is_define) ||
         declaration.kind == DeclarationKind::using_directive;
}

// Which declarations the roots reach through the names they mention, transitively.
std::vector<bool> reachable_declarations(const Declarations& declarations, size_t root,
                                         const std::vector<std::string>& extra_names) {
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < declarations.size(); ++i) {
    for (const std::string& name : declarations[i].declared_names) by_name[name].push_back(i);
  }
  std::vector<bool> kept(declarations.size(), false);
  std::deque<std::string> pending(extra_names.begin(), extra_names.end());
  std::set<std::string> seen;
  for (size_t i = 0; i < declarations.size(); ++i) {
    if (!always_kept(declarations[i]) && i != root) continue;
    kept[i] = true;
    pending.insert(pending.end(), declarations[i].mentioned_names.begin(), declarations[i].mentioned_names.end());
  }
  while (!pending.empty()) {
    std::string name = std::move(pending.front());
    pending.pop_front();
    if (!seen.insert(name).second) continue;
    for (size_t index : by_name[name]) {
      if (kept[index]) continue;
      kept[index] = true;
      const std::vector<std::string>& mentioned = declarations[index].mentioned_names;
      pending.insert(pending.end(), mentioned.begin(), mentioned.end());
    }
  }
  return kept;
}

KernelUnit assemble_unit(const std::string& source, const Declarations& declarations, size_t kernel_index,
                         const std::vector<bool>& kept, const std::vector<std::string>& appended_lines) {
  const TopLevelDeclaration& kernel = declarations[kernel_index];
  KernelUnit unit{kernel.declared_names.front(), kernel.is_template, "", {}, kernel_index};
  bool previous_is_directive = true;
  for (size_t i = 0; i < declarations.size(); ++i) {
    const TopLevelDeclaration& declaration = declarations[i];
    if (!kept[i]) continue;
    bool is_directive = declaration.kind == DeclarationKind::preprocessor;
    if (!unit.source.empty()) unit.source += previous_is_directive && is_directive ? "\n" : "\n\n";
    unit.source += source.substr(declaration.begin, declaration.end - declaration.begin);
    previous_is_directive = is_directive;
    if (!always_kept(declaration) && i != kernel_index)
      unit.declarations.push_back(declaration_label(source, declaration));
  }
  if (!appended_lines.empty()) unit.source += "\n";
  for (const std::string& line : appended_lines) unit.source += "\n" + line;
  unit.source += "\n";
  return unit;
}

// The demangled form of each name, one to one, from the first demangler that starts.
Result<std::vector<std::string>> demangle(const std::vector<std::string>& mangled_names) {
  std::string input;
  for (const std::string& name : mangled_names) input += name + "\n";
  for (const char* tool : {"c++filt", "cu++filt"}) {
    ProcessSpec spec;
    spec.argv = {tool};
    spec.stdin_text = input;
    spec.timeout_seconds = 30;
    ProcessResult result = run_process(spec);
    if (!result.spawned) continue;
    if (!result.succeeded()) return make_error(std::string(tool) + " failed: " + result.stderr_text);
    std::vector<std::string> lines = text::getline_lines(result.stdout_text);
    if (lines.size() != mangled_names.size()) {
      return make_error(std::string(tool) + " gave " + std::to_string(lines.size()) + " lines for " +
                        std::to_string(mangled_names.size()) + " names");
    }
    return lines;
  }
  return make_error("neither c++filt nor cu++filt could be started to demangle PTX entry names");
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

bool belongs_to_kernel(const std::string& demangled, const std::string& name) {
  // Itanium mangling gives a function template's return type, not a plain function's.
  return demangled == name || starts_with(demangled, name + "(") || starts_with(demangled, "void " + name + "<");
}

// (mangled, demangled) of the entries that belong to the kernel.
Result<std::vector<std::pair<std::string, std::string>>> kernel_entries(
    const std::string& name, const std::vector<std::string>& ptx_entry_names) {
  Result<std::vector<std::string>> demangled = demangle(ptx_entry_names);
  if (!demangled.ok()) return demangled.error();
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < ptx_entry_names.size(); ++i) {
    if (belongs_to_kernel((*demangled)[i], name)) entries.emplace_back(ptx_entry_names[i], (*demangled)[i]);
  }
  return entries;
}

// Why a demangled signature cannot be written back as source, or "" when it can.
std::string unspellable_part(const std::string& demangled) {
  for (const char* marker :
       {"(anonymous namespace)", "{lambda", "{unnamed", "'lambda", "'unnamed", "{parm#", "decltype("}) {
    if (demangled.find(marker) != std::string::npos) return marker;
  }
  return "";
}

Result<std::vector<std::string>> instantiation_lines(const KernelUnit& unit,
                                                     const std::vector<std::string>& ptx_entry_names) {
  auto entries = kernel_entries(unit.name, ptx_entry_names);
  if (!entries.ok()) return entries.error();
  if (entries->empty()) {
    return make_error("template kernel " + unit.name + " has no entry in the program's PTX: nothing instantiates it");
  }
  std::vector<std::string> lines;
  for (const auto& [mangled, demangled] : *entries) {
    std::string part = unspellable_part(demangled);
    if (!part.empty()) {
      return make_error("template kernel " + unit.name + ": entry " + mangled + " (" + demangled + ") names '" + part +
                        "', which no explicit instantiation can spell");
    }
    lines.push_back("template __global__ " + demangled + ";");
  }
  return lines;
}

std::vector<std::string> identifiers_in(const std::vector<std::string>& lines) {
  std::vector<std::string> names;
  for (const std::string& line : lines) {
    for (const Token& token : tokenize_source(line).tokens) {
      if (token.kind == TokenKind::identifier) names.push_back(token.text);
    }
  }
  return names;
}

bool instantiated_in_source(const Declarations& declarations, const std::string& name) {
  for (const TopLevelDeclaration& declaration : declarations) {
    if (!declaration.is_explicit_instantiation) continue;
    for (const std::string& declared : declaration.declared_names) {
      if (declared == name) return true;
    }
  }
  return false;
}

}  // namespace

Result<std::vector<KernelUnit>> extract_kernel_units(const std::string& cuda_source) {
  Result<Declarations> declarations = split_for_units(cuda_source);
  if (!declarations.ok()) return declarations.error();
  std::vector<KernelUnit> units;
  for (size_t i = 0; i < declarations->size(); ++i) {
    if (!(*declarations)[i].is_kernel || (*declarations)[i].declared_names.empty()) continue;
    units.push_back(assemble_unit(cuda_source, *declarations, i, reachable_declarations(*declarations, i, {}), {}));
  }
  return units;
}

Result<std::vector<std::string>> kernel_entry_names(const std::string& name,
                                                    const std::vector<std::string>& ptx_entry_names) {
  auto entries = kernel_entries(name, ptx_entry_names);
  if (!entries.ok()) return entries.error();
  std::vector<std::string> names;
  for (const auto& entry : *entries) names.push_back(entry.first);
  return names;
}

Result<KernelUnit> instantiate_kernel_unit(const std::string& cuda_source, const KernelUnit& unit,
                                           const std::vector<std::string>& ptx_entry_names) {
  if (!unit.is_template) return unit;
  Result<Declarations> declarations = split_for_units(cuda_source);
  if (!declarations.ok()) return declarations.error();
  if (unit.declaration_index >= declarations->size() || !(*declarations)[unit.declaration_index].is_kernel) {
    return make_error("kernel unit " + unit.name + " does not come from this source");
  }
  if (instantiated_in_source(*declarations, unit.name)) return unit;
  Result<std::vector<std::string>> lines = instantiation_lines(unit, ptx_entry_names);
  if (!lines.ok()) return lines.error();
  std::vector<bool> kept = reachable_declarations(*declarations, unit.declaration_index, identifiers_in(*lines));
  return assemble_unit(cuda_source, *declarations, unit.declaration_index, kept, *lines);
}

}  // namespace tailforge
