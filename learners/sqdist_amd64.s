#include "textflag.h"

// func sqDists8AVX(q *float32, dim int, qn float32, blk, norms, d *float32, worst float32) uint64
// Writes d[l] = max(0, (qn + norms[l]) − 2·q·x_l) for the 8 rows x_l of a
// block stored feature-major (feature f of row l at blk[8f + l]). q·x_l is
// summed as kernel.Dot sums it: partial sums s0..s3 over the features
// modulo 4 (the features beyond the last multiple of 4 into s0), then
// (s0 + s1) + (s2 + s3); a product is rounded before it is added (VMULPS,
// then VADDPS: no fused multiply-add), so each lane is the scalar formula
// bit for bit. It returns the lanes with d[l] ≤ worst as bits 0..7.
TEXT ·sqDists8AVX(SB), NOSPLIT, $0-64
	MOVQ q+0(FP), SI
	MOVQ dim+8(FP), CX
	MOVQ blk+24(FP), DI
	MOVQ norms+32(FP), R8
	MOVQ d+40(FP), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ CX, DX
	ANDQ $-4, DX
	XORQ AX, AX

loop4:
	CMPQ AX, DX
	JGE  tail
	VBROADCASTSS (SI)(AX*4), Y4
	VMULPS       (DI), Y4, Y4
	VADDPS       Y4, Y0, Y0
	VBROADCASTSS 4(SI)(AX*4), Y5
	VMULPS       32(DI), Y5, Y5
	VADDPS       Y5, Y1, Y1
	VBROADCASTSS 8(SI)(AX*4), Y6
	VMULPS       64(DI), Y6, Y6
	VADDPS       Y6, Y2, Y2
	VBROADCASTSS 12(SI)(AX*4), Y7
	VMULPS       96(DI), Y7, Y7
	VADDPS       Y7, Y3, Y3
	ADDQ         $4, AX
	ADDQ         $128, DI
	JMP          loop4

tail:
	CMPQ AX, CX
	JGE  sum
	VBROADCASTSS (SI)(AX*4), Y4
	VMULPS       (DI), Y4, Y4
	VADDPS       Y4, Y0, Y0
	INCQ         AX
	ADDQ         $32, DI
	JMP          tail

sum:
	VADDPS       Y1, Y0, Y0 // s0 + s1
	VADDPS       Y3, Y2, Y2 // s2 + s3
	VADDPS       Y2, Y0, Y0 // the dot product
	VADDPS       Y0, Y0, Y0 // 2·dot, exactly
	VBROADCASTSS qn+16(FP), Y6
	VMOVUPS      (R8), Y7
	VADDPS       Y7, Y6, Y6 // qn + norm
	VSUBPS       Y0, Y6, Y6 // − 2·dot
	VXORPS       Y7, Y7, Y7
	VMAXPS       Y6, Y7, Y6 // max(0, d): d itself when NaN, as Go's max
	VMOVUPS      Y6, (R9)
	VBROADCASTSS worst+48(FP), Y8
	VCMPPS       $2, Y8, Y6, Y9 // d ≤ worst (LE_OS)
	VMOVMSKPS    Y9, AX
	MOVQ         AX, ret+56(FP)
	VZEROUPPER
	RET
