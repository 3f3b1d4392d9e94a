//go:build linux

#include "textflag.h"

// func request(args *[6]uintptr) uintptr
//
// A Valgrind client request: Valgrind's JIT recognizes the four rotations of DI
// (which together leave DI unchanged) followed by XCHGQ BX, BX, reads the request
// from the six words AX points at and puts its answer in DX. On a real CPU the
// sequence changes nothing, so DX keeps the zero we load first.
TEXT ·request(SB), NOSPLIT, $0-16
	MOVQ args+0(FP), AX
	XORQ DX, DX
	ROLQ $3, DI
	ROLQ $13, DI
	ROLQ $61, DI
	ROLQ $51, DI
	XCHGQ BX, BX
	MOVQ DX, ret+8(FP)
	RET
