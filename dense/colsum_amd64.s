//go:build !noasm

#include "textflag.h"

// func colSumsAVX512(acc *float64, m *float32, rows, cols, stride int)
// acc[j] += float64(m[i·stride+j]) for i < rows (in order), j < cols: the
// columns 32 at a time, their sums in four zmm registers of eight float64
// over all the rows, so each column's sum is the scalar loop's, bit for
// bit. The last columns are masked (K1/K2 the float32 lanes, K3–K6 the
// float64 ones: only the low 8 bits of a mask count for them). rows ≥ 1,
// cols ≥ 1.
TEXT ·colSumsAVX512(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ cols+24(FP), R9
	MOVQ stride+32(FP), R10
	SHLQ $2, R10

chunk:
	MOVQ R9, CX
	CMPQ CX, $32
	JLE  masks
	MOVQ $32, CX

masks:
	MOVQ  $1, AX
	SHLQ  CX, AX
	DECQ  AX
	KMOVW AX, K1
	KMOVW AX, K3
	MOVQ  AX, BX
	SHRQ  $8, BX
	KMOVW BX, K4
	SHRQ  $8, BX
	KMOVW BX, K2
	KMOVW BX, K5
	SHRQ  $8, BX
	KMOVW BX, K6
	VMOVUPD.Z (DI), K3, Z0
	VMOVUPD.Z 64(DI), K4, Z1
	VMOVUPD.Z 128(DI), K5, Z2
	VMOVUPD.Z 192(DI), K6, Z3
	MOVQ SI, R11
	MOVQ R8, DX

row:
	VMOVUPS.Z     (R11), K1, Z8
	VMOVUPS.Z     64(R11), K2, Z9
	VCVTPS2PD     Y8, Z10
	VEXTRACTF64X4 $1, Z8, Y11
	VCVTPS2PD     Y11, Z11
	VCVTPS2PD     Y9, Z12
	VEXTRACTF64X4 $1, Z9, Y13
	VCVTPS2PD     Y13, Z13
	VADDPD        Z10, Z0, Z0
	VADDPD        Z11, Z1, Z1
	VADDPD        Z12, Z2, Z2
	VADDPD        Z13, Z3, Z3
	ADDQ          R10, R11
	DECQ          DX
	JNZ           row

	VMOVUPD Z0, K3, (DI)
	VMOVUPD Z1, K4, 64(DI)
	VMOVUPD Z2, K5, 128(DI)
	VMOVUPD Z3, K6, 192(DI)
	ADDQ    $256, DI
	ADDQ    $128, SI
	SUBQ    $32, R9
	JG      chunk
	VZEROUPPER
	RET
