// Domains that exercise the CUDA API beyond plain buffers: texture objects over linear, pitched
// and array memory (1D/2D/3D), surface objects, streams and events with flags and priorities,
// host functions, CUDA graphs (captured and built node by node), device attributes and
// occupancy, mapped/registered/managed host memory, half and bfloat16 arithmetic, cuRAND (host
// and device), cuSPARSE, cuBLAS, cooperative-group tiles, cache-hinted loads and stores, the
// driver API (devices, contexts, memory, streams, events), NVRTC with driver modules, warp votes,
// and the runtime's queries with symbol copies. Every API call
// is load-bearing: the checked result depends on it (a texture's address mode decides which
// texel a thread reads, an event orders the consumer after the producer, a graph's replay count
// is in the sum), so a translation that drops or mistranslates it fails the program's own check.
#include <algorithm>
#include <string>

#include "agents/generator/domain.h"

namespace tailforge {
namespace {

// A small random affine map of a texel value, written for device and host alike: a * v + b with
// dyadic constants, so every result is exact in float.
struct Affine {
  std::string device, host;
};
Affine random_affine(DomainContext& c, const std::string& value) {
  double a = c.random.pick(std::vector<double>{0.5, 1.5, 2, -1, 0.25, 3});
  double b = c.random.pick(std::vector<double>{0, 1, -0.5, 0.75, 2});
  return {c.lit(a) + " * " + value + " + " + c.lit(b),
          std::to_string(a) + " * " + value + " + " + std::to_string(b)};
}

// ---------------------------------------------------------------------------------------------
// A texture object over one of four resources. Unnormalized coordinates with clamp or border
// addressing, or normalized ones with wrap; point filtering, or linear filtering halfway between
// two texels (an exact average of dyadic values). The host emulates the addressing.
DomainCode write_texture_sampling(DomainContext& c) {
  const char* resources[] = {"linear", "pitch2d", "array2d", "array3d"};
  std::string resource = resources[c.random.below(4)];
  bool is_3d = resource == "array3d", is_1d = resource == "linear";
  int64_t width = is_1d ? c.pick_size({4096, 16384, 65536}) : c.pick_size({32, 64, 128}, is_3d ? 3 : 2);
  int64_t height = is_1d ? 1 : c.random.pick(std::vector<int64_t>{16, 32, 64});
  int64_t depth = is_3d ? c.random.pick(std::vector<int64_t>{4, 8}) : 1;
  // Linear memory is fetched by index (tex1Dfetch): in range, no filtering, no addressing.
  std::string address = is_1d ? "none" : c.random.pick(std::vector<std::string>{"clamp", "border", "wrap"});
  bool normalized = address == "wrap";
  bool linear_filter = !is_1d && !normalized && c.random.chance(0.4);
  int shift_x = static_cast<int>(c.random.below(7)) - 3, shift_y = static_cast<int>(c.random.below(5)) - 2;
  Affine affine = random_affine(c, "t");

  std::string address_mode = address == "clamp" ? "cudaAddressModeClamp"
                             : address == "border" ? "cudaAddressModeBorder"
                                                   : "cudaAddressModeWrap";
  // Byte texels read as normalized floats (value / 255), for a 2D array.
  bool bytes = resource == "array2d" && c.random.chance(0.4);
  std::string channel = bytes ? (c.random.chance(0.5) ? "cudaCreateChannelDesc<unsigned char>()"
                                                      : "cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned)")
                        : c.random.chance(0.5) ? "cudaCreateChannelDesc<float>()"
                                               : "cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat)";
  std::string fetch, coordinates;
  if (is_1d) {
    fetch = "tex1Dfetch<float>(texture, (i * ${STRIDE} + ${OFFSET}) % n)";
  } else {
    // Texel centers are at +0.5; halfway between two texels along x is at +1.0.
    std::string along = linear_filter ? "1.0f" : "0.5f";
    std::string x = "(float)(x + " + str(shift_x) + ") + " + along;
    std::string y = "(float)(y + " + str(shift_y) + ") + 0.5f";
    std::string z = "(float)z + 0.5f";
    if (normalized) {  // normalized coordinates apply to every axis, depth included
      x = "(" + x + ") / (float)width";
      y = "(" + y + ") / (float)height";
      z = "(" + z + ") / (float)depth";
    }
    fetch = is_3d ? "tex3D<float>(texture, " + x + ", " + y + ", " + z + ")"
                  : "tex2D<float>(texture, " + x + ", " + y + ")";
  }
  std::string kernel;
  if (is_1d) {
    kernel = R"(
__global__ void sample_kernel(cudaTextureObject_t texture, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float t = ${FETCH};
    out[i] = ${AFFINE};
  }
}
)";
  } else {
    kernel = R"(
__global__ void sample_kernel(cudaTextureObject_t texture, float* out, int width, int height, int depth) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  for (int z = 0; z < depth; ++z) {
    float t = ${FETCH};
    out[((size_t)z * height + y) * width + x] = ${AFFINE};
  }
}
)";
  }
  // The host's view of one texel read: the addressing of one axis, then the filter.
  std::string host_texel = R"(  auto axis = [](int i, int size) -> int {
${AXIS}
  };
  auto texel = [&](int x, int y, int z) -> double {
    int ax = axis(x, width), ay = axis(y, height);
    if (ax < 0 || ay < 0) return 0.0;
    return (double)input[((size_t)z * height + ay) * width + ax]${TEXEL_SCALE};
  };
)";
  std::string axis = address == "clamp"    ? "    return i < 0 ? 0 : (i >= size ? size - 1 : i);"
                     : address == "border" ? "    return i < 0 || i >= size ? -1 : i;"
                                           : "    return ((i % size) + size) % size;";
  std::string reference =
      is_1d ? "    double t = (double)input[((size_t)i * ${STRIDE} + ${OFFSET}) % n];"
            : linear_filter ? "    double t = 0.5 * (texel(x + ${SX}, y + ${SY}, z) + texel(x + ${SX} + 1, y + ${SY}, z));"
                            : "    double t = texel(x + ${SX}, y + ${SY}, z);";
  std::string upload;
  if (resource == "linear") {
    upload = R"(  float* d_texels = nullptr;
  CHECK(cudaMalloc(&d_texels, n * sizeof(float)));
  CHECK(cudaMemcpy(d_texels, input.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaResourceDesc resource;
  memset(&resource, 0, sizeof(resource));
  resource.resType = cudaResourceTypeLinear;
  resource.res.linear.devPtr = d_texels;
  resource.res.linear.desc = ${CHANNEL};
  resource.res.linear.sizeInBytes = n * sizeof(float);
)";
  } else if (resource == "pitch2d") {
    upload = R"(  float* d_texels = nullptr;
  size_t pitch = 0;
  CHECK(cudaMallocPitch((void**)&d_texels, &pitch, width * sizeof(float), height));
  CHECK(cudaMemcpy2D(d_texels, pitch, input.data(), width * sizeof(float), width * sizeof(float), height,
                     cudaMemcpyHostToDevice));
  cudaResourceDesc resource;
  memset(&resource, 0, sizeof(resource));
  resource.resType = cudaResourceTypePitch2D;
  resource.res.pitch2D.devPtr = d_texels;
  resource.res.pitch2D.desc = ${CHANNEL};
  resource.res.pitch2D.width = width;
  resource.res.pitch2D.height = height;
  resource.res.pitch2D.pitchInBytes = pitch;
)";
  } else if (resource == "array2d") {
    upload = R"(  cudaChannelFormatDesc channel = ${CHANNEL};
  const cudaChannelFormatKind kind = channel.f;
  if (kind != ${KIND}) return finish(false);
  cudaArray* texels = nullptr;
  CHECK(cudaMallocArray(&texels, &channel, width, height));
  CHECK(cudaMemcpy2DToArray(texels, 0, 0, input.data(), width * sizeof(${TEXEL_TYPE}), width * sizeof(${TEXEL_TYPE}), height,
                            cudaMemcpyHostToDevice));
  cudaResourceDesc resource;
  memset(&resource, 0, sizeof(resource));
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = texels;
)";
  } else {
    upload = R"(  cudaChannelFormatDesc channel = ${CHANNEL};
  cudaArray_t texels = nullptr;
  CHECK(cudaMalloc3DArray(&texels, &channel, make_cudaExtent(width, height, depth), 0));
  cudaMemcpy3DParms copy;
  memset(&copy, 0, sizeof(copy));
  copy.srcPtr = make_cudaPitchedPtr(input.data(), width * sizeof(float), width, height);
  copy.dstArray = texels;
  copy.extent = make_cudaExtent(width, height, depth);
  copy.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&copy));
  cudaResourceDesc resource;
  memset(&resource, 0, sizeof(resource));
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = texels;
)";
  }
  std::string describe = R"(  cudaTextureDesc description;
  memset(&description, 0, sizeof(description));
  description.addressMode[0] = ${ADDRESS};
  description.addressMode[1] = ${ADDRESS};
  description.addressMode[2] = ${ADDRESS};
  description.filterMode = ${FILTER};
  description.readMode = ${READ_MODE};
  description.normalizedCoords = ${NORMALIZED};
  cudaTextureObject_t texture = 0;
  CHECK(cudaCreateTextureObject(&texture, &resource, &description, nullptr));
)";
  std::string release = resource == "linear" || resource == "pitch2d" ? "  CHECK(cudaFree(d_texels));\n"
                                                                       : "  CHECK(cudaFreeArray(texels));\n";
  std::string main_body = is_1d ? R"(  const int n = ${N};
  std::vector<float> input(n), out(n);
  for (int i = 0; i < n; ++i) input[i] = (float)random_dyadic(4, 8);
${UPLOAD}${DESCRIBE}  float* d_out = (float*)device_alloc(n * sizeof(float));
  sample_kernel<<<${GRID1}, ${BLOCK}>>>(texture, d_out, n);
  after_launch();
  download(out.data(), d_out, n * sizeof(float));
  bool passed = true;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
${REFERENCE}
    if (!close_enough((double)out[i], ${HOST_AFFINE}, 1e-6)) passed = false;
    sum += (double)out[i];
  }
  report_value("mean", sum / n);
  CHECK(cudaDestroyTextureObject(texture));
${RELEASE}  return finish(passed);
)"
                                : R"(  const int width = ${W}, height = ${H}, depth = ${D};
  const size_t count = (size_t)width * height * depth;
  std::vector<${TEXEL_TYPE}> input(count);
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) input[i] = ${TEXEL_INIT};
${UPLOAD}${DESCRIBE}  float* d_out = (float*)device_alloc(count * sizeof(float));
  dim3 block(16, 8);
  dim3 grid((width + 15) / 16, (height + 7) / 8);
  sample_kernel<<<grid, block>>>(texture, d_out, width, height, depth);
  after_launch();
  download(out.data(), d_out, count * sizeof(float));
${HOST_TEXEL}  bool passed = true;
  double sum = 0;
  for (int z = 0; z < depth; ++z) {
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
    ${REFERENCE}
        double got = (double)out[((size_t)z * height + y) * width + x];
        if (!close_enough(got, ${HOST_AFFINE}, ${TOLERANCE})) passed = false;
        sum += got;
      }
    }
  }
  report_value("mean", sum / count);
  CHECK(cudaDestroyTextureObject(texture));
${RELEASE}  return finish(passed);
)";
  std::map<std::string, std::string> values = {
      {"FETCH", fetch},
      {"AFFINE", affine.device},
      {"HOST_AFFINE", affine.host},
      {"UPLOAD", upload},
      {"DESCRIBE", describe},
      {"CHANNEL", channel},
      {"ADDRESS", is_1d ? "cudaAddressModeClamp" : address_mode},
      {"FILTER", linear_filter ? "cudaFilterModeLinear" : "cudaFilterModePoint"},
      {"TEXEL_TYPE", bytes ? "unsigned char" : "float"},
      {"TOLERANCE", bytes ? "1e-4" : "1e-6"},
      {"TEXEL_INIT", bytes ? "(unsigned char)random_int(0, 255)" : "(float)random_dyadic(4, 8)"},
      {"TEXEL_SCALE", bytes ? " / 255.0" : ""},
      {"READ_MODE", bytes ? "cudaReadModeNormalizedFloat" : "cudaReadModeElementType"},
      {"KIND", bytes ? "cudaChannelFormatKindUnsigned" : "cudaChannelFormatKindFloat"},
      {"NORMALIZED", normalized ? "1" : "0"},
      {"HOST_TEXEL", is_1d ? "" : c.fill(host_texel, {{"AXIS", axis}, {"TEXEL_SCALE", bytes ? " / 255.0" : ""}})},
      {"REFERENCE", reference},
      {"RELEASE", release},
      {"STRIDE", str(c.random.pick(std::vector<int64_t>{1, 3, 7, 13}))},
      {"OFFSET", str(c.random.below(97))},
      {"SX", str(shift_x)},
      {"SY", str(shift_y)},
      {"N", str(width)},
      {"W", str(width)},
      {"H", str(height)},
      {"D", str(depth)},
      {"GRID1", c.grid_for(width, 256)}};
  c.parameters.update({{"resource", resource}, {"address", address}, {"shift", {shift_x, shift_y}},
                        {"filter", linear_filter ? "linear" : "point"}, {"bytes", bytes}});
  return {c.fill(kernel, values), c.fill(main_body, values)};
}

// ---------------------------------------------------------------------------------------------
// A surface object over a CUDA array: one kernel writes it (surf2Dwrite), another reads it back
// transformed (surf2Dread), and the array comes home through cudaMemcpy2DFromArray.
DomainCode write_surface_roundtrip(DomainContext& c) {
  int64_t width = c.pick_size({32, 64, 128}, 2), height = c.random.pick(std::vector<int64_t>{16, 32, 48});
  Affine first = random_affine(c, "v"), second = random_affine(c, "v");
  std::string kernels;
  kernels = R"(
__global__ void write_surface(cudaSurfaceObject_t surface, const float* in, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  float v = in[y * width + x];
  surf2Dwrite((float)(${FIRST}), surface, x * (int)sizeof(float), y);
}

__global__ void read_mirrored(cudaSurfaceObject_t surface, float* out, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  float v = 0.0f;
  surf2Dread(&v, surface, (width - 1 - x) * (int)sizeof(float), y);
  out[y * width + x] = (float)(${SECOND});
}
)";
  std::string main_body = R"(  const int width = ${W}, height = ${H};
  std::vector<float> input(width * height), mirrored(width * height), stored(width * height);
  for (int i = 0; i < width * height; ++i) input[i] = (float)random_dyadic(4, 8);
  float* d_in = (float*)device_alloc(input.size() * sizeof(float));
  float* d_out = (float*)device_alloc(input.size() * sizeof(float));
  upload(d_in, input.data(), input.size() * sizeof(float));
  cudaChannelFormatDesc channel = cudaCreateChannelDesc<float>();
  cudaArray_t cells = nullptr;
  CHECK(cudaMallocArray(&cells, &channel, width, height, cudaArraySurfaceLoadStore));
  cudaResourceDesc resource;
  memset(&resource, 0, sizeof(resource));
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = cells;
  cudaSurfaceObject_t surface = 0;
  CHECK(cudaCreateSurfaceObject(&surface, &resource));
  dim3 block(16, 8);
  dim3 grid((width + 15) / 16, (height + 7) / 8);
  write_surface<<<grid, block>>>(surface, d_in, width, height);
  after_launch();
  read_mirrored<<<grid, block>>>(surface, d_out, width, height);
  after_launch();
  download(mirrored.data(), d_out, mirrored.size() * sizeof(float));
  CHECK(cudaMemcpy2DFromArray(stored.data(), width * sizeof(float), cells, 0, 0, width * sizeof(float), height,
                              cudaMemcpyDeviceToHost));
  bool passed = true;
  double sum = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      double v = (double)input[y * width + x];
      double written = ${HOST_FIRST};
      if (!close_enough((double)stored[y * width + x], written, 1e-6)) passed = false;
      v = (double)input[y * width + (width - 1 - x)];
      v = ${HOST_FIRST};
      if (!close_enough((double)mirrored[y * width + x], ${HOST_SECOND}, 1e-6)) passed = false;
      sum += (double)mirrored[y * width + x];
    }
  }
  report_value("mean", sum / (width * height));
  CHECK(cudaDestroySurfaceObject(surface));
  CHECK(cudaFreeArray(cells));
  return finish(passed);
)";
  std::map<std::string, std::string> values = {{"FIRST", first.device},       {"SECOND", second.device},
                                               {"HOST_FIRST", first.host},    {"HOST_SECOND", second.host},
                                               {"W", str(width)},             {"H", str(height)}};
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// A producer and a consumer on two streams: the consumer waits on the producer's event (so the
// sum is right only if the wait holds), copies device to device, and a host function or stream
// callback counts the finished chunks.
DomainCode write_stream_pipeline(DomainContext& c) {
  int64_t n = c.pick_size({65536, 262144, 1048576});
  int64_t chunks = c.random.pick(std::vector<int64_t>{2, 4, 8});
  bool priority = c.random.chance(0.5);
  bool host_function = c.random.chance(0.5);
  bool timing = c.random.chance(0.5);
  bool peer_copy = c.random.chance(0.35);
  Affine produce = random_affine(c, "(float)(i % 97)");
  std::string kernels = R"(
__global__ void produce(float* out, int first, int count) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  int i = first + k;
  out[i] = ${PRODUCE};
}

__global__ void consume(const float* in, float* out, int first, int count) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  out[first + k] = in[first + k] * 2.0f + 1.0f;
}

${CALLBACK}
)";
  std::string callback = host_function ? R"(void CUDART_CB chunk_done(void* counter) {
  *(int*)counter += 1;
})"
                                       : R"(void CUDART_CB chunk_done(cudaStream_t, cudaError_t status, void* counter) {
  if (status == cudaSuccess) *(int*)counter += 1;
})";
  std::string create_producer =
      priority ? R"(  int least_priority = 0, greatest_priority = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority));
  cudaStream_t producer, consumer;
  CHECK(cudaStreamCreateWithPriority(&producer, cudaStreamNonBlocking, greatest_priority));
  CHECK(cudaStreamCreateWithPriority(&consumer, cudaStreamNonBlocking, least_priority));)"
               : R"(  cudaStream_t producer, consumer;
  CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));)";
  std::string copy = peer_copy ? R"(    int device = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaMemcpyPeerAsync(d_copy + first, device, d_out + first, device, count * sizeof(float), consumer));)"
                               : R"(    CHECK(cudaMemcpyAsync(d_copy + first, d_out + first, count * sizeof(float), cudaMemcpyDeviceToDevice,
                          consumer));)";
  std::string note = host_function ? "    CHECK(cudaLaunchHostFunc(consumer, chunk_done, &finished));"
                                   : "    CHECK(cudaStreamAddCallback(consumer, chunk_done, &finished, 0));";
  std::string main_body = R"(  const int n = ${N}, chunks = ${CHUNKS};
  const int per_chunk = n / chunks;
${CREATE}
  std::vector<cudaEvent_t> ready(chunks);
  for (int k = 0; k < chunks; ++k) CHECK(cudaEventCreateWithFlags(&ready[k], cudaEventDisableTiming));
${TIMING_BEGIN}
  float* d_in = (float*)device_alloc(n * sizeof(float));
  float* d_out = (float*)device_alloc(n * sizeof(float));
  float* d_copy = (float*)device_alloc(n * sizeof(float));
  int finished = 0;
  for (int k = 0; k < chunks; ++k) {
    int first = k * per_chunk, count = per_chunk;
    produce<<<(count + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}, 0, producer>>>(d_in, first, count);
    CHECK(cudaEventRecord(ready[k], producer));
    CHECK(cudaStreamWaitEvent(consumer, ready[k], 0));
    consume<<<(count + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}, 0, consumer>>>(d_in, d_out, first, count);
${COPY}
${NOTE}
  }
  CHECK(cudaStreamSynchronize(consumer));
  if (cudaStreamQuery(consumer) != cudaSuccess || cudaEventQuery(ready[chunks - 1]) != cudaSuccess) {
    fprintf(stderr, "work still pending after synchronize\n");
    return finish(false);
  }
${TIMING_END}
  std::vector<float> out(n);
  download(out.data(), d_copy, n * sizeof(float));
  bool passed = finished == chunks;
  double sum = 0;
  for (int i = 0; i < chunks * per_chunk; ++i) {
    double produced = ${HOST_PRODUCE};
    if (!close_enough((double)out[i], produced * 2.0 + 1.0, 1e-6)) passed = false;
    sum += (double)out[i];
  }
  report_count("chunks", finished);
  report_value("mean", sum / (chunks * per_chunk));
  for (int k = 0; k < chunks; ++k) CHECK(cudaEventDestroy(ready[k]));
  CHECK(cudaStreamDestroy(producer));
  CHECK(cudaStreamDestroy(consumer));
  return finish(passed);
)";
  std::map<std::string, std::string> values = {
      {"PRODUCE", produce.device},
      {"HOST_PRODUCE", produce.host},
      {"CALLBACK", callback},
      {"CREATE", create_producer},
      {"COPY", copy},
      {"NOTE", note},
      {"TIMING_BEGIN", timing ? R"(  cudaEvent_t started, stopped;
  CHECK(cudaEventCreate(&started));
  CHECK(cudaEventCreateWithFlags(&stopped, cudaEventBlockingSync));
  CHECK(cudaEventRecord(started, producer));)"
                              : ""},
      {"TIMING_END", timing ? R"(  CHECK(cudaEventRecord(stopped, consumer));
  CHECK(cudaEventSynchronize(stopped));
  float elapsed_ms = -1;
  CHECK(cudaEventElapsedTime(&elapsed_ms, started, stopped));
  if (elapsed_ms < 0) return finish(false);
  CHECK(cudaEventDestroy(started));
  CHECK(cudaEventDestroy(stopped));)"
                            : ""},
      {"N", str(n)}};
  c.record(values, {{"chunks", chunks}});
  c.parameters.update({{"priority", priority}, {"host_function", host_function}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// A CUDA graph launched `replays` times: captured from a stream, or built node by node (two
// kernel nodes, the second depending on the first). Every element's value depends on each replay.
DomainCode write_graph_replay(DomainContext& c) {
  int64_t n = c.pick_size({4096, 65536, 262144});
  int64_t replays = c.random.pick(std::vector<int64_t>{2, 3, 5, 8});
  bool captured = c.random.chance(0.5);
  int add = static_cast<int>(c.random.below(5)) + 1;
  int scale = c.random.pick(std::vector<int>{2, 3});
  std::string kernels = R"(
__global__ void add_step(int* data, int n, int amount) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) data[i] += amount + (i % 3);
}

__global__ void scale_step(int* data, int n, int factor) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) data[i] = data[i] * factor % 1000003;
}
)";
  std::string build = captured ? R"(  cudaStream_t capture_stream;
  CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeGlobal));
  add_step<<<${GRID}, ${BLOCK}, 0, capture_stream>>>(d_data, n, ${ADD});
  scale_step<<<${GRID}, ${BLOCK}, 0, capture_stream>>>(d_data, n, ${SCALE});
  CHECK(cudaStreamEndCapture(capture_stream, &graph));
  cudaStream_t run_stream = capture_stream;)"
                               : R"(  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  int count = n, amount = ${ADD}, factor = ${SCALE};
  void* add_arguments[] = {&d_data, &count, &amount};
  void* scale_arguments[] = {&d_data, &count, &factor};
  cudaKernelNodeParams add_node_params;
  memset(&add_node_params, 0, sizeof(add_node_params));
  add_node_params.func = (void*)add_step;
  add_node_params.gridDim = dim3(${GRID});
  add_node_params.blockDim = dim3(${BLOCK});
  add_node_params.kernelParams = add_arguments;
  cudaKernelNodeParams scale_node_params = add_node_params;
  scale_node_params.func = (void*)scale_step;
  scale_node_params.kernelParams = scale_arguments;
  cudaGraphNode_t add_node, scale_node;
  CHECK(cudaGraphAddKernelNode(&add_node, graph, nullptr, 0, &add_node_params));
  CHECK(cudaGraphAddKernelNode(&scale_node, graph, &add_node, 1, &scale_node_params));
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  if (nodes != 2) return finish(false);
  cudaStream_t run_stream;
  CHECK(cudaStreamCreate(&run_stream));)";
  std::string main_body = R"(  const int n = ${N}, replays = ${REPLAYS};
  int* d_data = (int*)device_alloc(n * sizeof(int));
${BUILD}
  cudaGraphExec_t instance;
  CHECK(cudaGraphInstantiateWithFlags(&instance, graph, 0));
  for (int r = 0; r < replays; ++r) CHECK(cudaGraphLaunch(instance, run_stream));
  CHECK(cudaStreamSynchronize(run_stream));
  std::vector<int> data(n);
  download(data.data(), d_data, n * sizeof(int));
  bool passed = true;
  long long sum = 0;
  for (int i = 0; i < n; ++i) {
    long long want = 0;
    for (int r = 0; r < replays; ++r) want = (want + ${ADD} + (i % 3)) * ${SCALE} % 1000003;
    if (data[i] != want) passed = false;
    sum += data[i];
  }
  report_count("sum", sum);
  CHECK(cudaGraphExecDestroy(instance));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(run_stream));
  return finish(passed);
)";
  std::map<std::string, std::string> values = {{"BUILD", build},
                                               {"N", str(n)},
                                               {"ADD", str(add)},
                                               {"SCALE", str(scale)},
                                               {"GRID", c.grid_for(n, 128)}};
  c.parameters["captured"] = captured;
  c.record(values, {{"replays", replays}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// A grid sized from the device's attributes and the kernel's occupancy: the work is split over
// exactly that many blocks, so a wrong attribute or occupancy leaves elements unprocessed.
DomainCode write_occupancy_sizing(DomainContext& c) {
  int64_t n = c.pick_size({100000, 400000, 1000000});
  bool potential = c.random.chance(0.5);
  bool properties = c.random.chance(0.4);
  // With a staging buffer of 56 KB the launch needs cudaFuncAttributeMaxDynamicSharedMemorySize:
  // without it, more than 48 KB of dynamic shared memory fails the launch.
  bool large_shared = c.random.chance(0.4);
  std::string kernels = large_shared ? R"(
__global__ void weighted_square(const float* in, float* out, int n, int per_block) {
  extern __shared__ float staged[];
  int first = blockIdx.x * per_block;
  int last = min(first + per_block, n);
  for (int base = first; base < last; base += blockDim.x) {
    int i = base + threadIdx.x;
    staged[threadIdx.x] = i < last ? in[i] : 0.0f;
    __syncthreads();
    if (i < last) out[i] = staged[threadIdx.x] * staged[threadIdx.x] * ${WEIGHT};
    __syncthreads();
  }
}
)"
                                     : R"(
__global__ void weighted_square(const float* in, float* out, int n, int per_block) {
  int first = blockIdx.x * per_block;
  int last = min(first + per_block, n);
  for (int i = first + threadIdx.x; i < last; i += blockDim.x) out[i] = in[i] * in[i] * ${WEIGHT};
}
)";
  std::string sizing = potential ? R"(  int minimum_grid = 0, block = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&minimum_grid, &block, weighted_square, 0, 0));)"
                                 : R"(  int block = ${BLOCK};)";
  std::string attributes = properties ? R"(  cudaDeviceProp properties;
  CHECK(cudaGetDeviceProperties(&properties, device));
  int multiprocessors = properties.multiProcessorCount;
  int warp = properties.warpSize;
  int max_threads = properties.maxThreadsPerBlock;)"
                                      : R"(  int multiprocessors = 0, warp = 0, max_threads = 0;
  CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, device));
  CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerBlock, device));)";
  std::string main_body = R"(  const int n = ${N};
  int device_count = 0, device = 0;
  CHECK(cudaGetDeviceCount(&device_count));
  CHECK(cudaSetDevice(0));
  CHECK(cudaGetDevice(&device));
${ATTRIBUTES}
${SIZING}
${OPT_IN}
  int blocks_per_multiprocessor = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_multiprocessor, weighted_square, block, shared_bytes));
  int grid = multiprocessors * blocks_per_multiprocessor;
  if (device_count < 1 || grid < 1 || block < 1 || block > max_threads || block % warp != 0) {
    fprintf(stderr, "bad launch configuration: %d blocks of %d\n", grid, block);
    return finish(false);
  }
  int per_block = (n + grid - 1) / grid;
  std::vector<float> input(n), output(n);
  for (int i = 0; i < n; ++i) input[i] = (float)random_dyadic(3, 4);
  float* d_in = (float*)device_alloc(n * sizeof(float));
  float* d_out = (float*)device_alloc(n * sizeof(float));
  upload(d_in, input.data(), n * sizeof(float));
  weighted_square<<<grid, block, shared_bytes>>>(d_in, d_out, n, per_block);
  after_launch();
  download(output.data(), d_out, n * sizeof(float));
  bool passed = true;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    if (!close_enough((double)output[i], (double)input[i] * input[i] * ${HOST_WEIGHT}, 1e-6)) passed = false;
    sum += (double)output[i];
  }
  report_value("mean", sum / n);
  return finish(passed);
)";
  double weight = c.random.pick(std::vector<double>{0.5, 2, 3, 0.25});
  std::string opt_in = large_shared ? R"(  const int shared_bytes = 56 * 1024;
  CHECK(cudaFuncSetAttribute(weighted_square, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));)"
                                    : "  const int shared_bytes = 0;";
  std::map<std::string, std::string> values = {{"ATTRIBUTES", attributes}, {"SIZING", sizing}, {"OPT_IN", opt_in},
                                               {"WEIGHT", c.lit(weight)},   {"HOST_WEIGHT", std::to_string(weight)},
                                               {"N", str(n)}};
  c.parameters.update({{"potential_block_size", potential}, {"large_shared", large_shared}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// Host memory the device reaches: mapped pinned memory written in place by a kernel (zero copy),
// a registered std::vector copied into, write-combined staging, or managed memory with advice and
// prefetches. Each buffer's content is checked on the host.
DomainCode write_host_memory(DomainContext& c) {
  int64_t n = c.pick_size({4096, 65536, 262144});
  std::string kind = c.random.pick(std::vector<std::string>{"mapped", "registered", "managed", "write_combined"});
  int base = static_cast<int>(c.random.below(50));
  int stride = c.random.pick(std::vector<int>{1, 2, 3});
  std::string kernels = R"(
__global__ void fill(int* out, int n, int base, int stride) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = base + stride * i;
}
)";
  std::string flow;
  if (kind == "mapped") {
    flow = R"(  int* mapped = nullptr;
  CHECK(cudaHostAlloc((void**)&mapped, n * sizeof(int), cudaHostAllocMapped));
  int* on_device = nullptr;
  CHECK(cudaHostGetDevicePointer((void**)&on_device, mapped, 0));
  fill<<<${GRID}, ${BLOCK}>>>(on_device, n, ${BASE}, ${STRIDE});
  after_launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<int> result(mapped, mapped + n);
  CHECK(cudaFreeHost(mapped));)";
  } else if (kind == "registered") {
    flow = R"(  std::vector<int> result(n, -1);
  CHECK(cudaHostRegister(result.data(), n * sizeof(int), cudaHostRegisterDefault));
  int* d_out = (int*)device_alloc(n * sizeof(int));
  fill<<<${GRID}, ${BLOCK}>>>(d_out, n, ${BASE}, ${STRIDE});
  after_launch();
  CHECK(cudaMemcpyAsync(result.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost, 0));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaHostUnregister(result.data()));)";
  } else if (kind == "write_combined") {
    flow = R"(  int* staging = nullptr;
  CHECK(cudaHostAlloc((void**)&staging, n * sizeof(int), cudaHostAllocWriteCombined | cudaHostAllocPortable));
  int* d_out = (int*)device_alloc(n * sizeof(int));
  fill<<<${GRID}, ${BLOCK}>>>(d_out, n, ${BASE}, ${STRIDE});
  after_launch();
  CHECK(cudaMemcpy(staging, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> result(staging, staging + n);
  CHECK(cudaFreeHost(staging));)";
  } else {
    // CUDA 13 takes a cudaMemLocation where earlier releases took a device number.
    flow = R"(  int* managed = nullptr;
  CHECK(cudaMallocManaged(&managed, n * sizeof(int), cudaMemAttachGlobal));
  int device = 0;
  CHECK(cudaGetDevice(&device));
#if CUDART_VERSION >= 13000
  cudaMemLocation on_device = {cudaMemLocationTypeDevice, device};
  cudaMemLocation on_host = {cudaMemLocationTypeHost, 0};
  CHECK(cudaMemAdvise(managed, n * sizeof(int), cudaMemAdviseSetPreferredLocation, on_device));
  CHECK(cudaMemPrefetchAsync(managed, n * sizeof(int), on_device, 0, 0));
#else
  CHECK(cudaMemAdvise(managed, n * sizeof(int), cudaMemAdviseSetPreferredLocation, device));
  CHECK(cudaMemPrefetchAsync(managed, n * sizeof(int), device, 0));
#endif
  fill<<<${GRID}, ${BLOCK}>>>(managed, n, ${BASE}, ${STRIDE});
  after_launch();
  CHECK(cudaDeviceSynchronize());
#if CUDART_VERSION >= 13000
  CHECK(cudaMemPrefetchAsync(managed, n * sizeof(int), on_host, 0, 0));
#else
  CHECK(cudaMemPrefetchAsync(managed, n * sizeof(int), cudaCpuDeviceId, 0));
#endif
  CHECK(cudaDeviceSynchronize());
  std::vector<int> result(managed, managed + n);
  CHECK(cudaFree(managed));)";
  }
  std::string main_body = R"(  const int n = ${N};
  size_t free_bytes = 0, total_bytes = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (total_bytes == 0 || free_bytes > total_bytes) return finish(false);
${FLOW}
  bool passed = (int)result.size() == n;
  long long sum = 0;
  for (int i = 0; i < n && passed; ++i) {
    if (result[i] != ${BASE} + ${STRIDE} * i) passed = false;
    sum += result[i];
  }
  report_count("sum", sum);
  return finish(passed);
)";
  std::map<std::string, std::string> values = {{"FLOW", flow},
                                               {"N", str(n)},
                                               {"BASE", str(base)},
                                               {"STRIDE", str(stride)},
                                               {"GRID", c.grid_for(n, 256)}};
  c.parameters["host_memory"] = kind;
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// Half and bfloat16 arithmetic: an axpy in __half (or __half2 pairs) and a bfloat16 widening
// scale, with inputs that both formats hold exactly.
DomainCode write_half_precision(DomainContext& c) {
  int64_t n = c.pick_size({2048, 16384, 131072});
  bool paired = c.random.chance(0.4);
  bool bf16 = c.random.chance(0.5);
  double a = c.random.pick(std::vector<double>{2, 0.5, 1.5, -1});
  std::string kernels = paired ? R"(
#include <cuda_fp16.h>
__global__ void axpy_half(const __half2* x, __half2* y, __half2 a, int pairs) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs) y[i] = __hfma2(a, x[i], y[i]);
}
)"
                               : R"(
#include <cuda_fp16.h>
__global__ void axpy_half(const __half* x, __half* y, __half a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hadd(__hmul(a, x[i]), y[i]);
}
)";
  if (bf16) {
    kernels += R"(
#include <cuda_bf16.h>
__global__ void widen_bf16(const __nv_bfloat16* in, float* out, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __bfloat162float(in[i]) * factor;
}
)";
  }
  std::string launch = paired ? R"(  __half2 a2 = __floats2half2_rn(${A}, ${A});
  axpy_half<<<(n / 2 + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}>>>((const __half2*)d_x, (__half2*)d_y, a2, n / 2);)"
                              : R"(  axpy_half<<<(n + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}>>>(d_x, d_y, __float2half(${A}), n);)";
  std::string bf16_part = bf16 ? R"(  std::vector<__nv_bfloat16> b(n);
  for (int i = 0; i < n; ++i) b[i] = __float2bfloat16((float)((i % 9) - 4) * 0.5f);
  __nv_bfloat16* d_b = (__nv_bfloat16*)device_alloc(n * sizeof(__nv_bfloat16));
  float* d_wide = (float*)device_alloc(n * sizeof(float));
  upload(d_b, b.data(), n * sizeof(__nv_bfloat16));
  widen_bf16<<<(n + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}>>>(d_b, d_wide, 4.0f, n);
  after_launch();
  std::vector<float> wide(n);
  download(wide.data(), d_wide, n * sizeof(float));
  for (int i = 0; i < n; ++i) {
    if (wide[i] != (float)((i % 9) - 4) * 2.0f) passed = false;
    sum += wide[i];
  })"
                               : "";
  std::string main_body = R"(  const int n = ${N};
  std::vector<__half> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = __float2half((float)(i % 16) * 0.25f);
    y[i] = __float2half((float)(i % 5));
  }
  __half* d_x = (__half*)device_alloc(n * sizeof(__half));
  __half* d_y = (__half*)device_alloc(n * sizeof(__half));
  upload(d_x, x.data(), n * sizeof(__half));
  upload(d_y, y.data(), n * sizeof(__half));
${LAUNCH}
  after_launch();
  download(y.data(), d_y, n * sizeof(__half));
  bool passed = true;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    float want = ${A} * ((float)(i % 16) * 0.25f) + (float)(i % 5);
    if (__half2float(y[i]) != want) passed = false;
    sum += __half2float(y[i]);
  }
${BF16}
  report_value("sum", sum);
  return finish(passed);
)";
  std::map<std::string, std::string> values = {{"LAUNCH", launch}, {"BF16", bf16_part}, {"N", str(n)},
                                               {"A", c.lit(a)}};
  c.parameters.update({{"paired", paired}, {"bf16", bf16}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// cuRAND: host generators filling device buffers (uniform, normal, log-normal or Poisson draws,
// checked by their statistics), or the device API drawing per thread from curandState (uniform,
// normal, or the raw bits of curand()).
DomainCode write_random_numbers(DomainContext& c) {
  int64_t n = c.pick_size({65536, 262144, 1048576});
  bool host_api = c.random.chance(0.55);
  std::string distribution = host_api ? c.random.pick(std::vector<std::string>{"uniform", "normal", "log_normal", "poisson"})
                                      : c.random.pick(std::vector<std::string>{"uniform", "normal", "bits"});
  std::string generator = c.random.pick(std::vector<std::string>{"CURAND_RNG_PSEUDO_DEFAULT", "CURAND_RNG_PSEUDO_XORWOW",
                                                                 "CURAND_RNG_PSEUDO_PHILOX4_32_10", "CURAND_RNG_PSEUDO_MRG32K3A"});
  std::string state = c.random.pick(std::vector<std::string>{"curandState", "curandStatePhilox4_32_10_t"});
  uint64_t generator_key = 1000 + c.random.below(9000);
  // The status names of a checking helper, as real programs write it.
  std::string helper = R"(
#include <curand.h>
#include <curand_kernel.h>

const char* rand_status_name(curandStatus_t status) {
  switch (status) {
    case CURAND_STATUS_SUCCESS: return "success";
    case CURAND_STATUS_VERSION_MISMATCH: return "version mismatch";
    case CURAND_STATUS_NOT_INITIALIZED: return "not initialized";
    case CURAND_STATUS_ALLOCATION_FAILED: return "allocation failed";
    case CURAND_STATUS_TYPE_ERROR: return "type error";
    case CURAND_STATUS_OUT_OF_RANGE: return "out of range";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "length not multiple";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "double precision required";
    case CURAND_STATUS_LAUNCH_FAILURE: return "launch failure";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "preexisting failure";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "initialization failed";
    case CURAND_STATUS_ARCH_MISMATCH: return "arch mismatch";
    case CURAND_STATUS_INTERNAL_ERROR: return "internal error";
    default: return "unknown";
  }
}
#define CHECK_RAND(call) do { curandStatus_t rand_status = (call); if (rand_status != CURAND_STATUS_SUCCESS) { \
  fprintf(stderr, "cuRAND error: %s at %s:%d\n", rand_status_name(rand_status), __FILE__, __LINE__); exit(2); } } while (0)
)";
  std::string kernels = helper;
  if (!host_api) {
    kernels += R"(
__global__ void draw(unsigned long long key, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  ${STATE} state;
  curand_init(key, i, 0, &state);
  out[i] = ${DRAW};
}
)";
  }
  std::string host_generate;
  if (distribution == "uniform") {
    host_generate = "  CHECK_RAND(curandGenerateUniform(generator, d_out, n));";
  } else if (distribution == "normal") {
    host_generate = "  CHECK_RAND(curandGenerateNormal(generator, d_out, n, 1.0f, 2.0f));";
  } else if (distribution == "log_normal") {
    host_generate = "  CHECK_RAND(curandGenerateLogNormal(generator, d_out, n, 0.0f, 0.5f));";
  } else {
    host_generate = "  CHECK_RAND(curandGeneratePoisson(generator, d_counts, n, 4.0));";
  }
  // Each distribution's mean, and a band that a correct generator lands in at this n.
  std::string expected_mean = distribution == "uniform" || distribution == "bits" ? "0.5"
                              : distribution == "normal"                            ? (host_api ? "1.0" : "0.0")
                              : distribution == "log_normal" ? "1.1331" : "4.0";
  std::string band = distribution == "uniform" || distribution == "bits" ? "0.02" : distribution == "poisson" ? "0.1" : "0.08";
  std::string main_body = host_api ? R"(  const int n = ${N};
  curandGenerator_t generator;
  CHECK_RAND(curandCreateGenerator(&generator, ${GENERATOR}));
  CHECK_RAND(curandSetPseudoRandomGeneratorSeed(generator, ${SEED}ULL));
  CHECK_RAND(curandSetGeneratorOffset(generator, 0ULL));
${POISSON_BUFFER}
${GENERATE}
  std::vector<double> values(n);
${DOWNLOAD}
  CHECK_RAND(curandDestroyGenerator(generator));
)"
                                   : R"(  const int n = ${N};
  float* d_out = (float*)device_alloc(n * sizeof(float));
  draw<<<(n + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}>>>(${SEED}ULL, d_out, n);
  after_launch();
  std::vector<float> raw(n);
  download(raw.data(), d_out, n * sizeof(float));
  std::vector<double> values(raw.begin(), raw.end());
)";
  main_body += R"(  double mean = 0;
  bool in_range = true;
  for (int i = 0; i < n; ++i) {
    mean += values[i];
    ${RANGE}
  }
  mean /= n;
  bool passed = in_range && fabs(mean - ${MEAN}) < ${BAND};
  report_value("mean", floor(mean * 10 + 0.5) / 10);
  return finish(passed);
)";
  std::string range = distribution == "uniform" ? "if (!(values[i] > 0.0 && values[i] <= 1.0)) in_range = false;"
                      : distribution == "bits"    ? "if (!(values[i] >= 0.0 && values[i] <= 1.0)) in_range = false;"
                      : distribution == "log_normal" ? "if (!(values[i] > 0.0)) in_range = false;"
                      : distribution == "poisson" ? "if (values[i] < 0.0) in_range = false;"
                                                  : "if (values[i] != values[i]) in_range = false;";
  std::map<std::string, std::string> values = {
      {"STATE", state},
      {"DRAW", distribution == "uniform" ? "curand_uniform(&state)"
               : distribution == "bits"  ? "(float)(curand(&state) >> 16) / 65535.0f"  // the raw 32 bits, high half
                                         : "curand_normal(&state)"},
      {"GENERATOR", generator},
      {"SEED", std::to_string(generator_key)},
      {"POISSON_BUFFER", distribution == "poisson" ? "  unsigned int* d_counts = (unsigned int*)device_alloc(n * sizeof(unsigned int));"
                                                   : "  float* d_out = (float*)device_alloc(n * sizeof(float));"},
      {"GENERATE", host_generate},
      {"DOWNLOAD", distribution == "poisson" ? R"(  std::vector<unsigned int> counts(n);
  download(counts.data(), d_counts, n * sizeof(unsigned int));
  for (int i = 0; i < n; ++i) values[i] = counts[i];)"
                                             : R"(  std::vector<float> raw(n);
  download(raw.data(), d_out, n * sizeof(float));
  for (int i = 0; i < n; ++i) values[i] = raw[i];)"},
      {"RANGE", range},
      {"MEAN", expected_mean},
      {"BAND", band},
      {"N", str(n)}};
  c.parameters.update({{"host_api", host_api}, {"distribution", distribution}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// cuSPARSE's generic API: a CSR matrix times a dense vector (SpMV) with its work buffer, checked
// against the host's product; the matrix's sparsity pattern varies.
DomainCode write_sparse_products(DomainContext& c) {
  int64_t rows = c.pick_size({256, 1024, 4096}), cols = c.random.pick(std::vector<int64_t>{128, 512, 2048});
  int64_t step = c.random.pick(std::vector<int64_t>{3, 5, 7, 11});
  double alpha = c.random.pick(std::vector<double>{1, 2, 0.5}), beta = c.random.pick(std::vector<double>{0, 1, -0.5});
  std::string kernels = R"(
#include <cusparse.h>

const char* sparse_status_name(cusparseStatus_t status) {
  switch (status) {
    case CUSPARSE_STATUS_SUCCESS: return "success";
    case CUSPARSE_STATUS_NOT_INITIALIZED: return "not initialized";
    case CUSPARSE_STATUS_ALLOC_FAILED: return "alloc failed";
    case CUSPARSE_STATUS_INVALID_VALUE: return "invalid value";
    case CUSPARSE_STATUS_ARCH_MISMATCH: return "arch mismatch";
    case CUSPARSE_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUSPARSE_STATUS_INTERNAL_ERROR: return "internal error";
    case CUSPARSE_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "unknown";
  }
}
#define CHECK_SPARSE(call) do { cusparseStatus_t sparse_status = (call); if (sparse_status != CUSPARSE_STATUS_SUCCESS) { \
  fprintf(stderr, "cuSPARSE error: %s at %s:%d\n", sparse_status_name(sparse_status), __FILE__, __LINE__); exit(2); } } while (0)
)";
  std::string main_body = R"(  const int rows = ${ROWS}, cols = ${COLS};
  std::vector<int> offsets(rows + 1), columns;
  std::vector<float> entries;
  for (int r = 0; r < rows; ++r) {
    offsets[r] = (int)columns.size();
    for (int c = r % ${STEP}; c < cols; c += ${STEP} + r % 3) {
      columns.push_back(c);
      entries.push_back((float)random_dyadic(2, 4));
    }
  }
  offsets[rows] = (int)columns.size();
  const int nonzeros = (int)columns.size();
  std::vector<float> x(cols), y(rows);
  for (int i = 0; i < cols; ++i) x[i] = (float)random_dyadic(2, 4);
  for (int i = 0; i < rows; ++i) y[i] = (float)random_dyadic(2, 4);
  int* d_offsets = (int*)device_alloc((rows + 1) * sizeof(int));
  int* d_columns = (int*)device_alloc(nonzeros * sizeof(int));
  float* d_entries = (float*)device_alloc(nonzeros * sizeof(float));
  float* d_x = (float*)device_alloc(cols * sizeof(float));
  float* d_y = (float*)device_alloc(rows * sizeof(float));
  upload(d_offsets, offsets.data(), (rows + 1) * sizeof(int));
  upload(d_columns, columns.data(), nonzeros * sizeof(int));
  upload(d_entries, entries.data(), nonzeros * sizeof(float));
  upload(d_x, x.data(), cols * sizeof(float));
  upload(d_y, y.data(), rows * sizeof(float));
  cusparseHandle_t handle;
  CHECK_SPARSE(cusparseCreate(&handle));
  cusparseSpMatDescr_t matrix;
  cusparseDnVecDescr_t vector_x, vector_y;
  CHECK_SPARSE(cusparseCreateCsr(&matrix, rows, cols, nonzeros, d_offsets, d_columns, d_entries, CUSPARSE_INDEX_32I,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_SPARSE(cusparseCreateDnVec(&vector_x, cols, d_x, CUDA_R_32F));
  CHECK_SPARSE(cusparseCreateDnVec(&vector_y, rows, d_y, CUDA_R_32F));
  float alpha = ${ALPHA}, beta = ${BETA};
  size_t work_bytes = 0;
  CHECK_SPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, vector_x, &beta, vector_y,
                                       CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &work_bytes));
  void* work = device_alloc(work_bytes > 0 ? work_bytes : 1);
  CHECK_SPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, vector_x, &beta, vector_y, CUDA_R_32F,
                            CUSPARSE_SPMV_ALG_DEFAULT, work));
  std::vector<float> result(rows);
  download(result.data(), d_y, rows * sizeof(float));
  bool passed = true;
  double sum = 0;
  for (int r = 0; r < rows; ++r) {
    double want = 0;
    for (int k = offsets[r]; k < offsets[r + 1]; ++k) want += (double)entries[k] * x[columns[k]];
    want = ${ALPHA_D} * want + ${BETA_D} * y[r];
    if (!close_enough((double)result[r], want, 1e-5)) passed = false;
    sum += (double)result[r];
  }
  report_value("mean", sum / rows);
  CHECK_SPARSE(cusparseDestroySpMat(matrix));
  CHECK_SPARSE(cusparseDestroyDnVec(vector_x));
  CHECK_SPARSE(cusparseDestroyDnVec(vector_y));
  CHECK_SPARSE(cusparseDestroy(handle));
  return finish(passed);
)";
  c.parameters.update({{"alpha", alpha}, {"beta", beta}});
  std::map<std::string, std::string> values = {{"ROWS", str(rows)},          {"COLS", str(cols)},
                                               {"STEP", str(step)},          {"ALPHA", c.lit(alpha)},
                                               {"BETA", c.lit(beta)},        {"ALPHA_D", std::to_string(alpha)},
                                               {"BETA_D", std::to_string(beta)}};
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// cuBLAS: a handle with its math mode and stream, then a GEMM (plain, strided-batched or the Ex
// form) or a GEMV, in cuBLAS's column-major layout, checked against the host's product.
DomainCode write_blas_products(DomainContext& c) {
  std::string operation = c.random.pick(std::vector<std::string>{"gemm", "gemm_ex", "gemm_batched", "gemv"});
  int64_t m = c.random.pick(std::vector<int64_t>{32, 64, 96}), n = c.random.pick(std::vector<int64_t>{16, 48, 64}),
          k = c.random.pick(std::vector<int64_t>{24, 32, 80});
  bool transpose_a = c.random.chance(0.4);
  // TF32 keeps these inputs exact (quarters of small integers), so every math mode gives the same product.
  std::string math = c.random.pick(
      std::vector<std::string>{"CUBLAS_DEFAULT_MATH", "CUBLAS_PEDANTIC_MATH", "CUBLAS_TF32_TENSOR_OP_MATH"});
  std::string compute = c.random.pick(std::vector<std::string>{"CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_32F_FAST_TF32"});
  std::string algorithm = c.random.pick(std::vector<std::string>{"CUBLAS_GEMM_DEFAULT", "CUBLAS_GEMM_DEFAULT_TENSOR_OP"});
  std::string kernels = R"(
#include <cublas_v2.h>

const char* blas_status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "alloc failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "invalid value";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "arch mismatch";
    case CUBLAS_STATUS_MAPPING_ERROR: return "mapping error";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "internal error";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "unknown";
  }
}
#define CHECK_BLAS(call) do { cublasStatus_t blas_status = (call); if (blas_status != CUBLAS_STATUS_SUCCESS) { \
  fprintf(stderr, "cuBLAS error: %s at %s:%d\n", blas_status_name(blas_status), __FILE__, __LINE__); exit(2); } } while (0)
)";
  // A is m x k (stored k x m when transposed), B is k x n, C is m x n; column-major throughout.
  std::string call;
  if (operation == "gemm") {
    call = "  CHECK_BLAS(cublasSgemm(handle, ${OP_A}, CUBLAS_OP_N, m, n, k, &alpha, d_a, lda, d_b, k, &beta, d_c, m));";
  } else if (operation == "gemm_ex") {
    call = R"(  const cudaDataType element_type = CUDA_R_32F;
  const cublasComputeType_t compute_type = ${COMPUTE};
  CHECK_BLAS(cublasGemmEx(handle, op_a, CUBLAS_OP_N, m, n, k, &alpha, d_a, element_type, lda, d_b, element_type, k,
                          &beta, d_c, element_type, m, compute_type, ${ALGORITHM}));)";
  } else if (operation == "gemm_batched") {
    call = R"(  // Two batches over the same A and B: the second C gets the same product.
  CHECK_BLAS(cublasSgemmStridedBatched(handle, ${OP_A}, CUBLAS_OP_N, m, n, k, &alpha, d_a, lda, 0, d_b, k, 0, &beta, d_c, m,
                                       (long long)m * n, 2));)";
  } else {
    call = R"(  // y = op(A) x for the first column of B.
  CHECK_BLAS(cublasSgemv(handle, ${OP_A}, ${GEMV_ROWS}, ${GEMV_COLS}, &alpha, d_a, lda, d_b, 1, &beta, d_c, 1));)";
  }
  std::string main_body = R"(  const int m = ${M}, n = ${N}, k = ${K};
  const bool transpose_a = ${TRANSPOSE};
  const int lda = transpose_a ? k : m;
  std::vector<float> a(m * k), b(k * n), c(2 * m * n, 0.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (float)random_dyadic(2, 4);
  for (size_t i = 0; i < b.size(); ++i) b[i] = (float)random_dyadic(2, 4);
  float* d_a = (float*)device_alloc(a.size() * sizeof(float));
  float* d_b = (float*)device_alloc(b.size() * sizeof(float));
  float* d_c = (float*)device_alloc(c.size() * sizeof(float));
  upload(d_a, a.data(), a.size() * sizeof(float));
  upload(d_b, b.data(), b.size() * sizeof(float));
  cublasHandle_t handle;
  CHECK_BLAS(cublasCreate(&handle));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK_BLAS(cublasSetStream(handle, stream));
  const cublasMath_t math_mode = ${MATH};
  CHECK_BLAS(cublasSetMathMode(handle, math_mode));
  const cublasOperation_t op_a = ${OP_A};
  const float alpha = 1.0f, beta = 0.0f;
${CALL}
  CHECK(cudaStreamSynchronize(stream));
  download(c.data(), d_c, c.size() * sizeof(float));
  // A(i, p): element i of column p of op(A).
  auto a_at = [&](int i, int p) { return (double)(transpose_a ? a[i * k + p] : a[p * m + i]); };
  bool passed = true;
  double sum = 0;
  const int columns = ${CHECKED_COLUMNS}, copies = ${COPIES};
  for (int copy = 0; copy < copies; ++copy) {
    for (int j = 0; j < columns; ++j) {
      for (int i = 0; i < m; ++i) {
        double want = 0;
        for (int p = 0; p < k; ++p) want += a_at(i, p) * b[j * k + p];
        double got = c[(size_t)copy * m * n + (size_t)j * m + i];
        if (!close_enough(got, want, 1e-4)) passed = false;
        sum += got;
      }
    }
  }
  report_value("sum", sum);
  CHECK_BLAS(cublasDestroy(handle));
  CHECK(cudaStreamDestroy(stream));
  return finish(passed);
)";
  std::map<std::string, std::string> values = {
      {"CALL", call},
      {"OP_A", transpose_a ? "CUBLAS_OP_T" : "CUBLAS_OP_N"},
      // cublasSgemv takes A as stored: rows and columns before the transpose.
      {"GEMV_ROWS", transpose_a ? "k" : "m"},
      {"GEMV_COLS", transpose_a ? "m" : "k"},
      {"M", str(m)},
      {"N", str(n)},
      {"K", str(k)},
      {"TRANSPOSE", transpose_a ? "true" : "false"},
      {"MATH", math},
      {"COMPUTE", compute},
      {"ALGORITHM", algorithm},
      {"CHECKED_COLUMNS", operation == "gemv" ? "1" : "n"},
      {"COPIES", operation == "gemm_batched" ? "2" : "1"}};
  c.parameters.update({{"operation", operation}, {"transpose_a", transpose_a}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// Cooperative groups: thread-block tiles of 32, 16 or 8 threads reduce with the tile's shuffles;
// each tile's rank in its block decides where its sum goes.
DomainCode write_cooperative_tiles(DomainContext& c) {
  int64_t n = c.pick_size({8192, 65536, 262144});
  int64_t tile = c.random.pick(std::vector<int64_t>{8, 16, 32});
  bool vote = c.random.chance(0.4);
  std::string kernels = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void tile_totals(const int* in, int* out, int* positive_tiles, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<${TILE}> tile = cg::tiled_partition<${TILE}>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  int slot = blockIdx.x * tile.meta_group_size() + tile.meta_group_rank();
  if (tile.thread_rank() == 0) out[slot] = v;
${VOTE}
  block.sync();
}
)";
  // The tile's vote, as tile shuffles: HIP 5.2's tiles have no any().
  std::string vote_text = vote ? R"(  int large = i < n && in[i] > 6 ? 1 : 0;
  for (int offset = tile.size() / 2; offset > 0; offset /= 2) large += tile.shfl_xor(large, offset);
  if (tile.thread_rank() == 0 && large > 0) atomicAdd(positive_tiles, 1);)"
                               : "";
  std::string main_body = R"(  const int n = ${N}, tile = ${TILE}, block = ${BLOCK};
  const int tiles = n / tile;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = random_int(-3, 9);
  int* d_in = (int*)device_alloc(n * sizeof(int));
  int* d_out = (int*)device_alloc(tiles * sizeof(int));
  int* d_positive = (int*)device_alloc(sizeof(int));
  upload(d_in, in.data(), n * sizeof(int));
  tile_totals<<<n / block, block>>>(d_in, d_out, d_positive, n);
  after_launch();
  std::vector<int> out(tiles);
  int positive = 0;
  download(out.data(), d_out, tiles * sizeof(int));
  download(&positive, d_positive, sizeof(int));
  bool passed = true;
  long long total = 0;
  int want_positive = 0;
  for (int t = 0; t < tiles; ++t) {
    int want = 0;
    bool large = false;
    for (int j = 0; j < tile; ++j) {
      want += in[t * tile + j];
      large = large || in[t * tile + j] > 6;
    }
    if (out[t] != want) passed = false;
    want_positive += large;
    total += out[t];
  }
  if (${VOTED} && positive != want_positive) passed = false;
  report_count("total", total);
  return finish(passed);
)";
  std::map<std::string, std::string> values = {{"VOTE", vote_text}, {"VOTED", vote ? "true" : "false"},
                                               {"N", str(n)}};
  c.record(values, {{"tile", tile}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// Cache-hinted loads and stores (__ldcs, __ldcg, __stcs, __stcg, __stwt) carrying the data of a
// normalization, with rsqrtf or a fast-math intrinsic in the arithmetic.
DomainCode write_streaming_hints(DomainContext& c) {
  int64_t n = c.pick_size({65536, 262144, 1048576});
  std::string load = c.random.pick(std::vector<std::string>{"__ldcs", "__ldcg", "__ldg"});
  std::string store = c.random.pick(std::vector<std::string>{"__stcs", "__stcg", "__stwt"});
  bool inverse_root = c.random.chance(0.6);
  std::string kernels = R"(
__global__ void normalize_stream(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = ${LOAD}(&in[i]);
    ${STORE}(&out[i], ${EXPRESSION});
  }
}
)";
  std::string expression = inverse_root ? "v * rsqrtf(v * v + 1.0f)" : "__fdividef(v, 1.0f + fabsf(v))";
  std::string host = inverse_root ? "v / sqrt(v * v + 1.0)" : "v / (1.0 + fabs(v))";
  std::string main_body = R"(  const int n = ${N};
  std::vector<float> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = (float)random_dyadic(8, 8);
  float* d_in = (float*)device_alloc(n * sizeof(float));
  float* d_out = (float*)device_alloc(n * sizeof(float));
  upload(d_in, in.data(), n * sizeof(float));
  normalize_stream<<<${GRID}, ${BLOCK}>>>(d_in, d_out, n);
  after_launch();
  download(out.data(), d_out, n * sizeof(float));
  bool passed = true;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    double v = in[i];
    if (!close_enough((double)out[i], ${HOST}, 1e-5)) passed = false;
    sum += (double)out[i];
  }
  report_value("mean", floor(sum / n * 1000 + 0.5) / 1000);
  return finish(passed);
)";
  std::map<std::string, std::string> values = {{"LOAD", load},
                                               {"STORE", store},
                                               {"EXPRESSION", expression},
                                               {"HOST", host},
                                               {"N", str(n)},
                                               {"GRID", c.grid_for(n, 512)}};
  c.parameters.update({{"load", load}, {"store", store}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// The driver API around a runtime launch: initialization, the device and its attributes, the
// primary context, device memory (CUdeviceptr) with its copies and memsets, a stream and timing
// events; the kernel the program launches works on the driver's buffer.
DomainCode write_driver_buffers(DomainContext& c) {
  int64_t n = c.pick_size({4096, 65536, 262144});
  bool memset_first = c.random.chance(0.5);
  bool async_copies = c.random.chance(0.5);
  bool device_to_device = c.random.chance(0.5);
  bool staged = c.random.chance(0.4);        // the upload goes through cuMemAllocHost memory
  bool context_stack = c.random.chance(0.5);  // the context is pushed and popped around the work
  double factor = c.random.pick(std::vector<double>{2, 0.5, 3, -1});
  std::string kernels = R"(
#include <cuda.h>

// The driver's codes a program names when a call fails, as a table (several codes can share a name).
static const struct {
  CUresult code;
  const char* name;
} kDriverErrors[] = {
    {CUDA_ERROR_INVALID_VALUE, "invalid value"},     {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "not initialized"}, {CUDA_ERROR_NO_DEVICE, "no device"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device"},   {CUDA_ERROR_INVALID_CONTEXT, "invalid context"},
    {CUDA_ERROR_NOT_FOUND, "not found"},             {CUDA_ERROR_NOT_READY, "not ready"},
    {CUDA_ERROR_LAUNCH_FAILED, "launch failed"},
};
const char* driver_error_name(CUresult code) {
  for (const auto& entry : kDriverErrors) {
    if (entry.code == code) return entry.name;
  }
  return "unlisted";
}
#define CHECK_DRIVER(call) do { CUresult driver_status = (call); if (driver_status != CUDA_SUCCESS) { \
  fprintf(stderr, "CUDA driver error %d (%s) at %s:%d\n", (int)driver_status, driver_error_name(driver_status), \
          __FILE__, __LINE__); exit(2); } } while (0)

__global__ void scale_offset(float* data, float factor, float offset, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + offset;
}
)";
  std::string main_body = R"(  const int n = ${N};
  CHECK_DRIVER(cuInit(0));
  int driver_version = 0, device_count = 0;
  CHECK_DRIVER(cuDriverGetVersion(&driver_version));
  CHECK_DRIVER(cuDeviceGetCount(&device_count));
  CUdevice device;
  CHECK_DRIVER(cuDeviceGet(&device, 0));
  char name[256];
  CHECK_DRIVER(cuDeviceGetName(name, (int)sizeof(name), device));
  int multiprocessors = 0, max_threads = 0;
  CHECK_DRIVER(cuDeviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  CHECK_DRIVER(cuDeviceGetAttribute(&max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device));
  size_t total_memory = 0;
  CHECK_DRIVER(cuDeviceTotalMem(&total_memory, device));
  CUcontext context;
  CHECK_DRIVER(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_DRIVER(cuCtxSetCurrent(context));
${PUSH}
  size_t free_memory = 0, reported_total = 0;
  CHECK_DRIVER(cuMemGetInfo(&free_memory, &reported_total));
  if (free_memory > reported_total) return finish(false);
  if (driver_version <= 0 || device_count < 1 || multiprocessors < 1 || max_threads < ${BLOCK} || total_memory == 0 ||
      name[0] == '\0') {
    fprintf(stderr, "implausible device report\n");
    return finish(false);
  }
  std::vector<float> host(n), back(n);
  for (int i = 0; i < n; ++i) host[i] = (float)random_dyadic(4, 4);
  CUdeviceptr buffer, copy;
  CHECK_DRIVER(cuMemAlloc(&buffer, n * sizeof(float)));
  CHECK_DRIVER(cuMemAlloc(&copy, n * sizeof(float)));
  CUstream stream;
  CHECK_DRIVER(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent started, stopped;
  CHECK_DRIVER(cuEventCreate(&started, CU_EVENT_DEFAULT));
  CHECK_DRIVER(cuEventCreate(&stopped, CU_EVENT_DEFAULT));
${MEMSET}
${UPLOAD}
  CHECK_DRIVER(cuEventRecord(started, stream));
  scale_offset<<<(n + ${BLOCK} - 1) / ${BLOCK}, ${BLOCK}, 0, (cudaStream_t)stream>>>((float*)buffer, ${FACTOR}, 0.5f, n);
  CHECK(cudaGetLastError());
  CHECK_DRIVER(cuEventRecord(stopped, stream));
  CHECK_DRIVER(cuEventSynchronize(stopped));
  float elapsed_ms = -1;
  CHECK_DRIVER(cuEventElapsedTime(&elapsed_ms, started, stopped));
${DOWNLOAD}
  bool passed = elapsed_ms >= 0;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    if (!close_enough((double)back[i], (double)host[i] * ${HOST_FACTOR} + 0.5, 1e-6)) passed = false;
    sum += (double)back[i];
  }
  report_value("mean", sum / n);
  CHECK_DRIVER(cuEventDestroy(started));
  CHECK_DRIVER(cuEventDestroy(stopped));
  CHECK_DRIVER(cuStreamDestroy(stream));
  CHECK_DRIVER(cuMemFree(buffer));
  CHECK_DRIVER(cuMemFree(copy));
${POP}
  CHECK_DRIVER(cuDevicePrimaryCtxRelease(device));
  return finish(passed);
)";
  std::string upload = staged ? R"(  float* staging = nullptr;
  CHECK_DRIVER(cuMemAllocHost((void**)&staging, n * sizeof(float)));
  memcpy(staging, host.data(), n * sizeof(float));
  CHECK_DRIVER(cuMemcpyHtoD(buffer, staging, n * sizeof(float)));
  CHECK_DRIVER(cuMemFreeHost(staging));)"
                       : async_copies ? R"(  CHECK_DRIVER(cuMemcpyHtoDAsync(buffer, host.data(), n * sizeof(float), stream));)"
                                      : R"(  CHECK_DRIVER(cuMemcpyHtoD(buffer, host.data(), n * sizeof(float)));)";
  std::string source = device_to_device ? "copy" : "buffer";
  std::string download = (device_to_device ? std::string("  CHECK_DRIVER(cuMemcpyDtoD(copy, buffer, n * sizeof(float)));\n") : std::string()) +
                         (async_copies ? "  CHECK_DRIVER(cuMemcpyDtoHAsync(back.data(), " + source +
                                             ", n * sizeof(float), stream));\n  CHECK_DRIVER(cuStreamSynchronize(stream));"
                                       : "  CHECK_DRIVER(cuMemcpyDtoH(back.data(), " + source + ", n * sizeof(float)));");
  std::map<std::string, std::string> values = {
      {"PUSH", context_stack ? R"(  CUcontext current = nullptr;
  CHECK_DRIVER(cuCtxGetCurrent(&current));
  if (current != context) return finish(false);
  CHECK_DRIVER(cuCtxPushCurrent(context));)"
                             : ""},
      {"POP", context_stack ? R"(  CUcontext popped = nullptr;
  CHECK_DRIVER(cuCtxPopCurrent(&popped));
  if (popped != context) return finish(false);)"
                            : ""},
      {"MEMSET", memset_first ? "  CHECK_DRIVER(cuMemsetD32(copy, 0, n));\n  CHECK_DRIVER(cuMemsetD8(buffer, 0, n * sizeof(float)));" : ""},
      {"UPLOAD", upload},
      {"DOWNLOAD", download},
      {"FACTOR", c.lit(factor)},
      {"HOST_FACTOR", std::to_string(factor)},
      {"N", str(n)}};
  c.parameters.update({{"async", async_copies}, {"staged", staged}, {"context_stack", context_stack},
                        {"device_to_device", device_to_device}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// A kernel compiled at run time: NVRTC turns its source text into PTX, the driver loads the
// module, finds the function (or a global) and launches it with cuLaunchKernel.
DomainCode write_runtime_compiled(DomainContext& c) {
  int64_t n = c.pick_size({2048, 16384, 131072});
  std::string operation = c.random.pick(std::vector<std::string>{"affine", "clamp", "square"});
  bool global_parameter = c.random.chance(0.4);
  std::string body = operation == "affine" ? "data[i] * scale + 1.0f"
                     : operation == "clamp" ? "fminf(fmaxf(data[i] * scale, -2.0f), 2.0f)"
                                            : "data[i] * data[i] * scale";
  std::string host = operation == "affine" ? "v * scale + 1.0"
                     : operation == "clamp" ? "std::min(std::max(v * scale, -2.0), 2.0)"
                                            : "v * v * scale";
  std::string source = global_parameter
                           ? "__device__ float bias;\\n"
                             "extern \\\"C\\\" __global__ void transform(float* data, float scale, int n) {\\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\\n"
                             "  if (i < n) data[i] = " + body + " + bias;\\n"
                             "}\\n"
                           : "extern \\\"C\\\" __global__ void transform(float* data, float scale, int n) {\\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\\n"
                             "  if (i < n) data[i] = " + body + ";\\n"
                             "}\\n";
  std::string kernels = R"(
#include <cuda.h>
#include <nvrtc.h>

#define CHECK_DRIVER(call) do { CUresult driver_status = (call); if (driver_status != CUDA_SUCCESS) { \
  fprintf(stderr, "CUDA driver error %d at %s:%d\n", (int)driver_status, __FILE__, __LINE__); exit(2); } } while (0)
#define CHECK_RTC(call) do { nvrtcResult rtc_status = (call); if (rtc_status != NVRTC_SUCCESS) { \
  fprintf(stderr, "NVRTC error: %s at %s:%d\n", nvrtcGetErrorString(rtc_status), __FILE__, __LINE__); exit(2); } } while (0)

static const char* kKernelSource = "${SOURCE}";
)";
  std::string main_body = R"(  const int n = ${N};
  CHECK_DRIVER(cuInit(0));
  CUdevice device;
  CHECK_DRIVER(cuDeviceGet(&device, 0));
  CUcontext context;
  CHECK_DRIVER(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_DRIVER(cuCtxSetCurrent(context));
  nvrtcProgram program;
  CHECK_RTC(nvrtcCreateProgram(&program, kKernelSource, "transform.cu", 0, nullptr, nullptr));
  nvrtcResult compiled = nvrtcCompileProgram(program, 0, nullptr);
  if (compiled != NVRTC_SUCCESS) {
    size_t log_size = 0;
    CHECK_RTC(nvrtcGetProgramLogSize(program, &log_size));
    std::vector<char> log(log_size + 1, '\0');
    CHECK_RTC(nvrtcGetProgramLog(program, log.data()));
    fprintf(stderr, "the kernel did not compile: %s\n", log.data());
    return finish(false);
  }
  size_t code_size = 0;
  CHECK_RTC(nvrtcGetPTXSize(program, &code_size));
  std::vector<char> code(code_size);
  CHECK_RTC(nvrtcGetPTX(program, code.data()));
  CHECK_RTC(nvrtcDestroyProgram(&program));
  CUmodule module;
  CHECK_DRIVER(cuModuleLoadData(&module, code.data()));
  CUfunction function;
  CHECK_DRIVER(cuModuleGetFunction(&function, module, "transform"));
${GLOBAL}
  std::vector<float> host(n), back(n);
  for (int i = 0; i < n; ++i) host[i] = (float)random_dyadic(3, 4);
  CUdeviceptr data;
  CHECK_DRIVER(cuMemAlloc(&data, n * sizeof(float)));
  CHECK_DRIVER(cuMemcpyHtoD(data, host.data(), n * sizeof(float)));
  float scale = ${SCALE};
  int count = n;
  void* arguments[] = {&data, &scale, &count};
  CHECK_DRIVER(cuLaunchKernel(function, (n + ${BLOCK} - 1) / ${BLOCK}, 1, 1, ${BLOCK}, 1, 1, 0, nullptr, arguments, nullptr));
  CHECK_DRIVER(cuCtxSynchronize());
  CHECK_DRIVER(cuMemcpyDtoH(back.data(), data, n * sizeof(float)));
  bool passed = true;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    double v = host[i];
    double want = ${HOST}${HOST_BIAS};
    if (!close_enough((double)back[i], want, 1e-6)) passed = false;
    sum += (double)back[i];
  }
  report_value("mean", sum / n);
  CHECK_DRIVER(cuMemFree(data));
  CHECK_DRIVER(cuModuleUnload(module));
  CHECK_DRIVER(cuDevicePrimaryCtxRelease(device));
  return finish(passed);
)";
  double scale = c.random.pick(std::vector<double>{0.5, 1.5, 2, -0.75});
  std::map<std::string, std::string> values = {
      {"SOURCE", source},
      {"GLOBAL", global_parameter ? R"(  CUdeviceptr bias_address;
  size_t bias_bytes = 0;
  CHECK_DRIVER(cuModuleGetGlobal(&bias_address, &bias_bytes, module, "bias"));
  float bias = 0.25f;
  if (bias_bytes != sizeof(float)) return finish(false);
  CHECK_DRIVER(cuMemcpyHtoD(bias_address, &bias, sizeof(float)));)"
                                  : ""},
      {"HOST", host},
      {"HOST_BIAS", global_parameter ? " + 0.25" : ""},
      {"SCALE", c.lit(scale)},
      {"N", str(n)}};
  c.parameters.update({{"operation", operation}, {"global", global_parameter}});
  std::string kernel_text = c.fill(kernels, values);
  std::string main_text = c.fill(main_body, values);
  // `scale` in the host formula is the program's float: keep the formula in double.
  return {kernel_text, main_text};
}

// ---------------------------------------------------------------------------------------------
// Warp votes: each warp's ballot of a predicate with its population count, first and last voting
// lanes and any/all; or a per-warp stream compaction that places each kept value at its ballot
// rank; or a neighbour exchange through shared memory fenced by __syncwarp. A share of the
// programs adds the sm_80 reduce and match intrinsics, which HIP 5.2 lacks: their translation is
// named unsupported (translate.unsupported.warp_*), and the CUDA program still enters the corpus.
DomainCode write_warp_votes(DomainContext& c) {
  int64_t n = c.pick_size({8192, 65536, 262144});
  std::string mask = c.random.pick(std::vector<std::string>{"0xffffffffu", "0xffffffff", "__activemask()"});
  std::string shape = c.random.pick(std::vector<std::string>{"summary", "compaction", "exchange"});
  bool sm80 = shape == "summary" && c.random.chance(0.4);
  int threshold = static_cast<int>(c.random.below(7)) - 2;
  int shift = 1 + static_cast<int>(c.random.below(31));
  std::string kernels;
  std::string check;
  if (shape == "summary") {
    kernels = R"(
__global__ void warp_votes(const int* in, unsigned* ballots, int* summary, int threshold) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int warp = i >> 5;
  int v = in[i];
  int vote = v > threshold;
  unsigned votes = __ballot_sync(${MASK}, vote);
  int any = __any_sync(${MASK}, vote);
  int all = __all_sync(${MASK}, vote);
${SM80_DEVICE}
  if (lane == 0) {
    ballots[warp] = votes;
    summary[warp * 6 + 0] = __popc(votes);
    summary[warp * 6 + 1] = __ffs((int)votes);
    summary[warp * 6 + 2] = __clz((int)votes);
    summary[warp * 6 + 3] = (any != 0) + 2 * (all != 0);
${SM80_STORE}
  }
}
)";
    check = R"(  std::vector<unsigned> ballots(warps);
  std::vector<int> summary(warps * 6);
  unsigned* d_ballots = (unsigned*)device_alloc(warps * sizeof(unsigned));
  int* d_summary = (int*)device_alloc(warps * 6 * sizeof(int));
  warp_votes<<<n / ${BLOCK}, ${BLOCK}>>>(d_in, d_ballots, d_summary, threshold);
  after_launch();
  download(ballots.data(), d_ballots, warps * sizeof(unsigned));
  download(summary.data(), d_summary, warps * 6 * sizeof(int));
  long long voters = 0;
  for (int w = 0; w < warps; ++w) {
    unsigned want = 0;
    int total = 0, peers = 0;
    for (int lane = 0; lane < 32; ++lane) {
      int v = in[w * 32 + lane];
      if (v > threshold) want |= 1u << lane;
      total += v;
      peers += (v & 3) == (in[w * 32] & 3);
    }
    int count = 0, first = 0, leading = 32;
    for (int lane = 0; lane < 32; ++lane) {
      if (want >> lane & 1u) {
        ++count;
        if (first == 0) first = lane + 1;
        leading = 31 - lane;
      }
    }
    int flags = (count > 0) + 2 * (count == 32);
    if (ballots[w] != want || summary[w * 6] != count || summary[w * 6 + 1] != first ||
        summary[w * 6 + 2] != leading || summary[w * 6 + 3] != flags) passed = false;
    if (${SM80} && (summary[w * 6 + 4] != total || summary[w * 6 + 5] != peers)) passed = false;
    voters += count;
  }
  report_count("voters", voters);
)";
  } else if (shape == "compaction") {
    kernels = R"(
__global__ void warp_compact(const int* in, int* kept, int* counts, int threshold) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = in[i];
  int vote = v > threshold;
  unsigned votes = __ballot_sync(${MASK}, vote);
  int rank = __popc(votes & ((1u << lane) - 1u));
  if (vote) kept[(i >> 5) * 32 + rank] = v;
  if (lane == 0) counts[i >> 5] = __popc(votes);
}
)";
    check = R"(  std::vector<int> kept(n), counts(warps);
  int* d_kept = (int*)device_alloc(n * sizeof(int));
  int* d_counts = (int*)device_alloc(warps * sizeof(int));
  warp_compact<<<n / ${BLOCK}, ${BLOCK}>>>(d_in, d_kept, d_counts, threshold);
  after_launch();
  download(kept.data(), d_kept, n * sizeof(int));
  download(counts.data(), d_counts, warps * sizeof(int));
  long long sum = 0;
  for (int w = 0; w < warps; ++w) {
    int slot = 0;
    for (int lane = 0; lane < 32; ++lane) {
      int v = in[w * 32 + lane];
      if (v <= threshold) continue;
      if (kept[w * 32 + slot] != v) passed = false;
      ++slot;
    }
    if (counts[w] != slot) passed = false;
    for (int j = 0; j < slot; ++j) sum += kept[w * 32 + j];
  }
  report_count("kept_sum", sum);
)";
  } else {
    kernels = R"(
__global__ void warp_exchange(const int* in, int* out) {
  __shared__ int staged[${BLOCK}];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = in[i];
  staged[threadIdx.x] = v;
  __syncwarp(${SYNC_MASK});
  int partner = staged[(threadIdx.x & ~31) + ((lane + ${SHIFT}) & 31)];
  int vote = partner > v;
  unsigned votes = __ballot_sync(${MASK}, vote);
  out[i] = partner - v + __popc(votes);
}
)";
    check = R"(  std::vector<int> out(n);
  int* d_out = (int*)device_alloc(n * sizeof(int));
  warp_exchange<<<n / ${BLOCK}, ${BLOCK}>>>(d_in, d_out);
  after_launch();
  download(out.data(), d_out, n * sizeof(int));
  long long sum = 0;
  for (int w = 0; w < warps; ++w) {
    int above = 0;
    for (int lane = 0; lane < 32; ++lane) above += in[w * 32 + ((lane + ${SHIFT}) & 31)] > in[w * 32 + lane];
    for (int lane = 0; lane < 32; ++lane) {
      int i = w * 32 + lane;
      int want = in[w * 32 + ((lane + ${SHIFT}) & 31)] - in[i] + above;
      if (out[i] != want) passed = false;
      sum += out[i];
    }
  }
  report_count("sum", sum);
)";
  }
  std::string main_body = R"(  const int n = ${N}, warps = n / 32, threshold = ${THRESHOLD};
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = random_int(-4, 8);
  int* d_in = (int*)device_alloc(n * sizeof(int));
  upload(d_in, in.data(), n * sizeof(int));
  bool passed = true;
${CHECK}  return finish(passed);
)";
  std::map<std::string, std::string> values = {
      {"MASK", mask},
      {"SYNC_MASK", c.random.chance(0.5) ? "" : "0xffffffffu"},
      {"SHIFT", str(shift)},
      {"THRESHOLD", str(threshold)},
      {"SM80", sm80 ? "true" : "false"},
      {"SM80_DEVICE", sm80 ? "  int total = __reduce_add_sync(" + mask + ", v);\n  unsigned peers = __match_any_sync(" + mask +
                                 ", v & 3);"
                           : ""},
      {"SM80_STORE", sm80 ? "    summary[warp * 6 + 4] = total;\n    summary[warp * 6 + 5] = __popc(peers);" : ""},
      {"N", str(n)}};
  values["CHECK"] = c.fill(check, values);
  c.parameters.update({{"shape", shape}, {"mask", mask}, {"sm80", sm80}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// What real programs ask the runtime before and after their work: driver and runtime versions,
// free memory, the device chosen by properties or its scheduling flags, a kernel's attributes
// and cache preference, the heap limit, a pointer's attributes; and the data moved through
// __device__ and __constant__ symbols (cudaMemcpyToSymbol/FromSymbol, their async forms, or a
// symbol's address), peer access and a peer copy, and a device reset before the work. Each answer is
// checked or sizes the launch; each symbol and the peer copy feed the result.
DomainCode write_runtime_queries(DomainContext& c) {
  int64_t n = c.pick_size({4096, 65536, 262144});
  bool choose = c.random.chance(0.5);
  bool symbol_address = c.random.chance(0.35);
  bool async_symbols = !symbol_address && c.random.chance(0.4);
  bool device_cache = c.random.chance(0.5);
  bool peer = c.random.chance(0.4);
  bool reset = c.random.chance(0.5);
  double scale = c.random.pick(std::vector<double>{0.5, 2, 1.5, -1});
  std::string kernels = R"(
__device__ float device_scale;
__constant__ float device_offsets[4];
__device__ unsigned int device_positive;

__global__ void scale_offset(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float y = in[i] * device_scale + device_offsets[i & 3];
    out[i] = y;
    if (y > 0.0f) atomicAdd(&device_positive, 1u);
  }
}
)";
  std::string select = choose ? R"(  cudaDeviceProp wanted;
  memset(&wanted, 0, sizeof(wanted));
  wanted.major = 7;
  int device = -1;
  CHECK(cudaChooseDevice(&device, &wanted));
  CHECK(cudaSetDevice(device));)"
                              : R"(  CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  unsigned int flags = 0;
  CHECK(cudaGetDeviceFlags(&flags));
  if ((flags & cudaDeviceScheduleBlockingSync) == 0) {
    fprintf(stderr, "scheduling flags not applied: %u\n", flags);
    return finish(false);
  }
  int device = 0;
  CHECK(cudaGetDevice(&device));)";
  std::string cache = device_cache ? "  CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));"
                                   : "  CHECK(cudaFuncSetCacheConfig(scale_offset, cudaFuncCachePreferL1));";
  std::string upload_symbols;
  if (symbol_address) {
    upload_symbols = R"(  float* scale_address = nullptr;
  CHECK(cudaGetSymbolAddress((void**)&scale_address, device_scale));
  CHECK(cudaMemcpy(scale_address, &scale, sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyToSymbol(device_offsets, offsets, sizeof(offsets)));
  CHECK(cudaMemcpyToSymbol(device_positive, &zero, sizeof(zero)));)";
  } else if (async_symbols) {
    upload_symbols = R"(  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaMemcpyToSymbolAsync(device_scale, &scale, sizeof(float), 0, cudaMemcpyHostToDevice, stream));
  CHECK(cudaMemcpyToSymbolAsync(device_offsets, offsets, sizeof(offsets), 0, cudaMemcpyHostToDevice, stream));
  CHECK(cudaMemcpyToSymbolAsync(device_positive, &zero, sizeof(zero), 0, cudaMemcpyHostToDevice, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamDestroy(stream));)";
  } else {
    upload_symbols = R"(  CHECK(cudaMemcpyToSymbol(device_scale, &scale, sizeof(float)));
  CHECK(cudaMemcpyToSymbol(device_offsets, offsets, sizeof(offsets)));
  CHECK(cudaMemcpyToSymbol(device_positive, &zero, sizeof(zero)));)";
  }
  std::string main_body = R"(  const int n = ${N};
  int driver_version = 0, runtime_version = 0;
  CHECK(cudaDriverGetVersion(&driver_version));
  CHECK(cudaRuntimeGetVersion(&runtime_version));
  if (driver_version <= 0 || runtime_version <= 0) {
    fprintf(stderr, "no versions: driver %d, runtime %d\n", driver_version, runtime_version);
    return finish(false);
  }
${SELECT}
${RESET}  size_t free_bytes = 0, total_bytes = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  size_t heap_bytes = 0;
  CHECK(cudaDeviceGetLimit(&heap_bytes, cudaLimitMallocHeapSize));
  if (free_bytes == 0 || free_bytes > total_bytes || heap_bytes == 0) {
    fprintf(stderr, "memory info: free %zu of %zu, heap %zu\n", free_bytes, total_bytes, heap_bytes);
    return finish(false);
  }
  // The buffers are processed in chunks that fit a quarter of the free memory.
  size_t fit = free_bytes / 4 / (2 * sizeof(float));
  int chunk = (int)(fit < (size_t)n ? fit : (size_t)n);
  cudaFuncAttributes attributes;
  CHECK(cudaFuncGetAttributes(&attributes, scale_offset));
  int block = ${BLOCK} < attributes.maxThreadsPerBlock ? ${BLOCK} : attributes.maxThreadsPerBlock;
${CACHE}
  const float scale = ${SCALE};
  const float offsets[4] = {${OFFSETS}};
  const unsigned int zero = 0;
${UPLOAD_SYMBOLS}
  std::vector<float> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = (float)random_dyadic(4, 4);
  float* d_in = (float*)device_alloc(n * sizeof(float));
  float* d_out = (float*)device_alloc(n * sizeof(float));
  cudaPointerAttributes where;
  CHECK(cudaPointerGetAttributes(&where, d_out));
  if (where.devicePointer != (void*)d_out || where.device != device) {
    fprintf(stderr, "pointer attributes do not name the output buffer\n");
    return finish(false);
  }
${UPLOAD_INPUT}
  for (int first = 0; first < n; first += chunk) {
    int count = n - first < chunk ? n - first : chunk;
    scale_offset<<<(count + block - 1) / block, block>>>(d_in + first, d_out + first, count);
    CHECK(cudaPeekAtLastError());
  }
  CHECK(cudaDeviceSynchronize());
  download(out.data(), d_out, n * sizeof(float));
  unsigned int positive = 0;
${DOWNLOAD_SYMBOL}
  bool passed = true;
  unsigned int want_positive = 0;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    double want = (double)in[i] * ${HOST_SCALE} + (double)offsets[i & 3];
    if (!close_enough((double)out[i], want, 1e-6)) passed = false;
    want_positive += want > 0;
    sum += (double)out[i];
  }
  if (positive != want_positive) passed = false;
)" + host_reports({{"value", "mean", "sum / n"}, {"count", "positive", "positive"}});
  std::vector<double> offsets;
  for (int k = 0; k < 4; ++k) offsets.push_back(c.random.pick(std::vector<double>{0, 0.25, -0.5, 1, 0.75, -1.25}));
  std::string offsets_text;
  for (double offset : offsets) offsets_text += (offsets_text.empty() ? "" : ", ") + std::to_string(offset) + "f";
  std::string download_symbol =
      async_symbols ? R"(  CHECK(cudaMemcpyFromSymbolAsync(&positive, device_positive, sizeof(positive), 0, cudaMemcpyDeviceToHost, 0));
  CHECK(cudaStreamSynchronize(0));)"
                    : "  CHECK(cudaMemcpyFromSymbol(&positive, device_positive, sizeof(positive)));";
  std::map<std::string, std::string> values = {{"SELECT", select},
                                               {"CACHE", cache},
                                               {"UPLOAD_SYMBOLS", upload_symbols},
                                               {"DOWNLOAD_SYMBOL", download_symbol},
                                               {"SCALE", std::to_string(scale) + "f"},
                                               {"HOST_SCALE", std::to_string(scale)},
                                               {"OFFSETS", offsets_text},
                                               {"N", str(n)}};
  // The input reaches d_in by a peer copy from a staging buffer (the same device is a valid peer),
  // after every pair of devices that can reach each other is given peer access.
  std::string upload_input = peer ? R"(  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  for (int other = 0; other < devices; ++other) {
    if (other == device) continue;
    int reachable = 0;
    CHECK(cudaDeviceCanAccessPeer(&reachable, device, other));
    if (reachable) {
      cudaError_t enabled = cudaDeviceEnablePeerAccess(other, 0);
      if (enabled != cudaSuccess && enabled != cudaErrorPeerAccessAlreadyEnabled) CHECK(enabled);
      (void)cudaGetLastError();
    }
  }
  float* d_staged = (float*)device_alloc(n * sizeof(float));
  upload(d_staged, in.data(), n * sizeof(float));
  CHECK(cudaMemcpyPeer(d_in, device, d_staged, device, n * sizeof(float)));)"
                                    : "  upload(d_in, in.data(), n * sizeof(float));";
  values["UPLOAD_INPUT"] = upload_input;
  // A reset of the chosen device before any allocation: the state an earlier user left is gone.
  values["RESET"] = reset ? "  CHECK(cudaDeviceReset());\n" : "";
  c.parameters.update({{"peer", peer}, {"reset", reset}, {"choose_device", choose},
                        {"symbols", symbol_address ? "address" : async_symbols ? "async" : "copy"},
                        {"device_cache", device_cache}});
  return fill_code(c, kernels, main_body, values, 1, 1);
}

}  // namespace

std::vector<DomainSpec> api_domains() {
  return {
      {"texture_sampling", {"float"}, {}, {128, 256}, write_texture_sampling},
      {"surface_roundtrip", {"float"}, {}, {128}, write_surface_roundtrip},
      {"stream_pipeline", {"float"}, {}, {128, 256, 512}, write_stream_pipeline},
      {"graph_replay", {"int"}, {}, {128, 256}, write_graph_replay},
      {"occupancy_sizing", {"float"}, {}, {128, 256}, write_occupancy_sizing},
      {"host_memory", {"int"}, {}, {128, 256}, write_host_memory},
      {"half_precision", {"float"}, {}, {128, 256}, write_half_precision},
      {"random_numbers", {"float"}, {}, {128, 256}, write_random_numbers},
      {"sparse_products", {"float"}, {}, {128, 256}, write_sparse_products},
      {"blas_products", {"float"}, {}, {128, 256}, write_blas_products},
      {"cooperative_tiles", {"int"}, {}, {64, 128, 256}, write_cooperative_tiles},
      {"streaming_hints", {"float"}, {}, {128, 256, 512}, write_streaming_hints},
      {"driver_buffers", {"float"}, {}, {128, 256}, write_driver_buffers},
      {"runtime_compiled", {"float"}, {}, {128, 256}, write_runtime_compiled},
      {"warp_votes", {"int"}, {}, {64, 128, 256}, write_warp_votes},
      {"runtime_queries", {"float"}, {}, {128, 256}, write_runtime_queries},
  };
}

}  // namespace tailforge
