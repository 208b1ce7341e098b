#include "agents/generator/tensor_text.h"

#include <cstdio>

namespace tailforge::tensor_text {
namespace {

bool is_power_of_two(int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

int log2_of(int64_t value) {
  int bits = 0;
  while ((int64_t{1} << bits) < value) ++bits;
  return bits;
}

}  // namespace

const char* const kThread = "((int)threadIdx.x)";
const char* const kBlock = "((int)blockIdx.x)";

std::string number(int64_t value) { return std::to_string(value); }

std::string binary(const std::string& left, const char* op, const std::string& right) {
  return "(" + left + " " + op + " " + right + ")";
}

std::string scaled(const std::string& term, int64_t factor) {
  if (factor == 0 || term.empty()) return "";
  return factor == 1 ? term : binary(term, "*", number(factor));
}

std::string quotient(const std::string& term, int64_t divisor) {
  if (divisor == 1) return term;
  if (is_power_of_two(divisor)) return binary(term, ">>", number(log2_of(divisor)));
  return binary(term, "/", number(divisor));
}

std::string remainder(const std::string& term, int64_t divisor) {
  if (divisor == 1) return "";
  if (is_power_of_two(divisor)) return binary(term, "&", number(divisor - 1));
  return binary(term, "%", number(divisor));
}

std::string sum(const std::vector<std::string>& terms, int64_t constant) {
  std::string text;
  for (const std::string& term : terms) {
    if (term.empty()) continue;
    text = text.empty() ? term : binary(text, "+", term);
  }
  if (text.empty()) return number(constant);
  return constant == 0 ? text : binary(text, "+", number(constant));
}

std::string if_open(const std::string& condition) { return "if " + condition + " {\n"; }

std::string FlatIndex::text() const { return sum({scaled(kBlock, block_span), kThread}, offset); }

std::string FlatIndex::divided(int64_t divisor) const {
  if (block_span % divisor == 0 && threads % divisor == 0) {
    return sum({scaled(kBlock, block_span / divisor), quotient(kThread, divisor)}, offset / divisor);
  }
  if (divisor % block_span == 0) return quotient(kBlock, divisor / block_span);
  return quotient(text(), divisor);
}

std::string FlatIndex::modulo(int64_t divisor) const {
  if (block_span % divisor == 0 && threads % divisor == 0) return remainder(kThread, divisor);
  if (divisor % block_span == 0) {
    return sum({scaled(remainder(kBlock, divisor / block_span), block_span), kThread}, offset);
  }
  return remainder(text(), divisor);
}

std::string literal(const DomainContext& context, double value) {
  char text[48];
  std::snprintf(text, sizeof text, "%.6e", value);
  return context.value_type == "float" ? std::string(text) + "f" : std::string(text);
}

std::string lowest(const DomainContext& context) {
  return context.value_type == "float" ? "-3.402823e+38f" : "-1.797693e+308";
}

std::string kernel_head(const DomainContext& context, int threads, const std::vector<std::string>& parameters) {
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" + number(threads) + ") default_function_kernel(";
  for (size_t k = 0; k < parameters.size(); ++k) {
    head += (k ? ", " : "") + context.value_type + "* __restrict__ " + parameters[k];
  }
  return head + ")";
}

std::string reference_head(const DomainContext& context) {
  return context.has("templates") ? "template <typename T>\nstatic void" : "static void";
}

std::string reference_type(const DomainContext& context) { return context.has("templates") ? "T" : "value_t"; }

int64_t blocks_for(int64_t elements, int64_t per_block) { return (elements + per_block - 1) / per_block; }

std::string host_main(const DomainContext& context, const TensorProgram& program) {
  std::string text;
  for (size_t k = 0; k < program.sizes.size(); ++k) {
    text += "  const int " + program.sizes[k] + " = " + number(program.size_values[k]) + ";\n";
  }
  const HostTensor& output = program.output;
  std::vector<HostTensor> all = program.inputs;
  all.push_back(output);
  text += "  std::vector<value_t> ";
  for (const HostTensor& tensor : all) text += tensor.name + "(" + tensor.elements + "), ";
  text += "want(" + output.elements + ");\n";
  for (const HostTensor& tensor : program.inputs) {
    text += tensor.fill.empty() ? "  for (size_t i = 0; i < " + tensor.name + ".size(); ++i) " + tensor.name +
                                      "[i] = (value_t)" + context.input_expression() + ";\n"
                                : tensor.fill;
  }
  std::string arguments;
  for (const HostTensor& tensor : all) {
    text +=
        "  value_t* d_" + tensor.name + " = (value_t*)device_alloc(" + tensor.name + ".size() * sizeof(value_t));\n";
    arguments += (arguments.empty() ? "d_" : ", d_") + tensor.name;
  }
  text += "  device_begin();\n";
  for (const HostTensor& tensor : program.inputs) {
    text +=
        "  upload(d_" + tensor.name + ", " + tensor.name + ".data(), " + tensor.name + ".size() * sizeof(value_t));\n";
  }
  text += "  default_function_kernel<<<dim3(" + number(program.grid) + "), dim3(" + number(program.threads) + "), " +
          program.shared_bytes + ", g_stream>>>(" + arguments + ");\n";
  text += "  after_launch();\n";
  text +=
      "  download(" + output.name + ".data(), d_" + output.name + ", " + output.name + ".size() * sizeof(value_t));\n";
  text += "  device_end();\n";
  text += "  " + program.reference_call + "\n";
  char tolerance[32];
  std::snprintf(tolerance, sizeof tolerance, "%g", program.tolerance);
  text +=
      "  bool passed = true;\n"
      "  double total = 0;\n"
      "  for (size_t i = 0; i < " +
      output.name +
      ".size(); ++i) {\n"
      "    if (!close_enough((double)" +
      output.name + "[i], (double)want[i], " + tolerance +
      ")) passed = false;\n"
      "    total += (double)" +
      output.name +
      "[i];\n"
      "  }\n";
  for (const std::string& size : program.sizes) text += "  report_count(\"" + size + "\", " + size + ");\n";
  text += "  report_value(\"mean\", total / " + output.name + ".size());\n";
  text += "  report_value(\"last\", (double)" + output.name + "[" + output.name + ".size() - 1]);\n";
  text += "  return finish(passed);\n";
  return text;
}

}  // namespace tailforge::tensor_text
