#!/usr/bin/env bash
# Re-captures the real diagnostics under tests/data/diagnostics/: every case runs a real tool
# (llvm-mc-19, nvcc/ptxas, hipcc/clang, gcc/as/ld, bwrap, a test program) on a tiny broken input
# and stores {"name","stage","diagnostics","exit_code","signal","timed_out","expected_category"}.
#   capture.sh [OUTDIR]          CPU cases (this machine), numbered from 01
#   capture.sh --gpu OUTDIR BIN  GPU cases: runs the CUDA programs prebuilt in BIN (see build_gpu)
#   capture.sh --build-gpu BIN   compiles the GPU case programs into BIN with nvcc
set -u
export PATH="$PATH:/usr/local/cuda/bin"
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d)"
chmod 755 "$WORK"  # the process-limit case runs as nobody
trap 'rm -rf "$WORK"' EXIT
N=0
OUT="$HERE"

# capture NAME STAGE EXPECTED TIMEOUT CMD...: runs CMD in $WORK, records stdout+stderr and status.
capture() {
  local name="$1" stage="$2" expected="$3" limit="$4"
  shift 4
  local text rc signal=null timed_out=false exit_code
  text="$(cd "$WORK" && timeout -s TERM "$limit" "$@" 2>&1)"
  rc=$?
  exit_code=$rc
  if [ "$rc" -eq 124 ]; then
    timed_out=true; signal=15; exit_code=null
  elif [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
    signal=$((rc - 128)); exit_code=null
  fi
  N=$((N + 1))
  local file
  file="$(printf '%s/%02d.json' "$OUT" "$N")"
  jq -n --arg name "$name" --arg stage "$stage" --arg diagnostics "$text" \
    --argjson exit_code "$exit_code" --argjson signal "$signal" --argjson timed_out "$timed_out" \
    --arg expected "$expected" \
    '{name:$name, stage:$stage, diagnostics:$diagnostics, exit_code:$exit_code, signal:$signal,
      timed_out:$timed_out, expected_category:$expected}' >"$file"
  echo "$file: $name rc=$rc"
}

put() { printf '%b\n' "$2" >"$WORK/$1"; }

MC=(llvm-mc-19 --triple=amdgcn-amd-amdhsa --mcpu=gfx1100 -filetype=obj -o /dev/null)
asm_case() {  # asm_case NAME EXPECTED TEXT
  put "$1.s" "$3"
  capture "$1" amd.assemble.gfx1100 "$2" 20 "${MC[@]}" "$1.s"
}

cpu_cases() {
  # --- the six CASS appendix assembly failures, then more llvm-mc messages ---
  asm_case register_alignment amd.asm.register_alignment 's_load_b64 s[3:4], s[0:1], 0x0'
  asm_case vgpr_bank amd.asm.vgpr_bank 'v_dual_mul_f32 v0, v1, v2 :: v_dual_mul_f32 v3, v5, v6'
  asm_case hallucinated_instruction amd.asm.invalid_instruction 'sumba_send_msg_b32 s0'
  asm_case two_literals amd.asm.literal_limit 's_cselect_b32 s0, 0x12345, 0x54321'
  asm_case undefined_label amd.asm.undefined_label 's_branch missing_label'
  asm_case imm64 amd.asm.operand_type 's_mov_b64 s[0:1], 0x123456789abcdef0'
  asm_case vgpr_bank_src1 amd.asm.vgpr_bank 'v_dual_mul_f32 v0, v1, v2 :: v_dual_mul_f32 v3, v4, v6'
  asm_case dual_dst_parity amd.asm.vgpr_bank 'v_dual_add_f32 v0, v1, v2 :: v_dual_mul_f32 v2, v5, v4'
  asm_case not_on_gpu amd.asm.invalid_instruction 'v_mac_f32 v0, v1, v2'
  asm_case float_literals amd.asm.literal_limit 'v_fma_f32 v0, v1, 1.5, 2.5'
  asm_case unaligned_load amd.asm.register_alignment 's_load_b32 s0, s[1:2], 0x0'
  asm_case vgpr_as_sdst amd.asm.operand_type 's_add_u32 v0, s1, s2'
  asm_case offset_range amd.asm.operand_constraint 'global_load_b32 v0, v[1:2], off offset:99999999'
  asm_case waitcnt_range amd.asm.operand_constraint 's_waitcnt vmcnt(999)'
  asm_case ds_offset amd.asm.operand_constraint 'ds_load_b32 v0, v1 offset:70000'
  asm_case unknown_directive amd.asm.directive '.amdhsa_bogus 1'
  asm_case target_mismatch amd.asm.directive '.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"'
  asm_case kernel_descriptor amd.asm.directive '.text\n.p2align 8\n.amdhsa_kernel k\n.amdhsa_next_free_vgpr 1\n.end_amdhsa_kernel'

  # --- nvcc / ptxas ---
  put undefined.cu '__global__ void k(float* a) { a[threadIdx.x] = undefined_thing; }'
  capture undefined_identifier nvidia.ptx nvidia.compile.undefined_identifier 120 nvcc -ptx -arch=sm_80 undefined.cu -o undefined.ptx
  put syntax.cu '__global__ void k(float* a) { a[threadIdx.x] = 1.0f }'
  capture missing_semicolon nvidia.ptx nvidia.compile.syntax 120 nvcc -ptx -arch=sm_80 syntax.cu -o syntax.ptx
  put type.cu 'struct P { int x; };\n__global__ void k(float* a) { P p = a; a[0] = p.x; }'
  capture bad_conversion nvidia.ptx nvidia.compile.type 120 nvcc -ptx -arch=sm_80 type.cu -o type.ptx
  put host.cu 'int host_only(int x) { return x + 1; }\n__global__ void k(int* a) { a[0] = host_only(a[1]); }'
  capture host_from_device nvidia.ptx nvidia.compile.host_device_call 120 nvcc -ptx -arch=sm_80 host.cu -o host.ptx
  put args.cu '__device__ float f(float a, float b) { return a + b; }\n__global__ void k(float* a) { a[0] = f(a, 1, 2, 3); }'
  capture argument_mismatch nvidia.ptx nvidia.compile.type 120 nvcc -ptx -arch=sm_80 args.cu -o args.ptx
  put include.cu '#include "missing_header.cuh"\n__global__ void k(float* a) { a[0] = 1; }'
  capture missing_header nvidia.ptx nvidia.compile.missing_header 120 nvcc -ptx -arch=sm_80 include.cu -o include.ptx
  put overload.cu '__device__ int g(int a) { return a; }\n__device__ int g(float a) { return 2; }\n__global__ void k(int* a) { a[0] = g(1u); }'
  capture ambiguous_overload nvidia.ptx nvidia.compile.no_matching_function 120 nvcc -ptx -arch=sm_80 overload.cu -o overload.ptx
  put shared.cu '__global__ void k(float* a) { __shared__ float big[60000]; big[threadIdx.x] = a[0]; __syncthreads(); a[threadIdx.x] = big[threadIdx.x + 1]; }'
  capture too_much_shared nvidia.cubin.sm_80 nvidia.compile.too_many_resources 120 nvcc -cubin -arch=sm_80 shared.cu -o shared.cubin
  put badptx.cu '__global__ void k(int* a) { int r; asm("bogus.instr.u32 %0, 1;" : "=r"(r)); a[0] = r; }'
  capture bad_inline_ptx nvidia.cubin.sm_80 nvidia.compile.ptxas 120 nvcc -cubin -arch=sm_80 badptx.cu -o badptx.cubin
  put atomic.cu '__global__ void k(short* a) { atomicAdd(a, (short)1); }'
  capture atomic_no_overload nvidia.ptx nvidia.compile.no_matching_function 120 nvcc -ptx -arch=sm_80 atomic.cu -o atomic.ptx
  put arch.cu '__global__ void k(float* a) { a[0] = 1; }'
  capture unsupported_arch nvidia.cubin.sm_80 nvidia.compile.unsupported_arch 60 nvcc -cubin -arch=sm_10 arch.cu -o arch.cubin

  # --- hipcc / clang (HIP device compile) ---
  HIP=(hipcc --offload-arch=gfx1100 -nogpulib --cuda-device-only -S)
  put und.hip '#include <hip/hip_runtime.h>\n__global__ void k(float* a) { a[threadIdx.x] = missing_var; }'
  capture hip_undeclared amd.asm.gfx1100 amd.compile.undeclared_identifier 120 "${HIP[@]}" und.hip -o und.s
  put nomatch.hip '#include <hip/hip_runtime.h>\n__device__ float f(float a, float b) { return a + b; }\n__global__ void k(float* a) { a[0] = f(a); }'
  capture hip_no_matching amd.asm.gfx1100 amd.compile.no_matching_function 120 "${HIP[@]}" nomatch.hip -o nomatch.s
  put builtin.hip '#include <hip/hip_runtime.h>\n__global__ void k(float* a) { a[0] = __builtin_amdgcn_bogus_thing(a[1]); }'
  capture hip_unknown_builtin amd.asm.gfx1100 amd.compile.unsupported_builtin 120 "${HIP[@]}" builtin.hip -o builtin.s
  put ptxasm.hip '#include <hip/hip_runtime.h>\n__global__ void k(unsigned* a) { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); a[0] = r; }'
  (cd "$WORK" && timeout 120 "${HIP[@]}" ptxasm.hip -o ptxasm.s 2>/dev/null)
  capture hip_inline_ptx amd.assemble.gfx1100 translate.unsupported.inline_ptx 20 "${MC[@]}" ptxasm.s
  put ok.hip '#include <hip/hip_runtime.h>\n__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }'
  capture hip_missing_bitcode amd.asm.gfx1100 amd.compile.missing_bitcode 120 hipcc --offload-arch=gfx1100 --cuda-device-only -S ok.hip -o ok.s
  put shfl.hip '#include <hip/hip_runtime.h>\n__global__ void k(float* a) { a[0] = __shfl_down_sync(0xffffffff, a[1], 1); }'
  capture hip_cuda_only_intrinsic amd.asm.gfx1100 amd.compile.undeclared_identifier 120 "${HIP[@]}" shfl.hip -o shfl.s
  put wmma.hip '#include <hip/hip_runtime.h>\n#include <mma.h>\nusing namespace nvcuda;\n__global__ void k(half* a) { wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> f; }'
  capture hip_wmma amd.asm.gfx1100 translate.unsupported.wmma 120 "${HIP[@]}" wmma.hip -o wmma.s
  put grid.hip '#include <hip/hip_runtime.h>\n#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void k(float* a) { cg::grid_group g = cg::this_grid(); g.sync(); a[0] = 1; }'
  capture hip_cooperative_groups amd.asm.gfx1100 translate.unsupported.cooperative_groups 120 "${HIP[@]}" grid.hip -o grid.s
  put c19.hip '__global__ void k(float* a) { a[threadIdx.x] = nope(a[0]); }'
  capture clang19_undeclared_function amd.asm.gfx1100 amd.compile.undeclared_identifier 120 clang-19 -x hip --offload-arch=gfx1100 -nogpulib --cuda-device-only -S c19.hip -o c19.s

  # --- gcc / as / ld (c2x86) ---
  put syntax.c 'int f(int x) { return x + 1 }'
  capture c_syntax x86.asm c2x86.compile.syntax 60 gcc -O0 -fno-jump-tables -S syntax.c -o syntax.s
  put undeclared.c 'int f(int x) { return x + y; }'
  capture c_undeclared x86.asm c2x86.compile.undeclared 60 gcc -O0 -fno-jump-tables -S undeclared.c -o undeclared.s
  put types.c 'struct s { int a; };\nint f(struct s v) { return v * 2; }'
  capture c_type x86.asm c2x86.compile.type 60 gcc -O0 -fno-jump-tables -S types.c -o types.s
  put badinsn.s '.text\n.globl f\nf:\n  movzz %eax, %ebx\n  ret'
  capture as_bad_instruction x86.assemble c2x86.assemble.invalid_instruction 60 as badinsn.s -o badinsn.o
  put badop.s '.text\n.globl f\nf:\n  movl %rax, %ebx\n  ret'
  capture as_operand x86.assemble c2x86.assemble.operand_mismatch 60 as badop.s -o badop.o
  put driver.c 'int f(int);\nint main(void) { return f(1) == 2 ? 0 : 1; }'
  put nofunc.c 'int g(int x) { return x + 1; }'
  capture ld_undefined x86.link c2x86.link.undefined_reference 60 gcc driver.c nofunc.c -o linked
  put twomain.c 'int f(int x) { return x + 1; }\nint main(void) { return 0; }'
  capture ld_multiple_definition x86.link c2x86.link.multiple_definition 60 gcc driver.c twomain.c -o linked
  put io.c '#include <stdio.h>\nint f(int x) { return x * 2; }\nint main(void) {\n  int in[3] = {1, 2, 3}, want[3] = {2, 5, 6}, bad = 0;\n  for (int i = 0; i < 3; ++i) if (f(in[i]) != want[i]) { printf("io test %d failed: f(%d) expected %d, got %d\\n", i, in[i], want[i], f(in[i])); bad = 1; }\n  return bad; }'
  gcc -O0 -o "$WORK/io" "$WORK/io.c"
  capture io_mismatch x86.run c2x86.io_mismatch 10 ./io

  # --- test runs: signals, timeouts, self checks, CUDA errors ---
  put segv.c 'int main(void) { volatile int* p = (int*)16; return *p; }'
  put abrt.c '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { fprintf(stderr, "free(): invalid pointer\\n"); abort(); }'
  put fpe.c 'int main(int argc, char** argv) { (void)argv; volatile int z = argc - 1; return 10 / z; }'
  put kill.c '#include <signal.h>\n#include <unistd.h>\nint main(void) { kill(getpid(), SIGKILL); return 0; }'
  put loop.c 'int main(void) { volatile unsigned long i = 0; for (;;) ++i; }'
  put selfcheck.c '#include <stdio.h>\nint main(void) { float got = 3.25f, want = 3.5f; printf("result[7] = %f\\n", got);\n if (got != want) { printf("SELF-CHECK FAILED: result[7] = %f, reference = %f\\n", got, want); return 1; } return 0; }'
  for p in segv abrt fpe kill loop selfcheck; do gcc -O0 -o "$WORK/$p" "$WORK/$p.c"; done
  capture segfault x86.run run.crash.sigsegv 10 ./segv
  capture abort hip_on_nvidia.run run.crash.sigabrt 10 ./abrt
  capture divide_by_zero x86.run run.crash.sigfpe 10 ./fpe
  capture killed nvidia.run run.crash.sigkill 10 ./kill
  capture endless_loop nvidia.run run.timeout 2 ./loop
  capture self_check nvidia.run run.self_check_failed 10 ./selfcheck
  put nodev.cu '#include <cstdio>\n__global__ void k(float* a) { a[threadIdx.x] = 1; }\nint main() { float* d; cudaError_t e = cudaMalloc(&d, 64);\n if (e != cudaSuccess) { fprintf(stderr, "CUDA error: %s (%s) at nodev.cu:3\\n", cudaGetErrorString(e), cudaGetErrorName(e)); return 1; }\n k<<<1, 16>>>(d); return 0; }'
  if (cd "$WORK" && timeout 120 nvcc -arch=sm_80 -o nodev nodev.cu) && ! nvidia-smi -L >/dev/null 2>&1; then
    capture no_gpu_driver nvidia.run run.cuda_error.insufficient_driver 30 ./nodev
  fi

  # --- sandbox (bubblewrap and rlimits) ---
  BW=(bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-net --unshare-pid --die-with-parent)
  capture network x86.run sandbox.network_denied 20 "${BW[@]}" python3 -c "import socket; socket.create_connection(('10.1.2.3', 80), timeout=3)"
  capture write_outside x86.run sandbox.write_denied 20 "${BW[@]}" sh -c 'echo pwned > /usr/pwned'
  put forker.c '#include <stdio.h>\n#include <unistd.h>\nint main(void) { for (int i = 0; i < 64; ++i) if (fork() < 0) { perror("fork"); return 1; } return 0; }'
  put eater.c '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint main(void) { char* p = malloc(1UL << 32); if (!p) { perror("malloc"); return 1; } memset(p, 1, 1UL << 32); return 0; }'
  put eater.cpp '#include <vector>\nint main() { std::vector<char> v(1UL << 32, 1); return v[5]; }'
  gcc -O0 -o "$WORK/forker" "$WORK/forker.c"; gcc -O0 -o "$WORK/eater" "$WORK/eater.c"; g++ -O0 -o "$WORK/eaterpp" "$WORK/eater.cpp"
  capture fork_limit x86.run sandbox.process_limit 20 setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=4 ./forker
  capture malloc_limit x86.run sandbox.memory_limit 20 prlimit --as=268435456 ./eater
  capture bad_alloc hip_on_nvidia.run sandbox.memory_limit 20 prlimit --as=268435456 ./eaterpp
  capture nested_userns x86.run sandbox.bwrap_unavailable 20 setpriv --reuid=65534 --regid=65534 --clear-groups bwrap --ro-bind / / --unshare-user --disable-userns bwrap --ro-bind / / --unshare-user --unshare-net true
  capture bind_missing x86.run sandbox.setup_failed 20 bwrap --ro-bind / / --bind /nonexistent-tailforge-dir /work true

  # --- llvm-mc's `invalid <field> value` family: one general rule, whatever the field ---
  asm_case op_sel_value amd.asm.operand_constraint 'v_dot2_f32_f16 v0, v1, v2, v3 op_sel:[2,0]'
  asm_case row_share_value amd.asm.operand_constraint 'v_mov_b32_dpp v0, v1 row_share:16'
  asm_case depctr_value amd.asm.operand_constraint 's_waitcnt_depctr depctr_va_vdst(99)'
  asm_case dpp8_width amd.asm.operand_constraint 'v_mov_b32_dpp v0, v1 dpp8:[0,1,2,3,4,5,6,9]'
}

# GPU cases: programs that fail on a real GPU with a CUDA error. Built here, run where a GPU is.
GPU_CASES="illegal_address invalid_configuration out_of_memory launch_failure misaligned"
build_gpu() {
  local bin="$1"; mkdir -p "$bin"
  local main='#define CHECK(x) do { cudaError_t e = (x); if (e == cudaSuccess) e = cudaDeviceSynchronize(); if (e != cudaSuccess) { fprintf(stderr, "CUDA error: %s (%s) at %s:%d\\n", cudaGetErrorString(e), cudaGetErrorName(e), __FILE__, __LINE__); return 1; } } while (0)'
  put illegal_address.cu "#include <cstdio>\n$main\n__global__ void k(float* a) { a[threadIdx.x + (1u << 30)] = 1; }\nint main() { float* d; cudaMalloc(&d, 64); k<<<1, 32>>>(d); CHECK(cudaGetLastError()); return 0; }"
  put invalid_configuration.cu "#include <cstdio>\n$main\n__global__ void k(float* a) { a[threadIdx.x] = 1; }\nint main() { float* d; cudaMalloc(&d, 64); k<<<1, 4096>>>(d); CHECK(cudaGetLastError()); return 0; }"
  put out_of_memory.cu "#include <cstdio>\n$main\nint main() { float* d; CHECK(cudaMalloc(&d, 1ull << 50)); return 0; }"
  put launch_failure.cu "#include <cstdio>\n$main\n__global__ void k(float* a) { if (threadIdx.x == 3) __trap(); a[threadIdx.x] = 1; }\nint main() { float* d; cudaMalloc(&d, 64); k<<<1, 8>>>(d); CHECK(cudaGetLastError()); return 0; }"
  put misaligned.cu "#include <cstdio>\n$main\n__global__ void k(char* a) { *reinterpret_cast<double*>(a + 1) = 1.0; }\nint main() { char* d; cudaMalloc(&d, 64); k<<<1, 1>>>(d); CHECK(cudaGetLastError()); return 0; }"
  for c in $GPU_CASES; do (cd "$WORK" && timeout 120 nvcc -arch=sm_90 -o "$bin/$c" "$c.cu") || echo "build of $c failed"; done
}
run_gpu() {
  local bin="$1"
  capture illegal_address nvidia.run run.cuda_error.illegal_address 60 "$bin/illegal_address"
  capture invalid_configuration nvidia.run run.cuda_error.invalid_configuration 60 "$bin/invalid_configuration"
  capture out_of_memory nvidia.run run.cuda_error.out_of_memory 60 "$bin/out_of_memory"
  capture launch_failure nvidia.run run.cuda_error.launch_failure 60 "$bin/launch_failure"
  capture misaligned nvidia.run run.cuda_error.misaligned_address 60 "$bin/misaligned"
}

case "${1:-}" in
  --build-gpu) build_gpu "$(realpath -m "$2")" ;;
  --gpu) OUT="$2"; N=100; mkdir -p "$OUT"; run_gpu "$(realpath "$3")" ;;
  *) OUT="${1:-$HERE}"; mkdir -p "$OUT"; cpu_cases ;;
esac
