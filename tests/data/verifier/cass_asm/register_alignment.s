	.text
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.globl	kernel
	.p2align	8
	.type	kernel,@function
kernel:
	s_load_b64 s[3:4], s[0:1], 0x0
	s_endpgm
