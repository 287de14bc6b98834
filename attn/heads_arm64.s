//go:build !noasm

#include "textflag.h"

// The kernels of heads_arm64.go (declarations and reference loops there).

// func accumHeads8NEON(out, x []float32, stride int, idx []int32, w []float32, wstride int)
// Registers: R0 out, R2 x, R3 stride in bytes, R4 the next idx entry, R5
// edges left, R6 the edge's weights, R7 wstride in bytes, R8 the row 8
// edges ahead (prefetched while there is one), R10 the weight being
// read, R11 the row; V0–V15 the 64 sums, V16–V23 half a row, V28–V31 four
// heads' weights broadcast.
TEXT ·accumHeads8NEON(SB), NOSPLIT, $0-112
	MOVD	out_base+0(FP), R0
	MOVD	x_base+24(FP), R2
	MOVD	stride+48(FP), R3
	MOVD	idx_base+56(FP), R4
	MOVD	idx_len+64(FP), R5
	MOVD	w_base+80(FP), R6
	MOVD	wstride+104(FP), R7
	CBZ	R5, done
	LSL	$2, R3, R3
	LSL	$2, R7, R7
	MOVD	R0, R13
	VLD1.P	64(R13), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P	64(R13), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P	64(R13), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1	(R13), [V12.S4, V13.S4, V14.S4, V15.S4]

edge:
	CMP	$8, R5
	BLE	noahead
	MOVWU	32(R4), R8
	MADD	R3, R2, R8, R8
	PRFM	(R8), PLDL1KEEP
	PRFM	64(R8), PLDL1KEEP
	PRFM	128(R8), PLDL1KEEP
	PRFM	192(R8), PLDL1KEEP
	PRFM	252(R8), PLDL1KEEP

noahead:
	MOVWU.P	4(R4), R11
	MADD	R3, R2, R11, R11
	MOVD	R6, R10
	ADD	R7, R6, R6
	VLD1.P	64(R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P	64(R11), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1R.P	4(R10), [V28.S4]
	VLD1R.P	4(R10), [V29.S4]
	VLD1R.P	4(R10), [V30.S4]
	VLD1R.P	4(R10), [V31.S4]
	VFMLA	V28.S4, V16.S4, V0.S4
	VFMLA	V28.S4, V17.S4, V1.S4
	VFMLA	V29.S4, V18.S4, V2.S4
	VFMLA	V29.S4, V19.S4, V3.S4
	VFMLA	V30.S4, V20.S4, V4.S4
	VFMLA	V30.S4, V21.S4, V5.S4
	VFMLA	V31.S4, V22.S4, V6.S4
	VFMLA	V31.S4, V23.S4, V7.S4
	VLD1.P	64(R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1	(R11), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1R.P	4(R10), [V28.S4]
	VLD1R.P	4(R10), [V29.S4]
	VLD1R.P	4(R10), [V30.S4]
	VLD1R	(R10), [V31.S4]
	VFMLA	V28.S4, V16.S4, V8.S4
	VFMLA	V28.S4, V17.S4, V9.S4
	VFMLA	V29.S4, V18.S4, V10.S4
	VFMLA	V29.S4, V19.S4, V11.S4
	VFMLA	V30.S4, V20.S4, V12.S4
	VFMLA	V30.S4, V21.S4, V13.S4
	VFMLA	V31.S4, V22.S4, V14.S4
	VFMLA	V31.S4, V23.S4, V15.S4
	SUBS	$1, R5, R5
	BNE	edge
	MOVD	R0, R13
	VST1.P	[V0.S4, V1.S4, V2.S4, V3.S4], 64(R13)
	VST1.P	[V4.S4, V5.S4, V6.S4, V7.S4], 64(R13)
	VST1.P	[V8.S4, V9.S4, V10.S4, V11.S4], 64(R13)
	VST1	[V12.S4, V13.S4, V14.S4, V15.S4], (R13)

done:
	RET
