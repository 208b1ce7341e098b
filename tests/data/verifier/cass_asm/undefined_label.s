	.text
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.globl	kernel
	.p2align	8
	.type	kernel,@function
kernel:
	s_cbranch_scc1 .LBB0_missing
	s_endpgm
