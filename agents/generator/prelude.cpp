// The shared head of every generated program: includes, the CHECK error function, the element
// type, stream/event handling, an optional device query, device allocation (cudaMalloc or managed
// memory), host<->device copies (direct or through pinned staging), seeded inputs and printing.
#include <cstdio>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {

std::string program_prelude(const DomainContext& context, const std::string& kernels, uint64_t input_seed) {
  bool streams = context.has("streams_events");
  bool pinned = context.has("pinned_host_memory");
  std::string text;
  text +=
      "#include <cstdio>\n"
      "#include <cstdlib>\n"
      "#include <cstdint>\n"
      "#include <cstring>\n"
      "#include <cmath>\n"
      "#include <vector>\n"
      "#include <algorithm>\n"
      "#include <cuda_runtime.h>\n";
  if (kernels.find("cg::") != std::string::npos) {
    text += "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n";
  }
  text +=
      "\n"
      "inline void check_cuda(cudaError_t status, const char* file, int line) {\n"
      "  if (status != cudaSuccess) {\n"
      "    fprintf(stderr, \"CUDA error: %s at %s:%d\\n\", cudaGetErrorString(status), file, "
      "line);\n"
      "    exit(2);\n"
      "  }\n"
      "}\n"
      "#define CHECK(call) check_cuda((call), __FILE__, __LINE__)\n\n";
  text += "typedef " + context.value_type + " value_t;\n";
  if (!context.has("templates")) text += "typedef value_t T;\n";
  text += "\nstatic cudaStream_t g_stream = 0;\n";
  if (streams) text += "static cudaEvent_t g_start, g_stop;\n";
  text += "static std::vector<void*> g_device_buffers;\n\n";

  text += "inline void device_begin() {\n";
  if (context.has("device_query")) {
    text +=
        "  int device_count = 0;\n"
        "  CHECK(cudaGetDeviceCount(&device_count));\n"
        "  cudaDeviceProp properties;\n"
        "  CHECK(cudaGetDeviceProperties(&properties, 0));\n"
        "  if (device_count < 1 || properties.maxThreadsPerBlock < 256) {\n"
        "    fprintf(stderr, \"no usable device\\n\");\n"
        "    exit(2);\n"
        "  }\n"
        "  CHECK(cudaSetDevice(0));\n";
  }
  if (streams) {
    text +=
        "  CHECK(cudaStreamCreate(&g_stream));\n"
        "  CHECK(cudaEventCreate(&g_start));\n"
        "  CHECK(cudaEventCreate(&g_stop));\n"
        "  CHECK(cudaEventRecord(g_start, g_stream));\n";
  }
  text += "}\n\ninline void device_end() {\n";
  if (streams) {
    text +=
        "  CHECK(cudaEventRecord(g_stop, g_stream));\n"
        "  CHECK(cudaEventSynchronize(g_stop));\n"
        "  float elapsed_ms = 0;\n"
        "  CHECK(cudaEventElapsedTime(&elapsed_ms, g_start, g_stop));\n"
        "  (void)elapsed_ms;\n"
        "  CHECK(cudaEventDestroy(g_start));\n"
        "  CHECK(cudaEventDestroy(g_stop));\n"
        "  CHECK(cudaStreamDestroy(g_stream));\n"
        "  g_stream = 0;\n";
  } else {
    text += "  CHECK(cudaDeviceSynchronize());\n";
  }
  text += "}\n\n";

  std::string allocate = context.has("managed_memory") ? "cudaMallocManaged" : "cudaMalloc";
  text +=
      "inline void* device_alloc(size_t bytes) {\n"
      "  void* pointer = nullptr;\n"
      "  CHECK(" + allocate + "(&pointer, bytes));\n"
      "  CHECK(cudaMemset(pointer, 0, bytes));\n"
      "  g_device_buffers.push_back(pointer);\n"
      "  return pointer;\n"
      "}\n\n";
  // A copy goes through the stream when there is one, and with pinned_host_memory through a
  // page-locked staging buffer.
  auto copy = [streams](const std::string& to, const std::string& from, const std::string& kind) {
    if (!streams) return "  CHECK(cudaMemcpy(" + to + ", " + from + ", bytes, " + kind + "));\n";
    return "  CHECK(cudaMemcpyAsync(" + to + ", " + from + ", bytes, " + kind + ", g_stream));\n" +
           "  CHECK(cudaStreamSynchronize(g_stream));\n";
  };
  if (pinned) {
    text += "inline void upload(void* device, const void* host, size_t bytes) {\n"
            "  void* staging = nullptr;\n"
            "  CHECK(cudaMallocHost(&staging, bytes));\n"
            "  memcpy(staging, host, bytes);\n" +
            copy("device", "staging", "cudaMemcpyHostToDevice") +
            "  CHECK(cudaFreeHost(staging));\n"
            "}\n\n";
    text += "inline void download(void* host, const void* device, size_t bytes) {\n"
            "  void* staging = nullptr;\n"
            "  CHECK(cudaMallocHost(&staging, bytes));\n" +
            copy("staging", "device", "cudaMemcpyDeviceToHost") +
            "  memcpy(host, staging, bytes);\n"
            "  CHECK(cudaFreeHost(staging));\n"
            "}\n\n";
  } else {
    text += "inline void upload(void* device, const void* host, size_t bytes) {\n" +
            copy("device", "host", "cudaMemcpyHostToDevice") + "}\n\n";
    text += "inline void download(void* host, const void* device, size_t bytes) {\n" +
            copy("host", "device", "cudaMemcpyDeviceToHost") + "}\n\n";
  }
  text +=
      "inline void after_launch() {\n"
      "  CHECK(cudaGetLastError());\n"
      "}\n\n";

  char seed_line[96];
  std::snprintf(seed_line, sizeof seed_line, "static uint64_t g_input_state = 0x%016llxull;\n",
                static_cast<unsigned long long>(input_seed));
  text += seed_line;
  text +=
      "inline uint32_t next_random() {\n"
      "  g_input_state = g_input_state * 6364136223846793005ull + 1442695040888963407ull;\n"
      "  return (uint32_t)(g_input_state >> 33);\n"
      "}\n\n"
      "// An integer in [low, high].\n"
      "inline int random_int(int low, int high) {\n"
      "  return low + (int)(next_random() % (uint32_t)(high - low + 1));\n"
      "}\n\n"
      "// A multiple of 1/denominator in [-limit, limit]: sums of these are exact in float.\n"
      "inline double random_dyadic(int limit, int denominator) {\n"
      "  return (double)random_int(-limit * denominator, limit * denominator) / denominator;\n"
      "}\n\n"
      "inline bool close_enough(double got, double want, double tolerance) {\n"
      "  return fabs(got - want) <= tolerance * (1 + fabs(want));\n"
      "}\n\n"
      "inline void report_value(const char* name, double value) {\n"
      "  if (fabs(value) < 5e-5) value = 0;\n"
      "  printf(\"%s: %.4f\\n\", name, value);\n"
      "}\n\n"
      "inline void report_count(const char* name, long long value) {\n"
      "  printf(\"%s: %lld\\n\", name, value);\n"
      "}\n\n"
      "inline int finish(bool passed) {\n"
      "  for (void* pointer : g_device_buffers) CHECK(cudaFree(pointer));\n"
      "  printf(\"check: %s\\n\", passed ? \"PASS\" : \"FAIL\");\n"
      "  return passed ? 0 : 1;\n"
      "}\n\n";
  if (kernels.find("ptx_global_index") != std::string::npos) {
    text +=
        "__device__ __forceinline__ unsigned int ptx_global_index() {\n"
        "  unsigned int block_index, block_size, thread_index;\n"
        "  asm volatile(\"mov.u32 %0, %%ctaid.x;\" : \"=r\"(block_index));\n"
        "  asm volatile(\"mov.u32 %0, %%ntid.x;\" : \"=r\"(block_size));\n"
        "  asm volatile(\"mov.u32 %0, %%tid.x;\" : \"=r\"(thread_index));\n"
        "  return block_index * block_size + thread_index;\n"
        "}\n\n";
  }
  return text;
}

}  // namespace tailforge
