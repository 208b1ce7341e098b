	.text
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.globl	kernel
	.p2align	8
	.type	kernel,@function
kernel:
	s_mov_b32 s0, 0x123456789abcdef0
	s_endpgm
