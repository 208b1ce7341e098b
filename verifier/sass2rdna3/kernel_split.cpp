#include "verifier/sass2rdna3/kernel_split.h"

#include <map>
#include <set>
#include <sstream>

#include "text/lines.h"
#include "text/regex.h"

namespace tailforge {
namespace {

bool is_section_directive(const std::string& line) {
  static const text::Regex section(R"(^\s*(\.text|\.data|\.bss|\.section)\b.*)");
  return text::regex_match(line, section);
}

// A symbol clang defines: its lines run from its first attribute (.protected/.globl/.weak/.type)
// to its `.size`, and a function's block also takes the section directive just before it.
struct SymbolBlock {
  std::string name;
  bool function = false;
  size_t begin = 0, end = 0;  // [begin, end)
  bool kernel = false;
};

std::vector<SymbolBlock> symbol_blocks(const std::vector<std::string>& lines) {
  static const text::Regex type(R"(^\s*\.type\s+([^,\s]+)\s*,\s*@(function|object)\s*(;.*)?$)");
  static const text::Regex attribute(R"(^\s*\.(protected|globl|weak|hidden)\s+([^\s;]+).*)");
  std::vector<SymbolBlock> blocks;
  for (size_t i = 0; i < lines.size(); ++i) {
    text::Match match;
    if (!text::regex_match(lines[i], match, type)) continue;
    SymbolBlock block{match[1], match[2] == "function", i, i, false};
    static const text::Regex alignment(R"(^\s*\.p2align\b.*)");
    while (block.begin > 0) {
      text::Match previous;
      const std::string& line = lines[block.begin - 1];
      bool own_attribute = text::regex_match(line, previous, attribute) && previous[2] == block.name;
      if (!own_attribute && !text::regex_match(line, alignment)) break;
      --block.begin;
    }
    if (block.function && block.begin > 0 && is_section_directive(lines[block.begin - 1])) --block.begin;
    text::Regex size("^\\s*\\.size\\s+" + text::regex_replace(block.name, text::Regex(R"([.$])"), "\\$&") + "\\s*,.*");
    size_t end = i + 1;
    while (end < lines.size() && !text::regex_match(lines[end], size)) ++end;
    if (end == lines.size()) continue;  // no .size: not a block this splitter understands
    block.end = end + 1;
    for (size_t j = i; j < block.end; ++j) {
      if (lines[j].find(".amdhsa_kernel " + block.name) != std::string::npos) block.kernel = true;
    }
    blocks.push_back(block);
  }
  return blocks;
}

std::set<std::string> identifiers_in(const std::vector<std::string>& lines, size_t begin, size_t end) {
  static const text::Regex identifier(R"([A-Za-z_.$][\w.$]*)");
  std::set<std::string> found;
  for (size_t i = begin; i < end; ++i) {
    std::string code = lines[i].substr(0, lines[i].find(';'));
    text::for_each_match(code, identifier, [&](const text::Match& match) {
      found.insert(match.str());
      return true;
    });
  }
  return found;
}

// The metadata block with only this kernel's entry in amdhsa.kernels; "" when the module has none.
std::string metadata_for(const std::vector<std::string>& lines, const std::string& kernel) {
  size_t begin = lines.size(), end = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(".amdgpu_metadata") != std::string::npos && lines[i].find(".end_") == std::string::npos) begin = i;
    if (begin < lines.size() && lines[i].find(".end_amdgpu_metadata") != std::string::npos) {
      end = i;
      break;
    }
  }
  if (begin >= end || end == lines.size()) return "";
  std::string out;
  bool in_kernels = false;
  std::vector<std::string> entry;
  auto flush = [&]() {
    bool mine = false;
    for (const std::string& line : entry) {
      if (line.find(".symbol:") != std::string::npos && line.find(" " + kernel + ".kd") != std::string::npos) mine = true;
    }
    if (mine) {
      for (const std::string& line : entry) out += line + "\n";
    }
    entry.clear();
  };
  for (size_t i = begin; i <= end; ++i) {
    const std::string& line = lines[i];
    bool top_level = !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '-';
    if (in_kernels && top_level) {
      flush();
      in_kernels = false;
    }
    if (in_kernels) {
      if (line.rfind("  - ", 0) == 0) flush();
      entry.push_back(line);
      continue;
    }
    out += line + "\n";
    if (line.rfind("amdhsa.kernels:", 0) == 0) in_kernels = true;
  }
  return out;
}

}  // namespace

std::vector<SassFunction> split_sass_functions_by_arch(const std::string& sass, const std::string& default_arch) {
  // cuobjdump's "arch = sm_NN" of an executable's fatbin, or "code for sm_NN" of a cubin.
  static const text::Regex arch_line(R"(^\s*(?:arch\s*=|code\s+for)\s*(sm_\w+)\s*$)");
  static const text::Regex cuobjdump_function(R"(^\s*Function\s*:\s*(\S+)\s*$)");
  static const text::Regex nvdisasm_function(R"(^\.text\.(\S+):\s*$)");
  static const text::Regex function_end(R"(^\s*(\.{10}|//-{5}.*|Fatbin .*)\s*$)");
  std::vector<SassFunction> functions;
  std::string arch = default_arch;
  bool open = false;
  for (const std::string& line : text::getline_lines(sass)) {
    text::Match match;
    if (text::regex_match(line, match, arch_line)) {
      arch = match[1];
      open = false;
    } else if (text::regex_match(line, match, cuobjdump_function) || text::regex_match(line, match, nvdisasm_function)) {
      functions.push_back({arch, match[1], ""});
      open = true;
    } else if (text::regex_match(line, function_end)) {
      open = false;
    } else if (open) {
      functions.back().text += line + "\n";
    }
  }
  return functions;
}

std::vector<Rdna3Kernel> split_rdna3_kernels(const std::string& module) {
  std::vector<std::string> lines = text::getline_lines(module);
  std::vector<SymbolBlock> blocks = symbol_blocks(lines);
  std::map<std::string, const SymbolBlock*> by_name;
  for (const SymbolBlock& block : blocks) by_name[block.name] = &block;

  std::string header;
  static const text::Regex header_line(R"(^\s*\.(amdgcn_target|amdhsa_code_object_version)\b.*)");
  std::string code_end_padding;  // clang's s_code_end filler after the last function
  for (size_t i = 0; i < lines.size(); ++i) {
    if (text::regex_match(lines[i], header_line)) header += lines[i] + "\n";
    if (lines[i].find(".p2alignl") != std::string::npos && i + 1 < lines.size() &&
        lines[i + 1].find(".fill") != std::string::npos) {
      code_end_padding = "\t.text\n" + lines[i] + "\n" + lines[i + 1] + "\n";
    }
  }

  std::vector<Rdna3Kernel> kernels;
  for (const SymbolBlock& kernel : blocks) {
    if (!kernel.kernel) continue;
    // The symbols it needs, transitively: globals it addresses, device functions it calls.
    std::vector<const SymbolBlock*> needed;
    std::set<std::string> seen = {kernel.name};
    std::vector<const SymbolBlock*> pending = {&kernel};
    while (!pending.empty()) {
      const SymbolBlock* block = pending.back();
      pending.pop_back();
      for (const std::string& name : identifiers_in(lines, block->begin, block->end)) {
        auto found = by_name.find(name);
        if (found == by_name.end() || seen.count(name) || found->second->kernel) continue;
        seen.insert(name);
        needed.push_back(found->second);
        pending.push_back(found->second);
      }
    }
    std::string text = header;
    auto append = [&](const SymbolBlock& block) {
      for (size_t i = block.begin; i < block.end; ++i) text += lines[i] + "\n";
    };
    for (const SymbolBlock* block : needed) {
      if (block->function) append(*block);
    }
    append(kernel);
    for (const SymbolBlock* block : needed) {
      if (!block->function) append(*block);
    }
    text += code_end_padding;
    text += metadata_for(lines, kernel.name);
    kernels.push_back({kernel.name, text});
  }
  return kernels;
}

}  // namespace tailforge
