// Domains: elementwise, reduction, scan, histogram, transpose.
#include <algorithm>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {
namespace {

// ---------------------------------------------------------------------------------------------
// A random expression over x[i] and z[i] for elementwise's switch: sums, differences, at most two
// products and max-style ternaries over the inputs and small dyadic (or integer) constants, so
// float results stay exact and int results cannot overflow.
SwitchCase elementwise_expression(DomainContext& c, int depth, int& products_left) {
  if (depth == 0 || c.random.chance(0.25)) {
    switch (c.random.below(3)) {
      case 0: return {"x[i]", "x"};
      case 1: return {"z[i]", "z"};
      default: {
        double value = c.is_integer() ? c.random.pick(std::vector<double>{2, 3, 5, -1, -3, 7})
                                      : c.random.pick(std::vector<double>{0.5, 1.5, 2, 3, -1, -0.75, 0.25, -2.5});
        return {"(" + c.lit(value) + ")", "(" + std::to_string(value) + ")"};
      }
    }
  }
  SwitchCase left = elementwise_expression(c, depth - 1, products_left);
  SwitchCase right = elementwise_expression(c, depth - 1, products_left);
  int form = static_cast<int>(c.random.below(4));
  if (form == 2 && products_left == 0) form = 0;
  switch (form) {
    case 0: return {"(" + left.device + " + " + right.device + ")", "(" + left.host + " + " + right.host + ")"};
    case 1: return {"(" + left.device + " - " + right.device + ")", "(" + left.host + " - " + right.host + ")"};
    case 2:
      --products_left;
      return {"(" + left.device + " * " + right.device + ")", "(" + left.host + " * " + right.host + ")"};
    default:
      return {"(" + left.device + " > " + right.device + " ? " + left.device + " : " + right.device + ")",
              "(" + left.host + " > " + right.host + " ? " + left.host + " : " + right.host + ")"};
  }
}

DomainCode write_elementwise(DomainContext& c) {
  int64_t n = c.pick_size({65536, 262144, 1048576});
  bool use_constant = c.has("constant_memory");
  double a = c.is_integer() ? 3 : 1.5;
  double b = c.is_integer() ? -2 : -0.25;
  std::string coef_a = use_constant ? "coefficients[0]" : "(" + c.lit(a) + ")";
  std::string coef_b = use_constant ? "coefficients[1]" : "(" + c.lit(b) + ")";
  // Case 0 is the linear combination; a switch adds 2 to 7 random expressions after it.
  std::vector<SwitchCase> cases = {{coef_a + " * x[i] + " + coef_b + " * z[i]",
                                    std::to_string(a) + " * x + " + std::to_string(b) + " * z"}};
  SwitchText combine = switch_over_cases(c, {"op", "result", "T", "T", 4, 4}, cases, 6, [&c] {
    int products_left = 2;
    return elementwise_expression(c, 1 + static_cast<int>(c.random.below(3)), products_left);
  });
  std::string kernels = R"(
${CONSTANT}
${KERNEL}combine_kernel(const T* x, const T* z, T* out, int n, int op) {
  ${UNROLL}
  for (int i = ${IDX}; i < n; i += gridDim.x * blockDim.x) {
${BODY}
    out[i] = result;
  }
}
)";
  std::string buffers = host_device_buffers({{"d_x", "x"}, {"d_z", "z"}, {"d_out", ""}}, "n", "${CONSTANT_UPLOAD}");
  std::string main_body = R"(  auto reference_combine = [](int op, double x, double z) -> double {
${REFERENCE}
  };
  const int n = ${N};
  std::vector<value_t> x(n), z(n), out(n);
  for (int i = 0; i < n; ++i) {
    x[i] = (value_t)${INPUT};
    z[i] = (value_t)${INPUT};
  }
)" + buffers + R"(  bool passed = true;
  for (int op = 0; op < ${OPS}; ++op) {
    combine_kernel${TARG}<<<${GRID}, ${BLOCK}, 0, g_stream>>>(d_x, d_z, d_out, n, op);
    after_launch();
    download(out.data(), d_out, n * sizeof(value_t));
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      if (!close_enough((double)out[i], reference_combine(op, (double)x[i], (double)z[i]), 1e-5)) passed = false;
      sum += (double)out[i];
    }
)" + labelled_reports("op", "op", {{"value", "mean", "sum / n"}}) + R"(  }
  device_end();
  return finish(passed);
)";
  std::map<std::string, std::string> values = {
      {"BODY", combine.device},
      {"REFERENCE", combine.host},
      {"INPUT", c.is_integer() ? "random_int(-100, 100)" : "random_dyadic(4, 16)"},
      {"OPS", str(static_cast<int64_t>(cases.size()))},
      {"GRID", c.grid_for(n, 1024)}};
  add_constant_literals(values, use_constant, "coefficients", "host_coefficients", {c.lit(a), c.lit(b)});
  c.record(values, {{"n", n}});
  c.parameters["cases"] = cases.size();
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_reduction(DomainContext& c) {
  int64_t n = c.pick_size({16384, 65536, 262144});
  bool shuffle = c.has("warp_shuffle");
  std::string final_step = c.has("grid_sync") ? "grid" : c.has("atomics") ? "atomic" : "partials";
  std::string block_reduce =
      shuffle ? R"(  const int lane = threadIdx.x % ${WARP};
  const int warp_id = threadIdx.x / ${WARP};
  ${UNROLL}
  for (int offset = ${WARP} / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) cache[warp_id] = sum;
  ${SYNC}
  if (warp_id == 0) {
    sum = lane < (int)(blockDim.x / ${WARP}) ? cache[lane] : (T)0;
    for (int offset = ${WARP} / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  })"
              : block_tree_sum("sum");
  std::string finish_block;
  if (final_step == "atomic") {
    finish_block = "  if (threadIdx.x == 0) atomicAdd(result, sum);";
  } else if (final_step == "grid") {
    finish_block = R"(  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  cg::grid_group grid = cg::this_grid();
  grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    T total = 0;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *result = total;
  })";
  } else {
    finish_block = "  if (threadIdx.x == 0) partials[blockIdx.x] = sum;";
  }
  std::string kernels = R"(
${KERNEL}reduce_kernel(const T* input, T* partials, T* result, int n) {
  ${SHARED}
  T sum = 0;
  for (int i = ${IDX}; i < n; i += gridDim.x * blockDim.x) sum += input[i];
${BLOCK_REDUCE}
${FINISH}
}
)";
  std::string launch =
      final_step == "grid" ? R"(  int blocks_per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_kernel${TARG}, ${BLOCK}, ${SHMEM}));
  int device = 0;
  CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties;
  CHECK(cudaGetDeviceProperties(&properties, device));
  int grid_blocks = std::min(${GRID}, blocks_per_sm * properties.multiProcessorCount);
  if (grid_blocks < 1) grid_blocks = 1;
  int n_arg = n;
  void* arguments[] = {&d_input, &d_partials, &d_result, &n_arg};
  CHECK(cudaLaunchCooperativeKernel((void*)reduce_kernel${TARG}, dim3(grid_blocks), dim3(${BLOCK}), arguments, ${SHMEM}, g_stream));
  after_launch();)"
                           : R"(  const int grid_blocks = ${GRID};
  reduce_kernel${TARG}<<<grid_blocks, ${BLOCK}, ${SHMEM}, g_stream>>>(d_input, d_partials, d_result, n);
  after_launch();)";
  std::string gather = final_step == "partials" ? R"(  std::vector<value_t> partials(grid_blocks);
  download(partials.data(), d_partials, grid_blocks * sizeof(value_t));
  value_t gpu_sum = 0;
  for (int b = 0; b < grid_blocks; ++b) gpu_sum += partials[b];)"
                                                : R"(  value_t gpu_sum = 0;
  download(&gpu_sum, d_result, sizeof(value_t));)";
  std::string main_body = R"(  const int n = ${N};
  std::vector<value_t> input(n);
  double want = 0;
  for (int i = 0; i < n; ++i) {
    input[i] = (value_t)${INPUT};
    want += (double)input[i];
  }
  value_t* d_input = (value_t*)device_alloc(n * sizeof(value_t));
  value_t* d_partials = (value_t*)device_alloc(${GRID} * sizeof(value_t));
  value_t* d_result = (value_t*)device_alloc(sizeof(value_t));
  device_begin();
  upload(d_input, input.data(), n * sizeof(value_t));
${LAUNCH}
${GATHER}
  device_end();
  report_count("n", n);
  report_value("sum", (double)gpu_sum);
  return finish(close_enough((double)gpu_sum, want, 1e-6));
)";
  std::map<std::string, std::string> values = {
      {"BLOCK_REDUCE", block_reduce},
      {"FINISH", finish_block},
      {"LAUNCH", launch},
      {"GATHER", gather},
      {"INPUT", c.input_expression()},
      {"GRID", c.grid_for(n, 256)}};
  c.add_thread_shared(values, "cache", "T", "value_t");
  c.record(values, {{"n", n}});
  c.parameters["final_step"] = final_step;
  return fill_code(c, kernels, main_body, values, 2, 2);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_scan(DomainContext& c) {
  int64_t n = c.pick_size({10000, 65536, 200000});
  bool shuffle = c.has("warp_shuffle");
  std::string block_scan = shuffle ? R"(  const int lane = threadIdx.x % ${WARP};
  const int warp_id = threadIdx.x / ${WARP};
  for (int offset = 1; offset < ${WARP}; offset *= 2) {
    T up = __shfl_up_sync(0xffffffffu, value, offset);
    if (lane >= offset) value += up;
  }
  if (lane == ${WARP} - 1) cache[warp_id] = value;
  ${SYNC}
  if (warp_id == 0) {
    T total = lane < (int)(blockDim.x / ${WARP}) ? cache[lane] : (T)0;
    for (int offset = 1; offset < ${WARP}; offset *= 2) {
      T up = __shfl_up_sync(0xffffffffu, total, offset);
      if (lane >= offset) total += up;
    }
    cache[lane] = total;
  }
  ${SYNC}
  if (warp_id > 0) value += cache[warp_id - 1];)"
                                   : R"(  cache[threadIdx.x] = value;
  ${SYNC}
  for (int offset = 1; offset < (int)blockDim.x; offset *= 2) {
    T addend = (int)threadIdx.x >= offset ? cache[threadIdx.x - offset] : (T)0;
    ${SYNC}
    cache[threadIdx.x] += addend;
    ${SYNC}
  }
  value = cache[threadIdx.x];)";
  std::string kernels = R"(
${KERNEL}scan_blocks_kernel(const T* input, T* output, T* block_sums, int n) {
  ${SHARED}
  const int i = ${IDX};
  T value = i < n ? input[i] : (T)0;
${BLOCK_SCAN}
  if (i < n) output[i] = value;
  if (threadIdx.x == blockDim.x - 1) block_sums[blockIdx.x] = value;
}

${KERNEL_NB}scan_block_sums_kernel(T* block_sums, int count) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    T running = 0;
    for (int b = 0; b < count; ++b) {
      running += block_sums[b];
      block_sums[b] = running;
    }
  }
}

${KERNEL}add_offsets_kernel(T* output, const T* block_sums, int n) {
  const int i = ${IDX};
  if (i < n && blockIdx.x > 0) output[i] += block_sums[blockIdx.x - 1];
}
)";
  std::string main_body = R"(  const int n = ${N};
  const int blocks = (n + ${BLOCK} - 1) / ${BLOCK};
  std::vector<value_t> input(n), output(n);
  for (int i = 0; i < n; ++i) input[i] = (value_t)${INPUT};
  value_t* d_input = (value_t*)device_alloc(n * sizeof(value_t));
  value_t* d_output = (value_t*)device_alloc(n * sizeof(value_t));
  value_t* d_block_sums = (value_t*)device_alloc(blocks * sizeof(value_t));
  device_begin();
  upload(d_input, input.data(), n * sizeof(value_t));
  scan_blocks_kernel${TARG}<<<blocks, ${BLOCK}, ${SHMEM}, g_stream>>>(d_input, d_output, d_block_sums, n);
  after_launch();
  scan_block_sums_kernel${TARG}<<<1, 1, 0, g_stream>>>(d_block_sums, blocks);
  after_launch();
  add_offsets_kernel${TARG}<<<blocks, ${BLOCK}, 0, g_stream>>>(d_output, d_block_sums, n);
)" + host_collect("output", "d_output", "n * sizeof(value_t)") + R"(  double running = 0;
  for (int i = 0; i < n; ++i) {
    running += (double)input[i];
    if (!close_enough((double)output[i], running, 1e-6)) passed = false;
  }
)" + host_reports({{"count", "n", "n"}, {"value", "middle", "(double)output[n / 2]"},
                   {"value", "total", "(double)output[n - 1]"}});
  std::map<std::string, std::string> values = {
      {"BLOCK_SCAN", block_scan},
      {"INPUT", c.input_expression()}};
  c.add_thread_shared(values, "cache", "T", "value_t");
  c.record(values, {{"n", n}});
  return fill_code(c, kernels, main_body, values, 2, 1);
}

// ---------------------------------------------------------------------------------------------
// A random bin function for histogram's switch: one to three mixing steps on v (shift, odd
// multiply, xor-shift, add, rotate; unsigned wrap-around is the same on host and device), then a
// reduction to ${BINS} bins by modulo or by the top ${LOG2} bits of a multiplicative hash.
std::string histogram_mode(DomainContext& c) {
  std::string value = "v";
  int steps = 1 + static_cast<int>(c.random.below(3));
  for (int k = 0; k < steps; ++k) {
    std::string shift = str(1 + static_cast<int64_t>(c.random.below(15)));
    std::string odd = std::to_string((c.random.next() & 0xffffffffu) | 1u) + "u";
    switch (c.random.below(5)) {
      case 0: value = "(" + value + " >> " + shift + ")"; break;
      case 1: value = "(" + value + " * " + odd + ")"; break;
      case 2: value = "(" + value + " ^ (" + value + " >> " + shift + "))"; break;
      case 3: value = "(" + value + " + " + odd + ")"; break;
      default: value = "((" + value + " << " + shift + ") | (" + value + " >> (32 - " + shift + ")))"; break;
    }
  }
  if (c.random.chance(0.5)) return value + " % ${BINS}u";
  std::string odd = std::to_string((c.random.next() & 0xffffffffu) | 1u) + "u";
  return "(" + value + " * " + odd + ") >> (32 - ${LOG2})";
}

DomainCode write_histogram(DomainContext& c) {
  int64_t n = c.pick_size({65536, 262144, 1048576});
  int bins = c.random.pick(std::vector<int>{64, 128, 256});
  int log2_bins = bins == 64 ? 6 : bins == 128 ? 7 : 8;
  bool private_bins = c.has("static_shared") || c.has("dynamic_shared");
  // Mode 0 is the plain modulo; a switch adds 2 to 6 random hash-and-reduce modes after it.
  std::vector<SwitchCase> modes = {{"v % ${BINS}u", "v % ${BINS}u"}};
  SwitchText bin = switch_over_cases(c, {"mode", "bin", "unsigned int", "unsigned int", 4, 2}, modes, 5,
                                     [&c] { return same_case(histogram_mode(c)); });
  std::string kernels = private_bins ? R"(
${KERNEL}histogram_kernel(const unsigned int* data, unsigned int* histogram, int n, int mode) {
  ${SHARED}
  for (int b = threadIdx.x; b < ${BINS}; b += blockDim.x) local_bins[b] = 0;
  ${SYNC}
  for (int i = ${IDX}; i < n; i += gridDim.x * blockDim.x) {
    unsigned int v = data[i];
${BIN}
    atomicAdd(&local_bins[bin], 1u);
  }
  ${SYNC}
  for (int b = threadIdx.x; b < ${BINS}; b += blockDim.x) atomicAdd(&histogram[b], local_bins[b]);
}
)"
                                     : R"(
${KERNEL}histogram_kernel(const unsigned int* data, unsigned int* histogram, int n, int mode) {
  for (int i = ${IDX}; i < n; i += gridDim.x * blockDim.x) {
    unsigned int v = data[i];
${BIN}
    atomicAdd(&histogram[bin], 1u);
  }
}
)";
  kernels += R"(
static unsigned int reference_bin(unsigned int v, int mode) {
${REFERENCE}
}
)";
  std::string main_body = R"(  const int n = ${N};
  std::vector<unsigned int> data(n);
  for (int i = 0; i < n; ++i) data[i] = next_random() % (1u << (8 + (i % 13)));
  unsigned int* d_data = (unsigned int*)device_alloc(n * sizeof(unsigned int));
  unsigned int* d_histogram = (unsigned int*)device_alloc(${BINS} * sizeof(unsigned int));
  device_begin();
  upload(d_data, data.data(), n * sizeof(unsigned int));
  bool passed = true;
  for (int mode = 0; mode < ${MODES}; ++mode) {
    CHECK(cudaMemsetAsync(d_histogram, 0, ${BINS} * sizeof(unsigned int), g_stream));
    histogram_kernel${TARG}<<<${GRID}, ${BLOCK}, ${SHMEM}, g_stream>>>(d_data, d_histogram, n, mode);
    after_launch();
    std::vector<unsigned int> histogram(${BINS}), want(${BINS}, 0);
    download(histogram.data(), d_histogram, ${BINS} * sizeof(unsigned int));
    for (int i = 0; i < n; ++i) want[reference_bin(data[i], mode)] += 1;
    long long weighted = 0;
    unsigned int largest = 0;
    for (int b = 0; b < ${BINS}; ++b) {
      if (histogram[b] != want[b]) passed = false;
      weighted += (long long)b * histogram[b];
      largest = std::max(largest, histogram[b]);
    }
)" + labelled_reports("mode", "mode", {{"count", "weighted", "weighted"}, {"count", "largest_bin", "largest"}}) + R"(  }
  device_end();
  return finish(passed);
)";
  std::map<std::string, std::string> values = {
      {"SHARED", c.shared_array("local_bins", "unsigned int", "${BINS}")},
      {"SHMEM", private_bins ? c.shared_launch_bytes("unsigned int", str(bins)) : "0"},
      {"BIN", bin.device},
      {"REFERENCE", bin.host},
      {"LOG2", str(log2_bins)},
      {"MODES", str(static_cast<int64_t>(modes.size()))},
      {"GRID", c.grid_for(n, 512)}};
  c.record(values, {{"n", n}, {"bins", bins}});
  c.parameters["modes"] = modes.size();
  return fill_code(c, kernels, main_body, values, 2, 1);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_transpose(DomainContext& c) {
  int64_t rows = c.pick_size({300, 512, 777, 1024}, 2);
  int64_t cols = c.random.pick(std::vector<int64_t>{256, 333, 640, 1000});
  int tile = c.random.pick(std::vector<int>{16, 32});
  int tile_rows = 8;
  c.block = tile * tile_rows;
  c.threads = c.block;
  bool shared = c.has("static_shared") || c.has("dynamic_shared");
  bool dynamic = c.has("dynamic_shared");
  std::string store_tile = dynamic ? "tile[(threadIdx.y + j) * (${TILE} + 1) + threadIdx.x]"
                                   : "tile[threadIdx.y + j][threadIdx.x]";
  std::string load_tile = dynamic ? "tile[threadIdx.x * (${TILE} + 1) + threadIdx.y + j]"
                                  : "tile[threadIdx.x][threadIdx.y + j]";
  std::string shared_decl =
      dynamic ? c.shared_array("tile", "T", "") : "__shared__ T tile[${TILE}][${TILE} + 1];";
  std::string kernels = shared ? R"(
${KERNEL}transpose_kernel(const T* input, T* output, int rows, int cols) {
  ${SHARED}
  int x = blockIdx.x * ${TILE} + threadIdx.x;
  int y = blockIdx.y * ${TILE} + threadIdx.y;
  ${UNROLL}
  for (int j = 0; j < ${TILE}; j += ${TILE_ROWS}) {
    if (x < cols && y + j < rows) ${STORE_TILE} = input[(y + j) * cols + x];
  }
  ${SYNC}
  x = blockIdx.y * ${TILE} + threadIdx.x;
  y = blockIdx.x * ${TILE} + threadIdx.y;
  ${UNROLL}
  for (int j = 0; j < ${TILE}; j += ${TILE_ROWS}) {
    if (x < rows && y + j < cols) output[(y + j) * rows + x] = ${LOAD_TILE};
  }
}
)"
                               : R"(
${KERNEL}transpose_kernel(const T* input, T* output, int rows, int cols) {
  const int x = blockIdx.x * ${TILE} + threadIdx.x;
  const int y = blockIdx.y * ${TILE} + threadIdx.y;
  ${UNROLL}
  for (int j = 0; j < ${TILE}; j += ${TILE_ROWS}) {
    if (x < cols && y + j < rows) output[x * rows + y + j] = input[(y + j) * cols + x];
  }
}
)";
  std::string main_body = R"(  const int rows = ${ROWS};
  const int cols = ${COLS};
)" + host_matrix_setup() + R"(  dim3 block(${TILE}, ${TILE_ROWS});
  dim3 grid((cols + ${TILE} - 1) / ${TILE}, (rows + ${TILE} - 1) / ${TILE});
  transpose_kernel${TARG}<<<grid, block, ${SHMEM}, g_stream>>>(d_input, d_output, rows, cols);
)" + host_collect("output", "d_output", "output.size() * sizeof(value_t)") + R"(  double weighted = 0;
  for (int r = 0; r < rows; ++r) {
    for (int col = 0; col < cols; ++col) {
      if (output[(size_t)col * rows + r] != input[(size_t)r * cols + col]) passed = false;
    }
  }
  for (size_t i = 0; i < output.size(); ++i) weighted += (double)output[i] * (double)(i % 7);
)" + host_reports({{"count", "rows", "rows"}, {"count", "cols", "cols"},
                   {"value", "weighted", "weighted / output.size()"}});
  std::map<std::string, std::string> values = {
      {"SHARED", shared_decl},
      {"SHMEM", dynamic ? c.shared_launch_bytes("value_t", str(tile * (tile + 1))) : "0"},
      {"STORE_TILE", store_tile},
      {"LOAD_TILE", load_tile},
      {"TILE_ROWS", str(tile_rows)},
      {"INPUT", c.input_expression()}};
  c.record(values, {{"rows", rows}, {"cols", cols}, {"tile", tile}});
  return fill_code(c, kernels, main_body, values, 2, 1);
}

}  // namespace

std::vector<DomainSpec> basic_domains() {
  return {
      {"elementwise", {"float", "double", "int"},
       {"switch", "constant_memory", "unroll_pragma", "inline_ptx"}, {64, 128, 256, 512},
       write_elementwise},
      {"reduction", {"float", "double", "int"},
       {"static_shared", "dynamic_shared", "warp_shuffle", "atomics", "syncthreads",
        "unroll_pragma", "inline_ptx", "cooperative_groups", "grid_sync", "hardcoded_warp_size"},
       {64, 128, 256, 512}, write_reduction},
      {"scan", {"float", "double", "int"},
       {"static_shared", "dynamic_shared", "warp_shuffle", "syncthreads", "inline_ptx",
        "cooperative_groups", "hardcoded_warp_size"},
       {64, 128, 256, 512}, write_scan},
      {"histogram", {"unsigned int"},
       {"static_shared", "dynamic_shared", "atomics", "syncthreads", "switch", "inline_ptx",
        "cooperative_groups"},
       {64, 128, 256, 512}, write_histogram},
      {"transpose", {"float", "double", "int"},
       {"static_shared", "dynamic_shared", "syncthreads", "unroll_pragma", "cooperative_groups"},
       {256}, write_transpose},
  };
}

}  // namespace tailforge
