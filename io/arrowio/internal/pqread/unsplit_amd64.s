#include "textflag.h"

// func unsplit8SSE2(dst, src *byte, nn, blocks int)
// Joins blocks*16 values of 8 byte streams of nn bytes (stream b at
// src+b*nn) into dst, 16 values (128 bytes) a block.
TEXT ·unsplit8SSE2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nn+16(FP), DX
	MOVQ blocks+24(FP), CX
	LEAQ (SI)(DX*1), BX   // stream 1
	LEAQ (SI)(DX*2), R8   // 2
	LEAQ (R8)(DX*1), R9   // 3
	LEAQ (SI)(DX*4), R10  // 4
	LEAQ (R10)(DX*1), R11 // 5
	LEAQ (R10)(DX*2), R12 // 6
	LEAQ (R12)(DX*1), R13 // 7
	XORQ AX, AX

loop8:
	MOVOU (SI)(AX*1), X0
	MOVOU (BX)(AX*1), X1
	MOVOU (R8)(AX*1), X2
	MOVOU (R9)(AX*1), X3
	MOVOU (R10)(AX*1), X4
	MOVOU (R11)(AX*1), X5
	MOVOU (R12)(AX*1), X6
	MOVOU (R13)(AX*1), X7

	// Bytes: pairs of streams (0,1) (2,3) (4,5) (6,7), values 0-7 in
	// the low registers, 8-15 in the high ones.
	MOVOU     X0, X8
	PUNPCKLBW X1, X0
	PUNPCKHBW X1, X8
	MOVOU     X2, X9
	PUNPCKLBW X3, X2
	PUNPCKHBW X3, X9
	MOVOU     X4, X10
	PUNPCKLBW X5, X4
	PUNPCKHBW X5, X10
	MOVOU     X6, X11
	PUNPCKLBW X7, X6
	PUNPCKHBW X7, X11

	// Words: bytes 0-3 of values 0-3 (X0), 4-7 (X1), 8-11 (X8),
	// 12-15 (X3); bytes 4-7 of them in X4, X5, X10, X7.
	MOVOU     X0, X1
	PUNPCKLWL X2, X0
	PUNPCKHWL X2, X1
	MOVOU     X8, X3
	PUNPCKLWL X9, X8
	PUNPCKHWL X9, X3
	MOVOU     X4, X5
	PUNPCKLWL X6, X4
	PUNPCKHWL X6, X5
	MOVOU     X10, X7
	PUNPCKLWL X11, X10
	PUNPCKHWL X11, X7

	// Doublewords: two whole values a register.
	MOVOU     X0, X2
	PUNPCKLLQ X4, X0
	PUNPCKHLQ X4, X2
	MOVOU     X1, X6
	PUNPCKLLQ X5, X1
	PUNPCKHLQ X5, X6
	MOVOU     X8, X9
	PUNPCKLLQ X10, X8
	PUNPCKHLQ X10, X9
	MOVOU     X3, X11
	PUNPCKLLQ X7, X3
	PUNPCKHLQ X7, X11

	MOVOU X0, 0(DI)
	MOVOU X2, 16(DI)
	MOVOU X1, 32(DI)
	MOVOU X6, 48(DI)
	MOVOU X8, 64(DI)
	MOVOU X9, 80(DI)
	MOVOU X3, 96(DI)
	MOVOU X11, 112(DI)

	ADDQ $16, AX
	ADDQ $128, DI
	DECQ CX
	JNZ  loop8
	RET

// func unsplit4SSE2(dst, src *byte, nn, blocks int)
// The same for 4 streams: 16 values (64 bytes) a block.
TEXT ·unsplit4SSE2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nn+16(FP), DX
	MOVQ blocks+24(FP), CX
	LEAQ (SI)(DX*1), BX // stream 1
	LEAQ (SI)(DX*2), R8 // 2
	LEAQ (R8)(DX*1), R9 // 3
	XORQ AX, AX

loop4:
	MOVOU (SI)(AX*1), X0
	MOVOU (BX)(AX*1), X1
	MOVOU (R8)(AX*1), X2
	MOVOU (R9)(AX*1), X3

	MOVOU     X0, X4
	PUNPCKLBW X1, X0
	PUNPCKHBW X1, X4
	MOVOU     X2, X5
	PUNPCKLBW X3, X2
	PUNPCKHBW X3, X5

	MOVOU     X0, X1
	PUNPCKLWL X2, X0
	PUNPCKHWL X2, X1
	MOVOU     X4, X3
	PUNPCKLWL X5, X4
	PUNPCKHWL X5, X3

	MOVOU X0, 0(DI)
	MOVOU X1, 16(DI)
	MOVOU X4, 32(DI)
	MOVOU X3, 48(DI)

	ADDQ $16, AX
	ADDQ $64, DI
	DECQ CX
	JNZ  loop4
	RET
