// Domains: heat_diffusion (a solver step loop), convolution_2d, image_filter (Sobel).
#include <algorithm>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {
namespace {

// ---------------------------------------------------------------------------------------------
DomainCode write_heat(DomainContext& c) {
  int64_t side = c.pick_size({64, 128, 256}, 2);
  int steps = c.random.pick(std::vector<int>{10, 20, 40});
  bool grid_sync = c.has("grid_sync");
  bool constant = c.has("constant_memory");
  std::string alpha = constant ? "heat_alpha[0]" : c.lit(0.2);
  std::string update = R"(    const int x = i % side;
    const int y = i / side;
    if (x == 0 || y == 0 || x == side - 1 || y == side - 1) {
      next[i] = current[i];
    } else {
      next[i] = current[i] + ${ALPHA} * (current[i - 1] + current[i + 1] + current[i - side] + current[i + side] - ${FOUR} * current[i]);
    })";
  std::string kernels = grid_sync ? R"(
${CONSTANT}
${KERNEL}heat_steps_kernel(T* a, T* b, int side, int steps) {
  cg::grid_group grid = cg::this_grid();
  const int cells = side * side;
  for (int step = 0; step < steps; ++step) {
    const T* current = (step % 2 == 0) ? a : b;
    T* next = (step % 2 == 0) ? b : a;
    for (int i = ${IDX}; i < cells; i += gridDim.x * blockDim.x) {
${UPDATE}
    }
    grid.sync();
  }
}
)"
                                  : R"(
${CONSTANT}
${KERNEL}heat_step_kernel(const T* current, T* next, int side) {
  const int i = ${IDX};
  if (i < side * side) {
${UPDATE}
  }
}
)";
  std::string launch = grid_sync ? R"(  int blocks_per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, heat_steps_kernel${TARG}, ${BLOCK}, 0));
  int device = 0;
  CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties;
  CHECK(cudaGetDeviceProperties(&properties, device));
  int grid_blocks = std::min((cells + ${BLOCK} - 1) / ${BLOCK}, blocks_per_sm * properties.multiProcessorCount);
  if (grid_blocks < 1) grid_blocks = 1;
  int side_arg = side;
  int steps_arg = ${STEPS};
  void* arguments[] = {&d_a, &d_b, &side_arg, &steps_arg};
  CHECK(cudaLaunchCooperativeKernel((void*)heat_steps_kernel${TARG}, dim3(grid_blocks), dim3(${BLOCK}), arguments, 0, g_stream));
  after_launch();
  value_t* d_final = (${STEPS} % 2 == 0) ? d_a : d_b;)"
                                 : R"(  for (int step = 0; step < ${STEPS}; ++step) {
    heat_step_kernel${TARG}<<<(cells + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}, 0, g_stream>>>(d_a, d_b, side);
    after_launch();
    std::swap(d_a, d_b);
  }
  value_t* d_final = d_a;)";
  std::string buffers = host_device_buffers({{"d_a", "field"}, {"d_b", "field"}}, "cells", "${CONSTANT_UPLOAD}");
  std::string main_body = R"(  const int side = ${SIDE};
  const int cells = side * side;
  std::vector<value_t> field(cells, (value_t)0), result(cells);
  for (int x = 0; x < side; ++x) field[x] = (value_t)1;
  for (int y = 0; y < side; ++y) field[y * side] = (value_t)0.5;
)" + buffers + R"(${LAUNCH}
  download(result.data(), d_final, cells * sizeof(value_t));
  device_end();
  std::vector<double> want(field.begin(), field.end()), next(want);
  for (int step = 0; step < ${STEPS}; ++step) {
    for (int y = 1; y < side - 1; ++y) {
      for (int x = 1; x < side - 1; ++x) {
        const int i = y * side + x;
        next[i] = want[i] + 0.2 * (want[i - 1] + want[i + 1] + want[i - side] + want[i + side] - 4 * want[i]);
      }
    }
    want.swap(next);
  }
  bool passed = true;
  double total = 0;
  for (int i = 0; i < cells; ++i) {
    if (fabs((double)result[i] - want[i]) > 1e-4) passed = false;
    total += (double)result[i];
  }
)" + host_reports({{"count", "side", "side"}, {"count", "steps", "${STEPS}"},
                   {"value", "mean_temperature", "total / cells"},
                   {"value", "probe", "(double)result[2 * side + side / 2]"}});
  std::map<std::string, std::string> values = {
      {"UPDATE", update},
      {"ALPHA", alpha},
      {"FOUR", c.lit(4.0)},
      {"LAUNCH", launch}};
  add_constant_literals(values, constant, "heat_alpha", "host_alpha", {"0.2"});
  c.record(values, {{"side", side}, {"steps", steps}});
  return fill_code(c, kernels, main_body, values, 2, 2);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_convolution(DomainContext& c) {
  int64_t width = c.pick_size({128, 256, 512, 1024}, 2);
  int64_t height = c.random.pick(std::vector<int64_t>{96, 200, 384});
  int taps = c.random.pick(std::vector<int>{3, 5, 7});
  c.block = 256;
  c.threads = 256;
  bool constant = c.has("constant_memory");
  std::string kernels = R"(
${CONSTANT}
${KERNEL}convolution_kernel(const T* image, ${TABLE_PARAMS}T* output, int width, int height) {
  const int x = blockIdx.x * 16 + threadIdx.x;
  const int y = blockIdx.y * 16 + threadIdx.y;
  if (x >= width || y >= height) return;
  T sum = 0;
  ${UNROLL}
  for (int fy = 0; fy < ${TAPS}; ++fy) {
    ${UNROLL}
    for (int fx = 0; fx < ${TAPS}; ++fx) {
      const int ix = x + fx - ${TAPS} / 2;
      const int iy = y + fy - ${TAPS} / 2;
      if (ix >= 0 && ix < width && iy >= 0 && iy < height) sum += filter[fy * ${TAPS} + fx] * image[iy * width + ix];
    }
  }
  output[y * width + x] = sum;
}
)";
  std::string main_body = R"(  const int width = ${WIDTH};
  const int height = ${HEIGHT};
  const int pixels = width * height;
  std::vector<value_t> image(pixels), output(pixels), filter_host(${TAPS} * ${TAPS});
  for (int i = 0; i < pixels; ++i) image[i] = (value_t)${INPUT};
  for (int i = 0; i < ${TAPS} * ${TAPS}; ++i) filter_host[i] = (value_t)(random_int(-8, 8) / 32.0);
  value_t* d_image = (value_t*)device_alloc(pixels * sizeof(value_t));
  value_t* d_output = (value_t*)device_alloc(pixels * sizeof(value_t));
${TABLE_ALLOC}
  device_begin();
${TABLE_UPLOAD}
  upload(d_image, image.data(), pixels * sizeof(value_t));
  dim3 block(16, 16);
  dim3 blocks((width + 15) / 16, (height + 15) / 16);
  convolution_kernel${TARG}<<<blocks, block, 0, g_stream>>>(d_image, ${TABLE_ARGS}d_output, width, height);
)" + host_collect("output", "d_output", "pixels * sizeof(value_t)") + R"(  double total = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      double want = 0;
      for (int fy = 0; fy < ${TAPS}; ++fy) {
        for (int fx = 0; fx < ${TAPS}; ++fx) {
          const int ix = x + fx - ${TAPS} / 2;
          const int iy = y + fy - ${TAPS} / 2;
          if (ix >= 0 && ix < width && iy >= 0 && iy < height) want += (double)filter_host[fy * ${TAPS} + fx] * (double)image[iy * width + ix];
        }
      }
      if (!close_enough((double)output[y * width + x], want, 1e-5)) passed = false;
      total += (double)output[y * width + x];
    }
  }
)" + host_reports({{"count", "taps", "${TAPS}"}, {"value", "mean", "total / pixels"},
                   {"value", "corner", "(double)output[0]"}});
  std::map<std::string, std::string> values = {
      {"INPUT", c.input_expression()}};
  add_read_only_tables(values, constant,
                       {{"filter", "d_filter", "filter_host", "${TAPS} * ${TAPS}", "${TAPS} * ${TAPS}"}});
  c.record(values, {{"width", width}, {"height", height}, {"taps", taps}});
  return fill_code(c, kernels, main_body, values, 2, 2);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_image_filter(DomainContext& c) {
  int64_t width = c.pick_size({160, 320, 640, 1280}, 2);
  int64_t height = width * 3 / 4;
  c.block = 256;
  c.threads = 256;
  bool use_switch = c.has("switch");
  bool constant = c.has("constant_memory");
  std::string fetch = use_switch ? R"(__device__ int fetch_pixel(const unsigned char* image, int x, int y, int width, int height, int border) {
  switch (border) {
    case 0:
      x = min(max(x, 0), width - 1);
      y = min(max(y, 0), height - 1);
      break;
    case 1:
      x = (x + width) % width;
      y = (y + height) % height;
      break;
    default:
      if (x < 0 || y < 0 || x >= width || y >= height) return 0;
      break;
  }
  return image[y * width + x];
})"
                                 : R"(__device__ int fetch_pixel(const unsigned char* image, int x, int y, int width, int height, int border) {
  (void)border;
  x = min(max(x, 0), width - 1);
  y = min(max(y, 0), height - 1);
  return image[y * width + x];
})";
  std::string kernels = R"(
${CONSTANT}
${FETCH}

${KERNEL}sobel_kernel(const unsigned char* image, unsigned char* edges, int width, int height, int border) {
${LOCAL_WEIGHTS}
  const int x = blockIdx.x * 16 + threadIdx.x;
  const int y = blockIdx.y * 16 + threadIdx.y;
  if (x >= width || y >= height) return;
  int gx = 0;
  int gy = 0;
  ${UNROLL}
  for (int k = 0; k < 9; ++k) {
    const int pixel = fetch_pixel(image, x + k % 3 - 1, y + k / 3 - 1, width, height, border);
    gx += sobel_x[k] * pixel;
    gy += sobel_y[k] * pixel;
  }
  edges[y * width + x] = (unsigned char)min(abs(gx) + abs(gy), 255);
}

static int reference_pixel(const std::vector<unsigned char>& image, int x, int y, int width, int height, int border) {
  if (border == 0) {
    x = std::min(std::max(x, 0), width - 1);
    y = std::min(std::max(y, 0), height - 1);
  } else if (border == 1) {
    x = (x + width) % width;
    y = (y + height) % height;
  } else if (x < 0 || y < 0 || x >= width || y >= height) {
    return 0;
  }
  return image[y * width + x];
}
)";
  std::string main_body = R"(  const int width = ${WIDTH};
  const int height = ${HEIGHT};
  const int pixels = width * height;
  const int weights_x[9] = {-1, 0, 1, -2, 0, 2, -1, 0, 1};
  const int weights_y[9] = {-1, -2, -1, 0, 0, 0, 1, 2, 1};
  std::vector<unsigned char> image(pixels), edges(pixels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      image[y * width + x] = (unsigned char)(((x / 8 + y / 8) % 2) * 160 + random_int(0, 60));
    }
  }
  unsigned char* d_image = (unsigned char*)device_alloc(pixels);
  unsigned char* d_edges = (unsigned char*)device_alloc(pixels);
  device_begin();
${CONSTANT_UPLOAD}
  upload(d_image, image.data(), pixels);
  bool passed = true;
  dim3 block(16, 16);
  dim3 blocks((width + 15) / 16, (height + 15) / 16);
  for (int border = 0; border < ${MODES}; ++border) {
    sobel_kernel${TARG}<<<blocks, block, 0, g_stream>>>(d_image, d_edges, width, height, border);
    after_launch();
    download(edges.data(), d_edges, pixels);
    long long total = 0;
    long long strong = 0;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        int gx = 0;
        int gy = 0;
        for (int k = 0; k < 9; ++k) {
          const int pixel = reference_pixel(image, x + k % 3 - 1, y + k / 3 - 1, width, height, border);
          gx += weights_x[k] * pixel;
          gy += weights_y[k] * pixel;
        }
        const int want = std::min(std::abs(gx) + std::abs(gy), 255);
        if (edges[y * width + x] != want) passed = false;
        total += edges[y * width + x];
        if (edges[y * width + x] > 128) strong += 1;
      }
    }
)" + labelled_reports("border", "border", {{"count", "edge_sum", "total"},
                      {"count", "strong_edges", "strong"}}) + R"(  }
  device_end();
  return finish(passed);
)";
  std::map<std::string, std::string> values = {
      {"CONSTANT",
       constant ? "__constant__ int sobel_x[9];\n__constant__ int sobel_y[9];" : ""},
      {"CONSTANT_UPLOAD",
       constant ? "  CHECK(cudaMemcpyToSymbol(sobel_x, weights_x, sizeof(weights_x)));\n"
                  "  CHECK(cudaMemcpyToSymbol(sobel_y, weights_y, sizeof(weights_y)));"
                : ""},
      {"LOCAL_WEIGHTS",
       constant ? ""
                : "  const int sobel_x[9] = {-1, 0, 1, -2, 0, 2, -1, 0, 1};\n"
                  "  const int sobel_y[9] = {-1, -2, -1, 0, 0, 0, 1, 2, 1};"},
      {"FETCH", fetch},
      {"MODES", use_switch ? "3" : "1"}};
  c.record(values, {{"width", width}, {"height", height}});
  return fill_code(c, kernels, main_body, values, 2, 1);
}

}  // namespace

std::vector<DomainSpec> image_domains() {
  return {
      {"heat_diffusion", {"float", "double"},
       {"constant_memory", "inline_ptx", "grid_sync"}, {64, 128, 256},
       write_heat},
      {"convolution_2d", {"float", "double"}, {"constant_memory", "unroll_pragma"}, {256},
       write_convolution},
      {"image_filter", {"unsigned char"}, {"switch", "constant_memory", "unroll_pragma"}, {256},
       write_image_filter},
  };
}

}  // namespace tailforge
