// The CUDA samples' helper_math.h for HIP: HIP's vector types already have the arithmetic
// operators it adds, so this keeps the functions: dot, length, normalize, clamp, lerp.
#pragma once
#ifndef TAILFORGE_HELPER_MATH_H
#define TAILFORGE_HELPER_MATH_H

#include <hip/hip_runtime.h>

#include <math.h>

inline __host__ __device__ float clamp(float value, float low, float high) { return fminf(fmaxf(value, low), high); }
inline __host__ __device__ float lerp(float a, float b, float t) { return a + t * (b - a); }

inline __host__ __device__ float dot(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }
inline __host__ __device__ float dot(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline __host__ __device__ float dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

template <typename Vector>
inline __host__ __device__ float length(Vector v) { return sqrtf(dot(v, v)); }

template <typename Vector>
inline __host__ __device__ Vector normalize(Vector v) { return v * (1.0f / sqrtf(dot(v, v))); }

inline __host__ __device__ float3 cross(float3 a, float3 b) {
  return make_float3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

#endif  // TAILFORGE_HELPER_MATH_H
