// The launch.txt format that launch_capture.cu writes, read by launch_replay.cu and by tailforge
// (verifier/ptx2cuda/launch_harness.cpp): one header for both, with no CUDA dependency.
//   kernel NAME | grid X Y Z | block X Y Z | shared BYTES | param OFFSET SIZE HEX (each parameter)
//   | buffer ADDRESS BYTES PARAMETER (each recorded allocation, and the first parameter pointing
//   into it) | global NAME BYTES (each recorded __device__/__constant__ variable) | skipped WHY
//   (no buffers were kept)
#pragma once

#include <cstdlib>
#include <istream>
#include <sstream>
#include <string>
#include <vector>

namespace tailforge_launch {

struct RecordedParameter {
  size_t offset = 0;
  std::vector<unsigned char> bytes;
};

struct RecordedBuffer {
  unsigned long long address = 0;
  size_t bytes = 0;
  int parameter = -1;  // the first parameter that points into it
};

struct RecordedGlobal {
  std::string name;
  size_t bytes = 0;
};

struct RecordedLaunch {
  std::string kernel;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t shared_bytes = 0;
  std::vector<RecordedParameter> params;
  std::vector<RecordedBuffer> buffers;
  std::vector<RecordedGlobal> globals;
  std::string skipped;
};

// False when a parameter's hex does not match its size or no kernel is named.
inline bool parse_launch(std::istream& in, RecordedLaunch& launch) {
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "kernel") fields >> launch.kernel;
    if (key == "grid") fields >> launch.grid[0] >> launch.grid[1] >> launch.grid[2];
    if (key == "block") fields >> launch.block[0] >> launch.block[1] >> launch.block[2];
    if (key == "shared") fields >> launch.shared_bytes;
    if (key == "skipped") std::getline(fields >> std::ws, launch.skipped);
    if (key == "param") {
      RecordedParameter param;
      size_t size = 0;
      std::string hex;
      fields >> param.offset >> size >> hex;
      for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        param.bytes.push_back(static_cast<unsigned char>(std::strtoul(hex.substr(i, 2).c_str(), nullptr, 16)));
      }
      if (param.bytes.size() != size) return false;
      launch.params.push_back(param);
    }
    if (key == "global") {
      RecordedGlobal global;
      fields >> global.name >> global.bytes;
      launch.globals.push_back(global);
    }
    if (key == "buffer") {
      RecordedBuffer buffer;
      fields >> buffer.address >> buffer.bytes;
      if (!(fields >> buffer.parameter)) buffer.parameter = -1;
      launch.buffers.push_back(buffer);
    }
  }
  return !launch.kernel.empty();
}

}  // namespace tailforge_launch
