// Domains: graph_bfs, bitonic_sort, sha256_hash.
#include <algorithm>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {
namespace {

// ---------------------------------------------------------------------------------------------
DomainCode write_bfs(DomainContext& c) {
  int64_t vertices = c.pick_size({4096, 16384, 65536});
  int average = c.random.pick(std::vector<int>{2, 4, 8});
  bool atomics = c.has("atomics");
  std::string visit = atomics ? R"(      if (atomicCAS(&depth[target], -1, level + 1) == -1) *changed = 1;)"
                              : R"(      if (depth[target] == -1) {
        depth[target] = level + 1;
        *changed = 1;
      })";
  std::string kernels = R"(
${KERNEL}bfs_level_kernel(const int* edge_start, const int* edges, int* depth, int* changed, int vertices, int level) {
  for (int v = ${IDX}; v < vertices; v += gridDim.x * blockDim.x) {
    if (depth[v] != level) continue;
    for (int e = edge_start[v]; e < edge_start[v + 1]; ++e) {
      const int target = edges[e];
${VISIT}
    }
  }
}
)";
  std::string main_body = R"(  const int vertices = ${VERTICES};
  std::vector<int> edge_start(vertices + 1, 0);
  for (int v = 0; v < vertices; ++v) edge_start[v + 1] = edge_start[v] + random_int(0, 2 * ${AVERAGE});
  const int edge_count = edge_start[vertices];
  std::vector<int> edges(edge_count);
  for (int e = 0; e < edge_count; ++e) edges[e] = random_int(0, vertices - 1);
  std::vector<int> depth(vertices, -1);
  depth[0] = 0;
  int* d_edge_start = (int*)device_alloc((vertices + 1) * sizeof(int));
  int* d_edges = (int*)device_alloc((edge_count > 0 ? edge_count : 1) * sizeof(int));
  int* d_depth = (int*)device_alloc(vertices * sizeof(int));
  int* d_changed = (int*)device_alloc(sizeof(int));
  device_begin();
  upload(d_edge_start, edge_start.data(), (vertices + 1) * sizeof(int));
  if (edge_count > 0) upload(d_edges, edges.data(), edge_count * sizeof(int));
  upload(d_depth, depth.data(), vertices * sizeof(int));
  const int blocks = std::min((vertices + ${BLOCK} - 1) / ${BLOCK}, 1024);
  int level = 0;
  int changed = 1;
  while (changed && level < vertices) {
    changed = 0;
    upload(d_changed, &changed, sizeof(int));
    bfs_level_kernel${TARG}<<<blocks, ${BLOCK}, 0, g_stream>>>(d_edge_start, d_edges, d_depth, d_changed, vertices, level);
    after_launch();
    download(&changed, d_changed, sizeof(int));
    ++level;
  }
  download(depth.data(), d_depth, vertices * sizeof(int));
  device_end();
  std::vector<int> want(vertices, -1);
  std::vector<int> frontier(1, 0);
  want[0] = 0;
  for (size_t head = 0; head < frontier.size(); ++head) {
    const int v = frontier[head];
    for (int e = edge_start[v]; e < edge_start[v + 1]; ++e) {
      if (want[edges[e]] == -1) {
        want[edges[e]] = want[v] + 1;
        frontier.push_back(edges[e]);
      }
    }
  }
  bool passed = depth == want;
  long long reached = 0;
  long long depth_sum = 0;
  int deepest = 0;
  for (int v = 0; v < vertices; ++v) {
    if (depth[v] < 0) continue;
    reached += 1;
    depth_sum += depth[v];
    deepest = std::max(deepest, depth[v]);
  }
)" + host_reports({{"count", "vertices", "vertices"}, {"count", "edges", "edge_count"}, {"count", "reached", "reached"},
                   {"count", "deepest", "deepest"}, {"count", "depth_sum", "depth_sum"}});
  std::map<std::string, std::string> values = {
      {"VISIT", visit}, {"AVERAGE", str(average)}};
  c.record(values, {{"vertices", vertices}});
  c.parameters["average_degree"] = average;
  return fill_code(c, kernels, main_body, values, 2, 1);
}

// ---------------------------------------------------------------------------------------------
DomainCode write_sort(DomainContext& c) {
  int64_t n = c.pick_size({1024, 4096, 16384, 65536});
  bool shared = c.has("static_shared") || c.has("dynamic_shared");
  std::string kernels = R"(
${KERNEL}bitonic_step_kernel(T* data, int j, int k) {
  const int i = ${IDX};
  const int partner = i ^ j;
  if (partner > i) {
    const bool ascending = (i & k) == 0;
    const T a = data[i];
    const T b = data[partner];
    if ((a > b) == ascending) {
      data[i] = b;
      data[partner] = a;
    }
  }
}
)";
  if (shared) {
    kernels += R"(
${KERNEL}bitonic_local_kernel(T* data, int start_j, int k) {
  ${SHARED}
  const int i = ${IDX};
  keys[threadIdx.x] = data[i];
  ${SYNC}
  for (int j = start_j; j > 0; j /= 2) {
    const int partner = threadIdx.x ^ j;
    if (partner > (int)threadIdx.x) {
      const bool ascending = (i & k) == 0;
      const T a = keys[threadIdx.x];
      const T b = keys[partner];
      if ((a > b) == ascending) {
        keys[threadIdx.x] = b;
        keys[partner] = a;
      }
    }
    ${SYNC}
  }
  data[i] = keys[threadIdx.x];
}
)";
  }
  std::string steps = shared ? R"(    int j = k / 2;
    for (; j >= ${BLOCK}; j /= 2) {
      bitonic_step_kernel${TARG}<<<n / ${BLOCK}, ${BLOCK}, 0, g_stream>>>(d_data, j, k);
      after_launch();
    }
    bitonic_local_kernel${TARG}<<<n / ${BLOCK}, ${BLOCK}, ${SHMEM}, g_stream>>>(d_data, j, k);
    after_launch();)"
                             : R"(    for (int j = k / 2; j > 0; j /= 2) {
      bitonic_step_kernel${TARG}<<<n / ${BLOCK}, ${BLOCK}, 0, g_stream>>>(d_data, j, k);
      after_launch();
    })";
  std::string main_body = R"(  const int n = ${N};
  std::vector<value_t> keys(n), sorted(n);
  for (int i = 0; i < n; ++i) keys[i] = (value_t)(random_int(-100000, 100000) / ${DIVISOR});
  value_t* d_data = (value_t*)device_alloc(n * sizeof(value_t));
  device_begin();
  upload(d_data, keys.data(), n * sizeof(value_t));
  for (int k = 2; k <= n; k *= 2) {
${STEPS}
  }
  download(sorted.data(), d_data, n * sizeof(value_t));
  device_end();
  std::vector<value_t> want(keys);
  std::sort(want.begin(), want.end());
  bool passed = sorted == want;
  double weighted = 0;
  for (int i = 0; i < n; ++i) weighted += (double)sorted[i] * (double)(i % 13);
)" + host_reports({{"count", "n", "n"}, {"value", "smallest", "(double)sorted[0]"},
                   {"value", "median", "(double)sorted[n / 2]"}, {"value", "largest", "(double)sorted[n - 1]"},
                   {"value", "weighted_mean", "weighted / n"}});
  std::map<std::string, std::string> values = {
      {"STEPS", steps},
      {"DIVISOR", c.is_integer() ? "1" : "4.0"}};
  c.add_thread_shared(values, "keys", "T", "value_t");
  c.record(values, {{"n", n}});
  return fill_code(c, kernels, main_body, values, 2, 2);
}

// ---------------------------------------------------------------------------------------------
const char* kSha256Constants =
    "0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, "
    "0xab1c5ed5u,\n  0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, "
    "0x9bdc06a7u, 0xc19bf174u,\n  0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, "
    "0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,\n  0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, "
    "0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,\n  0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, "
    "0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,\n  0xa2bfe8a1u, 0xa81a664bu, "
    "0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,\n  0x19a4c116u, "
    "0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,\n  "
    "0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, "
    "0xc67178f2u";

const char* kSha256Body = R"(${QUALIFIER} void ${NAME}(unsigned int index, int length, const uint32_t* table, uint32_t* digest) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) w[t] = 0;
  for (int j = 0; j < length; ++j) {
    const uint32_t byte = (index * 131u + (uint32_t)j * 7u + (index >> 3)) & 0xffu;
    w[j / 4] |= byte << (24 - 8 * (j % 4));
  }
  w[length / 4] |= 0x80u << (24 - 8 * (length % 4));
  w[15] = (uint32_t)length * 8u;
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = rotate_right(w[t - 15], 7) ^ rotate_right(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = rotate_right(w[t - 2], 17) ^ rotate_right(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  const uint32_t initial[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au, 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  uint32_t a = initial[0], b = initial[1], c = initial[2], d = initial[3];
  uint32_t e = initial[4], f = initial[5], g = initial[6], h = initial[7];
  ${UNROLL}
  for (int t = 0; t < 64; ++t) {
    const uint32_t big_s1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
    const uint32_t choice = (e & f) ^ (~e & g);
    const uint32_t temp1 = h + big_s1 + choice + table[t] + w[t];
    const uint32_t big_s0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
    const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t temp2 = big_s0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + temp1;
    d = c;
    c = b;
    b = a;
    a = temp1 + temp2;
  }
  digest[0] = initial[0] + a;
  digest[1] = initial[1] + b;
  digest[2] = initial[2] + c;
  digest[3] = initial[3] + d;
  digest[4] = initial[4] + e;
  digest[5] = initial[5] + f;
  digest[6] = initial[6] + g;
  digest[7] = initial[7] + h;
}
)";

DomainCode write_hash(DomainContext& c) {
  int64_t count = c.pick_size({4096, 16384, 65536});
  int length = c.random.pick(std::vector<int>{16, 32, 55});
  bool constant = c.has("constant_memory");
  std::map<std::string, std::string> device_names = {
      {"QUALIFIER", "__device__"}, {"NAME", "sha256_device"}};
  std::map<std::string, std::string> host_names = {
      {"QUALIFIER", "static"}, {"NAME", "sha256_host"}, {"UNROLL", ""}};
  std::string kernels = std::string("\n") + (constant ? "__constant__" : "__device__") +
                        " uint32_t sha256_table[64] = {\n  " + kSha256Constants + "};\n" +
                        "static const uint32_t sha256_table_host[64] = {\n  " + kSha256Constants +
                        "};\n\n" +
                        "__host__ __device__ inline uint32_t rotate_right(uint32_t x, int n) {\n"
                        "  return (x >> n) | (x << (32 - n));\n}\n\n" +
                        c.fill(kSha256Body, device_names) + "\n" + c.fill(kSha256Body, host_names);
  kernels += c.fill(R"(
${KERNEL}sha256_kernel(uint32_t* digests, int count, int length) {
  for (int i = ${IDX}; i < count; i += gridDim.x * blockDim.x) sha256_device((unsigned int)i, length, sha256_table, digests + (size_t)i * 8);
}
)",
                    {});
  std::string main_body = R"(  const int count = ${COUNT};
  const int length = ${LENGTH};
  std::vector<uint32_t> digests((size_t)count * 8);
  uint32_t* d_digests = (uint32_t*)device_alloc(digests.size() * sizeof(uint32_t));
  device_begin();
  sha256_kernel${TARG}<<<std::min((count + ${BLOCK} - 1) / ${BLOCK}, 1024), ${BLOCK}, 0, g_stream>>>(d_digests, count, length);
)" + host_collect("digests", "d_digests", "digests.size() * sizeof(uint32_t)") + R"(  uint32_t folded = 0;
  for (int i = 0; i < count; ++i) {
    uint32_t want[8];
    sha256_host((unsigned int)i, length, sha256_table_host, want);
    for (int k = 0; k < 8; ++k) {
      if (digests[(size_t)i * 8 + k] != want[k]) passed = false;
    }
    folded ^= digests[(size_t)i * 8] + (uint32_t)i;
  }
  printf("digest[0]: ");
  for (int k = 0; k < 8; ++k) printf("%08x", digests[k]);
  printf("\n");
)" + host_reports({{"count", "messages", "count"}, {"count", "folded", "folded"}});
  c.parameters.update({{"messages", count}, {"message_length", length}});
  return {kernels, c.fill(main_body, {{"COUNT", str(count)}, {"LENGTH", str(length)}})};
}

}  // namespace

std::vector<DomainSpec> discrete_domains() {
  return {
      {"graph_bfs", {"int"}, {"atomics", "inline_ptx"}, {64, 128, 256}, write_bfs},
      {"bitonic_sort", {"int", "float"},
       {"static_shared", "dynamic_shared", "syncthreads", "inline_ptx", "cooperative_groups"},
       {128, 256, 512}, write_sort},
      {"sha256_hash", {"unsigned int"}, {"constant_memory", "unroll_pragma", "inline_ptx"},
       {64, 128, 256}, write_hash},
  };
}

}  // namespace tailforge
