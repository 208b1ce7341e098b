	.text
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.globl	kernel
	.p2align	8
	.type	kernel,@function
kernel:
	sumba_send_msg_b32 s0, s1
	s_endpgm
