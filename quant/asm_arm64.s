// The Go assembler has no vector floating-point arithmetic or conversions,
// so those are written as WORD constants, each with its mnemonic in the
// comment. The words were produced by aarch64-linux-gnu-as from exactly
// those comments; scripts/test-arm64.sh re-assembles every comment (with
// ARM64_WORDCHECK including this file) and fails on any mismatch, so edit a
// WORD only together with its comment.

//go:build !noasm

#include "textflag.h"

// arm64 pack/unpack kernels (see kernels_arm64.go for the contract). Both
// handle the first len&^15 values, 16 at a time; the Go wrappers route a
// row's last partial chunk through a 16-value stack buffer.
//
// Pack, per chunk of 16 values (lane l ↔ value l of the chunk; lanes 4i-4i+3
// in V(i), i < 4):
//
//	r ^= r<<13; r ^= r>>17; r ^= r<<5                    (VSHL, VUSHR, VEOR)
//	u = float32(r>>8) · 2^-24      (VUSHR, then UCVTF with 24 fraction bits: exact)
//	t = (x − zero)·inv + u         (FSUB, FMUL, FADD: no FMLA)
//	q = min(FCVTZU(t), levels)
//
// FCVTZU truncates, saturates negative values (−Inf included) to 0 and NaN
// to 0, and +Inf to 2^32−1, which UMIN clamps to levels: the cases of code().
// The four registers of 32-bit codes are narrowed to 16 bytes with UZP1
// (every code is ≤ 255), and for 4 and 2 bits adjacent bytes merged through
// 16-bit lanes: h | h>>4 (or h | h>>6, then again h | h>>4) leaves the packed
// byte in each lane's low byte, which UZP1 collects.
//
// Unpack, per chunk of 16 values: the chunk's 4/8/16 bytes are split into
// one code per byte (AND with the mask, USHR, ZIP1: low part first), widened
// to 32 bits (UXTL, UXTL2), converted (UCVTF) and dst = float32(q)·scale +
// zero (FMUL, FADD).
//
// Registers: R0 dst, R1 x/src, R2 chunks left, R3 r, R5 bits.
// Pack: V0-V3 RNG lanes, V4 zero, V5 inv, V6 levels (uint32), V16-V19 values
// then codes, V20-V23 draws, V24-V29 scratch.
// Unpack: V4 zero, V5 scale, V6 0x0f bytes, V7 0x03 bytes, V16-V19 scratch,
// V20-V23 values.

// func packNEON(dst []byte, x []float32, zero, inv float32, r *RNG, bits int)
TEXT ·packNEON(SB), NOSPLIT, $0-72
	MOVD	dst_base+0(FP), R0
	MOVD	x_base+24(FP), R1
	MOVD	x_len+32(FP), R2
	MOVD	r+56(FP), R3
	MOVD	bits+64(FP), R5
	LSR	$4, R2, R2
	CBZ	R2, pdone
	VLD1	(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	MOVWU	zero+48(FP), R6
	VDUP	R6, V4.S4
	MOVWU	inv+52(FP), R6
	VDUP	R6, V5.S4
	MOVD	$1, R6
	LSL	R5, R6, R6
	SUB	$1, R6, R6
	VDUP	R6, V6.S4
ploop:
	VSHL	$13, V0.S4, V24.S4
	VSHL	$13, V1.S4, V25.S4
	VSHL	$13, V2.S4, V26.S4
	VSHL	$13, V3.S4, V27.S4
	VEOR	V24.B16, V0.B16, V0.B16
	VEOR	V25.B16, V1.B16, V1.B16
	VEOR	V26.B16, V2.B16, V2.B16
	VEOR	V27.B16, V3.B16, V3.B16
	VUSHR	$17, V0.S4, V24.S4
	VUSHR	$17, V1.S4, V25.S4
	VUSHR	$17, V2.S4, V26.S4
	VUSHR	$17, V3.S4, V27.S4
	VEOR	V24.B16, V0.B16, V0.B16
	VEOR	V25.B16, V1.B16, V1.B16
	VEOR	V26.B16, V2.B16, V2.B16
	VEOR	V27.B16, V3.B16, V3.B16
	VSHL	$5, V0.S4, V24.S4
	VSHL	$5, V1.S4, V25.S4
	VSHL	$5, V2.S4, V26.S4
	VSHL	$5, V3.S4, V27.S4
	VEOR	V24.B16, V0.B16, V0.B16
	VEOR	V25.B16, V1.B16, V1.B16
	VEOR	V26.B16, V2.B16, V2.B16
	VEOR	V27.B16, V3.B16, V3.B16
	VUSHR	$8, V0.S4, V20.S4
	VUSHR	$8, V1.S4, V21.S4
	VUSHR	$8, V2.S4, V22.S4
	VUSHR	$8, V3.S4, V23.S4
	WORD	$0x6f28e694 // ucvtf v20.4s, v20.4s, #24
	WORD	$0x6f28e6b5 // ucvtf v21.4s, v21.4s, #24
	WORD	$0x6f28e6d6 // ucvtf v22.4s, v22.4s, #24
	WORD	$0x6f28e6f7 // ucvtf v23.4s, v23.4s, #24
	VLD1.P	64(R1), [V16.S4, V17.S4, V18.S4, V19.S4]
	WORD	$0x4ea4d610 // fsub v16.4s, v16.4s, v4.4s
	WORD	$0x4ea4d631 // fsub v17.4s, v17.4s, v4.4s
	WORD	$0x4ea4d652 // fsub v18.4s, v18.4s, v4.4s
	WORD	$0x4ea4d673 // fsub v19.4s, v19.4s, v4.4s
	WORD	$0x6e25de10 // fmul v16.4s, v16.4s, v5.4s
	WORD	$0x6e25de31 // fmul v17.4s, v17.4s, v5.4s
	WORD	$0x6e25de52 // fmul v18.4s, v18.4s, v5.4s
	WORD	$0x6e25de73 // fmul v19.4s, v19.4s, v5.4s
	WORD	$0x4e34d610 // fadd v16.4s, v16.4s, v20.4s
	WORD	$0x4e35d631 // fadd v17.4s, v17.4s, v21.4s
	WORD	$0x4e36d652 // fadd v18.4s, v18.4s, v22.4s
	WORD	$0x4e37d673 // fadd v19.4s, v19.4s, v23.4s
	WORD	$0x6ea1ba10 // fcvtzu v16.4s, v16.4s
	WORD	$0x6ea1ba31 // fcvtzu v17.4s, v17.4s
	WORD	$0x6ea1ba52 // fcvtzu v18.4s, v18.4s
	WORD	$0x6ea1ba73 // fcvtzu v19.4s, v19.4s
	VUMIN	V6.S4, V16.S4, V16.S4
	VUMIN	V6.S4, V17.S4, V17.S4
	VUMIN	V6.S4, V18.S4, V18.S4
	VUMIN	V6.S4, V19.S4, V19.S4
	VUZP1	V17.H8, V16.H8, V24.H8
	VUZP1	V19.H8, V18.H8, V25.H8
	VUZP1	V25.B16, V24.B16, V26.B16
	CMP	$8, R5
	BEQ	pstore8
	CMP	$4, R5
	BEQ	pstore4
	VUSHR	$6, V26.H8, V27.H8
	VORR	V27.B16, V26.B16, V27.B16
	VUZP1	V27.B16, V27.B16, V28.B16
	VUSHR	$4, V28.H8, V29.H8
	VORR	V29.B16, V28.B16, V29.B16
	VUZP1	V29.B16, V29.B16, V28.B16
	FMOVS	F28, (R0)
	ADD	$4, R0
	SUBS	$1, R2
	BNE	ploop
	B	psave
pstore4:
	VUSHR	$4, V26.H8, V27.H8
	VORR	V27.B16, V26.B16, V27.B16
	VUZP1	V27.B16, V27.B16, V28.B16
	FMOVD	F28, (R0)
	ADD	$8, R0
	SUBS	$1, R2
	BNE	ploop
	B	psave
pstore8:
	VST1.P	[V26.B16], 16(R0)
	SUBS	$1, R2
	BNE	ploop
psave:
	VST1	[V0.S4, V1.S4, V2.S4, V3.S4], (R3)
pdone:
	RET

// func unpackNEON(dst []float32, src []byte, zero, scale float32, bits int)
TEXT ·unpackNEON(SB), NOSPLIT, $0-64
	MOVD	dst_base+0(FP), R0
	MOVD	dst_len+8(FP), R2
	MOVD	src_base+24(FP), R1
	MOVD	bits+56(FP), R5
	LSR	$4, R2, R2
	CBZ	R2, udone
	MOVWU	zero+48(FP), R6
	VDUP	R6, V4.S4
	MOVWU	scale+52(FP), R6
	VDUP	R6, V5.S4
	VMOVI	$15, V6.B16
	VMOVI	$3, V7.B16
uloop:
	CMP	$8, R5
	BEQ	uload8
	CMP	$4, R5
	BEQ	uload4
	FMOVS	(R1), F16
	ADD	$4, R1
	VAND	V6.B16, V16.B16, V17.B16
	VUSHR	$4, V16.B16, V18.B16
	VZIP1	V18.B16, V17.B16, V16.B16
	VAND	V7.B16, V16.B16, V17.B16
	VUSHR	$2, V16.B16, V18.B16
	VZIP1	V18.B16, V17.B16, V16.B16
	B	uwiden
uload4:
	FMOVD	(R1), F16
	ADD	$8, R1
	VAND	V6.B16, V16.B16, V17.B16
	VUSHR	$4, V16.B16, V18.B16
	VZIP1	V18.B16, V17.B16, V16.B16
	B	uwiden
uload8:
	VLD1.P	16(R1), [V16.B16]
uwiden:
	VUXTL	V16.B8, V17.H8
	VUXTL2	V16.B16, V18.H8
	VUXTL	V17.H4, V20.S4
	VUXTL2	V17.H8, V21.S4
	VUXTL	V18.H4, V22.S4
	VUXTL2	V18.H8, V23.S4
	WORD	$0x6e21da94 // ucvtf v20.4s, v20.4s
	WORD	$0x6e21dab5 // ucvtf v21.4s, v21.4s
	WORD	$0x6e21dad6 // ucvtf v22.4s, v22.4s
	WORD	$0x6e21daf7 // ucvtf v23.4s, v23.4s
	WORD	$0x6e25de94 // fmul v20.4s, v20.4s, v5.4s
	WORD	$0x6e25deb5 // fmul v21.4s, v21.4s, v5.4s
	WORD	$0x6e25ded6 // fmul v22.4s, v22.4s, v5.4s
	WORD	$0x6e25def7 // fmul v23.4s, v23.4s, v5.4s
	WORD	$0x4e24d694 // fadd v20.4s, v20.4s, v4.4s
	WORD	$0x4e24d6b5 // fadd v21.4s, v21.4s, v4.4s
	WORD	$0x4e24d6d6 // fadd v22.4s, v22.4s, v4.4s
	WORD	$0x4e24d6f7 // fadd v23.4s, v23.4s, v4.4s
	VST1.P	[V20.S4, V21.S4, V22.S4, V23.S4], 64(R0)
	SUBS	$1, R2
	BNE	uloop
udone:
	RET

// minmaxNEON: min and max of x, len(x) ≥ 4 (see kernels_arm64.go). Four
// accumulator pairs V0-V3 (min) and V4-V7 (max), all starting from the
// first 4 values, take 16 values an iteration (V16-V19), then single
// vectors go to V0/V4, and a last partial vector is loaded to end at
// len(x): it overlaps values already seen, which min and max ignore. FMIN
// and FMAX return NaN when either operand is NaN, so a NaN anywhere in x
// makes both results NaN and ±Inf shows as a result; the wrapper derives
// finite from the results. R0 x, R1 values left, R2 end.

// func minmaxNEON(x []float32) (lo, hi float32)
TEXT ·minmaxNEON(SB), NOSPLIT, $0-32
	MOVD	x_base+0(FP), R0
	MOVD	x_len+8(FP), R1
	ADD	R1<<2, R0, R2
	VLD1.P	16(R0), [V0.S4]
	VMOV	V0.B16, V1.B16
	VMOV	V0.B16, V2.B16
	VMOV	V0.B16, V3.B16
	VMOV	V0.B16, V4.B16
	VMOV	V0.B16, V5.B16
	VMOV	V0.B16, V6.B16
	VMOV	V0.B16, V7.B16
	SUB	$4, R1, R1
	CMP	$16, R1
	BLT	mmone
mmfour:
	VLD1.P	64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	WORD	$0x4eb0f400 // fmin v0.4s, v0.4s, v16.4s
	WORD	$0x4eb1f421 // fmin v1.4s, v1.4s, v17.4s
	WORD	$0x4eb2f442 // fmin v2.4s, v2.4s, v18.4s
	WORD	$0x4eb3f463 // fmin v3.4s, v3.4s, v19.4s
	WORD	$0x4e30f484 // fmax v4.4s, v4.4s, v16.4s
	WORD	$0x4e31f4a5 // fmax v5.4s, v5.4s, v17.4s
	WORD	$0x4e32f4c6 // fmax v6.4s, v6.4s, v18.4s
	WORD	$0x4e33f4e7 // fmax v7.4s, v7.4s, v19.4s
	SUB	$16, R1, R1
	CMP	$16, R1
	BGE	mmfour
mmone:
	CMP	$4, R1
	BLT	mmtail
	VLD1.P	16(R0), [V16.S4]
	WORD	$0x4eb0f400 // fmin v0.4s, v0.4s, v16.4s
	WORD	$0x4e30f484 // fmax v4.4s, v4.4s, v16.4s
	SUB	$4, R1, R1
	B	mmone
mmtail:
	CBZ	R1, mmfold
	SUB	$16, R2, R2
	VLD1	(R2), [V16.S4]
	WORD	$0x4eb0f400 // fmin v0.4s, v0.4s, v16.4s
	WORD	$0x4e30f484 // fmax v4.4s, v4.4s, v16.4s
mmfold:
	WORD	$0x4ea1f400 // fmin v0.4s, v0.4s, v1.4s
	WORD	$0x4ea3f442 // fmin v2.4s, v2.4s, v3.4s
	WORD	$0x4ea2f400 // fmin v0.4s, v0.4s, v2.4s
	WORD	$0x4e25f484 // fmax v4.4s, v4.4s, v5.4s
	WORD	$0x4e27f4c6 // fmax v6.4s, v6.4s, v7.4s
	WORD	$0x4e26f484 // fmax v4.4s, v4.4s, v6.4s
	WORD	$0x6eb0f800 // fminv s0, v0.4s
	WORD	$0x6e30f884 // fmaxv s4, v4.4s
	FMOVS	F0, lo+24(FP)
	FMOVS	F4, hi+28(FP)
	RET
