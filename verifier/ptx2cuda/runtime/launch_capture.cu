// tailforge launch capture: an LD_PRELOAD library for CUDA programs linked with -cudart shared.
// It records the first launch of every kernel (name, grid, block, dynamic shared memory, each
// parameter's bytes) and the device allocations its pointer parameters point into, before and
// after the kernel ran, so that a test of the kernel can be rebuilt from the files alone
// (launch_replay.cu). Built and used by verifier/ptx2cuda/launch_harness.cpp; not part of the
// tailforge binary.
//
// Files, in $TAILFORGE_CAPTURE_DIR (default "."), one folder per captured kernel:
//   launch_N/launch.txt     kernel NAME | grid X Y Z | block X Y Z | shared BYTES |
//                           param OFFSET SIZE HEX | buffer ADDRESS BYTES PARAMETER (one line each)
//   launch_N/buffer_K.in    the allocation's bytes before the launch
//   launch_N/buffer_K.out   its bytes after the launch
//   launch_N/global_NAME.in, .out   the same for each variable named in $TAILFORGE_CAPTURE_GLOBALS
//                           (space-separated __device__/__constant__ names) that the kernel's
//                           module holds
// $TAILFORGE_CAPTURE_MAX_BYTES (default 256 MiB) caps the bytes of one launch's allocations; a
// launch over it is recorded with "skipped over_cap" and no buffers.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using LaunchFunction = cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);

struct Allocation {
  CUdeviceptr base = 0;
  size_t bytes = 0;
  size_t parameter = 0;  // the first parameter pointing into it
  std::vector<unsigned char> before;
};

std::mutex capture_mutex;
std::set<std::string> captured_kernels;
int launches_written = 0;

std::string capture_dir() {
  const char* dir = std::getenv("TAILFORGE_CAPTURE_DIR");
  return dir && *dir ? dir : ".";
}

size_t max_capture_bytes() {
  const char* text = std::getenv("TAILFORGE_CAPTURE_MAX_BYTES");
  return text && *text ? std::strtoull(text, nullptr, 10) : size_t{256} << 20;
}

std::string hex(const unsigned char* bytes, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

bool write_file(const std::string& path, const std::vector<unsigned char>& bytes) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return false;
  bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  return std::fclose(file) == 0 && ok;
}

// The device allocations that the kernel's 8-byte parameters point into, each once.
std::vector<Allocation> pointed_allocations(const std::vector<std::vector<unsigned char>>& params) {
  std::vector<Allocation> allocations;
  for (size_t index = 0; index < params.size(); ++index) {
    const std::vector<unsigned char>& param = params[index];
    if (param.size() != sizeof(CUdeviceptr)) continue;
    CUdeviceptr value = 0;
    std::memcpy(&value, param.data(), sizeof value);
    Allocation allocation;
    allocation.parameter = index;
    if (value == 0 || cuMemGetAddressRange(&allocation.base, &allocation.bytes, value) != CUDA_SUCCESS) continue;
    bool known = false;
    for (const Allocation& seen : allocations) known = known || seen.base == allocation.base;
    if (!known) allocations.push_back(allocation);
  }
  return allocations;
}

std::vector<std::string> global_names() {
  std::vector<std::string> names;
  const char* text = std::getenv("TAILFORGE_CAPTURE_GLOBALS");
  std::string name;
  for (const char* c = text ? text : ""; ; ++c) {
    if (*c && *c != ' ') {
      name += *c;
      continue;
    }
    if (!name.empty()) names.push_back(name);
    name.clear();
    if (!*c) break;
  }
  return names;
}

// The named module variables of the kernel's library, as allocations to record.
std::vector<std::pair<std::string, Allocation>> module_globals(cudaKernel_t kernel) {
  std::vector<std::pair<std::string, Allocation>> globals;
  CUlibrary library;
  if (cuKernelGetLibrary(&library, reinterpret_cast<CUkernel>(kernel)) != CUDA_SUCCESS) return globals;
  for (const std::string& name : global_names()) {
    Allocation allocation;
    if (cuLibraryGetGlobal(&allocation.base, &allocation.bytes, library, name.c_str()) == CUDA_SUCCESS) {
      globals.emplace_back(name, allocation);
    }
  }
  return globals;
}

bool copy_out(const Allocation& allocation, std::vector<unsigned char>& bytes) {
  bytes.resize(allocation.bytes);
  return cuMemcpyDtoH(bytes.data(), allocation.base, allocation.bytes) == CUDA_SUCCESS;
}

cudaError_t capture_launch(LaunchFunction launch, cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                           size_t shared_bytes, cudaStream_t stream) {
  const char* name = nullptr;
  if (cuKernelGetName(&name, reinterpret_cast<CUkernel>(kernel)) != CUDA_SUCCESS || !name) {
    return launch(kernel, grid, block, args, shared_bytes, stream);
  }
  std::lock_guard<std::mutex> lock(capture_mutex);
  if (!captured_kernels.insert(name).second) return launch(kernel, grid, block, args, shared_bytes, stream);

  std::vector<std::vector<unsigned char>> params;
  std::vector<size_t> offsets;
  for (size_t index = 0;; ++index) {
    size_t offset = 0, size = 0;
    if (cuKernelGetParamInfo(reinterpret_cast<CUkernel>(kernel), index, &offset, &size) != CUDA_SUCCESS) break;
    const unsigned char* bytes = static_cast<const unsigned char*>(args[index]);
    params.emplace_back(bytes, bytes + size);
    offsets.push_back(offset);
  }
  cudaDeviceSynchronize();
  std::vector<Allocation> allocations = pointed_allocations(params);
  std::vector<std::pair<std::string, Allocation>> globals = module_globals(kernel);
  size_t total = 0;
  for (const Allocation& allocation : allocations) total += allocation.bytes;
  for (const auto& global : globals) total += global.second.bytes;
  bool over_cap = total > max_capture_bytes();
  bool copied = true;
  if (!over_cap) {
    for (Allocation& allocation : allocations) copied = copy_out(allocation, allocation.before) && copied;
    for (auto& global : globals) copied = copy_out(global.second, global.second.before) && copied;
  }

  cudaError_t result = launch(kernel, grid, block, args, shared_bytes, stream);
  cudaError_t finished = cudaDeviceSynchronize();

  std::string dir = capture_dir() + "/launch_" + std::to_string(launches_written++);
  mkdir(dir.c_str(), 0755);
  FILE* manifest = std::fopen((dir + "/launch.txt").c_str(), "w");
  if (!manifest) return result;
  std::fprintf(manifest, "kernel %s\ngrid %u %u %u\nblock %u %u %u\nshared %zu\n", name, grid.x, grid.y, grid.z,
               block.x, block.y, block.z, shared_bytes);
  for (size_t i = 0; i < params.size(); ++i) {
    std::fprintf(manifest, "param %zu %zu %s\n", offsets[i], params[i].size(), hex(params[i].data(), params[i].size()).c_str());
  }
  if (over_cap) std::fprintf(manifest, "skipped over_cap %zu\n", total);
  if (!copied) std::fprintf(manifest, "skipped copy_failed\n");
  if (result != cudaSuccess || finished != cudaSuccess) {
    std::fprintf(manifest, "skipped launch_failed %s\n", cudaGetErrorName(result != cudaSuccess ? result : finished));
  }
  bool keep_buffers = !over_cap && copied && result == cudaSuccess && finished == cudaSuccess;
  for (size_t k = 0; keep_buffers && k < allocations.size(); ++k) {
    std::vector<unsigned char> after;
    std::string stem = dir + "/buffer_" + std::to_string(k);
    if (!copy_out(allocations[k], after) || !write_file(stem + ".in", allocations[k].before) ||
        !write_file(stem + ".out", after)) {
      std::fprintf(manifest, "skipped write_failed\n");
      break;
    }
    std::fprintf(manifest, "buffer %llu %zu %zu\n", static_cast<unsigned long long>(allocations[k].base),
                 allocations[k].bytes, allocations[k].parameter);
  }
  for (size_t g = 0; keep_buffers && g < globals.size(); ++g) {
    std::vector<unsigned char> after;
    std::string stem = dir + "/global_" + globals[g].first;
    if (!copy_out(globals[g].second, after) || !write_file(stem + ".in", globals[g].second.before) ||
        !write_file(stem + ".out", after)) {
      std::fprintf(manifest, "skipped write_failed\n");
      break;
    }
    std::fprintf(manifest, "global %s %zu\n", globals[g].first.c_str(), globals[g].second.bytes);
  }
  std::fclose(manifest);
  return result;
}

LaunchFunction next_launch(const char* symbol) {
  return reinterpret_cast<LaunchFunction>(dlsym(RTLD_NEXT, symbol));
}

}  // namespace

// The entry points that nvcc's <<<...>>> stubs call (CUDA 12.x and 13).
extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                                          cudaStream_t stream) {
  static LaunchFunction next = next_launch("__cudaLaunchKernel");
  if (!next) return cudaErrorNotSupported;
  return capture_launch(next, kernel, grid, block, args, shared_bytes, stream);
}

extern "C" cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                               size_t shared_bytes, cudaStream_t stream) {
  static LaunchFunction next = next_launch("__cudaLaunchKernel_ptsz");
  if (!next) return cudaErrorNotSupported;
  return capture_launch(next, kernel, grid, block, args, shared_bytes, stream);
}
