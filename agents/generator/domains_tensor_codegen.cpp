// Domain: tensor_codegen. CUDA written the way a deep-learning compiler's code generator (TVM)
// writes it for tensor operators: one extern "C" default_function_kernel with launch bounds,
// flattened index arithmetic with a parenthesis around every operation, shared-memory tiles, and
// inner loops unrolled into runs of statements whose indices differ by constants. The schedule
// (tiles, threads, unroll factors) and the shapes come from the seeded random source. This file
// holds the domain's table entry and the two tiled operators, dense and conv2d; the others are in
// generator_tensor_operators.cpp.
#include <algorithm>
#include <string>
#include <utility>

#include "agents/generator/tensor_text.h"

namespace tailforge {
namespace {

using namespace tensor_text;

// Shared tiles need both a shared-memory knob and barriers.
bool uses_tiles(const DomainContext& c) {
  return (c.has("static_shared") || c.has("dynamic_shared")) && c.has("syncthreads");
}

// One shared array (`name[index]`) or, with dynamic shared memory, a slice of the extern buffer
// starting at `base`.
std::string shared_element(const DomainContext& c, const std::string& name, int64_t base,
                           const std::vector<std::string>& terms, int64_t constant) {
  if (c.has("dynamic_shared")) return "((" + c.value_type + "*)buf_dyn_shmem)[" + sum(terms, constant + base) + "]";
  return name + "[" + sum(terms, constant) + "]";
}

std::string shared_declarations(const DomainContext& c, const std::vector<std::pair<std::string, int64_t>>& arrays) {
  if (c.has("dynamic_shared")) return "  extern __shared__ __align__(16) unsigned char buf_dyn_shmem[];\n";
  std::string text;
  for (const auto& [name, size] : arrays)
    text += "  __shared__ " + c.value_type + " " + name + "[" + number(size) + "];\n";
  return text;
}

std::string shared_bytes(const DomainContext& c, int64_t elements) {
  return c.has("dynamic_shared") ? number(elements) + " * sizeof(value_t)" : "0";
}

std::string accumulate(const std::string& target, const std::string& left, const std::string& right) {
  return target + " = " + binary(target, "+", binary(left, "*", right)) + ";\n";
}

// A cooperative copy of `elements` values into shared memory by `threads` threads: an unrolled
// run when each thread copies a whole number of them, else a loop with a bound check.
// `source(position)` gives the global element for the tile position text.
template <typename Source>
std::string cooperative_copy(const DomainContext& c, const std::string& shared, int64_t base, int64_t elements,
                             int threads, const std::string& loop_name, Source source) {
  std::string text;
  int64_t rounds = blocks_for(elements, threads);
  bool guarded = elements % threads != 0;
  std::string position = rounds == 1 ? kThread : sum({scaled(loop_name, threads), kThread});
  std::string indent = rounds == 1 ? "    " : "      ";
  std::string store = shared_element(c, shared, base, {position}, 0) + " = " + source(position) + ";\n";
  if (rounds > 1)
    text += "    for (int " + loop_name + " = 0; " + loop_name + " < " + number(rounds) + "; ++" + loop_name + ") {\n";
  if (guarded) {
    text += indent + if_open(binary(position, "<", number(elements))) + indent + "  " + store + indent + "}\n";
  } else {
    text += indent + store;
  }
  if (rounds > 1) text += "    }\n";
  return text;
}

struct DenseSchedule {
  int thread_columns = 8, thread_rows = 8;  // threadIdx.x = row * thread_columns + column
  int rows_per_thread = 2, columns_per_thread = 2;
  int k_tile = 8;
};

DenseSchedule pick_dense_schedule(DomainContext& c, bool tiles) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    DenseSchedule s;
    auto [columns, rows] = c.random.pick(std::vector<std::pair<int, int>>{{8, 8}, {16, 8}, {8, 16}, {16, 16}});
    s.thread_columns = columns;
    s.thread_rows = rows;
    s.rows_per_thread = c.random.pick(std::vector<int>{1, 2, 4});
    s.columns_per_thread = c.random.pick(std::vector<int>{1, 2, 4});
    s.k_tile = c.random.pick(std::vector<int>{4, 8, 16});
    int threads = columns * rows;
    bool whole = (s.rows_per_thread * s.k_tile) % columns == 0 && (s.columns_per_thread * s.k_tile) % rows == 0 &&
                 threads % s.k_tile == 0;
    if (!tiles || whole) return s;
  }
  return DenseSchedule{};
}

const char* kDenseReference = R"(
${REF_HEAD} reference_dense(const std::vector<${REF_T}>& a, const std::vector<${REF_T}>& b, std::vector<${REF_T}>& out, int m, int n, int k) {
  for (int row = 0; row < m; ++row) {
    for (int col = 0; col < n; ++col) {
      double total = 0;
      for (int e = 0; e < k; ++e) total += (double)a[(size_t)row * k + e] * (double)b[(size_t)col * k + e];
      out[(size_t)row * n + col] = (${REF_T})total;
    }
  }
}
)";

const char* kConvReference = R"(
${REF_HEAD} reference_conv2d(const std::vector<${REF_T}>& data, const std::vector<${REF_T}>& weight, std::vector<${REF_T}>& out, int channels, int filters, int height, int width, int taps) {
  const int padded_height = height + taps - 1, padded_width = width + taps - 1;
  for (int f = 0; f < filters; ++f) {
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        double total = 0;
        for (int rc = 0; rc < channels; ++rc) {
          for (int ry = 0; ry < taps; ++ry) {
            for (int rx = 0; rx < taps; ++rx) {
              total += (double)data[((size_t)rc * padded_height + y + ry) * padded_width + x + rx] * (double)weight[(((size_t)f * channels + rc) * taps + ry) * taps + rx];
            }
          }
        }
        out[((size_t)f * height + y) * width + x] = (${REF_T})total;
      }
    }
  }
}
)";

std::string filled_reference(DomainContext& c, const char* text) {
  return c.fill(text, {{"REF_HEAD", reference_head(c)}, {"REF_T", reference_type(c)}});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// dense: T_matmul_NT[m, n] = sum_k A[m, k] * B[n, k]. A block computes a (rows x columns) tile,
// each thread a register tile of rows_per_thread x columns_per_thread, the k loop split in
// k_outer (shared tiles refilled) and k_inner (register tile fully unrolled).
DomainCode write_tensor_dense(DomainContext& c) {
  bool tiles = uses_tiles(c);
  DenseSchedule s = pick_dense_schedule(c, tiles);
  const int threads = s.thread_columns * s.thread_rows;
  const int64_t tile_rows = s.thread_rows * s.rows_per_thread, tile_columns = s.thread_columns * s.columns_per_thread;
  const int64_t m = tile_rows * c.random.pick(std::vector<int64_t>{2, 4, 8});
  const int64_t n = tile_columns * c.random.pick(std::vector<int64_t>{2, 4, 8});
  const int64_t k = s.k_tile * c.random.pick(std::vector<int64_t>{4, 8, 16, 32});
  const int64_t column_blocks = n / tile_columns;
  const int registers = s.rows_per_thread * s.columns_per_thread;
  std::string block_row = quotient(kBlock, column_blocks), block_column = remainder(kBlock, column_blocks);
  std::string thread_row = quotient(kThread, s.thread_columns), thread_column = remainder(kThread, s.thread_columns);

  std::string text = "\n" + kernel_head(c, threads, {"A", "B", "T_matmul_NT"}) + " {\n";
  text += "  " + c.value_type + " T_matmul_NT_local[" + number(registers) + "];\n";
  if (tiles)
    text += shared_declarations(c, {{"A_shared", tile_rows * s.k_tile}, {"B_shared", tile_columns * s.k_tile}});
  for (int r = 0; r < registers; ++r) text += "  T_matmul_NT_local[" + number(r) + "] = " + literal(c, 0) + ";\n";
  text += "  for (int k_outer = 0; k_outer < " + number(k / s.k_tile) + "; ++k_outer) {\n";
  if (tiles) {
    // Each thread copies rows * k_tile / threads values of a tile: rows (threads / k_tile) apart.
    auto load_tile = [&](const std::string& shared, const std::string& global, const std::string& block_part,
                         int64_t rows, int64_t base) {
      for (int64_t f = 0; f < rows * s.k_tile / threads; ++f) {
        std::string index = sum({scaled(block_part, rows * k), scaled(quotient(kThread, s.k_tile), k),
                                 scaled("k_outer", s.k_tile), remainder(kThread, s.k_tile)},
                                f * (threads / s.k_tile) * k);
        text +=
            "    " + shared_element(c, shared, base, {kThread}, f * threads) + " = " + global + "[" + index + "];\n";
      }
    };
    text += "    __syncthreads();\n";
    load_tile("A_shared", "A", block_row, tile_rows, 0);
    load_tile("B_shared", "B", block_column, tile_columns, tile_rows * s.k_tile);
    text += "    __syncthreads();\n";
  }
  text += "    for (int k_inner = 0; k_inner < " + number(s.k_tile) + "; ++k_inner) {\n";
  for (int i = 0; i < s.rows_per_thread; ++i) {
    for (int j = 0; j < s.columns_per_thread; ++j) {
      std::string a, b;
      if (tiles) {
        a = shared_element(c, "A_shared", 0, {scaled(thread_row, s.rows_per_thread * s.k_tile), "k_inner"},
                           i * s.k_tile);
        b = shared_element(c, "B_shared", tile_rows * s.k_tile,
                           {scaled(thread_column, s.columns_per_thread * s.k_tile), "k_inner"}, j * s.k_tile);
      } else {
        a = "A[" +
            sum({scaled(block_row, tile_rows * k), scaled(thread_row, s.rows_per_thread * k),
                 scaled("k_outer", s.k_tile), "k_inner"},
                i * k) +
            "]";
        b = "B[" +
            sum({scaled(block_column, tile_columns * k), scaled(thread_column, s.columns_per_thread * k),
                 scaled("k_outer", s.k_tile), "k_inner"},
                j * k) +
            "]";
      }
      text += "      " + accumulate("T_matmul_NT_local[" + number(i * s.columns_per_thread + j) + "]", a, b);
    }
  }
  text += "    }\n  }\n";
  for (int i = 0; i < s.rows_per_thread; ++i) {
    for (int j = 0; j < s.columns_per_thread; ++j) {
      std::string index = sum({scaled(block_row, tile_rows * n), scaled(thread_row, s.rows_per_thread * n),
                               scaled(block_column, tile_columns), scaled(thread_column, s.columns_per_thread)},
                              i * n + j);
      text += "  T_matmul_NT[" + index + "] = T_matmul_NT_local[" + number(i * s.columns_per_thread + j) + "];\n";
    }
  }
  text += "}\n";

  TensorProgram program;
  program.sizes = {"m", "n", "k"};
  program.size_values = {m, n, k};
  program.inputs = {{"a", "(size_t)m * k", ""}, {"b", "(size_t)n * k", ""}};
  program.output = {"product", "(size_t)m * n", ""};
  program.reference_call = "reference_dense(a, b, want, m, n, k);";
  program.grid = (m / tile_rows) * column_blocks;
  program.threads = threads;
  if (tiles) program.shared_bytes = shared_bytes(c, (tile_rows + tile_columns) * s.k_tile);
  c.block = c.threads = threads;
  c.parameters["operator"] = "dense";
  c.parameters["shape"] = {m, n, k};
  c.parameters["tile"] = {tile_rows, tile_columns, s.k_tile};
  c.parameters["register_tile"] = {s.rows_per_thread, s.columns_per_thread};
  return {text + filled_reference(c, kDenseReference), host_main(c, program)};
}

namespace {

// conv2d's shapes and schedule: drawn from the seeded random source, in this order, and what
// follows from them.
struct Conv2dSchedule {
  int64_t taps = 3, tile_rows = 4, tile_columns = 4, patch = 16, filter_groups = 4;
  int threads = 64;
  int64_t filters_per_thread = 1, filters_per_block = 4, filters = 4, channels = 4, channel_tile = 1;
  int64_t height = 4, width = 4, padded_height = 6, padded_width = 6, window = 9;
  int64_t column_blocks = 1, row_blocks = 1, filter_blocks = 1;
  int64_t pad_rows = 6, pad_columns = 6, pad_elements = 36, weight_elements = 36;  // the shared tiles
};

Conv2dSchedule pick_conv2d_schedule(DomainContext& c) {
  Conv2dSchedule s;
  s.taps = c.random.pick(std::vector<int64_t>{3, 3, 5});
  s.tile_rows = c.random.pick(std::vector<int64_t>{4, 8});
  s.tile_columns = c.random.pick(std::vector<int64_t>{4, 8});
  s.patch = s.tile_rows * s.tile_columns;
  std::vector<int64_t> groups;
  for (int64_t g : {1, 2, 4, 8})
    if (g * s.patch >= 64 && g * s.patch <= 256) groups.push_back(g);
  s.filter_groups = c.random.pick(groups);
  s.threads = static_cast<int>(s.filter_groups * s.patch);
  s.filters_per_thread = c.random.pick(std::vector<int64_t>{1, 2, 4});
  s.filters_per_block = s.filter_groups * s.filters_per_thread;
  s.filters = s.filters_per_block * c.random.pick(std::vector<int64_t>{1, 2, 4});
  s.channels = c.random.pick(std::vector<int64_t>{4, 8, 16});
  s.channel_tile = c.random.pick(std::vector<int64_t>{1, 2, 4});
  s.height = s.tile_rows * c.random.pick(std::vector<int64_t>{1, 2, 4});
  s.width = s.tile_columns * c.random.pick(std::vector<int64_t>{1, 2, 4});
  s.padded_height = s.height + s.taps - 1;
  s.padded_width = s.width + s.taps - 1;
  s.window = s.taps * s.taps;
  s.column_blocks = s.width / s.tile_columns;
  s.row_blocks = s.height / s.tile_rows;
  s.filter_blocks = s.filters / s.filters_per_block;
  s.pad_rows = s.tile_rows + s.taps - 1;
  s.pad_columns = s.tile_columns + s.taps - 1;
  s.pad_elements = s.channel_tile * s.pad_rows * s.pad_columns;
  s.weight_elements = s.filters_per_block * s.channel_tile * s.window;
  return s;
}

// The conv2d kernel's text for the schedule, with shared tiles or without.
std::string conv2d_kernel(DomainContext& c, const Conv2dSchedule& s, bool tiles) {
  const int64_t taps = s.taps, tile_rows = s.tile_rows, tile_columns = s.tile_columns, patch = s.patch;
  const int64_t filter_groups = s.filter_groups, filters_per_thread = s.filters_per_thread;
  const int64_t filters_per_block = s.filters_per_block, channels = s.channels, channel_tile = s.channel_tile;
  const int64_t height = s.height, width = s.width, padded_height = s.padded_height, padded_width = s.padded_width;
  const int64_t window = s.window, column_blocks = s.column_blocks, row_blocks = s.row_blocks;
  const int64_t filter_blocks = s.filter_blocks, pad_rows = s.pad_rows, pad_columns = s.pad_columns;
  const int64_t pad_elements = s.pad_elements, weight_elements = s.weight_elements;
  const int threads = s.threads;
  std::string block_column = remainder(kBlock, column_blocks);
  // blockIdx.x = (filter block * row_blocks + row block) * column_blocks + column block; a
  // coordinate of extent one is zero and not written.
  std::string block_row = row_blocks == 1      ? ""
                          : filter_blocks == 1 ? quotient(kBlock, column_blocks)
                                               : remainder(quotient(kBlock, column_blocks), row_blocks);
  std::string block_filter = filter_blocks == 1 ? "" : quotient(kBlock, column_blocks * row_blocks);
  std::string thread_filter = filter_groups == 1 ? "" : quotient(kThread, patch);
  std::string thread_row =
      quotient(filter_groups == 1 ? std::string(kThread) : remainder(kThread, patch), tile_columns);
  std::string thread_column = remainder(kThread, tile_columns);

  std::string text = "\n" + kernel_head(c, threads, {"data_pad", "weight", "conv2d_nchw"}) + " {\n";
  text += "  " + c.value_type + " conv2d_nchw_local[" + number(filters_per_thread) + "];\n";
  if (tiles) text += shared_declarations(c, {{"pad_temp_shared", pad_elements}, {"weight_shared", weight_elements}});
  for (int64_t f = 0; f < filters_per_thread; ++f) {
    text += "  conv2d_nchw_local[" + number(f) + "] = " + literal(c, 0) + ";\n";
  }
  // The reduction over input channels: rc_outer steps through channel tiles, rc_inner within one
  // (a loop of one iteration is not written, as the compiler drops it).
  const int64_t outer_steps = tiles ? channels / channel_tile : channels;
  const std::string outer = tiles ? "rc_outer" : "rc";
  const int64_t inner_steps = tiles ? channel_tile : 1;
  text += "  for (int " + outer + " = 0; " + outer + " < " + number(outer_steps) + "; ++" + outer + ") {\n";
  std::string indent = "    ";
  if (tiles) {
    text += "    __syncthreads();\n";
    text += cooperative_copy(
        c, "pad_temp_shared", 0, pad_elements, threads, "ax0_ax1_ax2_fused_outer", [&](const std::string& e) {
          std::string channel = channel_tile == 1 ? "" : quotient(e, pad_rows * pad_columns);
          return "data_pad[" +
                 sum({scaled("rc_outer", channel_tile * padded_height * padded_width),
                      scaled(channel, padded_height * padded_width), scaled(block_row, tile_rows * padded_width),
                      scaled(remainder(quotient(e, pad_columns), pad_rows), padded_width),
                      scaled(block_column, tile_columns), remainder(e, pad_columns)}) +
                 "]";
        });
    text += cooperative_copy(
        c, "weight_shared", pad_elements, weight_elements, threads, "ax0_ax1_ax2_ax3_fused_outer",
        [&](const std::string& e) {
          return "weight[" +
                 sum({scaled(block_filter, filters_per_block * channels * window),
                      scaled(quotient(e, channel_tile * window), channels * window),
                      scaled("rc_outer", channel_tile * window), remainder(e, channel_tile * window)}) +
                 "]";
        });
    text += "    __syncthreads();\n";
    if (inner_steps > 1) {
      text += "    for (int rc_inner = 0; rc_inner < " + number(inner_steps) + "; ++rc_inner) {\n";
      indent = "      ";
    }
  }
  const std::string channel = tiles ? (inner_steps > 1 ? "rc_inner" : "") : "rc";
  for (int64_t ry = 0; ry < taps; ++ry) {
    for (int64_t rx = 0; rx < taps; ++rx) {
      for (int64_t f = 0; f < filters_per_thread; ++f) {
        std::string input, weight;
        if (tiles) {
          input =
              shared_element(c, "pad_temp_shared", 0,
                             {scaled(channel, pad_rows * pad_columns), scaled(thread_row, pad_columns), thread_column},
                             ry * pad_columns + rx);
          weight = shared_element(
              c, "weight_shared", pad_elements,
              {scaled(thread_filter, filters_per_thread * channel_tile * window), scaled(channel, window)},
              f * channel_tile * window + ry * taps + rx);
        } else {
          input = "data_pad[" +
                  sum({scaled("rc", padded_height * padded_width), scaled(block_row, tile_rows * padded_width),
                       scaled(thread_row, padded_width), scaled(block_column, tile_columns), thread_column},
                      ry * padded_width + rx) +
                  "]";
          weight = "weight[" +
                   sum({scaled(block_filter, filters_per_block * channels * window),
                        scaled(thread_filter, filters_per_thread * channels * window), scaled("rc", window)},
                       f * channels * window + ry * taps + rx) +
                   "]";
        }
        text += indent + accumulate("conv2d_nchw_local[" + number(f) + "]", input, weight);
      }
    }
  }
  if (indent.size() > 4) text += "    }\n";
  text += "  }\n";
  for (int64_t f = 0; f < filters_per_thread; ++f) {
    std::string index =
        sum({scaled(block_filter, filters_per_block * height * width),
             scaled(thread_filter, filters_per_thread * height * width), scaled(block_row, tile_rows * width),
             scaled(thread_row, width), scaled(block_column, tile_columns), thread_column},
            f * height * width);
    text += "  conv2d_nchw[" + index + "] = conv2d_nchw_local[" + number(f) + "];\n";
  }
  text += "}\n";

  return text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// conv2d (NCHW, batch 1, stride 1, input already padded by a preceding pad operator): a block
// computes filters_per_block output channels of a (tile_rows x tile_columns) patch; threadIdx.x
// splits into a filter group, a row and a column; each thread accumulates filters_per_thread
// channels with the (ry, rx, f) loops unrolled.
DomainCode write_tensor_conv2d(DomainContext& c) {
  bool tiles = uses_tiles(c);
  const Conv2dSchedule s = pick_conv2d_schedule(c);
  std::string text = conv2d_kernel(c, s, tiles);
  const int64_t taps = s.taps, channels = s.channels, filters = s.filters, height = s.height, width = s.width;
  const int threads = s.threads;

  TensorProgram program;
  program.sizes = {"channels", "filters", "height", "width", "taps"};
  program.size_values = {channels, filters, height, width, taps};
  std::string fill =
      "  for (int rc = 0; rc < channels; ++rc) {\n"
      "    for (int y = 0; y < height; ++y) {\n"
      "      for (int x = 0; x < width; ++x) {\n"
      "        data_pad[((size_t)rc * (height + taps - 1) + y + taps / 2) * (width + taps - 1) + x + taps / 2] = "
      "(value_t)" +
      c.input_expression() + ";\n      }\n    }\n  }\n";
  program.inputs = {{"data_pad", "(size_t)channels * (height + taps - 1) * (width + taps - 1)", fill},
                    {"weight", "(size_t)filters * channels * taps * taps", ""}};
  program.output = {"conv2d_nchw", "(size_t)filters * height * width", ""};
  program.reference_call = "reference_conv2d(data_pad, weight, want, channels, filters, height, width, taps);";
  program.grid = s.filter_blocks * s.row_blocks * s.column_blocks;
  program.threads = threads;
  if (tiles) program.shared_bytes = shared_bytes(c, s.pad_elements + s.weight_elements);
  c.block = c.threads = threads;
  c.parameters["operator"] = "conv2d";
  c.parameters["shape"] = {channels, filters, height, width, taps};
  c.parameters["tile"] = {s.filters_per_block, s.tile_rows, s.tile_columns, s.channel_tile};
  return {text + filled_reference(c, kConvReference), host_main(c, program)};
}

namespace {

using OperatorWriter = DomainCode (*)(DomainContext&);

const std::vector<std::pair<std::string, OperatorWriter>>& tensor_operators() {
  static const std::vector<std::pair<std::string, OperatorWriter>> operators = {{"dense", write_tensor_dense},
                                                                                {"conv2d", write_tensor_conv2d},
                                                                                {"injective", write_tensor_injective},
                                                                                {"softmax", write_tensor_softmax},
                                                                                {"pool", write_tensor_pool}};
  return operators;
}

// The operator named by the template's {tensor_operator} hint, else a random one.
DomainCode write_tensor_codegen(DomainContext& c) {
  std::string wanted = c.parameters.value("operator_hint", "");
  c.parameters.erase("operator_hint");
  for (const auto& [name, writer] : tensor_operators())
    if (name == wanted) return writer(c);
  return c.random.pick(tensor_operators()).second(c);
}

}  // namespace

std::vector<DomainSpec> tensor_codegen_domains() {
  return {
      {"tensor_codegen",
       {"float", "double"},
       {"static_shared", "dynamic_shared", "syncthreads", "warp_shuffle", "hardcoded_warp_size"},
       {64, 128, 256},
       write_tensor_codegen},
  };
}

}  // namespace tailforge
