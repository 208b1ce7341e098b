// The untiled operators of the tensor_codegen domain (generator_domains_tensor_codegen.cpp): a
// fused injective operator (bias/scale/residual + relu or clip), a row softmax with a
// cross-thread reduction, and max/average pooling, each written as TVM's code generator writes
// them: per-thread work unrolled into statements whose flattened indices differ by constants.
#include <map>
#include <string>
#include <utility>

#include "agents/generator/tensor_text.h"

namespace tailforge {
namespace {

using namespace tensor_text;

std::string reference_parameters(const DomainContext& c, const std::vector<std::string>& inputs) {
  std::string text;
  for (const std::string& name : inputs) text += "const std::vector<" + reference_type(c) + ">& " + name + ", ";
  return text + "std::vector<" + reference_type(c) + ">& out";
}

std::string exponential(const DomainContext& c, const std::string& argument) {
  return (c.value_type == "float" ? "__expf(" : "exp(") + argument + ")";
}

// One statement, or the statement inside a bound check when the grid overshoots the tensor.
std::string guarded(const std::string& index, int64_t elements, bool check, const std::string& statement) {
  if (!check) return "  " + statement + "\n";
  return "  " + if_open(binary(index, "<", number(elements))) + "    " + statement + "\n  }\n";
}

struct InjectiveForm {
  const char* name;
  const char* output;
  int inputs;               // p0, p1[, p2]
  bool per_element_second;  // p1 has one value per element (residual), else per channel
};

const InjectiveForm kInjectiveForms[] = {{"bias_add_relu", "T_relu", 2, false},
                                         {"scale_shift_relu", "T_relu", 3, false},
                                         {"residual_add_relu", "T_relu", 2, true},
                                         {"bias_add_clip", "T_clip", 2, false}};

// Reduces `value` across the block into `buffer`[0] (seen by every thread) with `combine`.
std::string allreduce(DomainContext& c, int threads, const std::string& buffer, const std::string& value,
                      const std::string& scratch, bool shuffle,
                      std::string (*combine)(const std::string&, const std::string&)) {
  std::string text;
  if (shuffle) {
    std::string width = c.warp();
    text += "  " + buffer + "[0] = " + value + "[0];\n";
    for (int offset = threads / 2; offset > 0; offset /= 2) {
      text += "  " + scratch + "[0] = __shfl_down_sync(0xffffffffu, " + buffer + "[0], " + number(offset) + ", " +
              width + ");\n";
      text += "  " + buffer + "[0] = " + combine(buffer + "[0]", scratch + "[0]") + ";\n";
    }
    return text + "  " + buffer + "[0] = __shfl_sync(0xffffffffu, " + buffer + "[0], 0, " + width + ");\n";
  }
  std::string own = buffer + "[" + std::string(kThread) + "]";
  text += "  " + own + " = " + value + "[0];\n  __syncthreads();\n";
  for (int offset = threads / 2; offset > 0; offset /= 2) {
    std::string other = buffer + "[" + sum({kThread}, offset) + "]";
    text += "  " + if_open(binary(kThread, "<", number(offset))) + "    " + own + " = " + combine(own, other) +
            ";\n  }\n  __syncthreads();\n";
  }
  return text;
}

std::string maximum(const std::string& a, const std::string& b) { return "max(" + a + ", " + b + ")"; }
std::string plus(const std::string& a, const std::string& b) { return binary(a, "+", b); }

std::string filled(DomainContext& c, const std::string& text, std::map<std::string, std::string> values) {
  values["REF_HEAD"] = reference_head(c);
  values["REF_T"] = reference_type(c);
  return c.fill(text, values);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
DomainCode write_tensor_injective(DomainContext& c) {
  const InjectiveForm& form = kInjectiveForms[c.random.below(4)];
  const int64_t channels = c.random.pick(std::vector<int64_t>{16, 32, 64, 96});
  const int64_t side = c.random.pick(std::vector<int64_t>{7, 8, 14, 16, 28});
  const int64_t plane = side * side, total = channels * plane;
  const int threads = c.random.pick(std::vector<int>{256, 512, 1024});
  const int64_t per_thread = c.random.pick(std::vector<int64_t>{1, 2, 4});
  const int64_t span = threads * per_thread;
  const bool check = total % span != 0;
  std::vector<std::string> inputs = {"p0", "p1", "p2"};
  inputs.resize(form.inputs);
  std::vector<std::string> parameters = inputs;
  parameters.push_back(form.output);

  std::string text = "\n" + kernel_head(c, threads, parameters) + " {\n";
  for (int64_t k = 0; k < per_thread; ++k) {
    FlatIndex flat{span, threads, k * threads};
    std::string element = flat.text();
    std::string channel = remainder(flat.divided(plane), channels);
    std::string first = "p0[" + element + "]";
    std::string second = "p1[" + (form.per_element_second ? element : channel) + "]";
    std::string value =
        form.inputs == 3 ? binary(binary(first, "*", second), "+", "p2[" + channel + "]") : binary(first, "+", second);
    if (std::string(form.output) == "T_clip") value = "min(" + value + ", " + literal(c, 6) + ")";
    value = "max(" + value + ", " + literal(c, 0) + ")";
    text += guarded(element, total, check, std::string(form.output) + "[" + element + "] = " + value + ";");
  }
  text += "}\n";

  std::string host_value = form.inputs == 3          ? "(double)p0[i] * (double)p1[c] + (double)p2[c]"
                           : form.per_element_second ? "(double)p0[i] + (double)p1[i]"
                                                     : "(double)p0[i] + (double)p1[c]";
  if (std::string(form.output) == "T_clip") host_value = "std::min(" + host_value + ", 6.0)";
  std::string reference = R"(
${REF_HEAD} reference_injective(${PARAMETERS}, int channels, int plane) {
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t c = i / plane % channels;
    (void)c;
    out[i] = (${REF_T})std::max(${VALUE}, 0.0);
  }
}
)";
  TensorProgram program;
  program.sizes = {"channels", "plane"};
  program.size_values = {channels, plane};
  std::string call_inputs;
  for (const std::string& name : inputs) {
    bool per_channel = name != "p0" && !(name == "p1" && form.per_element_second);
    program.inputs.push_back({name, per_channel ? "channels" : "(size_t)channels * plane", ""});
    call_inputs += name + ", ";
  }
  program.output = {form.output, "(size_t)channels * plane", ""};
  program.reference_call = "reference_injective(" + call_inputs + "want, channels, plane);";
  program.grid = blocks_for(total, span);
  program.threads = threads;
  c.block = c.threads = threads;
  c.parameters["operator"] = form.name;
  c.parameters["shape"] = {channels, side, side};
  c.parameters["elements_per_thread"] = per_thread;
  return {text + filled(c, reference, {{"PARAMETERS", reference_parameters(c, inputs)}, {"VALUE", host_value}}),
          host_main(c, program)};
}

// ---------------------------------------------------------------------------------------------
DomainCode write_tensor_softmax(DomainContext& c) {
  const bool shuffle = c.has("warp_shuffle") || !c.has("syncthreads");
  const int threads = shuffle ? 32 : c.random.pick(std::vector<int>{64, 128});
  const int64_t per_thread = c.random.pick(std::vector<int64_t>{2, 4, 8});
  const int64_t cols = threads * per_thread;
  const int64_t rows = c.random.pick(std::vector<int64_t>{64, 128, 256});
  const std::string type = c.value_type;
  auto element = [&](int64_t k) { return sum({scaled(kBlock, cols), kThread}, k * threads); };

  std::string text = "\n" + kernel_head(c, threads, {"p0", "T_softmax_norm"}) + " {\n";
  text += "  " + type + " normal_reduce_temp0[1];\n";
  text += "  " + type + " T_softmax_exp[" + number(per_thread) + "];\n";
  text += "  " + type + " normal_reduce_temp0_1[1];\n";
  if (shuffle) {
    text += "  " + type + " red_buf0[1];\n  " + type + " t0[1];\n";
    text += "  " + type + " red_buf0_1[1];\n  " + type + " t0_1[1];\n";
  } else {
    text += "  __shared__ " + type + " red_buf0[" + number(threads) + "];\n";
    text += "  __shared__ " + type + " red_buf0_1[" + number(threads) + "];\n";
  }
  text += "  normal_reduce_temp0[0] = " + lowest(c) + ";\n";
  for (int64_t k = 0; k < per_thread; ++k) {
    text += "  normal_reduce_temp0[0] = " + maximum("normal_reduce_temp0[0]", "p0[" + element(k) + "]") + ";\n";
  }
  text += allreduce(c, threads, "red_buf0", "normal_reduce_temp0", "t0", shuffle, maximum);
  for (int64_t k = 0; k < per_thread; ++k) {
    text += "  T_softmax_exp[" + number(k) +
            "] = " + exponential(c, binary("p0[" + element(k) + "]", "-", "red_buf0[0]")) + ";\n";
  }
  text += "  normal_reduce_temp0_1[0] = " + literal(c, 0) + ";\n";
  for (int64_t k = 0; k < per_thread; ++k) {
    text +=
        "  normal_reduce_temp0_1[0] = " + plus("normal_reduce_temp0_1[0]", "T_softmax_exp[" + number(k) + "]") + ";\n";
  }
  text += allreduce(c, threads, "red_buf0_1", "normal_reduce_temp0_1", "t0_1", shuffle, plus);
  for (int64_t k = 0; k < per_thread; ++k) {
    text += "  T_softmax_norm[" + element(k) +
            "] = " + binary("T_softmax_exp[" + number(k) + "]", "/", "red_buf0_1[0]") + ";\n";
  }
  text += "}\n";

  const char* reference = R"(
${REF_HEAD} reference_softmax(const std::vector<${REF_T}>& p0, std::vector<${REF_T}>& out, int rows, int cols) {
  for (int row = 0; row < rows; ++row) {
    const ${REF_T}* in = &p0[(size_t)row * cols];
    double peak = in[0];
    for (int col = 1; col < cols; ++col) peak = std::max(peak, (double)in[col]);
    double total = 0;
    for (int col = 0; col < cols; ++col) total += std::exp((double)in[col] - peak);
    for (int col = 0; col < cols; ++col) out[(size_t)row * cols + col] = (${REF_T})(std::exp((double)in[col] - peak) / total);
  }
}
)";
  TensorProgram program;
  program.sizes = {"rows", "cols"};
  program.size_values = {rows, cols};
  program.inputs = {{"p0", "(size_t)rows * cols", ""}};
  program.output = {"T_softmax_norm", "(size_t)rows * cols", ""};
  program.reference_call = "reference_softmax(p0, want, rows, cols);";
  program.grid = rows;
  program.threads = threads;
  program.tolerance = 1e-4;
  c.block = c.threads = threads;
  c.parameters["operator"] = "softmax";
  c.parameters["shape"] = {rows, cols};
  return {text + filled(c, reference, {}), host_main(c, program)};
}

// ---------------------------------------------------------------------------------------------
DomainCode write_tensor_pool(DomainContext& c) {
  const int64_t channels = c.random.pick(std::vector<int64_t>{8, 16, 32});
  const int64_t side = c.random.pick(std::vector<int64_t>{16, 28, 32});
  const auto [window, stride] = c.random.pick(std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {3, 2}, {3, 1}});
  const bool average = c.random.chance(0.4);
  const int64_t out_side = (side - window) / stride + 1, out_plane = out_side * out_side;
  const int64_t total = channels * out_plane;
  const int threads = c.random.pick(std::vector<int>{128, 256});
  const bool check = total % threads != 0;
  const std::string output = average ? "pool_avg" : "pool_max";
  const std::string local = average ? "pool_sum_local" : "pool_max_local";

  FlatIndex flat{threads, threads, 0};
  std::string channel = flat.divided(out_plane);
  std::string row = remainder(flat.divided(out_side), out_side);
  std::string column = flat.modulo(out_side);
  std::vector<std::string> body = {local + "[0] = " + (average ? literal(c, 0) : lowest(c)) + ";"};
  for (int64_t ry = 0; ry < window; ++ry) {
    for (int64_t rx = 0; rx < window; ++rx) {
      std::string input =
          "data[" +
          sum({scaled(channel, side * side), scaled(row, stride * side), scaled(column, stride)}, ry * side + rx) + "]";
      std::string value = average ? plus(local + "[0]", input) : maximum(local + "[0]", input);
      body.push_back(local + "[0] = " + value + ";");
    }
  }
  std::string result =
      average ? binary(local + "[0]", "/", literal(c, static_cast<double>(window * window))) : local + "[0]";
  body.push_back(output + "[" + flat.text() + "] = " + result + ";");
  std::string text = "\n" + kernel_head(c, threads, {"data", output}) + " {\n";
  text += "  " + c.value_type + " " + local + "[1];\n";
  if (check) text += "  " + if_open(binary(flat.text(), "<", number(total)));
  for (const std::string& line : body) text += (check ? "    " : "  ") + line + "\n";
  if (check) text += "  }\n";
  text += "}\n";

  const char* reference = R"(
${REF_HEAD} reference_pool(const std::vector<${REF_T}>& data, std::vector<${REF_T}>& out, int channels, int side, int window, int stride, bool average) {
  const int out_side = (side - window) / stride + 1;
  for (int ch = 0; ch < channels; ++ch) {
    for (int oy = 0; oy < out_side; ++oy) {
      for (int ox = 0; ox < out_side; ++ox) {
        double best = (double)data[((size_t)ch * side + oy * stride) * side + ox * stride], total = 0;
        for (int ry = 0; ry < window; ++ry) {
          for (int rx = 0; rx < window; ++rx) {
            const double value = (double)data[((size_t)ch * side + oy * stride + ry) * side + ox * stride + rx];
            best = std::max(best, value);
            total += value;
          }
        }
        out[((size_t)ch * out_side + oy) * out_side + ox] = (${REF_T})(average ? total / (window * window) : best);
      }
    }
  }
}
)";
  TensorProgram program;
  program.sizes = {"channels", "side", "window", "stride"};
  program.size_values = {channels, side, window, stride};
  program.inputs = {{"data", "(size_t)channels * side * side", ""}};
  program.output = {output, "(size_t)channels * " + number(out_plane), ""};
  program.reference_call =
      std::string("reference_pool(data, want, channels, side, window, stride, ") + (average ? "true" : "false") + ");";
  program.grid = blocks_for(total, threads);
  program.threads = threads;
  c.block = c.threads = threads;
  c.parameters["operator"] = average ? "avg_pool" : "max_pool";
  c.parameters["shape"] = {channels, side, side};
  c.parameters["window"] = {window, stride};
  return {text + filled(c, reference, {}), host_main(c, program)};
}

}  // namespace tailforge
