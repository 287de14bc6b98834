//go:build !noasm

#include "textflag.h"

// amd64 pack/unpack kernels (see kernels_amd64.go for the contract). Every
// routine handles the first len(x)&^15 (pack) or len(dst)&^15 (unpack)
// values, 16 at a time; the Go wrappers route a row's last partial chunk
// through a 16-value stack buffer.
//
// Pack, per chunk of 16 values (lane l ↔ value l of the chunk):
//
//	r ^= r<<13; r ^= r>>17; r ^= r<<5              (all 16 lanes)
//	u = float32(r>>8) · 2^-24                      (exact)
//	t = (x − zero)·inv + u                         (VSUBPS, VMULPS, VADDPS: no FMA)
//	q = int32(trunc(min(max(t, 0), levels)))
//
// VMAXPS returns its second (Intel) source when either operand is NaN, so
// max(t, 0) maps a NaN t to 0; t ≤ 0 (−Inf included) gives 0 and t ≥ levels
// (+Inf included) gives levels, as in code(). The 16 codes become 16 bytes
// (VPMOVDB, or saturating packs on AVX2; every code is ≤ 255), and for 4 and
// 2 bits adjacent bytes are merged with multiply-adds whose products occupy
// disjoint bits:
//
//	4 bits: VPMADDUBSW by [1,16,…]      → word k = q[2k] + 16·q[2k+1]
//	2 bits: VPMADDUBSW by [1,4,…], then
//	        VPMADDWD   by [1,16,…]      → dword k = q[4k] + 4q[4k+1] + 16q[4k+2] + 64q[4k+3]
//
// Unpack, per chunk of 16 values: the chunk's 16/8/4 bytes are spread so
// that value j's byte lands in dword j (VPSHUFB by [0,0,1,1,…] or
// [0,0,0,0,1,…], then VPMOVZXBD), shifted right by (j mod per)·bits
// (VPSRLVD) and masked, then dst = float32(q)·scale + zero (VMULPS, VADDPS).

// bytes4<>/bytes2<>: VPSHUFB indices that repeat each source byte 2 (4 bits)
// or 4 (2 bits) times.
DATA bytes4<>+0(SB)/8, $0x0303020201010000
DATA bytes4<>+8(SB)/8, $0x0707060605050404
GLOBL bytes4<>(SB), RODATA|NOPTR, $16
DATA bytes2<>+0(SB)/8, $0x0101010100000000
DATA bytes2<>+8(SB)/8, $0x0303030302020202
GLOBL bytes2<>(SB), RODATA|NOPTR, $16

// shift4<>/shift2<>: per-dword right shifts (j mod per)·bits; one 128-bit
// period, broadcast to the vector width.
DATA shift4<>+0(SB)/8, $0x0000000400000000
DATA shift4<>+8(SB)/8, $0x0000000400000000
GLOBL shift4<>(SB), RODATA|NOPTR, $16
DATA shift2<>+0(SB)/8, $0x0000000200000000
DATA shift2<>+8(SB)/8, $0x0000000600000004
GLOBL shift2<>(SB), RODATA|NOPTR, $16

#define UNIFORM 0x33800000 // 2^-24
#define LEVELS2 0x40400000 // 3.0
#define LEVELS4 0x41700000 // 15.0
#define LEVELS8 0x437f0000 // 255.0
#define MADD16 0x10011001  // bytes 1,16,1,16: VPMADDUBSW multipliers, 4 bits
#define MADD4 0x04010401   // bytes 1,4,1,4: VPMADDUBSW multipliers, 2 bits
#define MADDW16 0x00100001 // words 1,16: VPMADDWD multipliers, 2 bits

// ---------------------------------------------------------------- AVX-512

// Registers: Z0 RNG lanes, Z1 zero, Z2 inv, Z3 2^-24, Z4 levels, Z5 0.0,
// Z6 scratch, Z7 codes; X8 the 16 code bytes; X10/X11 multiply-add constants.
// SI x, DI dst, CX chunks left, DX r.

// CODES512: step the lanes and leave the chunk's 16 code bytes at (SI) in X8.
#define CODES512 \
	VPSLLD     $13, Z0, Z6; \
	VPXORD     Z6, Z0, Z0; \
	VPSRLD     $17, Z0, Z6; \
	VPXORD     Z6, Z0, Z0; \
	VPSLLD     $5, Z0, Z6; \
	VPXORD     Z6, Z0, Z0; \
	VPSRLD     $8, Z0, Z6; \
	VCVTDQ2PS  Z6, Z6; \
	VMULPS     Z3, Z6, Z6; \
	VMOVUPS    (SI), Z7; \
	VSUBPS     Z1, Z7, Z7; \
	VMULPS     Z2, Z7, Z7; \
	VADDPS     Z6, Z7, Z7; \
	VMAXPS     Z5, Z7, Z7; \
	VMINPS     Z4, Z7, Z7; \
	VCVTTPS2DQ Z7, Z7; \
	VPMOVDB    Z7, X8

// func packAVX512(dst []byte, x []float32, zero, inv float32, r *RNG, bits int)
TEXT ·packAVX512(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	MOVQ r+56(FP), DX
	MOVQ bits+64(FP), AX
	SHRQ $4, CX
	JZ   p512_ret
	VMOVDQU32    (DX), Z0
	VBROADCASTSS zero+48(FP), Z1
	VBROADCASTSS inv+52(FP), Z2
	MOVL         $UNIFORM, BX
	VPBROADCASTD BX, Z3
	VPXORD       Z5, Z5, Z5
	CMPQ         AX, $8
	JEQ          p512_8
	CMPQ         AX, $4
	JEQ          p512_4

	MOVL         $LEVELS2, BX
	VPBROADCASTD BX, Z4
	MOVL         $MADD4, BX
	VMOVD        BX, X10
	VPBROADCASTD X10, X10
	MOVL         $MADDW16, BX
	VMOVD        BX, X11
	VPBROADCASTD X11, X11

p512_2:
	CODES512
	VPMADDUBSW X10, X8, X8
	VPMADDWD   X11, X8, X8
	VPACKUSDW  X8, X8, X8
	VPACKUSWB  X8, X8, X8
	VMOVD      X8, (DI)
	ADDQ       $64, SI
	ADDQ       $4, DI
	DECQ       CX
	JNZ        p512_2
	JMP        p512_done

p512_4:
	MOVL         $LEVELS4, BX
	VPBROADCASTD BX, Z4
	MOVL         $MADD16, BX
	VMOVD        BX, X10
	VPBROADCASTD X10, X10

p512_4loop:
	CODES512
	VPMADDUBSW X10, X8, X8
	VPACKUSWB  X8, X8, X8
	VMOVQ      X8, (DI)
	ADDQ       $64, SI
	ADDQ       $8, DI
	DECQ       CX
	JNZ        p512_4loop
	JMP        p512_done

p512_8:
	MOVL         $LEVELS8, BX
	VPBROADCASTD BX, Z4

p512_8loop:
	CODES512
	VMOVDQU X8, (DI)
	ADDQ    $64, SI
	ADDQ    $16, DI
	DECQ    CX
	JNZ     p512_8loop

p512_done:
	VMOVDQU32 Z0, (DX)
	VZEROUPPER

p512_ret:
	RET

// Unpack registers: Z1 zero, Z2 scale, Z3 shifts, Z4 mask, X5 byte spread,
// Z6 values. SI src, DI dst, CX chunks left.

// DEQ512: dst[0:16] = float32(Z6)·scale + zero.
#define DEQ512 \
	VCVTDQ2PS Z6, Z6; \
	VMULPS    Z2, Z6, Z6; \
	VADDPS    Z1, Z6, Z6; \
	VMOVUPS   Z6, (DI)

// func unpackAVX512(dst []float32, src []byte, zero, scale float32, bits int)
TEXT ·unpackAVX512(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	MOVQ bits+56(FP), AX
	SHRQ $4, CX
	JZ   u512_ret
	VBROADCASTSS zero+48(FP), Z1
	VBROADCASTSS scale+52(FP), Z2
	CMPQ         AX, $8
	JEQ          u512_8
	CMPQ         AX, $4
	JEQ          u512_4

	VBROADCASTI32X4 shift2<>(SB), Z3
	MOVL            $3, BX
	VPBROADCASTD    BX, Z4
	VMOVDQU         bytes2<>(SB), X5

u512_2:
	VMOVD      (SI), X6
	VPSHUFB    X5, X6, X6
	VPMOVZXBD  X6, Z6
	VPSRLVD    Z3, Z6, Z6
	VPANDD     Z4, Z6, Z6
	DEQ512
	ADDQ       $4, SI
	ADDQ       $64, DI
	DECQ       CX
	JNZ        u512_2
	JMP        u512_done

u512_4:
	VBROADCASTI32X4 shift4<>(SB), Z3
	MOVL            $15, BX
	VPBROADCASTD    BX, Z4
	VMOVDQU         bytes4<>(SB), X5

u512_4loop:
	VMOVQ      (SI), X6
	VPSHUFB    X5, X6, X6
	VPMOVZXBD  X6, Z6
	VPSRLVD    Z3, Z6, Z6
	VPANDD     Z4, Z6, Z6
	DEQ512
	ADDQ       $8, SI
	ADDQ       $64, DI
	DECQ       CX
	JNZ        u512_4loop
	JMP        u512_done

u512_8:
	VPMOVZXBD (SI), Z6
	DEQ512
	ADDQ      $16, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       u512_8

u512_done:
	VZEROUPPER

u512_ret:
	RET

// ---------------------------------------------------------------- AVX2

// Registers: Y0 lanes 0-7, Y1 lanes 8-15, Y2 zero, Y3 inv, Y4 2^-24,
// Y5 levels, Y6 0.0, Y7/Y9 scratch, Y8/Y12 codes; X8 the 16 code bytes;
// X10/X11 multiply-add constants. SI x, DI dst, CX chunks left, DX r.

// XS2: one xorshift32 step of the 8 lanes in R (scratch S).
#define XS2(R, S) \
	VPSLLD $13, R, S; \
	VPXOR  S, R, R; \
	VPSRLD $17, R, S; \
	VPXOR  S, R, R; \
	VPSLLD $5, R, S; \
	VPXOR  S, R, R

// Q2: the codes of the 8 values at OFF(SI) with the lanes in R, into D.
#define Q2(R, S, OFF, D) \
	VPSRLD     $8, R, S; \
	VCVTDQ2PS  S, S; \
	VMULPS     Y4, S, S; \
	VMOVUPS    OFF(SI), D; \
	VSUBPS     Y2, D, D; \
	VMULPS     Y3, D, D; \
	VADDPS     S, D, D; \
	VMAXPS     Y6, D, D; \
	VMINPS     Y5, D, D; \
	VCVTTPS2DQ D, D

// CODES2: step the lanes and leave the chunk's 16 code bytes in X8.
// VPACKUSDW interleaves the 128-bit halves ([q0-3 q8-11 | q4-7 q12-15]);
// VPERMQ $0xd8 puts the words back in order.
#define CODES2 \
	XS2(Y0, Y7); \
	XS2(Y1, Y9); \
	Q2(Y0, Y7, 0, Y8); \
	Q2(Y1, Y9, 32, Y12); \
	VPACKUSDW    Y12, Y8, Y8; \
	VPERMQ       $0xd8, Y8, Y8; \
	VEXTRACTI128 $1, Y8, X12; \
	VPACKUSWB    X12, X8, X8

// func packAVX2(dst []byte, x []float32, zero, inv float32, r *RNG, bits int)
TEXT ·packAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	MOVQ r+56(FP), DX
	MOVQ bits+64(FP), AX
	SHRQ $4, CX
	JZ   p2_ret
	VMOVDQU      (DX), Y0
	VMOVDQU      32(DX), Y1
	VBROADCASTSS zero+48(FP), Y2
	VBROADCASTSS inv+52(FP), Y3
	MOVL         $UNIFORM, BX
	VMOVD        BX, X4
	VPBROADCASTD X4, Y4
	VPXOR        Y6, Y6, Y6
	CMPQ         AX, $8
	JEQ          p2_8
	CMPQ         AX, $4
	JEQ          p2_4

	MOVL         $LEVELS2, BX
	VMOVD        BX, X5
	VPBROADCASTD X5, Y5
	MOVL         $MADD4, BX
	VMOVD        BX, X10
	VPBROADCASTD X10, X10
	MOVL         $MADDW16, BX
	VMOVD        BX, X11
	VPBROADCASTD X11, X11

p2_2:
	CODES2
	VPMADDUBSW X10, X8, X8
	VPMADDWD   X11, X8, X8
	VPACKUSDW  X8, X8, X8
	VPACKUSWB  X8, X8, X8
	VMOVD      X8, (DI)
	ADDQ       $64, SI
	ADDQ       $4, DI
	DECQ       CX
	JNZ        p2_2
	JMP        p2_done

p2_4:
	MOVL         $LEVELS4, BX
	VMOVD        BX, X5
	VPBROADCASTD X5, Y5
	MOVL         $MADD16, BX
	VMOVD        BX, X10
	VPBROADCASTD X10, X10

p2_4loop:
	CODES2
	VPMADDUBSW X10, X8, X8
	VPACKUSWB  X8, X8, X8
	VMOVQ      X8, (DI)
	ADDQ       $64, SI
	ADDQ       $8, DI
	DECQ       CX
	JNZ        p2_4loop
	JMP        p2_done

p2_8:
	MOVL         $LEVELS8, BX
	VMOVD        BX, X5
	VPBROADCASTD X5, Y5

p2_8loop:
	CODES2
	VMOVDQU X8, (DI)
	ADDQ    $64, SI
	ADDQ    $16, DI
	DECQ    CX
	JNZ     p2_8loop

p2_done:
	VMOVDQU Y0, (DX)
	VMOVDQU Y1, 32(DX)
	VZEROUPPER

p2_ret:
	RET

// Unpack registers: Y1 zero, Y2 scale, Y3 shifts, Y4 mask, X5 byte spread,
// Y6/Y7 values 0-7/8-15, X8 scratch. SI src, DI dst, CX chunks left.

// SPREAD2: codes of the 16 values whose spread bytes are in X6 into Y6/Y7.
#define SPREAD2 \
	VPSRLDQ   $8, X6, X8; \
	VPMOVZXBD X6, Y6; \
	VPMOVZXBD X8, Y7; \
	VPSRLVD   Y3, Y6, Y6; \
	VPSRLVD   Y3, Y7, Y7; \
	VPAND     Y4, Y6, Y6; \
	VPAND     Y4, Y7, Y7

// DEQ2: dst[0:16] = float32(Y6, Y7)·scale + zero.
#define DEQ2 \
	VCVTDQ2PS Y6, Y6; \
	VCVTDQ2PS Y7, Y7; \
	VMULPS    Y2, Y6, Y6; \
	VMULPS    Y2, Y7, Y7; \
	VADDPS    Y1, Y6, Y6; \
	VADDPS    Y1, Y7, Y7; \
	VMOVUPS   Y6, (DI); \
	VMOVUPS   Y7, 32(DI)

// func unpackAVX2(dst []float32, src []byte, zero, scale float32, bits int)
TEXT ·unpackAVX2(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	MOVQ bits+56(FP), AX
	SHRQ $4, CX
	JZ   u2_ret
	VBROADCASTSS zero+48(FP), Y1
	VBROADCASTSS scale+52(FP), Y2
	CMPQ         AX, $8
	JEQ          u2_8
	CMPQ         AX, $4
	JEQ          u2_4

	VBROADCASTI128 shift2<>(SB), Y3
	MOVL           $3, BX
	VMOVD          BX, X4
	VPBROADCASTD   X4, Y4
	VMOVDQU        bytes2<>(SB), X5

u2_2:
	VMOVD   (SI), X6
	VPSHUFB X5, X6, X6
	SPREAD2
	DEQ2
	ADDQ    $4, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     u2_2
	JMP     u2_done

u2_4:
	VBROADCASTI128 shift4<>(SB), Y3
	MOVL           $15, BX
	VMOVD          BX, X4
	VPBROADCASTD   X4, Y4
	VMOVDQU        bytes4<>(SB), X5

u2_4loop:
	VMOVQ   (SI), X6
	VPSHUFB X5, X6, X6
	SPREAD2
	DEQ2
	ADDQ    $8, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     u2_4loop
	JMP     u2_done

u2_8:
	VPMOVZXBD (SI), Y6
	VPMOVZXBD 8(SI), Y7
	DEQ2
	ADDQ      $16, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       u2_8

u2_done:
	VZEROUPPER

u2_ret:
	RET

// ---------------------------------------------------------------- minmax

// minmaxAVX512/minmaxAVX2: min and max of x and whether all of x is finite
// (len(x) ≥ 16 resp. 8; see kernels_amd64.go). Per vector v of 16/8 values:
//
//	lo_i = min(lo_i, v); hi_i = max(hi_i, v)      (VMINPS, VMAXPS)
//	bad |= bits(v − v)                             (VSUBPS, VPOR)
//
// v − v is +0 (all bits 0) for a finite value and NaN (bits ≠ 0) for NaN and
// ±Inf, so bad = 0 exactly when every value is finite; the NaN handling of
// VMINPS/VMAXPS (they return the second source) then does not matter, as lo
// and hi are unspecified when a value is not finite. Four accumulator pairs
// i = 0..3 take 4 vectors an iteration, then single vectors go to pair 0,
// and a last partial vector is loaded to end at len(x): it overlaps values
// already seen, which min, max and bad ignore. All pairs start from the
// first vector. The pairs are folded, then the lanes by halves.

// MM512(R, LO, HI): fold the 16 values in R into LO, HI and Z8 (bad).
#define MM512(R, LO, HI) \
	VMINPS R, LO, LO; \
	VMAXPS R, HI, HI; \
	VSUBPS R, R, R; \
	VPORD  R, Z8, Z8

// func minmaxAVX512(x []float32) (lo, hi float32, finite bool)
TEXT ·minmaxAVX512(SB), NOSPLIT, $0-33
	MOVQ    x_base+0(FP), SI
	MOVQ    x_len+8(FP), CX
	LEAQ    (SI)(CX*4), DX // end
	VMOVUPS (SI), Z0
	VMOVAPS Z0, Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z0, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z0, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z0, Z7
	VSUBPS  Z0, Z0, Z8
	ADDQ    $64, SI
	SUBQ    $16, CX
	CMPQ    CX, $64
	JB      mm512_one

mm512_four:
	VMOVUPS (SI), Z12
	VMOVUPS 64(SI), Z13
	VMOVUPS 128(SI), Z14
	VMOVUPS 192(SI), Z15
	MM512(Z12, Z0, Z4)
	MM512(Z13, Z1, Z5)
	MM512(Z14, Z2, Z6)
	MM512(Z15, Z3, Z7)
	ADDQ    $256, SI
	SUBQ    $64, CX
	CMPQ    CX, $64
	JAE     mm512_four

mm512_one:
	CMPQ    CX, $16
	JB      mm512_tail
	VMOVUPS (SI), Z12
	MM512(Z12, Z0, Z4)
	ADDQ    $64, SI
	SUBQ    $16, CX
	JMP     mm512_one

mm512_tail:
	TESTQ   CX, CX
	JZ      mm512_fold
	VMOVUPS -64(DX), Z12
	MM512(Z12, Z0, Z4)

mm512_fold:
	VMINPS        Z1, Z0, Z0
	VMINPS        Z3, Z2, Z2
	VMINPS        Z2, Z0, Z0
	VMAXPS        Z5, Z4, Z4
	VMAXPS        Z7, Z6, Z6
	VMAXPS        Z6, Z4, Z4
	VEXTRACTF64X4 $1, Z0, Y1
	VMINPS        Y1, Y0, Y0
	VEXTRACTF64X4 $1, Z4, Y5
	VMAXPS        Y5, Y4, Y4
	VEXTRACTF128  $1, Y0, X1
	VMINPS        X1, X0, X0
	VEXTRACTF128  $1, Y4, X5
	VMAXPS        X5, X4, X4
	VPERMILPS     $0x4e, X0, X1
	VMINPS        X1, X0, X0
	VPERMILPS     $0x4e, X4, X5
	VMAXPS        X5, X4, X4
	VPERMILPS     $0xb1, X0, X1
	VMINPS        X1, X0, X0
	VPERMILPS     $0xb1, X4, X5
	VMAXPS        X5, X4, X4
	VMOVSS        X0, lo+24(FP)
	VMOVSS        X4, hi+28(FP)
	VPTESTMD      Z8, Z8, K1
	KORTESTW      K1, K1
	SETEQ         finite+32(FP)
	VZEROUPPER
	RET

// MM2(R, LO, HI): fold the 8 values in R into LO, HI and Y8 (bad).
#define MM2(R, LO, HI) \
	VMINPS R, LO, LO; \
	VMAXPS R, HI, HI; \
	VSUBPS R, R, R; \
	VPOR   R, Y8, Y8

// func minmaxAVX2(x []float32) (lo, hi float32, finite bool)
TEXT ·minmaxAVX2(SB), NOSPLIT, $0-33
	MOVQ    x_base+0(FP), SI
	MOVQ    x_len+8(FP), CX
	LEAQ    (SI)(CX*4), DX // end
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y0, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y0, Y7
	VSUBPS  Y0, Y0, Y8
	ADDQ    $32, SI
	SUBQ    $8, CX
	CMPQ    CX, $32
	JB      mm2_one

mm2_four:
	VMOVUPS (SI), Y12
	VMOVUPS 32(SI), Y13
	VMOVUPS 64(SI), Y14
	VMOVUPS 96(SI), Y15
	MM2(Y12, Y0, Y4)
	MM2(Y13, Y1, Y5)
	MM2(Y14, Y2, Y6)
	MM2(Y15, Y3, Y7)
	ADDQ    $128, SI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JAE     mm2_four

mm2_one:
	CMPQ    CX, $8
	JB      mm2_tail
	VMOVUPS (SI), Y12
	MM2(Y12, Y0, Y4)
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     mm2_one

mm2_tail:
	TESTQ   CX, CX
	JZ      mm2_fold
	VMOVUPS -32(DX), Y12
	MM2(Y12, Y0, Y4)

mm2_fold:
	VMINPS       Y1, Y0, Y0
	VMINPS       Y3, Y2, Y2
	VMINPS       Y2, Y0, Y0
	VMAXPS       Y5, Y4, Y4
	VMAXPS       Y7, Y6, Y6
	VMAXPS       Y6, Y4, Y4
	VEXTRACTF128 $1, Y0, X1
	VMINPS       X1, X0, X0
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0x4e, X0, X1
	VMINPS       X1, X0, X0
	VPERMILPS    $0x4e, X4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0xb1, X0, X1
	VMINPS       X1, X0, X0
	VPERMILPS    $0xb1, X4, X5
	VMAXPS       X5, X4, X4
	VMOVSS       X0, lo+24(FP)
	VMOVSS       X4, hi+28(FP)
	VPTEST       Y8, Y8
	SETEQ        finite+32(FP)
	VZEROUPPER
	RET
