// Domains: matmul_tiled, softmax, layernorm, spmv_csr, spmv_ell.
#include <algorithm>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {
namespace {

std::string combine(const std::string& op, const std::string& a, const std::string& b) {
  return op == "max" ? "(" + a + " > " + b + " ? " + a + " : " + b + ")" : "(" + a + " + " + b + ")";
}

// A block-wide reduction of `var` into a new const `result`, through shared `cache`; every
// thread sees the result. Uses warp shuffles when that knob is on.
std::string block_reduce(DomainContext& c, const std::string& var, const std::string& op,
                         const std::string& result) {
  if (c.has("warp_shuffle")) {
    return "  for (int offset = ${WARP} / 2; offset > 0; offset /= 2) {\n    const T other = "
           "__shfl_xor_sync(0xffffffffu, " + var + ", offset);\n    " + var + " = " +
           combine(op, var, "other") + ";\n  }\n" +
           "  if (threadIdx.x % ${WARP} == 0) cache[threadIdx.x / ${WARP}] = " + var + ";\n" +
           "  ${SYNC}\n" + "  T " + result + " = cache[0];\n" +
           "  for (int w = 1; w < (int)(blockDim.x / ${WARP}); ++w) " + result + " = " +
           combine(op, result, "cache[w]") + ";\n" + "  ${SYNC}\n";
  }
  return "  cache[threadIdx.x] = " + var + ";\n  ${SYNC}\n" +
         "  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {\n" +
         "    if (threadIdx.x < stride) cache[threadIdx.x] = " +
         combine(op, "cache[threadIdx.x]", "cache[threadIdx.x + stride]") + ";\n" +
         "    ${SYNC}\n  }\n" + "  const T " + result + " = cache[0];\n  ${SYNC}\n";
}

// ---------------------------------------------------------------------------------------------
DomainCode write_matmul(DomainContext& c) {
  int64_t m = c.pick_size({64, 128, 256, 384}, 2);
  int64_t n = c.random.pick(std::vector<int64_t>{64, 100, 192, 256});
  int64_t k = c.random.pick(std::vector<int64_t>{64, 128, 200, 256});
  int tile = c.random.pick(std::vector<int>{8, 16});
  c.block = tile * tile;
  c.threads = c.block;
  bool shared = c.has("static_shared") || c.has("dynamic_shared");
  std::string kernels = shared ? R"(
${KERNEL}matmul_kernel(const T* a, const T* b, T* product, int m, int n, int k) {
  ${SHARED}
  T* a_tile = tiles;
  T* b_tile = tiles + ${TILE} * ${TILE};
  const int row = blockIdx.y * ${TILE} + threadIdx.y;
  const int col = blockIdx.x * ${TILE} + threadIdx.x;
  T sum = 0;
  for (int t = 0; t < (k + ${TILE} - 1) / ${TILE}; ++t) {
    const int a_col = t * ${TILE} + threadIdx.x;
    const int b_row = t * ${TILE} + threadIdx.y;
    a_tile[threadIdx.y * ${TILE} + threadIdx.x] = (row < m && a_col < k) ? a[row * k + a_col] : (T)0;
    b_tile[threadIdx.y * ${TILE} + threadIdx.x] = (b_row < k && col < n) ? b[b_row * n + col] : (T)0;
    ${SYNC}
    ${UNROLL}
    for (int e = 0; e < ${TILE}; ++e) sum += a_tile[threadIdx.y * ${TILE} + e] * b_tile[e * ${TILE} + threadIdx.x];
    ${SYNC}
  }
  if (row < m && col < n) product[row * n + col] = sum;
}
)"
                               : R"(
${KERNEL}matmul_kernel(const T* a, const T* b, T* product, int m, int n, int k) {
  const int row = blockIdx.y * ${TILE} + threadIdx.y;
  const int col = blockIdx.x * ${TILE} + threadIdx.x;
  if (row >= m || col >= n) return;
  T sum = 0;
  ${UNROLL}
  for (int e = 0; e < k; ++e) sum += a[row * k + e] * b[e * n + col];
  product[row * n + col] = sum;
}
)";
  std::string main_body = R"(  const int m = ${M};
  const int n = ${N};
  const int k = ${K};
  std::vector<value_t> a((size_t)m * k), b((size_t)k * n), product((size_t)m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (value_t)${INPUT};
  for (size_t i = 0; i < b.size(); ++i) b[i] = (value_t)${INPUT};
  value_t* d_a = (value_t*)device_alloc(a.size() * sizeof(value_t));
  value_t* d_b = (value_t*)device_alloc(b.size() * sizeof(value_t));
  value_t* d_product = (value_t*)device_alloc(product.size() * sizeof(value_t));
  device_begin();
  upload(d_a, a.data(), a.size() * sizeof(value_t));
  upload(d_b, b.data(), b.size() * sizeof(value_t));
  dim3 block(${TILE}, ${TILE});
  dim3 blocks((n + ${TILE} - 1) / ${TILE}, (m + ${TILE} - 1) / ${TILE});
  matmul_kernel${TARG}<<<blocks, block, ${SHMEM}, g_stream>>>(d_a, d_b, d_product, m, n, k);
)" + host_collect("product", "d_product", "product.size() * sizeof(value_t)") + R"(  double total = 0;
  for (int row = 0; row < m; ++row) {
    for (int col = 0; col < n; ++col) {
      double want = 0;
      for (int e = 0; e < k; ++e) want += (double)a[(size_t)row * k + e] * (double)b[(size_t)e * n + col];
      if (!close_enough((double)product[(size_t)row * n + col], want, 1e-5)) passed = false;
      total += (double)product[(size_t)row * n + col];
    }
  }
)" + host_reports({{"count", "m", "m"}, {"count", "n", "n"}, {"count", "k", "k"},
                   {"value", "mean", "total / ((double)m * n)"},
                   {"value", "corner", "(double)product[product.size() - 1]"}});
  std::map<std::string, std::string> values = {
      {"SHARED", c.shared_array("tiles", "T", "2 * ${TILE} * ${TILE}")},
      {"SHMEM", shared ? c.shared_launch_bytes("value_t", str(2 * tile * tile)) : "0"},
      {"INPUT", c.input_expression()}};
  c.record(values, {{"m", m}, {"n", n}, {"k", k}, {"tile", tile}});
  return fill_code(c, kernels, main_body, values, 2, 1);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_softmax(DomainContext& c) {
  int64_t rows = c.pick_size({256, 1024, 4096});
  int64_t cols = c.random.pick(std::vector<int64_t>{64, 128, 300, 1000});
  std::string kernels = R"(
${KERNEL}softmax_kernel(const T* input, T* output, int cols) {
  ${SHARED}
  const T* row_in = input + (size_t)blockIdx.x * cols;
  T* row_out = output + (size_t)blockIdx.x * cols;
  T local_max = row_in[0];
  for (int col = threadIdx.x; col < cols; col += blockDim.x) local_max = local_max > row_in[col] ? local_max : row_in[col];
${REDUCE_MAX}
  T local_sum = 0;
  for (int col = threadIdx.x; col < cols; col += blockDim.x) local_sum += exp(row_in[col] - row_max);
${REDUCE_SUM}
  for (int col = threadIdx.x; col < cols; col += blockDim.x) row_out[col] = exp(row_in[col] - row_max) / row_sum;
}
)";
  std::string main_body = R"(  const int rows = ${ROWS};
  const int cols = ${COLS};
)" + host_matrix_setup() + R"(  softmax_kernel${TARG}<<<rows, ${BLOCK}, ${SHMEM}, g_stream>>>(d_input, d_output, cols);
)" + host_collect("output", "d_output", "output.size() * sizeof(value_t)") + R"(  double peak_total = 0;
  for (int row = 0; row < rows; ++row) {
    const value_t* in = &input[(size_t)row * cols];
    double row_max = in[0];
    for (int col = 0; col < cols; ++col) row_max = std::max(row_max, (double)in[col]);
    double row_sum = 0;
    for (int col = 0; col < cols; ++col) row_sum += std::exp((double)in[col] - row_max);
    double peak = 0;
    for (int col = 0; col < cols; ++col) {
      const double got = (double)output[(size_t)row * cols + col];
      if (!close_enough(got, std::exp((double)in[col] - row_max) / row_sum, 1e-4)) passed = false;
      peak = std::max(peak, got);
    }
    peak_total += peak;
  }
  double first_row = 0;
  for (int col = 0; col < cols; ++col) first_row += (double)output[col];
)" + host_reports({{"count", "rows", "rows"}, {"count", "cols", "cols"}, {"value", "first_row_sum", "first_row"},
                   {"value", "mean_peak", "peak_total / rows"}});
  std::map<std::string, std::string> values = {
      {"REDUCE_MAX", block_reduce(c, "local_max", "max", "row_max")},
      {"REDUCE_SUM", block_reduce(c, "local_sum", "sum", "row_sum")},
      {"INPUT", c.input_expression()}};
  c.add_thread_shared(values, "cache", "T", "value_t");
  c.record(values, {{"rows", rows}, {"cols", cols}});
  return fill_code(c, kernels, main_body, values, 2, 1);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_layernorm(DomainContext& c) {
  int64_t rows = c.pick_size({256, 1024, 4096});
  int64_t cols = c.random.pick(std::vector<int64_t>{64, 128, 256, 768});
  bool constant = c.has("constant_memory");
  std::string kernels = R"(
${CONSTANT}
${KERNEL}layernorm_kernel(const T* input, ${TABLE_PARAMS}T* output, int cols) {
  ${SHARED}
  const T* row_in = input + (size_t)blockIdx.x * cols;
  T* row_out = output + (size_t)blockIdx.x * cols;
  T local_sum = 0;
  for (int col = threadIdx.x; col < cols; col += blockDim.x) local_sum += row_in[col];
${REDUCE_SUM}
  const T mean = row_sum / cols;
  T local_square = 0;
  for (int col = threadIdx.x; col < cols; col += blockDim.x) local_square += (row_in[col] - mean) * (row_in[col] - mean);
${REDUCE_SQUARE}
  const T inverse_deviation = ${ONE} / sqrt(row_square / cols + ${EPS});
  for (int col = threadIdx.x; col < cols; col += blockDim.x) row_out[col] = (row_in[col] - mean) * inverse_deviation * scale[col] + shift[col];
}
)";
  std::string main_body = R"(  const int rows = ${ROWS};
  const int cols = ${COLS};
  std::vector<value_t> input((size_t)rows * cols), output((size_t)rows * cols), gamma_host(cols), beta_host(cols);
  for (size_t i = 0; i < input.size(); ++i) input[i] = (value_t)${INPUT};
  for (int col = 0; col < cols; ++col) {
    gamma_host[col] = (value_t)(1 + random_int(-4, 4) / 16.0);
    beta_host[col] = (value_t)(random_int(-4, 4) / 16.0);
  }
  value_t* d_input = (value_t*)device_alloc(input.size() * sizeof(value_t));
  value_t* d_output = (value_t*)device_alloc(input.size() * sizeof(value_t));
${TABLE_ALLOC}
  device_begin();
${TABLE_UPLOAD}
  upload(d_input, input.data(), input.size() * sizeof(value_t));
  layernorm_kernel${TARG}<<<rows, ${BLOCK}, ${SHMEM}, g_stream>>>(d_input, ${TABLE_ARGS}d_output, cols);
)" + host_collect("output", "d_output", "output.size() * sizeof(value_t)") + R"(  double total = 0;
  for (int row = 0; row < rows; ++row) {
    const value_t* in = &input[(size_t)row * cols];
    double mean = 0;
    for (int col = 0; col < cols; ++col) mean += (double)in[col];
    mean /= cols;
    double variance = 0;
    for (int col = 0; col < cols; ++col) variance += ((double)in[col] - mean) * ((double)in[col] - mean);
    const double inverse_deviation = 1.0 / std::sqrt(variance / cols + 1e-5);
    for (int col = 0; col < cols; ++col) {
      const double want = ((double)in[col] - mean) * inverse_deviation * (double)gamma_host[col] + (double)beta_host[col];
      const double got = (double)output[(size_t)row * cols + col];
      if (!close_enough(got, want, 1e-3)) passed = false;
      total += got * got;
    }
  }
)" + host_reports({{"count", "rows", "rows"}, {"count", "cols", "cols"},
                   {"value", "mean_square", "total / ((double)rows * cols)"}, {"value", "first", "(double)output[0]"}});
  std::map<std::string, std::string> values = {
      {"REDUCE_SUM", block_reduce(c, "local_sum", "sum", "row_sum")},
      {"REDUCE_SQUARE", block_reduce(c, "local_square", "sum", "row_square")},
      {"ONE", c.lit(1.0)},
      {"EPS", c.lit(1e-5)},
      {"INPUT", c.input_expression()}};
  c.add_thread_shared(values, "cache", "T", "value_t");
  add_read_only_tables(values, constant, {{"scale", "d_gamma", "gamma_host", "${COLS}", "cols"},
                       {"shift", "d_beta", "beta_host", "${COLS}", "cols"}});
  c.record(values, {{"rows", rows}, {"cols", cols}});
  return fill_code(c, kernels, main_body, values, 2, 2);
}

// ---------------------------------------------------------------------------------------------
// Host code shared by both sparse formats: a random CSR matrix and the dense-free reference.
const char* kSparseSetup = R"(  const int rows = ${ROWS};
  std::vector<int> row_start(rows + 1, 0);
  for (int row = 0; row < rows; ++row) row_start[row + 1] = row_start[row] + random_int(1, 2 * ${AVERAGE});
  const int nonzeros = row_start[rows];
  std::vector<int> columns(nonzeros);
  std::vector<value_t> entries(nonzeros), x(rows), y(rows);
  for (int i = 0; i < nonzeros; ++i) {
    columns[i] = random_int(0, rows - 1);
    entries[i] = (value_t)${INPUT};
  }
  for (int i = 0; i < rows; ++i) x[i] = (value_t)${INPUT};
  std::vector<double> want(rows, 0);
  for (int row = 0; row < rows; ++row) {
    for (int i = row_start[row]; i < row_start[row + 1]; ++i) want[row] += (double)entries[i] * (double)x[columns[i]];
  }
)";

const char* kSparseReport = R"(  bool passed = true;
  double total = 0;
  for (int row = 0; row < rows; ++row) {
    if (!close_enough((double)y[row], want[row], 1e-5)) passed = false;
    total += (double)y[row];
  }
  report_count("rows", rows);
  report_count("nonzeros", nonzeros);
  report_value("sum", total);
  report_value("middle", (double)y[rows / 2]);
  return finish(passed);
)";

DomainCode write_spmv_csr(DomainContext& c) {
  int64_t rows = c.pick_size({4096, 16384, 65536});
  int average = c.random.pick(std::vector<int>{4, 8, 16});
  bool vector = c.has("warp_shuffle");
  std::string kernels = vector ? R"(
${KERNEL}spmv_csr_kernel(const int* row_start, const int* columns, const T* entries, const T* x, T* y, int rows) {
  const int lane = threadIdx.x % ${WARP};
  const int warps_in_grid = gridDim.x * blockDim.x / ${WARP};
  for (int row = ${IDX} / ${WARP}; row < rows; row += warps_in_grid) {
    T sum = 0;
    for (int i = row_start[row] + lane; i < row_start[row + 1]; i += ${WARP}) sum += entries[i] * x[columns[i]];
    ${UNROLL}
    for (int offset = ${WARP} / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[row] = sum;
  }
}
)"
                               : R"(
${KERNEL}spmv_csr_kernel(const int* row_start, const int* columns, const T* entries, const T* x, T* y, int rows) {
  for (int row = ${IDX}; row < rows; row += gridDim.x * blockDim.x) {
    T sum = 0;
    for (int i = row_start[row]; i < row_start[row + 1]; ++i) sum += entries[i] * x[columns[i]];
    y[row] = sum;
  }
}
)";
  std::string main_body = std::string(kSparseSetup) + R"(  int* d_row_start = (int*)device_alloc((rows + 1) * sizeof(int));
  int* d_columns = (int*)device_alloc(nonzeros * sizeof(int));
  value_t* d_entries = (value_t*)device_alloc(nonzeros * sizeof(value_t));
  value_t* d_x = (value_t*)device_alloc(rows * sizeof(value_t));
  value_t* d_y = (value_t*)device_alloc(rows * sizeof(value_t));
  device_begin();
  upload(d_row_start, row_start.data(), (rows + 1) * sizeof(int));
  upload(d_columns, columns.data(), nonzeros * sizeof(int));
  upload(d_entries, entries.data(), nonzeros * sizeof(value_t));
  upload(d_x, x.data(), rows * sizeof(value_t));
  const int threads_needed = ${VECTOR} ? rows * 32 : rows;
  const int blocks = std::min((threads_needed + ${BLOCK} - 1) / ${BLOCK}, 4096);
  spmv_csr_kernel${TARG}<<<blocks, ${BLOCK}, 0, g_stream>>>(d_row_start, d_columns, d_entries, d_x, d_y, rows);
  after_launch();
  download(y.data(), d_y, rows * sizeof(value_t));
  device_end();
)" + kSparseReport;
  std::map<std::string, std::string> values = {{"AVERAGE", str(average)},
                                               {"VECTOR", vector ? "true" : "false"},
                                               {"INPUT", c.input_expression()}};
  c.record(values, {{"rows", rows}});
  c.parameters["average_nonzeros"] = average;
  return fill_code(c, kernels, main_body, values, 1, 1);
}

DomainCode write_spmv_ell(DomainContext& c) {
  int64_t rows = c.pick_size({4096, 16384, 65536});
  int average = c.random.pick(std::vector<int>{4, 8});
  std::string kernels = R"(
${KERNEL}spmv_ell_kernel(const int* ell_columns, const T* ell_entries, const T* x, T* y, int rows, int width) {
  for (int row = ${IDX}; row < rows; row += gridDim.x * blockDim.x) {
    T sum = 0;
    ${UNROLL}
    for (int k = 0; k < width; ++k) {
      const int column = ell_columns[k * rows + row];
      if (column >= 0) sum += ell_entries[k * rows + row] * x[column];
    }
    y[row] = sum;
  }
}
)";
  std::string main_body = std::string(kSparseSetup) + R"(  int width = 0;
  for (int row = 0; row < rows; ++row) width = std::max(width, row_start[row + 1] - row_start[row]);
  std::vector<int> ell_columns((size_t)width * rows, -1);
  std::vector<value_t> ell_entries((size_t)width * rows, (value_t)0);
  for (int row = 0; row < rows; ++row) {
    for (int i = row_start[row]; i < row_start[row + 1]; ++i) {
      const size_t slot = (size_t)(i - row_start[row]) * rows + row;
      ell_columns[slot] = columns[i];
      ell_entries[slot] = entries[i];
    }
  }
  int* d_columns = (int*)device_alloc(ell_columns.size() * sizeof(int));
  value_t* d_entries = (value_t*)device_alloc(ell_entries.size() * sizeof(value_t));
  value_t* d_x = (value_t*)device_alloc(rows * sizeof(value_t));
  value_t* d_y = (value_t*)device_alloc(rows * sizeof(value_t));
  device_begin();
  upload(d_columns, ell_columns.data(), ell_columns.size() * sizeof(int));
  upload(d_entries, ell_entries.data(), ell_entries.size() * sizeof(value_t));
  upload(d_x, x.data(), rows * sizeof(value_t));
  spmv_ell_kernel${TARG}<<<(rows + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}, 0, g_stream>>>(d_columns, d_entries, d_x, d_y, rows, width);
  after_launch();
  download(y.data(), d_y, rows * sizeof(value_t));
  device_end();
  report_count("width", width);
)" + kSparseReport;
  std::map<std::string, std::string> values = {
      {"AVERAGE", str(average)}, {"INPUT", c.input_expression()}};
  c.record(values, {{"rows", rows}});
  c.parameters["average_nonzeros"] = average;
  return fill_code(c, kernels, main_body, values, 1, 1);
}

}  // namespace

std::vector<DomainSpec> linalg_domains() {
  return {
      {"matmul_tiled", {"float", "double"},
       {"static_shared", "dynamic_shared", "syncthreads", "unroll_pragma", "cooperative_groups"},
       {64, 256}, write_matmul},
      {"softmax", {"float", "double"},
       {"static_shared", "dynamic_shared", "warp_shuffle", "syncthreads", "cooperative_groups",
        "hardcoded_warp_size"},
       {64, 128, 256}, write_softmax},
      {"layernorm", {"float", "double"},
       {"static_shared", "dynamic_shared", "warp_shuffle", "syncthreads", "constant_memory",
        "cooperative_groups", "hardcoded_warp_size"},
       {64, 128, 256}, write_layernorm},
      {"spmv_csr", {"float", "double"},
       {"warp_shuffle", "unroll_pragma", "inline_ptx", "hardcoded_warp_size"}, {128, 256},
       write_spmv_csr},
      {"spmv_ell", {"float", "double"}, {"unroll_pragma", "inline_ptx"}, {128, 256},
       write_spmv_ell},
  };
}

}  // namespace tailforge
