// bfloat16 for HIP 5.2, which has only a minimal hip_bfloat16: __hip_bfloat16 and
// __hip_bfloat162 (the names later ROCm releases use) with CUDA's conversions and arithmetic.
// Values are 16-bit patterns; arithmetic is done in float and rounded back to nearest-even, as
// CUDA's bf16 operators do on hardware without native bf16 arithmetic.
#pragma once
#ifndef TAILFORGE_BF16_H
#define TAILFORGE_BF16_H

#include <hip/hip_runtime.h>

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#include <stdint.h>
#include <string.h>

struct __hip_bfloat16_raw {
  unsigned short x;
};

struct __hip_bfloat16 {
  unsigned short bits = 0;

  __hip_bfloat16() = default;
  __host__ __device__ __hip_bfloat16(float value) : bits(round_to_bits(value)) {}
  __host__ __device__ __hip_bfloat16(double value) : bits(round_to_bits(static_cast<float>(value))) {}
  __host__ __device__ __hip_bfloat16(int value) : bits(round_to_bits(static_cast<float>(value))) {}
  __host__ __device__ __hip_bfloat16(__hip_bfloat16_raw raw) : bits(raw.x) {}
  __host__ __device__ operator float() const {
    uint32_t word = static_cast<uint32_t>(bits) << 16;
    float value;
    memcpy(&value, &word, sizeof value);
    return value;
  }
  __host__ __device__ operator __hip_bfloat16_raw() const { return {bits}; }

  // Round to nearest, ties to even; NaN stays a (quiet) NaN.
  static __host__ __device__ unsigned short round_to_bits(float value) {
    uint32_t word;
    memcpy(&word, &value, sizeof word);
    if ((word & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((word >> 16) | 0x40u);
    word += 0x7fffu + ((word >> 16) & 1u);
    return static_cast<unsigned short>(word >> 16);
  }

  __host__ __device__ __hip_bfloat16& operator+=(__hip_bfloat16 other) { return *this = float(*this) + float(other); }
  __host__ __device__ __hip_bfloat16& operator-=(__hip_bfloat16 other) { return *this = float(*this) - float(other); }
  __host__ __device__ __hip_bfloat16& operator*=(__hip_bfloat16 other) { return *this = float(*this) * float(other); }
  __host__ __device__ __hip_bfloat16& operator/=(__hip_bfloat16 other) { return *this = float(*this) / float(other); }
};

inline __host__ __device__ __hip_bfloat16 operator+(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) + float(b); }
inline __host__ __device__ __hip_bfloat16 operator-(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) - float(b); }
inline __host__ __device__ __hip_bfloat16 operator*(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) * float(b); }
inline __host__ __device__ __hip_bfloat16 operator/(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) / float(b); }
inline __host__ __device__ __hip_bfloat16 operator-(__hip_bfloat16 a) { return -float(a); }

struct __hip_bfloat162 {
  __hip_bfloat16 x, y;
};

inline __host__ __device__ __hip_bfloat16 __float2bfloat16(float value) { return __hip_bfloat16(value); }
inline __host__ __device__ float __bfloat162float(__hip_bfloat16 value) { return float(value); }
inline __host__ __device__ __hip_bfloat162 __halves2bfloat162(__hip_bfloat16 low, __hip_bfloat16 high) { return {low, high}; }
inline __host__ __device__ __hip_bfloat162 __floats2bfloat162_rn(float low, float high) { return {low, high}; }
inline __host__ __device__ __hip_bfloat16 __ushort_as_bfloat16(unsigned short bits) { return __hip_bfloat16_raw{bits}; }
inline __host__ __device__ unsigned short __bfloat16_as_ushort(__hip_bfloat16 value) { return value.bits; }
inline __host__ __device__ float __low2float(__hip_bfloat162 pair) { return float(pair.x); }
inline __host__ __device__ float __high2float(__hip_bfloat162 pair) { return float(pair.y); }
#else
#include <cuda_bf16.h>
typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
typedef __nv_bfloat16_raw __hip_bfloat16_raw;
#endif

#endif  // TAILFORGE_BF16_H
