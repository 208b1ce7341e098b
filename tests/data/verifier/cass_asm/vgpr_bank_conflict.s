	.text
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.globl	kernel
	.p2align	8
	.type	kernel,@function
kernel:
	v_dual_mul_f32 v0, v1, v2 :: v_dual_mul_f32 v3, v5, v6
	s_endpgm
