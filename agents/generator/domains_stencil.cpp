// Domains: stencil_1d, stencil_2d, stencil_3d.
#include <algorithm>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {
namespace {

// ---------------------------------------------------------------------------------------------
DomainCode write_stencil_1d(DomainContext& c) {
  int64_t n = c.pick_size({65536, 262144, 1048576});
  int radius = c.random.pick(std::vector<int>{1, 2, 3, 4});
  bool constant = c.has("constant_memory");
  bool shared = c.has("static_shared") || c.has("dynamic_shared");
  std::string source = shared ? "tile[local + k]" : "x[min(max(i + k, 0), n - 1)]";
  std::string sum;
  std::string weights_host;
  for (int k = -radius; k <= radius; ++k) {
    double weight = (radius + 1 - std::abs(k)) / 16.0;
    weights_host += (k == -radius ? "" : ", ") + std::to_string(weight);
    if (!constant) {
      std::string term = shared ? "tile[local + (" + str(k) + ")]"
                                : "x[min(max(i + (" + str(k) + "), 0), n - 1)]";
      sum += "    sum += " + c.lit(weight) + " * " + term + ";\n";
    }
  }
  if (constant) {
    sum = "    ${UNROLL}\n    for (int k = -${R}; k <= ${R}; ++k) sum += weights[k + ${R}] * " +
          source + ";\n";
  }
  std::string kernels = shared ? R"(
${CONSTANT}
${KERNEL}stencil_kernel(const T* x, T* y, int n) {
  ${SHARED}
  const int i = ${IDX};
  const int local = threadIdx.x + ${R};
  tile[local] = x[min(i, n - 1)];
  if ((int)threadIdx.x < ${R}) {
    tile[threadIdx.x] = x[max(i - ${R}, 0)];
    tile[local + blockDim.x] = x[min(i + (int)blockDim.x, n - 1)];
  }
  ${SYNC}
  if (i < n) {
    T sum = 0;
${SUM}
    y[i] = sum;
  }
}
)"
                               : R"(
${CONSTANT}
${KERNEL}stencil_kernel(const T* x, T* y, int n) {
  const int i = ${IDX};
  if (i < n) {
    T sum = 0;
${SUM}
    y[i] = sum;
  }
}
)";
  std::string arrays =
      host_arrays_setup({"x", "y", "d_x", "d_y", "n", "int i = 0; i < n; ++i", "n", "${CONSTANT_UPLOAD}"});
  std::string main_body = R"(  const int n = ${N};
  const double weights_host[] = {${WEIGHTS}};
)" + arrays + R"(  stencil_kernel${TARG}<<<(n + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}, ${SHMEM}, g_stream>>>(d_x, d_y, n);
)" + host_collect("y", "d_y", "n * sizeof(value_t)") + R"(  double total = 0;
  for (int i = 0; i < n; ++i) {
    double want = 0;
    for (int k = -${R}; k <= ${R}; ++k) want += weights_host[k + ${R}] * (double)x[std::min(std::max(i + k, 0), n - 1)];
    if (!close_enough((double)y[i], want, 1e-5)) passed = false;
    total += (double)y[i];
  }
)" + host_reports({{"count", "radius", "${R}"}, {"value", "mean", "total / n"},
                   {"value", "sample", "(double)y[n / 3]"}});
  std::map<std::string, std::string> values = {
      {"CONSTANT", constant ? "__constant__ value_t weights[2 * ${R} + 1];" : ""},
      {"CONSTANT_UPLOAD",
       constant ? "  value_t weights_device[2 * ${R} + 1];\n"
                  "  for (int k = 0; k < 2 * ${R} + 1; ++k) weights_device[k] = (value_t)weights_host[k];\n"
                  "  CHECK(cudaMemcpyToSymbol(weights, weights_device, sizeof(weights_device)));"
                : ""},
      {"SHARED", c.shared_array("tile", "T", "${BLOCK} + 2 * ${R}")},
      {"SHMEM", shared ? c.shared_launch_bytes("value_t", str(c.block + 2 * radius)) : "0"},
      {"SUM", sum},
      {"R", str(radius)},
      {"WEIGHTS", weights_host},
      {"INPUT", c.input_expression()}};
  c.record(values, {{"n", n}});
  c.parameters["radius"] = radius;
  return fill_code(c, kernels, main_body, values, 2, 2);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_stencil_2d(DomainContext& c) {
  int64_t side = c.pick_size({128, 256, 512, 1024}, 2);
  int tile = c.random.pick(std::vector<int>{8, 16});
  int iterations = c.random.pick(std::vector<int>{1, 2, 3});
  c.block = tile * tile;
  c.threads = c.block;
  bool shared = c.has("static_shared") || c.has("dynamic_shared");
  std::string center = c.lit(0.5);
  std::string neighbour = c.lit(0.125);
  std::string kernels = shared ? R"(
${KERNEL}jacobi_kernel(const T* in, T* out, int side) {
  ${SHARED}
  const int halo = ${TILE} + 2;
  const int thread = threadIdx.y * ${TILE} + threadIdx.x;
  for (int k = thread; k < halo * halo; k += ${TILE} * ${TILE}) {
    const int gy = blockIdx.y * ${TILE} + k / halo - 1;
    const int gx = blockIdx.x * ${TILE} + k % halo - 1;
    tile[k] = (gx >= 0 && gx < side && gy >= 0 && gy < side) ? in[gy * side + gx] : (T)0;
  }
  ${SYNC}
  const int x = blockIdx.x * ${TILE} + threadIdx.x;
  const int y = blockIdx.y * ${TILE} + threadIdx.y;
  if (x >= side || y >= side) return;
  const int t = (threadIdx.y + 1) * halo + threadIdx.x + 1;
  if (x == 0 || y == 0 || x == side - 1 || y == side - 1) {
    out[y * side + x] = tile[t];
  } else {
    out[y * side + x] = ${C0} * tile[t] + ${C1} * (tile[t - 1] + tile[t + 1] + tile[t - halo] + tile[t + halo]);
  }
}
)"
                               : R"(
${KERNEL}jacobi_kernel(const T* in, T* out, int side) {
  const int x = blockIdx.x * ${TILE} + threadIdx.x;
  const int y = blockIdx.y * ${TILE} + threadIdx.y;
  if (x >= side || y >= side) return;
  const int i = y * side + x;
  if (x == 0 || y == 0 || x == side - 1 || y == side - 1) {
    out[i] = in[i];
  } else {
    out[i] = ${C0} * in[i] + ${C1} * (in[i - 1] + in[i + 1] + in[i - side] + in[i + side]);
  }
}
)";
  std::string arrays =
      host_arrays_setup({"grid", "result", "d_a", "d_b", "cells", "int i = 0; i < cells; ++i", "cells", ""});
  std::string main_body = R"(  const int side = ${SIDE};
  const int cells = side * side;
)" + arrays + R"(  dim3 block(${TILE}, ${TILE});
  dim3 blocks((side + ${TILE} - 1) / ${TILE}, (side + ${TILE} - 1) / ${TILE});
  for (int iteration = 0; iteration < ${ITERATIONS}; ++iteration) {
    jacobi_kernel${TARG}<<<blocks, block, ${SHMEM}, g_stream>>>(d_a, d_b, side);
    after_launch();
    std::swap(d_a, d_b);
  }
  download(result.data(), d_a, cells * sizeof(value_t));
  device_end();
  std::vector<double> want(grid.begin(), grid.end()), next(cells);
  for (int iteration = 0; iteration < ${ITERATIONS}; ++iteration) {
    for (int y = 0; y < side; ++y) {
      for (int x = 0; x < side; ++x) {
        const int i = y * side + x;
        if (x == 0 || y == 0 || x == side - 1 || y == side - 1) next[i] = want[i];
        else next[i] = 0.5 * want[i] + 0.125 * (want[i - 1] + want[i + 1] + want[i - side] + want[i + side]);
      }
    }
    want.swap(next);
  }
  bool passed = true;
  double total = 0;
  for (int i = 0; i < cells; ++i) {
    if (!close_enough((double)result[i], want[i], 1e-5)) passed = false;
    total += (double)result[i];
  }
)" + host_reports({{"count", "side", "side"}, {"value", "mean", "total / cells"},
                   {"value", "center", "(double)result[(side / 2) * side + side / 2]"}});
  std::map<std::string, std::string> values = {
      {"SHARED", c.shared_array("tile", "T", "(${TILE} + 2) * (${TILE} + 2)")},
      {"SHMEM", shared ? c.shared_launch_bytes("value_t", str((tile + 2) * (tile + 2))) : "0"},
      {"C0", center},
      {"C1", neighbour},
      {"TILE", str(tile)},
      {"INPUT", c.input_expression()}};
  c.record(values, {{"side", side}, {"iterations", iterations}});
  return fill_code(c, kernels, main_body, values, 2, 1);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_stencil_3d(DomainContext& c) {
  int64_t side = c.pick_size({32, 48, 64, 96}, 3);
  int bx = 32;
  int by = c.random.pick(std::vector<int>{2, 4, 8});
  c.block = bx * by;
  c.threads = c.block;
  bool constant = c.has("constant_memory");
  std::string c0 = constant ? "coefficients[0]" : c.lit(0.25);
  std::string c1 = constant ? "coefficients[1]" : c.lit(0.125);
  std::string kernels = R"(
${CONSTANT}
${KERNEL}stencil_3d_kernel(const T* in, T* out, int side) {
  const int x = blockIdx.x * ${BX} + threadIdx.x;
  const int y = blockIdx.y * ${BY} + threadIdx.y;
  if (x >= side || y >= side) return;
  const int plane = side * side;
  ${UNROLL}
  for (int z = 0; z < side; ++z) {
    const int i = z * plane + y * side + x;
    if (x == 0 || y == 0 || z == 0 || x == side - 1 || y == side - 1 || z == side - 1) {
      out[i] = in[i];
    } else {
      out[i] = ${C0} * in[i] + ${C1} * (in[i - 1] + in[i + 1] + in[i - side] + in[i + side] + in[i - plane] + in[i + plane]);
    }
  }
}
)";
  std::string arrays = host_arrays_setup(
      {"grid", "result", "d_in", "d_out", "cells", "int i = 0; i < cells; ++i", "cells", "${CONSTANT_UPLOAD}"});
  std::string main_body = R"(  const int side = ${SIDE};
  const int cells = side * side * side;
  const int plane = side * side;
)" + arrays + R"(  dim3 block(${BX}, ${BY});
  dim3 blocks((side + ${BX} - 1) / ${BX}, (side + ${BY} - 1) / ${BY});
  stencil_3d_kernel${TARG}<<<blocks, block, 0, g_stream>>>(d_in, d_out, side);
)" + host_collect("result", "d_out", "cells * sizeof(value_t)") + R"(  double total = 0;
  for (int z = 0; z < side; ++z) {
    for (int y = 0; y < side; ++y) {
      for (int x = 0; x < side; ++x) {
        const int i = z * plane + y * side + x;
        double want = (double)grid[i];
        if (!(x == 0 || y == 0 || z == 0 || x == side - 1 || y == side - 1 || z == side - 1)) {
          want = 0.25 * (double)grid[i] + 0.125 * ((double)grid[i - 1] + (double)grid[i + 1] + (double)grid[i - side] +
                 (double)grid[i + side] + (double)grid[i - plane] + (double)grid[i + plane]);
        }
        if (!close_enough((double)result[i], want, 1e-5)) passed = false;
        total += (double)result[i];
      }
    }
  }
)" + host_reports({{"count", "side", "side"}, {"value", "mean", "total / cells"},
                   {"value", "sample", "(double)result[cells / 2 + side / 2]"}});
  std::map<std::string, std::string> values = {
      {"C0", c0},
      {"C1", c1},
      {"BX", str(bx)},
      {"BY", str(by)},
      {"INPUT", c.input_expression()}};
  add_constant_literals(values, constant, "coefficients", "host_coefficients", {"0.25", "0.125"});
  c.record(values, {{"side", side}});
  return fill_code(c, kernels, main_body, values, 2, 1);
}

}  // namespace

std::vector<DomainSpec> stencil_domains() {
  return {
      {"stencil_1d", {"float", "double"},
       {"static_shared", "dynamic_shared", "syncthreads", "constant_memory", "unroll_pragma",
        "inline_ptx", "cooperative_groups"},
       {64, 128, 256, 512}, write_stencil_1d},
      {"stencil_2d", {"float", "double"},
       {"static_shared", "dynamic_shared", "syncthreads", "cooperative_groups"}, {64, 256},
       write_stencil_2d},
      {"stencil_3d", {"float", "double"}, {"constant_memory", "unroll_pragma"}, {64, 128, 256},
       write_stencil_3d},
  };
}

}  // namespace tailforge
