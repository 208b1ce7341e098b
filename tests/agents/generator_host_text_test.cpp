// The helpers the generator's domain writers share (agents/generator/host_text.cpp): the host
// main() text they write is the text each domain used to spell out, and the value and parameter
// helpers fill both maps.
#include <doctest/doctest.h>

#include <string>

#include "agents/generator/domain.h"

namespace tailforge {

TEST_CASE("generator host text: buffers, arrays, collection and reports as the domains wrote them") {
  CHECK(host_device_buffers({{"d_x", "x"}, {"d_out", ""}}, "n", "${CONSTANT_UPLOAD}") ==
        "  value_t* d_x = (value_t*)device_alloc(n * sizeof(value_t));\n"
        "  value_t* d_out = (value_t*)device_alloc(n * sizeof(value_t));\n"
        "  device_begin();\n"
        "${CONSTANT_UPLOAD}\n"
        "  upload(d_x, x.data(), n * sizeof(value_t));\n");
  CHECK(host_arrays_setup({"grid", "result", "d_in", "d_out", "cells", "int i = 0; i < cells; ++i", "cells", ""}) ==
        "  std::vector<value_t> grid(cells), result(cells);\n"
        "  for (int i = 0; i < cells; ++i) grid[i] = (value_t)${INPUT};\n"
        "  value_t* d_in = (value_t*)device_alloc(cells * sizeof(value_t));\n"
        "  value_t* d_out = (value_t*)device_alloc(cells * sizeof(value_t));\n"
        "  device_begin();\n"
        "  upload(d_in, grid.data(), cells * sizeof(value_t));\n");
  CHECK(host_matrix_setup().find("std::vector<value_t> input((size_t)rows * cols), output((size_t)rows * cols);") !=
        std::string::npos);
  CHECK(host_collect("y", "d_y", "n * sizeof(value_t)") ==
        "  after_launch();\n  download(y.data(), d_y, n * sizeof(value_t));\n  device_end();\n  bool passed = true;\n");
  CHECK(host_reports({{"count", "n", "n"}, {"value", "mean", "total / n"}}) ==
        "  report_count(\"n\", n);\n  report_value(\"mean\", total / n);\n  return finish(passed);\n");
  CHECK(labelled_reports("mode", "m", {{"count", "a", "x"}, {"value", "b", "y"}}) ==
        "    printf(\"mode %d \", m);\n    report_count(\"a\", x);\n"
        "    printf(\"mode %d \", m);\n    report_value(\"b\", y);\n");
  CHECK(block_tree_sum("hits") ==
        "  cache[threadIdx.x] = hits;\n  ${SYNC}\n"
        "  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {\n"
        "    if (threadIdx.x < stride) cache[threadIdx.x] += cache[threadIdx.x + stride];\n"
        "    ${SYNC}\n  }\n  hits = cache[0];");
}

TEST_CASE("generator host text: constant memory or parameters for read-only tables and literals") {
  std::map<std::string, std::string> values;
  std::vector<ReadOnlyTable> tables = {{"scale", "d_gamma", "gamma_host", "${COLS}", "cols"},
                                       {"shift", "d_beta", "beta_host", "${COLS}", "cols"}};
  add_read_only_tables(values, true, tables);
  CHECK(values["CONSTANT"] == "__constant__ value_t scale[${COLS}];\n__constant__ value_t shift[${COLS}];");
  CHECK(values["TABLE_PARAMS"].empty());
  CHECK(values["TABLE_ALLOC"].empty());
  CHECK(values["TABLE_UPLOAD"] ==
        "  CHECK(cudaMemcpyToSymbol(scale, gamma_host.data(), cols * sizeof(value_t)));\n"
        "  CHECK(cudaMemcpyToSymbol(shift, beta_host.data(), cols * sizeof(value_t)));");
  add_read_only_tables(values, false, tables);
  CHECK(values["CONSTANT"].empty());
  CHECK(values["TABLE_PARAMS"] == "const T* scale, const T* shift, ");
  CHECK(values["TABLE_ARGS"] == "d_gamma, d_beta, ");
  CHECK(values["TABLE_ALLOC"] ==
        "  value_t* d_gamma = (value_t*)device_alloc(cols * sizeof(value_t));\n"
        "  value_t* d_beta = (value_t*)device_alloc(cols * sizeof(value_t));");
  CHECK(values["TABLE_UPLOAD"] ==
        "  upload(d_gamma, gamma_host.data(), cols * sizeof(value_t));\n"
        "  upload(d_beta, beta_host.data(), cols * sizeof(value_t));");

  add_constant_literals(values, true, "coefficients", "host_coefficients", {"0.25", "0.125"});
  CHECK(values["CONSTANT"] == "__constant__ value_t coefficients[2];");
  CHECK(values["CONSTANT_UPLOAD"] ==
        "  const value_t host_coefficients[2] = {(value_t)0.25, (value_t)0.125};\n"
        "  CHECK(cudaMemcpyToSymbol(coefficients, host_coefficients, sizeof(host_coefficients)));");
  add_constant_literals(values, false, "coefficients", "host_coefficients", {"0.25"});
  CHECK(values["CONSTANT"].empty());
  CHECK(values["CONSTANT_UPLOAD"].empty());
}

TEST_CASE("generator host text: knobs recorded as placeholders and parameters; code filled the asked times") {
  DomainContext c;
  c.block = 128;
  std::map<std::string, std::string> values;
  c.record(values, {{"rows", 300}, {"tile", 16}});
  CHECK(values["ROWS"] == "300");
  CHECK(values["TILE"] == "16");
  CHECK(c.parameters["rows"] == 300);
  CHECK(c.parameters["tile"] == 16);
  CHECK(c.grid_for(1000, 4) == "4");
  CHECK(c.grid_for(200, 64) == "2");
  c.add_thread_shared(values, "cache", "T", "value_t");
  CHECK(values["SHARED"] == "__shared__ T cache[${BLOCK}];");
  CHECK(values["SHMEM"] == "0");

  DomainCode code = fill_code(c, "${SHARED}\n", "rows ${ROWS}\n", values, 2, 1);
  CHECK(code.kernels == "__shared__ T cache[128];\n");
  CHECK(code.main_body == "rows 300\n");
  CHECK(c.unfilled.empty());
}

TEST_CASE("generator host text: a switch's users, or case 0 alone without the switch knob") {
  std::vector<SwitchCase> cases = {{"x[i]", "x"}, {"(x[i] + z[i])", "(x + z)"}};
  SwitchText alone = write_switch_use({"op", "result", "bool", "const bool", 6, 2}, cases, false);
  CHECK(alone.device == "      const bool result = x[i];");
  CHECK(alone.host == "  return x;");
  SwitchText both = write_switch_use({"op", "result", "bool", "const bool", 6, 2}, cases, true);
  CHECK(both.device.rfind("      bool result;\n      switch (op) {\n", 0) == 0);
  CHECK(both.host.rfind("  switch (op) {\n", 0) == 0);

  DomainContext c;
  c.random.state = 7;
  std::vector<SwitchCase> few = {same_case("v")};
  SwitchText plain = switch_over_cases(c, {"mode", "bin", "int", "int", 4, 2}, few, 5, [] { return same_case("w"); });
  CHECK(few.size() == 1);
  CHECK(plain.device == "    int bin = v;");
  c.knobs.insert("switch");
  SwitchText switched =
      switch_over_cases(c, {"mode", "bin", "int", "int", 4, 2}, few, 5, [] { return same_case("w"); });
  CHECK(few.size() >= 3);
  CHECK(few.size() <= 6);
  CHECK(switched.device.find("default: bin = w; break;") != std::string::npos);
}

}  // namespace tailforge
