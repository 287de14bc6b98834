// The Go assembler has no SVE instructions and no vector FADD, so those are
// written as WORD constants, each with its mnemonic in the comment. The words
// were produced by aarch64-linux-gnu-as -march=armv8.2-a+sve from exactly those
// comments; scripts/test-arm64.sh re-assembles every comment and fails on any
// mismatch, so edit a WORD only together with its comment.

//go:build !noasm

#include "textflag.h"

// arm64 aggregation micro-kernels (see kernels_arm64.go for the contract):
//
//	accumRows:  out[j] += Σ_k x[int(idx[k])*stride + j]
//	accumRowsW: out[j] += Σ_k w[k] * x[int(idx[k])*stride + j]
//
// The output row is cut into column blocks; each block is loaded once into
// accumulator registers, every edge k adds its source row segment, and the
// block is stored once. Per column the sum runs in k order, as in the generic
// twin. No byte outside out[:len(out)] is written and no source element
// outside the len(out) columns of a row is read (the NEON tail is scalar, SVE
// loads are predicated).
//
// Registers shared by all kernels:
//	R0  out pointer (advances by column block)
//	R1  columns left
//	R2  x + column offset of the block (advances with R0)
//	R3  stride in bytes
//	R4  &idx[0]
//	R5  len(idx)
//	R6  &w[0] (weighted kernels)
//	R7  &idx[len(idx)-1]: the prefetch index is clamped to it
//	R9  idx cursor, R10 w cursor, R11 source row address, R12 prefetch address
//	R13 scratch pointer (NEON) / 8·VL in floats (SVE)
//	R15 &idx[len(idx)] (loop end)
// SVE only: R14 = VL in floats (CNTW), R19-R22 = 2, 3, 4, 16 times that,
// R23/R24 = out/row block + 8·VL bytes, p0 all true, p1-p4 tail predicates.
// Go reserves R18, R26-R29; R16/R17 are left alone too.

// Edges ahead to prefetch: ROWADDR reads idx[k+PFDIST] (clamped to the last
// edge) after R9 has moved past idx[k], hence the -1.
#define PFDIST 8
#define PFOFF ((PFDIST-1)*4)

// ROWADDR: R11 = R2 + idx[k]*R3 (this edge's source block), R12 = the same for
// the edge PFDIST ahead; R9 moves to the next edge.
#define ROWADDR \
	MOVW.P	4(R9), R11; \
	ADD	$PFOFF, R9, R12; \
	CMP	R7, R12; \
	CSEL	HI, R7, R12, R12; \
	MOVW	(R12), R12; \
	MADD	R3, R2, R11, R11; \
	MADD	R3, R2, R12, R12

// ROWADDR1: R11 only (scalar tail, no prefetch).
#define ROWADDR1 \
	MOVW.P	4(R9), R11; \
	MADD	R3, R2, R11, R11

// func accumRowsNEON(out, x []float32, stride int, idx []int32)
TEXT ·accumRowsNEON(SB), NOSPLIT, $0-80
	MOVD	out_base+0(FP), R0
	MOVD	out_len+8(FP), R1
	MOVD	x_base+24(FP), R2
	MOVD	stride+48(FP), R3
	MOVD	idx_base+56(FP), R4
	MOVD	idx_len+64(FP), R5
	CBZ	R1, done
	CBZ	R5, done
	LSL	$2, R3, R3
	ADD	R5<<2, R4, R15
	SUB	$4, R15, R7
b64:
	CMP	$64, R1
	BLT	b16
	MOVD	R0, R13
	VLD1.P	64(R13), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P	64(R13), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P	64(R13), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1	(R13), [V12.S4, V13.S4, V14.S4, V15.S4]
	MOVD	R4, R9
b64_edge:
	ROWADDR
	PRFM	(R12), PLDL1KEEP
	PRFM	64(R12), PLDL1KEEP
	PRFM	128(R12), PLDL1KEEP
	PRFM	192(R12), PLDL1KEEP
	VLD1.P	64(R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P	64(R11), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P	64(R11), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1	(R11), [V28.S4, V29.S4, V30.S4, V31.S4]
	WORD	$0x4e30d400 // fadd v0.4s, v0.4s, v16.4s
	WORD	$0x4e31d421 // fadd v1.4s, v1.4s, v17.4s
	WORD	$0x4e32d442 // fadd v2.4s, v2.4s, v18.4s
	WORD	$0x4e33d463 // fadd v3.4s, v3.4s, v19.4s
	WORD	$0x4e34d484 // fadd v4.4s, v4.4s, v20.4s
	WORD	$0x4e35d4a5 // fadd v5.4s, v5.4s, v21.4s
	WORD	$0x4e36d4c6 // fadd v6.4s, v6.4s, v22.4s
	WORD	$0x4e37d4e7 // fadd v7.4s, v7.4s, v23.4s
	WORD	$0x4e38d508 // fadd v8.4s, v8.4s, v24.4s
	WORD	$0x4e39d529 // fadd v9.4s, v9.4s, v25.4s
	WORD	$0x4e3ad54a // fadd v10.4s, v10.4s, v26.4s
	WORD	$0x4e3bd56b // fadd v11.4s, v11.4s, v27.4s
	WORD	$0x4e3cd58c // fadd v12.4s, v12.4s, v28.4s
	WORD	$0x4e3dd5ad // fadd v13.4s, v13.4s, v29.4s
	WORD	$0x4e3ed5ce // fadd v14.4s, v14.4s, v30.4s
	WORD	$0x4e3fd5ef // fadd v15.4s, v15.4s, v31.4s
	CMP	R15, R9
	BNE	b64_edge
	MOVD	R0, R13
	VST1.P	[V0.S4, V1.S4, V2.S4, V3.S4], 64(R13)
	VST1.P	[V4.S4, V5.S4, V6.S4, V7.S4], 64(R13)
	VST1.P	[V8.S4, V9.S4, V10.S4, V11.S4], 64(R13)
	VST1	[V12.S4, V13.S4, V14.S4, V15.S4], (R13)
	ADD	$256, R0
	ADD	$256, R2
	SUB	$64, R1
	B	b64
b16:
	CMP	$16, R1
	BLT	b4
	MOVD	R0, R13
	VLD1	(R13), [V0.S4, V1.S4, V2.S4, V3.S4]
	MOVD	R4, R9
b16_edge:
	ROWADDR
	PRFM	(R12), PLDL1KEEP
	VLD1	(R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	WORD	$0x4e30d400 // fadd v0.4s, v0.4s, v16.4s
	WORD	$0x4e31d421 // fadd v1.4s, v1.4s, v17.4s
	WORD	$0x4e32d442 // fadd v2.4s, v2.4s, v18.4s
	WORD	$0x4e33d463 // fadd v3.4s, v3.4s, v19.4s
	CMP	R15, R9
	BNE	b16_edge
	MOVD	R0, R13
	VST1	[V0.S4, V1.S4, V2.S4, V3.S4], (R13)
	ADD	$64, R0
	ADD	$64, R2
	SUB	$16, R1
	B	b16
b4:
	CMP	$4, R1
	BLT	b1
	VLD1	(R0), [V0.S4]
	MOVD	R4, R9
b4_edge:
	ROWADDR
	PRFM	(R12), PLDL1KEEP
	VLD1	(R11), [V16.S4]
	WORD	$0x4e30d400 // fadd v0.4s, v0.4s, v16.4s
	CMP	R15, R9
	BNE	b4_edge
	VST1	[V0.S4], (R0)
	ADD	$16, R0
	ADD	$16, R2
	SUB	$4, R1
	B	b4
b1:
	// Scalar tail: the last len(out)%4 columns, one pass over idx each.
	CBZ	R1, done
	FMOVS	(R0), F0
	MOVD	R4, R9
b1_edge:
	ROWADDR1
	FMOVS	(R11), F16
	FADDS	F16, F0, F0
	CMP	R15, R9
	BNE	b1_edge
	FMOVS	F0, (R0)
	ADD	$4, R0
	ADD	$4, R2
	SUB	$1, R1
	B	b1
done:
	RET

// func accumRowsWNEON(out, x []float32, stride int, idx []int32, w []float32)
TEXT ·accumRowsWNEON(SB), NOSPLIT, $0-104
	MOVD	out_base+0(FP), R0
	MOVD	out_len+8(FP), R1
	MOVD	x_base+24(FP), R2
	MOVD	stride+48(FP), R3
	MOVD	idx_base+56(FP), R4
	MOVD	idx_len+64(FP), R5
	MOVD	w_base+80(FP), R6
	CBZ	R1, done
	CBZ	R5, done
	LSL	$2, R3, R3
	ADD	R5<<2, R4, R15
	SUB	$4, R15, R7
b64:
	CMP	$64, R1
	BLT	b16
	MOVD	R0, R13
	VLD1.P	64(R13), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P	64(R13), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P	64(R13), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1	(R13), [V12.S4, V13.S4, V14.S4, V15.S4]
	MOVD	R4, R9
	MOVD	R6, R10
b64_edge:
	ROWADDR
	PRFM	(R12), PLDL1KEEP
	PRFM	64(R12), PLDL1KEEP
	PRFM	128(R12), PLDL1KEEP
	PRFM	192(R12), PLDL1KEEP
	VLD1R.P	4(R10), [V31.S4]
	VLD1.P	64(R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P	64(R11), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P	64(R11), [V24.S4, V25.S4, V26.S4, V27.S4]
	VFMLA	V31.S4, V16.S4, V0.S4
	VFMLA	V31.S4, V17.S4, V1.S4
	VFMLA	V31.S4, V18.S4, V2.S4
	VFMLA	V31.S4, V19.S4, V3.S4
	VLD1	(R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA	V31.S4, V20.S4, V4.S4
	VFMLA	V31.S4, V21.S4, V5.S4
	VFMLA	V31.S4, V22.S4, V6.S4
	VFMLA	V31.S4, V23.S4, V7.S4
	VFMLA	V31.S4, V24.S4, V8.S4
	VFMLA	V31.S4, V25.S4, V9.S4
	VFMLA	V31.S4, V26.S4, V10.S4
	VFMLA	V31.S4, V27.S4, V11.S4
	VFMLA	V31.S4, V16.S4, V12.S4
	VFMLA	V31.S4, V17.S4, V13.S4
	VFMLA	V31.S4, V18.S4, V14.S4
	VFMLA	V31.S4, V19.S4, V15.S4
	CMP	R15, R9
	BNE	b64_edge
	MOVD	R0, R13
	VST1.P	[V0.S4, V1.S4, V2.S4, V3.S4], 64(R13)
	VST1.P	[V4.S4, V5.S4, V6.S4, V7.S4], 64(R13)
	VST1.P	[V8.S4, V9.S4, V10.S4, V11.S4], 64(R13)
	VST1	[V12.S4, V13.S4, V14.S4, V15.S4], (R13)
	ADD	$256, R0
	ADD	$256, R2
	SUB	$64, R1
	B	b64
b16:
	CMP	$16, R1
	BLT	b4
	MOVD	R0, R13
	VLD1	(R13), [V0.S4, V1.S4, V2.S4, V3.S4]
	MOVD	R4, R9
	MOVD	R6, R10
b16_edge:
	ROWADDR
	PRFM	(R12), PLDL1KEEP
	VLD1R.P	4(R10), [V31.S4]
	VLD1	(R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA	V31.S4, V16.S4, V0.S4
	VFMLA	V31.S4, V17.S4, V1.S4
	VFMLA	V31.S4, V18.S4, V2.S4
	VFMLA	V31.S4, V19.S4, V3.S4
	CMP	R15, R9
	BNE	b16_edge
	MOVD	R0, R13
	VST1	[V0.S4, V1.S4, V2.S4, V3.S4], (R13)
	ADD	$64, R0
	ADD	$64, R2
	SUB	$16, R1
	B	b16
b4:
	CMP	$4, R1
	BLT	b1
	VLD1	(R0), [V0.S4]
	MOVD	R4, R9
	MOVD	R6, R10
b4_edge:
	ROWADDR
	PRFM	(R12), PLDL1KEEP
	VLD1R.P	4(R10), [V31.S4]
	VLD1	(R11), [V16.S4]
	VFMLA	V31.S4, V16.S4, V0.S4
	CMP	R15, R9
	BNE	b4_edge
	VST1	[V0.S4], (R0)
	ADD	$16, R0
	ADD	$16, R2
	SUB	$4, R1
	B	b4
b1:
	// Scalar tail: the last len(out)%4 columns, one pass over idx each.
	CBZ	R1, done
	FMOVS	(R0), F0
	MOVD	R4, R9
	MOVD	R6, R10
b1_edge:
	ROWADDR1
	FMOVS	(R11), F16
	FMOVS.P	4(R10), F31
	FMADDS	F31, F0, F16, F0 // F0 += F16*F31
	CMP	R15, R9
	BNE	b1_edge
	FMOVS	F0, (R0)
	ADD	$4, R0
	ADD	$4, R2
	SUB	$1, R1
	B	b1
done:
	RET

// func accumRowsSVE(out, x []float32, stride int, idx []int32)
TEXT ·accumRowsSVE(SB), NOSPLIT, $0-80
	MOVD	out_base+0(FP), R0
	MOVD	out_len+8(FP), R1
	MOVD	x_base+24(FP), R2
	MOVD	stride+48(FP), R3
	MOVD	idx_base+56(FP), R4
	MOVD	idx_len+64(FP), R5
	CBZ	R1, done
	CBZ	R5, done
	LSL	$2, R3, R3
	ADD	R5<<2, R4, R15
	SUB	$4, R15, R7
	WORD	$0x2598e3e0 // ptrue p0.s
	WORD	$0x04a0e3ee // cntw x14
	LSL	$3, R14, R13 // R13 = 8·VL (floats)
	LSL	$1, R14, R19 // R19 = 2·VL
	ADD	R14, R19, R20 // R20 = 3·VL
	LSL	$2, R14, R21 // R21 = 4·VL
	LSL	$4, R14, R22 // R22 = 16·VL

	// Tier A16: blocks of 16 full vectors (accumulators z0-z15, row z16-z31;
	// the weighted kernel broadcasts w[k] into z31 and reuses z16). LD1W
	// immediates stop at #7, so the upper 8 vectors go through x23 = x0 + 8·VL
	// and x24 = x11 + 8·VL.
tA16:
	CMP	R22, R1
	BLT	tA
	WORD	$0x04205117 // addvl x23, x0, #8
	WORD	$0xa540a000 // ld1w {z0.s}, p0/z, [x0, #0, mul vl]
	WORD	$0xa541a001 // ld1w {z1.s}, p0/z, [x0, #1, mul vl]
	WORD	$0xa542a002 // ld1w {z2.s}, p0/z, [x0, #2, mul vl]
	WORD	$0xa543a003 // ld1w {z3.s}, p0/z, [x0, #3, mul vl]
	WORD	$0xa544a004 // ld1w {z4.s}, p0/z, [x0, #4, mul vl]
	WORD	$0xa545a005 // ld1w {z5.s}, p0/z, [x0, #5, mul vl]
	WORD	$0xa546a006 // ld1w {z6.s}, p0/z, [x0, #6, mul vl]
	WORD	$0xa547a007 // ld1w {z7.s}, p0/z, [x0, #7, mul vl]
	WORD	$0xa540a2e8 // ld1w {z8.s}, p0/z, [x23, #0, mul vl]
	WORD	$0xa541a2e9 // ld1w {z9.s}, p0/z, [x23, #1, mul vl]
	WORD	$0xa542a2ea // ld1w {z10.s}, p0/z, [x23, #2, mul vl]
	WORD	$0xa543a2eb // ld1w {z11.s}, p0/z, [x23, #3, mul vl]
	WORD	$0xa544a2ec // ld1w {z12.s}, p0/z, [x23, #4, mul vl]
	WORD	$0xa545a2ed // ld1w {z13.s}, p0/z, [x23, #5, mul vl]
	WORD	$0xa546a2ee // ld1w {z14.s}, p0/z, [x23, #6, mul vl]
	WORD	$0xa547a2ef // ld1w {z15.s}, p0/z, [x23, #7, mul vl]
	MOVD	R4, R9
tA16_edge:
	ROWADDR
	WORD	$0x85c00180 // prfb pldl1keep, p0, [x12, #0, mul vl]
	WORD	$0x85c20180 // prfb pldl1keep, p0, [x12, #2, mul vl]
	WORD	$0x85c40180 // prfb pldl1keep, p0, [x12, #4, mul vl]
	WORD	$0x85c60180 // prfb pldl1keep, p0, [x12, #6, mul vl]
	WORD	$0x85c80180 // prfb pldl1keep, p0, [x12, #8, mul vl]
	WORD	$0x85ca0180 // prfb pldl1keep, p0, [x12, #10, mul vl]
	WORD	$0x85cc0180 // prfb pldl1keep, p0, [x12, #12, mul vl]
	WORD	$0x85ce0180 // prfb pldl1keep, p0, [x12, #14, mul vl]
	WORD	$0x042b5118 // addvl x24, x11, #8
	WORD	$0xa540a170 // ld1w {z16.s}, p0/z, [x11, #0, mul vl]
	WORD	$0xa541a171 // ld1w {z17.s}, p0/z, [x11, #1, mul vl]
	WORD	$0xa542a172 // ld1w {z18.s}, p0/z, [x11, #2, mul vl]
	WORD	$0xa543a173 // ld1w {z19.s}, p0/z, [x11, #3, mul vl]
	WORD	$0xa544a174 // ld1w {z20.s}, p0/z, [x11, #4, mul vl]
	WORD	$0xa545a175 // ld1w {z21.s}, p0/z, [x11, #5, mul vl]
	WORD	$0xa546a176 // ld1w {z22.s}, p0/z, [x11, #6, mul vl]
	WORD	$0xa547a177 // ld1w {z23.s}, p0/z, [x11, #7, mul vl]
	WORD	$0xa540a318 // ld1w {z24.s}, p0/z, [x24, #0, mul vl]
	WORD	$0xa541a319 // ld1w {z25.s}, p0/z, [x24, #1, mul vl]
	WORD	$0xa542a31a // ld1w {z26.s}, p0/z, [x24, #2, mul vl]
	WORD	$0xa543a31b // ld1w {z27.s}, p0/z, [x24, #3, mul vl]
	WORD	$0xa544a31c // ld1w {z28.s}, p0/z, [x24, #4, mul vl]
	WORD	$0xa545a31d // ld1w {z29.s}, p0/z, [x24, #5, mul vl]
	WORD	$0xa546a31e // ld1w {z30.s}, p0/z, [x24, #6, mul vl]
	WORD	$0xa547a31f // ld1w {z31.s}, p0/z, [x24, #7, mul vl]
	WORD	$0x65900000 // fadd z0.s, z0.s, z16.s
	WORD	$0x65910021 // fadd z1.s, z1.s, z17.s
	WORD	$0x65920042 // fadd z2.s, z2.s, z18.s
	WORD	$0x65930063 // fadd z3.s, z3.s, z19.s
	WORD	$0x65940084 // fadd z4.s, z4.s, z20.s
	WORD	$0x659500a5 // fadd z5.s, z5.s, z21.s
	WORD	$0x659600c6 // fadd z6.s, z6.s, z22.s
	WORD	$0x659700e7 // fadd z7.s, z7.s, z23.s
	WORD	$0x65980108 // fadd z8.s, z8.s, z24.s
	WORD	$0x65990129 // fadd z9.s, z9.s, z25.s
	WORD	$0x659a014a // fadd z10.s, z10.s, z26.s
	WORD	$0x659b016b // fadd z11.s, z11.s, z27.s
	WORD	$0x659c018c // fadd z12.s, z12.s, z28.s
	WORD	$0x659d01ad // fadd z13.s, z13.s, z29.s
	WORD	$0x659e01ce // fadd z14.s, z14.s, z30.s
	WORD	$0x659f01ef // fadd z15.s, z15.s, z31.s
	CMP	R15, R9
	BNE	tA16_edge
	WORD	$0xe540e000 // st1w {z0.s}, p0, [x0, #0, mul vl]
	WORD	$0xe541e001 // st1w {z1.s}, p0, [x0, #1, mul vl]
	WORD	$0xe542e002 // st1w {z2.s}, p0, [x0, #2, mul vl]
	WORD	$0xe543e003 // st1w {z3.s}, p0, [x0, #3, mul vl]
	WORD	$0xe544e004 // st1w {z4.s}, p0, [x0, #4, mul vl]
	WORD	$0xe545e005 // st1w {z5.s}, p0, [x0, #5, mul vl]
	WORD	$0xe546e006 // st1w {z6.s}, p0, [x0, #6, mul vl]
	WORD	$0xe547e007 // st1w {z7.s}, p0, [x0, #7, mul vl]
	WORD	$0xe540e2e8 // st1w {z8.s}, p0, [x23, #0, mul vl]
	WORD	$0xe541e2e9 // st1w {z9.s}, p0, [x23, #1, mul vl]
	WORD	$0xe542e2ea // st1w {z10.s}, p0, [x23, #2, mul vl]
	WORD	$0xe543e2eb // st1w {z11.s}, p0, [x23, #3, mul vl]
	WORD	$0xe544e2ec // st1w {z12.s}, p0, [x23, #4, mul vl]
	WORD	$0xe545e2ed // st1w {z13.s}, p0, [x23, #5, mul vl]
	WORD	$0xe546e2ee // st1w {z14.s}, p0, [x23, #6, mul vl]
	WORD	$0xe547e2ef // st1w {z15.s}, p0, [x23, #7, mul vl]
	WORD	$0x04205200 // addvl x0, x0, #16
	WORD	$0x04225202 // addvl x2, x2, #16
	SUB	R22, R1
	B	tA16

	// Tier A: 8 to 15 vectors left: one block of 8 full vectors
	// (accumulators z0-z7, row z16-z23).
tA:
	CMP	R13, R1
	BLT	tB
	WORD	$0xa540a000 // ld1w {z0.s}, p0/z, [x0, #0, mul vl]
	WORD	$0xa541a001 // ld1w {z1.s}, p0/z, [x0, #1, mul vl]
	WORD	$0xa542a002 // ld1w {z2.s}, p0/z, [x0, #2, mul vl]
	WORD	$0xa543a003 // ld1w {z3.s}, p0/z, [x0, #3, mul vl]
	WORD	$0xa544a004 // ld1w {z4.s}, p0/z, [x0, #4, mul vl]
	WORD	$0xa545a005 // ld1w {z5.s}, p0/z, [x0, #5, mul vl]
	WORD	$0xa546a006 // ld1w {z6.s}, p0/z, [x0, #6, mul vl]
	WORD	$0xa547a007 // ld1w {z7.s}, p0/z, [x0, #7, mul vl]
	MOVD	R4, R9
tA_edge:
	ROWADDR
	WORD	$0x85c00180 // prfb pldl1keep, p0, [x12, #0, mul vl]
	WORD	$0x85c20180 // prfb pldl1keep, p0, [x12, #2, mul vl]
	WORD	$0x85c40180 // prfb pldl1keep, p0, [x12, #4, mul vl]
	WORD	$0x85c60180 // prfb pldl1keep, p0, [x12, #6, mul vl]
	WORD	$0xa540a170 // ld1w {z16.s}, p0/z, [x11, #0, mul vl]
	WORD	$0xa541a171 // ld1w {z17.s}, p0/z, [x11, #1, mul vl]
	WORD	$0xa542a172 // ld1w {z18.s}, p0/z, [x11, #2, mul vl]
	WORD	$0xa543a173 // ld1w {z19.s}, p0/z, [x11, #3, mul vl]
	WORD	$0xa544a174 // ld1w {z20.s}, p0/z, [x11, #4, mul vl]
	WORD	$0xa545a175 // ld1w {z21.s}, p0/z, [x11, #5, mul vl]
	WORD	$0xa546a176 // ld1w {z22.s}, p0/z, [x11, #6, mul vl]
	WORD	$0xa547a177 // ld1w {z23.s}, p0/z, [x11, #7, mul vl]
	WORD	$0x65900000 // fadd z0.s, z0.s, z16.s
	WORD	$0x65910021 // fadd z1.s, z1.s, z17.s
	WORD	$0x65920042 // fadd z2.s, z2.s, z18.s
	WORD	$0x65930063 // fadd z3.s, z3.s, z19.s
	WORD	$0x65940084 // fadd z4.s, z4.s, z20.s
	WORD	$0x659500a5 // fadd z5.s, z5.s, z21.s
	WORD	$0x659600c6 // fadd z6.s, z6.s, z22.s
	WORD	$0x659700e7 // fadd z7.s, z7.s, z23.s
	CMP	R15, R9
	BNE	tA_edge
	WORD	$0xe540e000 // st1w {z0.s}, p0, [x0, #0, mul vl]
	WORD	$0xe541e001 // st1w {z1.s}, p0, [x0, #1, mul vl]
	WORD	$0xe542e002 // st1w {z2.s}, p0, [x0, #2, mul vl]
	WORD	$0xe543e003 // st1w {z3.s}, p0, [x0, #3, mul vl]
	WORD	$0xe544e004 // st1w {z4.s}, p0, [x0, #4, mul vl]
	WORD	$0xe545e005 // st1w {z5.s}, p0, [x0, #5, mul vl]
	WORD	$0xe546e006 // st1w {z6.s}, p0, [x0, #6, mul vl]
	WORD	$0xe547e007 // st1w {z7.s}, p0, [x0, #7, mul vl]
	WORD	$0x04205100 // addvl x0, x0, #8
	WORD	$0x04225102 // addvl x2, x2, #8
	SUB	R13, R1

	// Tier B: fewer than 8 vectors left; blocks of 4 predicated vectors
	// (p1-p4 from WHILELT), at most two of them.
tB:
	WORD	$0x25a117e1 // whilelt p1.s, xzr, x1
	BEQ	done // no active lane: no columns left
	WORD	$0x25a115c2 // whilelt p2.s, x14, x1
	BEQ	tC // at most one vector left
	WORD	$0x25a11663 // whilelt p3.s, x19, x1
	WORD	$0x25a11684 // whilelt p4.s, x20, x1
	WORD	$0xa540a400 // ld1w {z0.s}, p1/z, [x0, #0, mul vl]
	WORD	$0xa541a801 // ld1w {z1.s}, p2/z, [x0, #1, mul vl]
	WORD	$0xa542ac02 // ld1w {z2.s}, p3/z, [x0, #2, mul vl]
	WORD	$0xa543b003 // ld1w {z3.s}, p4/z, [x0, #3, mul vl]
	MOVD	R4, R9
tB_edge:
	ROWADDR
	WORD	$0x85c00180 // prfb pldl1keep, p0, [x12, #0, mul vl]
	WORD	$0x85c20180 // prfb pldl1keep, p0, [x12, #2, mul vl]
	WORD	$0xa540a570 // ld1w {z16.s}, p1/z, [x11, #0, mul vl]
	WORD	$0xa541a971 // ld1w {z17.s}, p2/z, [x11, #1, mul vl]
	WORD	$0xa542ad72 // ld1w {z18.s}, p3/z, [x11, #2, mul vl]
	WORD	$0xa543b173 // ld1w {z19.s}, p4/z, [x11, #3, mul vl]
	WORD	$0x65900000 // fadd z0.s, z0.s, z16.s
	WORD	$0x65910021 // fadd z1.s, z1.s, z17.s
	WORD	$0x65920042 // fadd z2.s, z2.s, z18.s
	WORD	$0x65930063 // fadd z3.s, z3.s, z19.s
	CMP	R15, R9
	BNE	tB_edge
	WORD	$0xe540e400 // st1w {z0.s}, p1, [x0, #0, mul vl]
	WORD	$0xe541e801 // st1w {z1.s}, p2, [x0, #1, mul vl]
	WORD	$0xe542ec02 // st1w {z2.s}, p3, [x0, #2, mul vl]
	WORD	$0xe543f003 // st1w {z3.s}, p4, [x0, #3, mul vl]
	WORD	$0x04205080 // addvl x0, x0, #4
	WORD	$0x04225082 // addvl x2, x2, #4
	SUB	R21, R1
	B	tB

	// Tier C: one predicated vector (p1) holds the rest.
tC:
	WORD	$0xa540a400 // ld1w {z0.s}, p1/z, [x0]
	MOVD	R4, R9
tC_edge:
	ROWADDR
	WORD	$0x85c00180 // prfb pldl1keep, p0, [x12]
	WORD	$0xa540a570 // ld1w {z16.s}, p1/z, [x11]
	WORD	$0x65900000 // fadd z0.s, z0.s, z16.s
	CMP	R15, R9
	BNE	tC_edge
	WORD	$0xe540e400 // st1w {z0.s}, p1, [x0]
done:
	RET

// func accumRowsWSVE(out, x []float32, stride int, idx []int32, w []float32)
TEXT ·accumRowsWSVE(SB), NOSPLIT, $0-104
	MOVD	out_base+0(FP), R0
	MOVD	out_len+8(FP), R1
	MOVD	x_base+24(FP), R2
	MOVD	stride+48(FP), R3
	MOVD	idx_base+56(FP), R4
	MOVD	idx_len+64(FP), R5
	MOVD	w_base+80(FP), R6
	CBZ	R1, done
	CBZ	R5, done
	LSL	$2, R3, R3
	ADD	R5<<2, R4, R15
	SUB	$4, R15, R7
	WORD	$0x2598e3e0 // ptrue p0.s
	WORD	$0x04a0e3ee // cntw x14
	LSL	$3, R14, R13 // R13 = 8·VL (floats)
	LSL	$1, R14, R19 // R19 = 2·VL
	ADD	R14, R19, R20 // R20 = 3·VL
	LSL	$2, R14, R21 // R21 = 4·VL
	LSL	$4, R14, R22 // R22 = 16·VL

	// Tier A16: blocks of 16 full vectors (accumulators z0-z15, row z16-z31;
	// the weighted kernel broadcasts w[k] into z31 and reuses z16). LD1W
	// immediates stop at #7, so the upper 8 vectors go through x23 = x0 + 8·VL
	// and x24 = x11 + 8·VL.
tA16:
	CMP	R22, R1
	BLT	tA
	WORD	$0x04205117 // addvl x23, x0, #8
	WORD	$0xa540a000 // ld1w {z0.s}, p0/z, [x0, #0, mul vl]
	WORD	$0xa541a001 // ld1w {z1.s}, p0/z, [x0, #1, mul vl]
	WORD	$0xa542a002 // ld1w {z2.s}, p0/z, [x0, #2, mul vl]
	WORD	$0xa543a003 // ld1w {z3.s}, p0/z, [x0, #3, mul vl]
	WORD	$0xa544a004 // ld1w {z4.s}, p0/z, [x0, #4, mul vl]
	WORD	$0xa545a005 // ld1w {z5.s}, p0/z, [x0, #5, mul vl]
	WORD	$0xa546a006 // ld1w {z6.s}, p0/z, [x0, #6, mul vl]
	WORD	$0xa547a007 // ld1w {z7.s}, p0/z, [x0, #7, mul vl]
	WORD	$0xa540a2e8 // ld1w {z8.s}, p0/z, [x23, #0, mul vl]
	WORD	$0xa541a2e9 // ld1w {z9.s}, p0/z, [x23, #1, mul vl]
	WORD	$0xa542a2ea // ld1w {z10.s}, p0/z, [x23, #2, mul vl]
	WORD	$0xa543a2eb // ld1w {z11.s}, p0/z, [x23, #3, mul vl]
	WORD	$0xa544a2ec // ld1w {z12.s}, p0/z, [x23, #4, mul vl]
	WORD	$0xa545a2ed // ld1w {z13.s}, p0/z, [x23, #5, mul vl]
	WORD	$0xa546a2ee // ld1w {z14.s}, p0/z, [x23, #6, mul vl]
	WORD	$0xa547a2ef // ld1w {z15.s}, p0/z, [x23, #7, mul vl]
	MOVD	R4, R9
	MOVD	R6, R10
tA16_edge:
	ROWADDR
	WORD	$0x85c00180 // prfb pldl1keep, p0, [x12, #0, mul vl]
	WORD	$0x85c20180 // prfb pldl1keep, p0, [x12, #2, mul vl]
	WORD	$0x85c40180 // prfb pldl1keep, p0, [x12, #4, mul vl]
	WORD	$0x85c60180 // prfb pldl1keep, p0, [x12, #6, mul vl]
	WORD	$0x85c80180 // prfb pldl1keep, p0, [x12, #8, mul vl]
	WORD	$0x85ca0180 // prfb pldl1keep, p0, [x12, #10, mul vl]
	WORD	$0x85cc0180 // prfb pldl1keep, p0, [x12, #12, mul vl]
	WORD	$0x85ce0180 // prfb pldl1keep, p0, [x12, #14, mul vl]
	WORD	$0x8540c15f // ld1rw {z31.s}, p0/z, [x10]
	ADD	$4, R10
	WORD	$0x042b5118 // addvl x24, x11, #8
	WORD	$0xa540a170 // ld1w {z16.s}, p0/z, [x11, #0, mul vl]
	WORD	$0xa541a171 // ld1w {z17.s}, p0/z, [x11, #1, mul vl]
	WORD	$0xa542a172 // ld1w {z18.s}, p0/z, [x11, #2, mul vl]
	WORD	$0xa543a173 // ld1w {z19.s}, p0/z, [x11, #3, mul vl]
	WORD	$0xa544a174 // ld1w {z20.s}, p0/z, [x11, #4, mul vl]
	WORD	$0xa545a175 // ld1w {z21.s}, p0/z, [x11, #5, mul vl]
	WORD	$0xa546a176 // ld1w {z22.s}, p0/z, [x11, #6, mul vl]
	WORD	$0xa547a177 // ld1w {z23.s}, p0/z, [x11, #7, mul vl]
	WORD	$0xa540a318 // ld1w {z24.s}, p0/z, [x24, #0, mul vl]
	WORD	$0xa541a319 // ld1w {z25.s}, p0/z, [x24, #1, mul vl]
	WORD	$0xa542a31a // ld1w {z26.s}, p0/z, [x24, #2, mul vl]
	WORD	$0xa543a31b // ld1w {z27.s}, p0/z, [x24, #3, mul vl]
	WORD	$0xa544a31c // ld1w {z28.s}, p0/z, [x24, #4, mul vl]
	WORD	$0xa545a31d // ld1w {z29.s}, p0/z, [x24, #5, mul vl]
	WORD	$0xa546a31e // ld1w {z30.s}, p0/z, [x24, #6, mul vl]
	WORD	$0x65bf0200 // fmla z0.s, p0/m, z16.s, z31.s
	WORD	$0x65bf0221 // fmla z1.s, p0/m, z17.s, z31.s
	WORD	$0x65bf0242 // fmla z2.s, p0/m, z18.s, z31.s
	WORD	$0x65bf0263 // fmla z3.s, p0/m, z19.s, z31.s
	WORD	$0x65bf0284 // fmla z4.s, p0/m, z20.s, z31.s
	WORD	$0x65bf02a5 // fmla z5.s, p0/m, z21.s, z31.s
	WORD	$0x65bf02c6 // fmla z6.s, p0/m, z22.s, z31.s
	WORD	$0x65bf02e7 // fmla z7.s, p0/m, z23.s, z31.s
	WORD	$0xa547a310 // ld1w {z16.s}, p0/z, [x24, #7, mul vl]
	WORD	$0x65bf0308 // fmla z8.s, p0/m, z24.s, z31.s
	WORD	$0x65bf0329 // fmla z9.s, p0/m, z25.s, z31.s
	WORD	$0x65bf034a // fmla z10.s, p0/m, z26.s, z31.s
	WORD	$0x65bf036b // fmla z11.s, p0/m, z27.s, z31.s
	WORD	$0x65bf038c // fmla z12.s, p0/m, z28.s, z31.s
	WORD	$0x65bf03ad // fmla z13.s, p0/m, z29.s, z31.s
	WORD	$0x65bf03ce // fmla z14.s, p0/m, z30.s, z31.s
	WORD	$0x65bf020f // fmla z15.s, p0/m, z16.s, z31.s
	CMP	R15, R9
	BNE	tA16_edge
	WORD	$0xe540e000 // st1w {z0.s}, p0, [x0, #0, mul vl]
	WORD	$0xe541e001 // st1w {z1.s}, p0, [x0, #1, mul vl]
	WORD	$0xe542e002 // st1w {z2.s}, p0, [x0, #2, mul vl]
	WORD	$0xe543e003 // st1w {z3.s}, p0, [x0, #3, mul vl]
	WORD	$0xe544e004 // st1w {z4.s}, p0, [x0, #4, mul vl]
	WORD	$0xe545e005 // st1w {z5.s}, p0, [x0, #5, mul vl]
	WORD	$0xe546e006 // st1w {z6.s}, p0, [x0, #6, mul vl]
	WORD	$0xe547e007 // st1w {z7.s}, p0, [x0, #7, mul vl]
	WORD	$0xe540e2e8 // st1w {z8.s}, p0, [x23, #0, mul vl]
	WORD	$0xe541e2e9 // st1w {z9.s}, p0, [x23, #1, mul vl]
	WORD	$0xe542e2ea // st1w {z10.s}, p0, [x23, #2, mul vl]
	WORD	$0xe543e2eb // st1w {z11.s}, p0, [x23, #3, mul vl]
	WORD	$0xe544e2ec // st1w {z12.s}, p0, [x23, #4, mul vl]
	WORD	$0xe545e2ed // st1w {z13.s}, p0, [x23, #5, mul vl]
	WORD	$0xe546e2ee // st1w {z14.s}, p0, [x23, #6, mul vl]
	WORD	$0xe547e2ef // st1w {z15.s}, p0, [x23, #7, mul vl]
	WORD	$0x04205200 // addvl x0, x0, #16
	WORD	$0x04225202 // addvl x2, x2, #16
	SUB	R22, R1
	B	tA16

	// Tier A: 8 to 15 vectors left: one block of 8 full vectors
	// (accumulators z0-z7, row z16-z23).
tA:
	CMP	R13, R1
	BLT	tB
	WORD	$0xa540a000 // ld1w {z0.s}, p0/z, [x0, #0, mul vl]
	WORD	$0xa541a001 // ld1w {z1.s}, p0/z, [x0, #1, mul vl]
	WORD	$0xa542a002 // ld1w {z2.s}, p0/z, [x0, #2, mul vl]
	WORD	$0xa543a003 // ld1w {z3.s}, p0/z, [x0, #3, mul vl]
	WORD	$0xa544a004 // ld1w {z4.s}, p0/z, [x0, #4, mul vl]
	WORD	$0xa545a005 // ld1w {z5.s}, p0/z, [x0, #5, mul vl]
	WORD	$0xa546a006 // ld1w {z6.s}, p0/z, [x0, #6, mul vl]
	WORD	$0xa547a007 // ld1w {z7.s}, p0/z, [x0, #7, mul vl]
	MOVD	R4, R9
	MOVD	R6, R10
tA_edge:
	ROWADDR
	WORD	$0x85c00180 // prfb pldl1keep, p0, [x12, #0, mul vl]
	WORD	$0x85c20180 // prfb pldl1keep, p0, [x12, #2, mul vl]
	WORD	$0x85c40180 // prfb pldl1keep, p0, [x12, #4, mul vl]
	WORD	$0x85c60180 // prfb pldl1keep, p0, [x12, #6, mul vl]
	WORD	$0x8540c15f // ld1rw {z31.s}, p0/z, [x10]
	ADD	$4, R10
	WORD	$0xa540a170 // ld1w {z16.s}, p0/z, [x11, #0, mul vl]
	WORD	$0xa541a171 // ld1w {z17.s}, p0/z, [x11, #1, mul vl]
	WORD	$0xa542a172 // ld1w {z18.s}, p0/z, [x11, #2, mul vl]
	WORD	$0xa543a173 // ld1w {z19.s}, p0/z, [x11, #3, mul vl]
	WORD	$0xa544a174 // ld1w {z20.s}, p0/z, [x11, #4, mul vl]
	WORD	$0xa545a175 // ld1w {z21.s}, p0/z, [x11, #5, mul vl]
	WORD	$0xa546a176 // ld1w {z22.s}, p0/z, [x11, #6, mul vl]
	WORD	$0xa547a177 // ld1w {z23.s}, p0/z, [x11, #7, mul vl]
	WORD	$0x65bf0200 // fmla z0.s, p0/m, z16.s, z31.s
	WORD	$0x65bf0221 // fmla z1.s, p0/m, z17.s, z31.s
	WORD	$0x65bf0242 // fmla z2.s, p0/m, z18.s, z31.s
	WORD	$0x65bf0263 // fmla z3.s, p0/m, z19.s, z31.s
	WORD	$0x65bf0284 // fmla z4.s, p0/m, z20.s, z31.s
	WORD	$0x65bf02a5 // fmla z5.s, p0/m, z21.s, z31.s
	WORD	$0x65bf02c6 // fmla z6.s, p0/m, z22.s, z31.s
	WORD	$0x65bf02e7 // fmla z7.s, p0/m, z23.s, z31.s
	CMP	R15, R9
	BNE	tA_edge
	WORD	$0xe540e000 // st1w {z0.s}, p0, [x0, #0, mul vl]
	WORD	$0xe541e001 // st1w {z1.s}, p0, [x0, #1, mul vl]
	WORD	$0xe542e002 // st1w {z2.s}, p0, [x0, #2, mul vl]
	WORD	$0xe543e003 // st1w {z3.s}, p0, [x0, #3, mul vl]
	WORD	$0xe544e004 // st1w {z4.s}, p0, [x0, #4, mul vl]
	WORD	$0xe545e005 // st1w {z5.s}, p0, [x0, #5, mul vl]
	WORD	$0xe546e006 // st1w {z6.s}, p0, [x0, #6, mul vl]
	WORD	$0xe547e007 // st1w {z7.s}, p0, [x0, #7, mul vl]
	WORD	$0x04205100 // addvl x0, x0, #8
	WORD	$0x04225102 // addvl x2, x2, #8
	SUB	R13, R1

	// Tier B: fewer than 8 vectors left; blocks of 4 predicated vectors
	// (p1-p4 from WHILELT), at most two of them.
tB:
	WORD	$0x25a117e1 // whilelt p1.s, xzr, x1
	BEQ	done // no active lane: no columns left
	WORD	$0x25a115c2 // whilelt p2.s, x14, x1
	BEQ	tC // at most one vector left
	WORD	$0x25a11663 // whilelt p3.s, x19, x1
	WORD	$0x25a11684 // whilelt p4.s, x20, x1
	WORD	$0xa540a400 // ld1w {z0.s}, p1/z, [x0, #0, mul vl]
	WORD	$0xa541a801 // ld1w {z1.s}, p2/z, [x0, #1, mul vl]
	WORD	$0xa542ac02 // ld1w {z2.s}, p3/z, [x0, #2, mul vl]
	WORD	$0xa543b003 // ld1w {z3.s}, p4/z, [x0, #3, mul vl]
	MOVD	R4, R9
	MOVD	R6, R10
tB_edge:
	ROWADDR
	WORD	$0x85c00180 // prfb pldl1keep, p0, [x12, #0, mul vl]
	WORD	$0x85c20180 // prfb pldl1keep, p0, [x12, #2, mul vl]
	WORD	$0x8540c15f // ld1rw {z31.s}, p0/z, [x10]
	ADD	$4, R10
	WORD	$0xa540a570 // ld1w {z16.s}, p1/z, [x11, #0, mul vl]
	WORD	$0xa541a971 // ld1w {z17.s}, p2/z, [x11, #1, mul vl]
	WORD	$0xa542ad72 // ld1w {z18.s}, p3/z, [x11, #2, mul vl]
	WORD	$0xa543b173 // ld1w {z19.s}, p4/z, [x11, #3, mul vl]
	WORD	$0x65bf0200 // fmla z0.s, p0/m, z16.s, z31.s
	WORD	$0x65bf0221 // fmla z1.s, p0/m, z17.s, z31.s
	WORD	$0x65bf0242 // fmla z2.s, p0/m, z18.s, z31.s
	WORD	$0x65bf0263 // fmla z3.s, p0/m, z19.s, z31.s
	CMP	R15, R9
	BNE	tB_edge
	WORD	$0xe540e400 // st1w {z0.s}, p1, [x0, #0, mul vl]
	WORD	$0xe541e801 // st1w {z1.s}, p2, [x0, #1, mul vl]
	WORD	$0xe542ec02 // st1w {z2.s}, p3, [x0, #2, mul vl]
	WORD	$0xe543f003 // st1w {z3.s}, p4, [x0, #3, mul vl]
	WORD	$0x04205080 // addvl x0, x0, #4
	WORD	$0x04225082 // addvl x2, x2, #4
	SUB	R21, R1
	B	tB

	// Tier C: one predicated vector (p1) holds the rest.
tC:
	WORD	$0xa540a400 // ld1w {z0.s}, p1/z, [x0]
	MOVD	R4, R9
	MOVD	R6, R10
tC_edge:
	ROWADDR
	WORD	$0x85c00180 // prfb pldl1keep, p0, [x12]
	WORD	$0x8540c15f // ld1rw {z31.s}, p0/z, [x10]
	ADD	$4, R10
	WORD	$0xa540a570 // ld1w {z16.s}, p1/z, [x11]
	WORD	$0x65bf0200 // fmla z0.s, p0/m, z16.s, z31.s
	CMP	R15, R9
	BNE	tC_edge
	WORD	$0xe540e400 // st1w {z0.s}, p1, [x0]
done:
	RET

// func sveLen32() int
TEXT ·sveLen32(SB), NOSPLIT, $0-8
	WORD	$0x04a0e3e0 // cntw x0
	MOVD	R0, ret+0(FP)
	RET
