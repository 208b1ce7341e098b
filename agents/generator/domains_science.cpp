// Domains: nbody, monte_carlo (counter-based RNG), kmeans_step.
#include <algorithm>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {
namespace {

// ---------------------------------------------------------------------------------------------
DomainCode write_nbody(DomainContext& c) {
  int64_t n = c.pick_size({256, 512, 1024, 2048});
  bool shared = c.has("static_shared") || c.has("dynamic_shared");
  std::string interact = R"(      const T dx = ${XJ} - xi;
      const T dy = ${YJ} - yi;
      const T dz = ${ZJ} - zi;
      const T distance2 = dx * dx + dy * dy + dz * dz + ${SOFTENING};
      const T inverse = ${ONE} / sqrt(distance2);
      const T strength = ${MJ} * inverse * inverse * inverse;
      ax += strength * dx;
      ay += strength * dy;
      az += strength * dz;)";
  std::map<std::string, std::string> source_names =
      shared ? std::map<std::string, std::string>{{"XJ", "tile[t]"},
                                                  {"YJ", "tile[blockDim.x + t]"},
                                                  {"ZJ", "tile[2 * blockDim.x + t]"},
                                                  {"MJ", "tile[3 * blockDim.x + t]"}}
             : std::map<std::string, std::string>{
                   {"XJ", "px[j]"}, {"YJ", "py[j]"}, {"ZJ", "pz[j]"}, {"MJ", "mass[j]"}};
  source_names["SOFTENING"] = c.lit(0.01);
  source_names["ONE"] = c.lit(1.0);
  std::string loop = shared ? R"(  for (int base = 0; base < n; base += blockDim.x) {
    const int j = base + threadIdx.x;
    tile[threadIdx.x] = px[j];
    tile[blockDim.x + threadIdx.x] = py[j];
    tile[2 * blockDim.x + threadIdx.x] = pz[j];
    tile[3 * blockDim.x + threadIdx.x] = mass[j];
    ${SYNC}
    ${UNROLL}
    for (int t = 0; t < (int)blockDim.x; ++t) {
${INTERACT}
    }
    ${SYNC}
  })"
                            : R"(  ${UNROLL}
  for (int j = 0; j < n; ++j) {
${INTERACT}
  })";
  std::string kernels = R"(
${KERNEL}nbody_kernel(const T* px, const T* py, const T* pz, const T* mass, T* vx, T* vy, T* vz, T* nx, T* ny, T* nz, int n) {
  ${SHARED}
  const int i = ${IDX};
  const T xi = px[i];
  const T yi = py[i];
  const T zi = pz[i];
  T ax = 0;
  T ay = 0;
  T az = 0;
${LOOP}
  vx[i] += ax * ${DT};
  vy[i] += ay * ${DT};
  vz[i] += az * ${DT};
  nx[i] = xi + vx[i] * ${DT};
  ny[i] = yi + vy[i] * ${DT};
  nz[i] = zi + vz[i] * ${DT};
}
)";
  std::string main_body = R"(  const int n = ${N};
  std::vector<value_t> body(10 * (size_t)n);
  value_t* px = &body[0];
  value_t* py = &body[n];
  value_t* pz = &body[2 * n];
  value_t* mass = &body[3 * n];
  value_t* vx = &body[4 * n];
  value_t* vy = &body[5 * n];
  value_t* vz = &body[6 * n];
  for (int i = 0; i < n; ++i) {
    px[i] = (value_t)random_dyadic(4, 8);
    py[i] = (value_t)random_dyadic(4, 8);
    pz[i] = (value_t)random_dyadic(4, 8);
    mass[i] = (value_t)(random_int(1, 8) / 8.0);
    vx[i] = (value_t)random_dyadic(1, 8);
    vy[i] = (value_t)random_dyadic(1, 8);
    vz[i] = (value_t)random_dyadic(1, 8);
  }
  value_t* d_body = (value_t*)device_alloc(body.size() * sizeof(value_t));
  device_begin();
  upload(d_body, body.data(), body.size() * sizeof(value_t));
  nbody_kernel${TARG}<<<n / ${BLOCK}, ${BLOCK}, ${SHMEM}, g_stream>>>(d_body, d_body + n, d_body + 2 * n, d_body + 3 * n,
      d_body + 4 * n, d_body + 5 * n, d_body + 6 * n, d_body + 7 * n, d_body + 8 * n, d_body + 9 * n, n);
  after_launch();
  std::vector<value_t> result(body.size());
  download(result.data(), d_body, result.size() * sizeof(value_t));
  device_end();
  bool passed = true;
  double speed_total = 0;
  double spread = 0;
  for (int i = 0; i < n; ++i) {
    double ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; ++j) {
      const double dx = (double)px[j] - px[i];
      const double dy = (double)py[j] - py[i];
      const double dz = (double)pz[j] - pz[i];
      const double inverse = 1 / std::sqrt(dx * dx + dy * dy + dz * dz + 0.01);
      const double strength = (double)mass[j] * inverse * inverse * inverse;
      ax += strength * dx;
      ay += strength * dy;
      az += strength * dz;
    }
    const double want_v[3] = {vx[i] + ax * 0.01, vy[i] + ay * 0.01, vz[i] + az * 0.01};
    const double want_p[3] = {px[i] + want_v[0] * 0.01, py[i] + want_v[1] * 0.01, pz[i] + want_v[2] * 0.01};
    for (int d = 0; d < 3; ++d) {
      if (!close_enough((double)result[(4 + d) * (size_t)n + i], want_v[d], 1e-3)) passed = false;
      if (!close_enough((double)result[(7 + d) * (size_t)n + i], want_p[d], 1e-3)) passed = false;
    }
    const double gx = result[4 * (size_t)n + i], gy = result[5 * (size_t)n + i], gz = result[6 * (size_t)n + i];
    speed_total += std::sqrt(gx * gx + gy * gy + gz * gz);
    spread += std::fabs((double)result[7 * (size_t)n + i]);
  }
)" + host_reports({{"count", "bodies", "n"}, {"value", "mean_speed", "speed_total / n"},
                   {"value", "mean_abs_x", "spread / n"}});
  std::map<std::string, std::string> values = {
      {"SHARED", shared ? c.shared_array("tile", "T", "4 * ${BLOCK}") : ""},
      {"SHMEM", shared ? c.shared_launch_bytes("value_t", str(4 * c.block)) : "0"},
      {"LOOP", loop},
      {"INTERACT", c.fill(interact, source_names)},
      {"DT", c.lit(0.01)},
      {"N", str(n)}};
  c.parameters["bodies"] = n;
  return fill_code(c, kernels, main_body, values, 3, 1);
}

// ---------------------------------------------------------------------------------------------
// A random region of the square [0, 65536)^2 for monte_carlo's switch: a quadratic, linear,
// product or xor boundary, sometimes two joined by && or ||. All products fit in 64 bits.
std::string monte_carlo_region(DomainContext& c) {
  auto boundary = [&c]() -> std::string {
    std::string a = std::to_string(1 + c.random.below(4));
    std::string b = std::to_string(1 + c.random.below(4));
    std::string k = std::to_string(1 + c.random.below(65535)) + "ull";
    switch (c.random.below(6)) {
      case 0: return a + "ull * x * x + " + b + "ull * y * y < " + std::to_string(1 + c.random.below(60)) + "ull << 28";
      case 1: return "y * " + k + " < x * x";
      case 2: return a + "ull * x + " + b + "ull * y < " + k + " * 2ull";
      case 3: return "x * y < " + k + " * 32768ull";
      case 4: return "(x ^ y) < " + k;
      default: return "x > y + " + std::to_string(c.random.below(32768)) + "ull";
    }
  };
  std::string region = "(" + boundary() + ")";
  if (c.random.chance(0.4)) region += (c.random.chance(0.5) ? " && (" : " || (") + boundary() + ")";
  return region;
}

DomainCode write_monte_carlo(DomainContext& c) {
  int64_t samples = c.pick_size({1 << 18, 1 << 20, 1 << 22});
  int per_thread = c.random.pick(std::vector<int>{16, 64});
  bool shuffle = c.has("warp_shuffle");
  bool atomics = c.has("atomics");
  // Estimator 0 is the quarter circle (4 x hits / samples estimates pi); a switch adds 2 to 6
  // random regions of the unit square after it.
  std::vector<SwitchCase> regions = {{"x * x + y * y < (1ull << 32)", "x * x + y * y < (1ull << 32)"}};
  SwitchText inside = switch_over_cases(c, {"estimator", "inside", "bool", "const bool", 6, 2}, regions, 5,
                                        [&c] { return same_case(monte_carlo_region(c)); });
  std::string reduce = shuffle ? R"(  const int lane = threadIdx.x % ${WARP};
  for (int offset = ${WARP} / 2; offset > 0; offset /= 2) hits += __shfl_down_sync(0xffffffffu, hits, offset);
  if (lane == 0) cache[threadIdx.x / ${WARP}] = hits;
  ${SYNC}
  if (threadIdx.x == 0) {
    for (int w = 1; w < (int)(blockDim.x / ${WARP}); ++w) hits += cache[w];
  })"
                               : block_tree_sum("hits");
  std::string kernels = R"(
__host__ __device__ inline uint32_t counter_hash(uint32_t key, uint32_t counter) {
  uint32_t x = counter * 0x9e3779b9u ^ key;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

${KERNEL}monte_carlo_kernel(unsigned long long* total, unsigned int* partials, uint32_t key, int estimator) {
  ${SHARED}
  const int thread = ${IDX};
  unsigned int hits = 0;
  ${UNROLL}
  for (int k = 0; k < ${PER_THREAD}; ++k) {
    const uint32_t counter = (uint32_t)thread * ${PER_THREAD}u + (uint32_t)k;
    const unsigned long long x = counter_hash(key, 2u * counter) >> 16;
    const unsigned long long y = counter_hash(key, 2u * counter + 1u) >> 16;
    {
${TEST}
      if (inside) hits += 1;
    }
  }
${REDUCE}
${PUBLISH}
}

static bool reference_inside(unsigned long long x, unsigned long long y, int estimator) {
${REFERENCE}
}
)";
  std::string main_body = R"(  const int samples = ${SAMPLES};
  const int blocks = samples / ${PER_THREAD} / ${BLOCK};
  const uint32_t key = next_random();
  unsigned long long* d_total = (unsigned long long*)device_alloc(sizeof(unsigned long long));
  unsigned int* d_partials = (unsigned int*)device_alloc(blocks * sizeof(unsigned int));
  std::vector<unsigned int> partials(blocks);
  device_begin();
  bool passed = true;
  for (int estimator = 0; estimator < ${ESTIMATORS}; ++estimator) {
    CHECK(cudaMemsetAsync(d_total, 0, sizeof(unsigned long long), g_stream));
    monte_carlo_kernel${TARG}<<<blocks, ${BLOCK}, ${SHMEM}, g_stream>>>(d_total, d_partials, key, estimator);
    after_launch();
    unsigned long long hits = 0;
${GATHER}
    unsigned long long want = 0;
    for (uint32_t counter = 0; counter < (uint32_t)samples; ++counter) {
      const unsigned long long x = counter_hash(key, 2u * counter) >> 16;
      const unsigned long long y = counter_hash(key, 2u * counter + 1u) >> 16;
      if (reference_inside(x, y, estimator)) want += 1;
    }
    if (hits != want) passed = false;
    printf("estimator %d ", estimator);
    report_count("hits", (long long)hits);
    printf("estimator %d ", estimator);
    report_value(estimator == 0 ? "pi" : "area", (estimator == 0 ? 4.0 : 1.0) * (double)hits / samples);
  }
  device_end();
  return finish(passed);
)";
  std::string gather = atomics ? "    download(&hits, d_total, sizeof(unsigned long long));"
                               : "    download(partials.data(), d_partials, blocks * sizeof(unsigned int));\n"
                                 "    for (int b = 0; b < blocks; ++b) hits += partials[b];";
  std::map<std::string, std::string> values = {
      {"TEST", inside.device},
      {"REFERENCE", inside.host},
      {"REDUCE", reduce},
      {"PUBLISH", atomics ? "  if (threadIdx.x == 0) atomicAdd(total, (unsigned long long)hits);"
                          : "  if (threadIdx.x == 0) partials[blockIdx.x] = hits;"},
      {"GATHER", gather},
      {"PER_THREAD", str(per_thread)},
      {"ESTIMATORS", str(static_cast<int64_t>(regions.size()))}};
  c.add_thread_shared(values, "cache", "unsigned int", "unsigned int");
  c.record(values, {{"samples", samples}});
  c.parameters.update({{"samples_per_thread", per_thread}, {"estimators", regions.size()}});
  return fill_code(c, kernels, main_body, values, 2, 1);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_kmeans(DomainContext& c) {
  int64_t n = c.pick_size({4096, 16384, 65536});
  int clusters = c.random.pick(std::vector<int>{4, 8, 16});
  bool constant = c.has("constant_memory");
  bool shared = !constant && (c.has("static_shared") || c.has("dynamic_shared"));
  bool atomics = c.has("atomics");
  std::string centroid_source = constant ? "centroids" : shared ? "local_centroids" : "centroids";
  std::string kernels = R"(
${CONSTANT}
${KERNEL}assign_kernel(const T* points, ${TABLE_PARAMS}int* assignment, T* sums, int* counts, int n) {
${SHARED_LOAD}
  for (int i = ${IDX}; i < n; i += gridDim.x * blockDim.x) {
    const T x = points[2 * i];
    const T y = points[2 * i + 1];
    int best = 0;
    T best_distance = 0;
    ${UNROLL}
    for (int k = 0; k < ${CLUSTERS}; ++k) {
      const T dx = x - ${SOURCE}[2 * k];
      const T dy = y - ${SOURCE}[2 * k + 1];
      const T distance = dx * dx + dy * dy;
      if (k == 0 || distance < best_distance) {
        best = k;
        best_distance = distance;
      }
    }
    assignment[i] = best;
${ACCUMULATE}
  }
}
)";
  if (!atomics) {
    kernels += R"(
${KERNEL_NB}centroid_sum_kernel(const T* points, const int* assignment, T* sums, int* counts, int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= ${CLUSTERS}) return;
  T sum_x = 0;
  T sum_y = 0;
  int count = 0;
  for (int i = 0; i < n; ++i) {
    if (assignment[i] != k) continue;
    sum_x += points[2 * i];
    sum_y += points[2 * i + 1];
    count += 1;
  }
  sums[2 * k] = sum_x;
  sums[2 * k + 1] = sum_y;
  counts[k] = count;
}
)";
  }
  std::string shared_load = shared ? R"(  ${SHARED}
  for (int k = threadIdx.x; k < 2 * ${CLUSTERS}; k += blockDim.x) local_centroids[k] = centroids[k];
  ${SYNC})"
                                   : "";
  std::string main_body = R"(  const int n = ${N};
  const int clusters = ${CLUSTERS};
  std::vector<value_t> points(2 * (size_t)n), centroids_host(2 * clusters), sums(2 * clusters);
  std::vector<int> assignment(n), counts(clusters);
  for (size_t i = 0; i < points.size(); ++i) points[i] = (value_t)random_dyadic(4, 16);
  for (int k = 0; k < 2 * clusters; ++k) centroids_host[k] = (value_t)random_dyadic(3, 4);
  value_t* d_points = (value_t*)device_alloc(points.size() * sizeof(value_t));
  int* d_assignment = (int*)device_alloc(n * sizeof(int));
  value_t* d_sums = (value_t*)device_alloc(2 * clusters * sizeof(value_t));
  int* d_counts = (int*)device_alloc(clusters * sizeof(int));
${TABLE_ALLOC}
  device_begin();
${TABLE_UPLOAD}
  upload(d_points, points.data(), points.size() * sizeof(value_t));
  assign_kernel${TARG}<<<std::min((n + ${BLOCK} - 1) / ${BLOCK}, 256), ${BLOCK}, ${SHMEM}, g_stream>>>(d_points, ${TABLE_ARGS}d_assignment, d_sums, d_counts, n);
  after_launch();
${SUM_LAUNCH}
  download(assignment.data(), d_assignment, n * sizeof(int));
  download(sums.data(), d_sums, sums.size() * sizeof(value_t));
  download(counts.data(), d_counts, clusters * sizeof(int));
  device_end();
  bool passed = true;
  std::vector<double> want_sums(2 * clusters, 0);
  std::vector<int> want_counts(clusters, 0);
  for (int i = 0; i < n; ++i) {
    int best = 0;
    double best_distance = 0;
    for (int k = 0; k < clusters; ++k) {
      const double dx = (double)points[2 * i] - centroids_host[2 * k];
      const double dy = (double)points[2 * i + 1] - centroids_host[2 * k + 1];
      const double distance = dx * dx + dy * dy;
      if (k == 0 || distance < best_distance) {
        best = k;
        best_distance = distance;
      }
    }
    if (assignment[i] != best) passed = false;
    want_sums[2 * best] += points[2 * i];
    want_sums[2 * best + 1] += points[2 * i + 1];
    want_counts[best] += 1;
  }
  for (int k = 0; k < clusters; ++k) {
    if (counts[k] != want_counts[k]) passed = false;
    if (!close_enough((double)sums[2 * k], want_sums[2 * k], 1e-6)) passed = false;
    if (!close_enough((double)sums[2 * k + 1], want_sums[2 * k + 1], 1e-6)) passed = false;
    const double cx = counts[k] > 0 ? (double)sums[2 * k] / counts[k] : 0;
    const double cy = counts[k] > 0 ? (double)sums[2 * k + 1] / counts[k] : 0;
    printf("cluster %d count: %d\n", k, counts[k]);
)" + labelled_reports("cluster", "k", {{"value", "x", "cx"}, {"value", "y", "cy"}}) + R"(  }
  return finish(passed);
)";
  std::map<std::string, std::string> values = {
      {"SHARED_LOAD", shared_load},
      {"SHARED", c.shared_array("local_centroids", "T", "2 * ${CLUSTERS}")},
      {"SHMEM", shared ? c.shared_launch_bytes("value_t", str(2 * clusters)) : "0"},
      {"SOURCE", centroid_source},
      {"ACCUMULATE", atomics ? "    atomicAdd(&sums[2 * best], x);\n    atomicAdd(&sums[2 * best + 1], y);\n"
                               "    atomicAdd(&counts[best], 1);"
                             : ""},
      {"SUM_LAUNCH", atomics ? ""
                             : "  centroid_sum_kernel${TARG}<<<1, 32, 0, g_stream>>>(d_points, d_assignment, d_sums, d_counts, n);\n"
                               "  after_launch();"},
      {"N", str(n)}};
  c.parameters["points"] = n;
  c.record(values, {{"clusters", clusters}});
  add_read_only_tables(values, constant,
                       {{"centroids", "d_centroids", "centroids_host", "2 * ${CLUSTERS}", "2 * clusters"}});
  return fill_code(c, kernels, main_body, values, 2, 2);
}

}  // namespace

std::vector<DomainSpec> science_domains() {
  return {
      {"nbody", {"float", "double"},
       {"static_shared", "dynamic_shared", "syncthreads", "unroll_pragma", "inline_ptx",
        "cooperative_groups"},
       {64, 128, 256}, write_nbody},
      {"monte_carlo", {"unsigned int"},
       {"static_shared", "dynamic_shared", "warp_shuffle", "atomics", "syncthreads", "switch",
        "unroll_pragma", "inline_ptx", "cooperative_groups", "hardcoded_warp_size"},
       {64, 128, 256}, write_monte_carlo},
      {"kmeans_step", {"float", "double"},
       {"static_shared", "dynamic_shared", "atomics", "syncthreads", "constant_memory",
        "unroll_pragma", "inline_ptx", "cooperative_groups"},
       {64, 128, 256}, write_kmeans},
  };
}

}  // namespace tailforge
