#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "agents/generator/domain.h"

namespace tailforge {

uint64_t GeneratorRandom::next() {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t GeneratorRandom::below(uint64_t n) { return n == 0 ? 0 : next() % n; }

bool GeneratorRandom::chance(double probability) {
  return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0) < probability;
}

std::string DomainContext::lit(double value) const {
  if (is_integer()) return std::to_string(static_cast<long long>(std::llround(value)));
  char text[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  std::string literal = text;
  size_t exponent = literal.find('e');
  if (literal.find('.') == std::string::npos) {
    if (exponent == std::string::npos) {
      literal += ".0";
    } else {
      literal.insert(exponent, ".0");
    }
  }
  bool suffix = value_type == "float" && float_suffix;
  return suffix ? literal + "f" : literal;
}

std::string DomainContext::sync() const {
  return has("cooperative_groups") ? "cg::this_thread_block().sync();" : "__syncthreads();";
}

std::string DomainContext::warp() {
  used_warp_constant = true;
  return has("hardcoded_warp_size") ? "32" : "warpSize";
}

std::string DomainContext::index() const {
  return has("inline_ptx") ? "(int)ptx_global_index()"
                           : "(int)(blockIdx.x * blockDim.x + threadIdx.x)";
}

std::string DomainContext::kernel_head(bool with_bounds) const {
  std::string head = has("templates") ? "template <typename T>\n" : "";
  head += "__global__ void ";
  if (with_bounds && has("launch_bounds")) {
    head += "__launch_bounds__(" + std::to_string(threads) + ") ";
  }
  return head;
}

std::string DomainContext::unroll_pragma() const {
  return has("unroll_pragma") ? "#pragma unroll " + std::to_string(unroll) : "";
}

std::string DomainContext::shared_array(const std::string& name, const std::string& type,
                                        const std::string& count) const {
  if (has("dynamic_shared")) {
    return "extern __shared__ __align__(16) unsigned char shared_bytes[];\n  " + type + "* " +
           name + " = reinterpret_cast<" + type + "*>(shared_bytes);";
  }
  return "__shared__ " + type + " " + name + "[" + count + "];";
}

std::string DomainContext::shared_launch_bytes(const std::string& type,
                                               const std::string& count) const {
  return has("dynamic_shared") ? "(" + count + ") * sizeof(" + type + ")" : "0";
}

std::string DomainContext::input_expression() const {
  return is_integer() ? "random_int(-20, 20)" : "random_dyadic(2, 8)";
}

int64_t DomainContext::pick_size(const std::vector<int64_t>& options, int dims) {
  if (!size_hint || *size_hint <= 0) return random.pick(options);
  double target = std::log(*size_hint) / dims;
  int64_t best = options.front();
  for (int64_t option : options) {
    if (std::fabs(std::log(static_cast<double>(option)) - target) <
        std::fabs(std::log(static_cast<double>(best)) - target)) {
      best = option;
    }
  }
  return best;
}

std::string DomainContext::fill(const std::string& text,
                                const std::map<std::string, std::string>& values) {
  std::string out = fill_nested(text, values, 0);
  for (size_t open = out.find("${"); open != std::string::npos; open = out.find("${", open + 2)) {
    unfilled.push_back(out.substr(open, out.find('}', open) - open + 1));
  }
  return out;
}

std::string DomainContext::fill_nested(const std::string& text,
                                       const std::map<std::string, std::string>& values,
                                       int depth) {
  std::map<std::string, std::string> all = values;
  auto add = [&all](const std::string& key, const std::string& value) { all.emplace(key, value); };
  add("SYNC", sync());
  add("IDX", index());
  add("KERNEL", kernel_head(true));
  add("KERNEL_NB", kernel_head(false));
  add("TARG", has("templates") ? "<value_t>" : "");
  add("UNROLL", unroll_pragma());
  add("BLOCK", std::to_string(block));
  if (text.find("${WARP}") != std::string::npos) add("WARP", warp());

  std::istringstream lines(text);
  std::string line;
  std::string out;
  while (std::getline(lines, line)) {
    std::string filled;
    size_t pos = 0;
    bool only_placeholders_and_blank = true;
    while (pos < line.size()) {
      size_t open = line.find("${", pos);
      if (open == std::string::npos) {
        filled += line.substr(pos);
        if (line.find_first_not_of(" \t", pos) != std::string::npos) {
          only_placeholders_and_blank = false;
        }
        break;
      }
      if (line.find_first_not_of(" \t", pos) < open) only_placeholders_and_blank = false;
      filled += line.substr(pos, open - pos);
      size_t close = line.find('}', open);
      std::string name = line.substr(open + 2, close - open - 2);
      auto it = all.find(name);
      if (it == all.end()) {
        filled += line.substr(open, close - open + 1);
      } else {
        filled += it->second;
      }
      pos = close + 1;
    }
    bool blank_now = filled.find_first_not_of(" \t") == std::string::npos;
    if (blank_now && only_placeholders_and_blank && !line.empty() &&
        line.find("${") != std::string::npos) {
      continue;  // a line that held only a placeholder which expanded to nothing
    }
    out += filled;
    out += '\n';
  }
  // Values may bring placeholders of their own (a shared array sized by ${BLOCK}); fill again.
  bool nested = false;
  for (const auto& [name, value] : all) {
    if (out.find("${" + name + "}") != std::string::npos) nested = true;
  }
  if (nested && depth < 4) return fill_nested(out, values, depth + 1);
  return out;
}

SwitchText write_switch(const std::string& selector, const std::string& variable,
                        const std::vector<SwitchCase>& cases, int device_indent, int host_indent) {
  std::string device_pad(device_indent, ' '), host_pad(host_indent, ' ');
  SwitchText text{device_pad + "switch (" + selector + ") {\n", host_pad + "switch (" + selector + ") {\n"};
  for (size_t k = 0; k < cases.size(); ++k) {
    std::string label = k + 1 == cases.size() ? "default" : "case " + std::to_string(k);
    text.device += device_pad + "  " + label + ": " + variable + " = " + cases[k].device + "; break;\n";
    text.host += host_pad + "  " + label + ": return " + cases[k].host + ";\n";
  }
  text.device += device_pad + "}";
  text.host += host_pad + "}";
  return text;
}

}  // namespace tailforge
