	.text
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.globl	kernel
	.p2align	8
	.type	kernel,@function
kernel:
	s_cselect_b32 s0, 0x12345678, 0x87654321
	s_endpgm
