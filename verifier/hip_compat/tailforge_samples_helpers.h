// The CUDA samples' helper utilities (helper_cuda.h, helper_timer.h, helper_functions.h) written
// for HIP: error checks that name the failing call and exit, device selection, and the sdk*Timer
// stopwatch. Used when a translated tree includes those headers without carrying them.
#pragma once
#ifndef TAILFORGE_SAMPLES_HELPERS_H
#define TAILFORGE_SAMPLES_HELPERS_H

#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

template <typename Status>
void tailforge_check_hip(Status status, const char* call, const char* file, int line) {
  if (status == hipSuccess) return;
  std::fprintf(stderr, "HIP error at %s:%d code=%d(%s) \"%s\"\n", file, line, static_cast<int>(status),
               hipGetErrorString(status), call);
  std::exit(EXIT_FAILURE);
}
#define checkCudaErrors(call) tailforge_check_hip((call), #call, __FILE__, __LINE__)

inline void tailforge_last_hip_error(const char* message, const char* file, int line) {
  hipError_t status = hipGetLastError();
  if (status == hipSuccess) return;
  std::fprintf(stderr, "%s(%d): getLastCudaError() HIP error: %s: (%d) %s\n", file, line, message,
               static_cast<int>(status), hipGetErrorString(status));
  std::exit(EXIT_FAILURE);
}
#define getLastCudaError(message) tailforge_last_hip_error((message), __FILE__, __LINE__)

// Picks device 0 (the samples' choice when no -device=N is given) and reports it.
inline int findCudaDevice(int, const char**) {
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess || count == 0) {
    std::fprintf(stderr, "findCudaDevice: no HIP device\n");
    std::exit(EXIT_FAILURE);
  }
  checkCudaErrors(hipSetDevice(0));
  hipDeviceProp_t properties;
  checkCudaErrors(hipGetDeviceProperties(&properties, 0));
  std::printf("GPU Device 0: \"%s\" with compute capability %d.%d\n\n", properties.name, properties.major,
              properties.minor);
  return 0;
}
inline int findCudaDevice(int argc, char** argv) { return findCudaDevice(argc, const_cast<const char**>(argv)); }

// A stopwatch: elapsed milliseconds of the current run plus the finished ones, and their average.
class StopWatchInterface {
 public:
  void start() {
    started_ = Clock::now();
    running_ = true;
  }
  void stop() {
    if (!running_) return;
    total_ms_ += elapsed_ms();
    ++sessions_;
    running_ = false;
  }
  void reset() {
    total_ms_ = 0;
    sessions_ = 0;
    if (running_) started_ = Clock::now();
  }
  float getTime() const { return static_cast<float>(total_ms_ + (running_ ? elapsed_ms() : 0.0)); }
  float getAverageTime() const { return sessions_ > 0 ? static_cast<float>(total_ms_ / sessions_) : 0.0f; }

 private:
  using Clock = std::chrono::steady_clock;
  double elapsed_ms() const { return std::chrono::duration<double, std::milli>(Clock::now() - started_).count(); }
  Clock::time_point started_{};
  double total_ms_ = 0;
  int sessions_ = 0;
  bool running_ = false;
};

inline bool sdkCreateTimer(StopWatchInterface** timer) {
  *timer = new StopWatchInterface();
  return *timer != nullptr;
}
inline bool sdkDeleteTimer(StopWatchInterface** timer) {
  delete *timer;
  *timer = nullptr;
  return true;
}
inline bool sdkStartTimer(StopWatchInterface** timer) {
  if (*timer) (*timer)->start();
  return *timer != nullptr;
}
inline bool sdkStopTimer(StopWatchInterface** timer) {
  if (*timer) (*timer)->stop();
  return *timer != nullptr;
}
inline bool sdkResetTimer(StopWatchInterface** timer) {
  if (*timer) (*timer)->reset();
  return *timer != nullptr;
}
inline float sdkGetTimerValue(StopWatchInterface** timer) { return *timer ? (*timer)->getTime() : 0.0f; }
inline float sdkGetAverageTimerValue(StopWatchInterface** timer) { return *timer ? (*timer)->getAverageTime() : 0.0f; }

#endif  // TAILFORGE_SAMPLES_HELPERS_H
