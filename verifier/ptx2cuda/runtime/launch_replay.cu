// tailforge launch replay: runs one kernel of a compiled module (a cubin or PTX) on a launch
// recorded by launch_capture.cu: the same grid, block, dynamic shared memory and parameters, its
// pointer parameters moved to fresh copies of the recorded input allocations, then writes each
// allocation after the kernel ran. Built and used by verifier/ptx2cuda/launch_harness.cpp.
//
//   launch_replay MODULE LAUNCH_DIR OUT_DIR     -> OUT_DIR/buffer_K.out, OUT_DIR/global_NAME.out
//
// Exit status: 0 ran; 2 bad usage or launch files; 3 the module does not load or lacks the
// kernel; 4 the kernel's parameters differ from the recorded ones; 5 the launch was refused;
// 6 the kernel faulted while running. One line on stderr says which, with CUDA's error name.
#include <cuda.h>

#include "launch_format.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Launch : tailforge_launch::RecordedLaunch {
  std::vector<CUdeviceptr> copies;  // one per buffer
};

int fail(int status, const std::string& what, CUresult error = CUDA_SUCCESS) {
  const char* name = nullptr;
  if (error != CUDA_SUCCESS) cuGetErrorName(error, &name);
  std::fprintf(stderr, "launch_replay: %s%s%s\n", what.c_str(), name ? ": " : "", name ? name : "");
  return status;
}

std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

// A recorded pointer into a recorded allocation becomes the same offset into its copy.
void relocate(tailforge_launch::RecordedParameter& param, const Launch& launch) {
  if (param.bytes.size() != sizeof(unsigned long long)) return;
  unsigned long long value = 0;
  std::memcpy(&value, param.bytes.data(), sizeof value);
  for (size_t k = 0; k < launch.buffers.size(); ++k) {
    const tailforge_launch::RecordedBuffer& buffer = launch.buffers[k];
    if (value >= buffer.address && value < buffer.address + buffer.bytes) {
      unsigned long long moved = launch.copies[k] + (value - buffer.address);
      std::memcpy(param.bytes.data(), &moved, sizeof moved);
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail(2, "usage: launch_replay MODULE LAUNCH_DIR OUT_DIR");
  std::string module_path = argv[1], launch_dir = argv[2], out_dir = argv[3];
  Launch launch;
  std::ifstream recorded(launch_dir + "/launch.txt");
  if (!tailforge_launch::parse_launch(recorded, launch)) return fail(2, "cannot read " + launch_dir + "/launch.txt");
  if (!launch.skipped.empty()) return fail(2, "the recorded launch has no buffers:" + launch.skipped);

  CUdevice device;
  CUcontext context;
  CUresult error = cuInit(0);
  if (error == CUDA_SUCCESS) error = cuDeviceGet(&device, 0);
  if (error == CUDA_SUCCESS) error = cuDevicePrimaryCtxRetain(&context, device);
  if (error == CUDA_SUCCESS) error = cuCtxSetCurrent(context);
  if (error != CUDA_SUCCESS) return fail(2, "no CUDA device", error);

  CUmodule module;
  if ((error = cuModuleLoad(&module, module_path.c_str())) != CUDA_SUCCESS) {
    return fail(3, "module " + module_path + " does not load", error);
  }
  CUfunction function;
  if ((error = cuModuleGetFunction(&function, module, launch.kernel.c_str())) != CUDA_SUCCESS) {
    return fail(3, "no kernel " + launch.kernel + " in " + module_path, error);
  }
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    bool has = cuFuncGetParamInfo(function, i, &offset, &size) == CUDA_SUCCESS;
    if (!has && i == launch.params.size()) break;
    if (!has || i >= launch.params.size() || size != launch.params[i].bytes.size() || offset != launch.params[i].offset) {
      return fail(4, "the kernel's parameter " + std::to_string(i) + " differs from the recorded launch");
    }
  }

  launch.copies.resize(launch.buffers.size());
  for (size_t k = 0; k < launch.buffers.size(); ++k) {
    std::vector<unsigned char> input = read_bytes(launch_dir + "/buffer_" + std::to_string(k) + ".in");
    if (input.size() != launch.buffers[k].bytes) return fail(2, "buffer_" + std::to_string(k) + ".in has the wrong size");
    if ((error = cuMemAlloc(&launch.copies[k], input.size())) != CUDA_SUCCESS) return fail(5, "cuMemAlloc", error);
    if ((error = cuMemcpyHtoD(launch.copies[k], input.data(), input.size())) != CUDA_SUCCESS) {
      return fail(5, "cuMemcpyHtoD", error);
    }
  }
  // Module variables the candidate declares start as recorded; one it lacks is not its business.
  std::vector<CUdeviceptr> globals(launch.globals.size(), 0);
  for (size_t g = 0; g < launch.globals.size(); ++g) {
    const tailforge_launch::RecordedGlobal& global = launch.globals[g];
    size_t bytes = 0;
    if (cuModuleGetGlobal(&globals[g], &bytes, module, global.name.c_str()) != CUDA_SUCCESS) continue;
    if (bytes != global.bytes) return fail(4, "the candidate's " + global.name + " differs in size from the recorded one");
    std::vector<unsigned char> input = read_bytes(launch_dir + "/global_" + global.name + ".in");
    if (input.size() != bytes) return fail(2, "global_" + global.name + ".in has the wrong size");
    if ((error = cuMemcpyHtoD(globals[g], input.data(), bytes)) != CUDA_SUCCESS) return fail(5, "cuMemcpyHtoD", error);
  }
  std::vector<void*> pointers;
  for (tailforge_launch::RecordedParameter& param : launch.params) {
    relocate(param, launch);
    pointers.push_back(param.bytes.data());
  }
  if (launch.shared_bytes > 48 * 1024) {
    cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(launch.shared_bytes));
  }
  error = cuLaunchKernel(function, launch.grid[0], launch.grid[1], launch.grid[2], launch.block[0], launch.block[1],
                         launch.block[2], static_cast<unsigned>(launch.shared_bytes), nullptr, pointers.data(), nullptr);
  if (error != CUDA_SUCCESS) return fail(5, "the launch of " + launch.kernel + " was refused", error);
  if ((error = cuCtxSynchronize()) != CUDA_SUCCESS) return fail(6, launch.kernel + " faulted", error);

  for (size_t k = 0; k < launch.buffers.size(); ++k) {
    std::vector<unsigned char> output(launch.buffers[k].bytes);
    if ((error = cuMemcpyDtoH(output.data(), launch.copies[k], output.size())) != CUDA_SUCCESS) {
      return fail(6, "cuMemcpyDtoH", error);
    }
    std::ofstream out(out_dir + "/buffer_" + std::to_string(k) + ".out", std::ios::binary);
    out.write(reinterpret_cast<const char*>(output.data()), static_cast<std::streamsize>(output.size()));
    if (!out) return fail(2, "cannot write " + out_dir);
  }
  for (size_t g = 0; g < launch.globals.size(); ++g) {
    if (!globals[g]) continue;
    std::vector<unsigned char> output(launch.globals[g].bytes);
    if ((error = cuMemcpyDtoH(output.data(), globals[g], output.size())) != CUDA_SUCCESS) return fail(6, "cuMemcpyDtoH", error);
    std::ofstream out(out_dir + "/global_" + launch.globals[g].name + ".out", std::ios::binary);
    out.write(reinterpret_cast<const char*>(output.data()), static_cast<std::streamsize>(output.size()));
    if (!out) return fail(2, "cannot write " + out_dir);
  }
  return 0;
}
