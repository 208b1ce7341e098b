// Nested fully unrolled loops, compiled to nested_loops.ptx for reroll_test.cpp:
// nvcc -ptx -arch=sm_90 nested_loops.cu -o nested_loops.ptx
__global__ void tile_transpose_f64(double* out, const double* in) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
#pragma unroll
    for (int c = 0; c < 4; ++c) out[base + r * 4 + c] = in[base + c * 4 + r] * 3.0;
  }
}

__global__ void tile_scale_i32(int* out, const int* in, int factor) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 64;
#pragma unroll
  for (int r = 0; r < 8; ++r) {
#pragma unroll
    for (int c = 0; c < 8; ++c) out[base + r * 8 + c] = in[base + r * 8 + c] * factor + r;
  }
}
