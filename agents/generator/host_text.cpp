// What several domain writers share (declared in agents/generator/domain.h): the host main() text
// of buffers, collection and reports, the device text of tables, constants and a block's sum, a
// switch's users, and the knobs recorded both as placeholders and as parameters.
#include <algorithm>
#include <cctype>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {

void DomainContext::record(std::map<std::string, std::string>& values,
                           std::initializer_list<std::pair<const char*, int64_t>> knobs) {
  for (const auto& [name, value] : knobs) {
    std::string placeholder = name;
    for (char& letter : placeholder) {
      letter = static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
    }
    values[placeholder] = str(value);
    parameters[name] = value;
  }
}

std::string DomainContext::grid_for(int64_t count, int64_t cap) const {
  return str(std::min<int64_t>((count + block - 1) / block, cap));
}

void DomainContext::add_thread_shared(std::map<std::string, std::string>& values, const std::string& name,
                                      const std::string& type, const std::string& host_type) const {
  values["SHARED"] = shared_array(name, type, "${BLOCK}");
  values["SHMEM"] = shared_launch_bytes(host_type, str(block));
}

DomainCode fill_code(DomainContext& c, const std::string& kernels, const std::string& main_body,
                     const std::map<std::string, std::string>& values, int kernel_fills, int main_fills) {
  DomainCode result{kernels, main_body};
  for (int k = 0; k < kernel_fills; ++k) result.kernels = c.fill(result.kernels, values);
  for (int k = 0; k < main_fills; ++k) result.main_body = c.fill(result.main_body, values);
  return result;
}

SwitchText write_switch_use(const SwitchUse& use, const std::vector<SwitchCase>& cases, bool use_switch) {
  std::string device_pad(use.device_indent, ' ');
  if (!use_switch) {
    return {device_pad + use.single_type + " " + use.variable + " = " + cases[0].device + ";",
            std::string(use.host_indent, ' ') + "return " + cases[0].host + ";"};
  }
  SwitchText text = write_switch(use.selector, use.variable, cases, use.device_indent, use.host_indent);
  text.device = device_pad + use.type + " " + use.variable + ";\n" + text.device;
  return text;
}

std::string host_device_buffers(const std::vector<DeviceBuffer>& buffers, const std::string& count,
                                const std::string& before_upload) {
  std::string bytes = count + " * sizeof(value_t)";
  std::string text;
  for (const DeviceBuffer& buffer : buffers) {
    text += "  value_t* " + buffer.device + " = (value_t*)device_alloc(" + bytes + ");\n";
  }
  text += "  device_begin();\n";
  if (!before_upload.empty()) text += before_upload + "\n";
  for (const DeviceBuffer& buffer : buffers) {
    if (buffer.source.empty()) continue;
    text += "  upload(" + buffer.device + ", " + buffer.source + ".data(), " + bytes + ");\n";
  }
  return text;
}

std::string host_arrays_setup(const HostArrays& arrays) {
  std::string text = "  std::vector<value_t> " + arrays.input + "(" + arrays.length + "), " + arrays.output +
                     "(" + arrays.length + ");\n";
  text += "  for (" + arrays.fill_loop + ") " + arrays.input + "[i] = (value_t)${INPUT};\n";
  return text + host_device_buffers({{arrays.device_input, arrays.input}, {arrays.device_output, ""}},
                                    arrays.count, arrays.before_upload);
}

std::string host_matrix_setup() {
  return host_arrays_setup({"input", "output", "d_input", "d_output", "(size_t)rows * cols",
                            "size_t i = 0; i < input.size(); ++i", "input.size()", ""});
}

void add_read_only_tables(std::map<std::string, std::string>& values, bool constant,
                          const std::vector<ReadOnlyTable>& tables) {
  std::string declarations, parameters, arguments, allocations, uploads;
  for (const ReadOnlyTable& table : tables) {
    std::string separator = declarations.empty() ? "" : "\n";
    std::string bytes = table.count + " * sizeof(value_t)";
    declarations += separator + "__constant__ value_t " + table.name + "[" + table.declared + "];";
    parameters += "const T* " + table.name + ", ";
    arguments += table.device + ", ";
    allocations += separator + "  value_t* " + table.device + " = (value_t*)device_alloc(" + bytes + ");";
    std::string source = table.host + ".data(), " + bytes;
    uploads += separator + (constant ? "  CHECK(cudaMemcpyToSymbol(" + table.name + ", " + source + "));"
                                     : "  upload(" + table.device + ", " + source + ");");
  }
  values["CONSTANT"] = constant ? declarations : "";
  values["TABLE_PARAMS"] = constant ? "" : parameters;
  values["TABLE_ARGS"] = constant ? "" : arguments;
  values["TABLE_ALLOC"] = constant ? "" : allocations;
  values["TABLE_UPLOAD"] = uploads;
}

void add_constant_literals(std::map<std::string, std::string>& values, bool constant, const std::string& name,
                           const std::string& host, const std::vector<std::string>& literals) {
  std::string count = str(static_cast<int64_t>(literals.size()));
  std::string list;
  for (const std::string& literal : literals) list += (list.empty() ? "(value_t)" : ", (value_t)") + literal;
  values["CONSTANT"] = constant ? "__constant__ value_t " + name + "[" + count + "];" : "";
  std::string upload = "  const value_t " + host + "[" + count + "] = {" + list + "};\n" +
                       "  CHECK(cudaMemcpyToSymbol(" + name + ", " + host + ", sizeof(" + host + ")));";
  values["CONSTANT_UPLOAD"] = constant ? upload : "";
}

std::string block_tree_sum(const std::string& variable) {
  return "  cache[threadIdx.x] = " + variable + ";\n  ${SYNC}\n" +
         "  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {\n" +
         "    if (threadIdx.x < stride) cache[threadIdx.x] += cache[threadIdx.x + stride];\n" +
         "    ${SYNC}\n  }\n  " + variable + " = cache[0];";
}

std::string host_reports(const std::vector<HostReport>& reports) {
  std::string text;
  for (const HostReport& report : reports) {
    text += "  report_" + report.kind + "(\"" + report.name + "\", " + report.expression + ");\n";
  }
  return text + "  return finish(passed);\n";
}

std::string labelled_reports(const std::string& label, const std::string& index,
                             const std::vector<HostReport>& reports) {
  std::string text;
  for (const HostReport& report : reports) {
    text += "    printf(\"" + label + " %d \", " + index + ");\n";
    text += "    report_" + report.kind + "(\"" + report.name + "\", " + report.expression + ");\n";
  }
  return text;
}

std::string host_collect(const std::string& host, const std::string& device, const std::string& bytes) {
  return "  after_launch();\n  download(" + host + ".data(), " + device + ", " + bytes +
         ");\n  device_end();\n  bool passed = true;\n";
}

}  // namespace tailforge
