// cooperative_groups::reduce for HIP 5.2, which has thread-block tiles but no reduce: a butterfly
// over the tile with shfl_xor, so every lane gets the result (as CUDA's cg::reduce returns it).
#pragma once
#ifndef TAILFORGE_CG_REDUCE_H
#define TAILFORGE_CG_REDUCE_H

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#include <hip/hip_cooperative_groups.h>

namespace cooperative_groups {

template <typename T> struct plus {
  __device__ T operator()(const T& a, const T& b) const { return a + b; }
};
template <typename T> struct less {
  __device__ T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <typename T> struct greater {
  __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <typename T> struct bit_and {
  __device__ T operator()(const T& a, const T& b) const { return a & b; }
};
template <typename T> struct bit_or {
  __device__ T operator()(const T& a, const T& b) const { return a | b; }
};
template <typename T> struct bit_xor {
  __device__ T operator()(const T& a, const T& b) const { return a ^ b; }
};

template <typename Tile, typename T, typename Op>
__device__ T reduce(const Tile& tile, T value, Op op) {
  for (unsigned int offset = tile.size() / 2; offset > 0; offset /= 2)
    value = op(value, tile.shfl_xor(value, offset));
  return value;
}

}  // namespace cooperative_groups
#else
#include <cooperative_groups/reduce.h>
#endif

#endif  // TAILFORGE_CG_REDUCE_H
