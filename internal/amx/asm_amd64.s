//go:build linux && amd64 && !noasm

#include "textflag.h"

// The AMX instructions are encoded by hand (the Go assembler has no
// mnemonics for them); each BYTE line names the instruction in Intel
// syntax. Only the registers named there may be used with them.
#define LDTILECFG_DI      BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x07               // ldtilecfg [rdi]
#define TILERELEASE       BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0               // tilerelease
#define TILEZERO_0        BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0               // tilezero tmm0
#define TILEZERO_1        BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8               // tilezero tmm1
#define TILEZERO_2        BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0               // tilezero tmm2
#define TILEZERO_3        BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8               // tilezero tmm3
#define LOAD_C0           BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x0f  // tileloadd tmm0,[rdi+rcx*1]
#define LOAD_C1           BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x0a  // tileloadd tmm1,[r10+rcx*1]
#define LOAD_C2           BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x0b  // tileloadd tmm2,[r11+rcx*1]
#define LOAD_C3           BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x1c; BYTE $0x0c  // tileloadd tmm3,[r12+rcx*1]
#define LOAD_A0           BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x16  // tileloadd tmm4,[rsi+rdx*1]
#define LOAD_A1           BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x10  // tileloadd tmm5,[r8+rdx*1]
#define LOAD_B0           BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x03  // tileloadd tmm6,[rbx+rax*1]
#define LOAD_B1           BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x01  // tileloadd tmm7,[r9+rax*1]
#define DP_C0_A0_B0       BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4               // tdpbf16ps tmm0,tmm4,tmm6
#define DP_C1_A0_B1       BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc               // tdpbf16ps tmm1,tmm4,tmm7
#define DP_C2_A1_B0       BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5               // tdpbf16ps tmm2,tmm5,tmm6
#define DP_C3_A1_B1       BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd               // tdpbf16ps tmm3,tmm5,tmm7
#define STORE_C0          BYTE $0xc4; BYTE $0xe2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x0f  // tilestored [rdi+rcx*1],tmm0
#define STORE_C1          BYTE $0xc4; BYTE $0xc2; BYTE $0x7a; BYTE $0x4b; BYTE $0x0c; BYTE $0x0a  // tilestored [r10+rcx*1],tmm1
#define STORE_C2          BYTE $0xc4; BYTE $0xc2; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x0b  // tilestored [r11+rcx*1],tmm2
#define STORE_C3          BYTE $0xc4; BYTE $0xc2; BYTE $0x7a; BYTE $0x4b; BYTE $0x1c; BYTE $0x0c  // tilestored [r12+rcx*1],tmm3

// func tilesAMX(cfg *[64]byte, a *uint16, lda int, b *uint32, ldb int, c *float32, ldc int, rowBlocks, colBlocks, kSteps int, accumulate bool)
//
// Registers: SI/R8 the two A row tiles, BX/R9 the two B column tiles, DI,
// R10, R11, R12 the four C tiles; DX = lda, AX = ldb, CX = ldc (the
// strides the tile loads take); R13 counts k steps. The other counters
// and pointers live in the frame.
TEXT ·tilesAMX(SB), NOSPLIT, $56-81
	MOVQ cfg+0(FP), DI
	LDTILECFG_DI
	MOVQ lda+16(FP), DX
	MOVQ ldb+32(FP), AX
	MOVQ ldc+48(FP), CX
	MOVQ AX, R8
	SHLQ $4, R8
	MOVQ R8, bstep-56(SP)           // 16 pair rows of B: one k step
	MOVQ a+8(FP), R8
	MOVQ R8, arow-8(SP)
	MOVQ c+40(FP), R8
	MOVQ R8, crow-16(SP)
	MOVQ rowBlocks+56(FP), R8
	MOVQ R8, rbleft-24(SP)

rowloop:
	MOVQ colBlocks+64(FP), R8
	MOVQ R8, cbleft-32(SP)
	MOVQ b+24(FP), R8
	MOVQ R8, bcol-40(SP)
	MOVQ crow-16(SP), R8
	MOVQ R8, ccol-48(SP)

colloop:
	MOVQ ccol-48(SP), DI
	LEAQ 64(DI), R10
	MOVQ CX, R11
	SHLQ $4, R11
	ADDQ DI, R11
	LEAQ 64(R11), R12
	CMPB accumulate+80(FP), $0
	JEQ  zero
	LOAD_C0
	LOAD_C1
	LOAD_C2
	LOAD_C3
	JMP  kinit

zero:
	TILEZERO_0
	TILEZERO_1
	TILEZERO_2
	TILEZERO_3

kinit:
	MOVQ arow-8(SP), SI
	MOVQ DX, R8
	SHLQ $4, R8
	ADDQ SI, R8
	MOVQ bcol-40(SP), BX
	LEAQ 64(BX), R9
	MOVQ kSteps+72(FP), R13

kloop:
	LOAD_A0
	LOAD_A1
	LOAD_B0
	LOAD_B1
	DP_C0_A0_B0
	DP_C1_A0_B1
	DP_C2_A1_B0
	DP_C3_A1_B1
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ bstep-56(SP), BX
	ADDQ bstep-56(SP), R9
	DECQ R13
	JNZ  kloop

	STORE_C0
	STORE_C1
	STORE_C2
	STORE_C3
	ADDQ $128, bcol-40(SP)
	ADDQ $128, ccol-48(SP)
	DECQ cbleft-32(SP)
	JNZ  colloop

	MOVQ DX, R8
	SHLQ $5, R8
	ADDQ R8, arow-8(SP)
	MOVQ CX, R8
	SHLQ $5, R8
	ADDQ R8, crow-16(SP)
	DECQ rbleft-24(SP)
	JNZ  rowloop

	TILERELEASE
	RET

// ROUND(in, out, kmax, kone, kquiet, nan, quiet) rounds eight float32 in
// in to bfloat16 bits in the top halves of out's lanes: out = in + 0x7fff +
// (bit 16 of in), NaN lanes in | quiet bit. kmax, kone and kquiet hold
// 0x7fff, 1 and 0x00400000 in every lane; nan and quiet are scratch (quiet
// may be in, which it then overwrites).
#define ROUND(in, out, kmax, kone, kquiet, nan, quiet) \
	VPSRLD    $16, in, out; \
	VPAND     kone, out, out; \
	VPADDD    kmax, out, out; \
	VPADDD    in, out, out; \
	VCMPPS    $3, in, in, nan; \
	VPOR      kquiet, in, quiet; \
	VBLENDVPS nan, quiet, out, out

// ROUND8: ROUND with the constants of CONSTS(R8, X8, Y8, X9, Y9, X10, Y10)
// and Y3, Y4 scratch.
#define ROUND8(in, out) ROUND(in, out, Y8, Y9, Y10, Y3, Y4)

// CONSTS(r, xmax, kmax, xone, kone, xquiet, kquiet) fills kmax, kone and
// kquiet with ROUND's constants, through the general register r.
#define CONSTS(r, xmax, kmax, xone, kone, xquiet, kquiet) \
	MOVL         $0x7fff, r; \
	VMOVD        r, xmax; \
	VPBROADCASTD xmax, kmax; \
	MOVL         $1, r; \
	VMOVD        r, xone; \
	VPBROADCASTD xone, kone; \
	MOVL         $0x00400000, r; \
	VMOVD        r, xquiet; \
	VPBROADCASTD xquiet, kquiet

// func roundAVX2(dst *uint16, src *float32, n int)
// n > 0, a multiple of 16.
TEXT ·roundAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	CONSTS(R8, X8, Y8, X9, Y9, X10, Y10)

roundloop:
	VMOVUPS (SI), Y0
	ROUND8(Y0, Y2)
	VMOVUPS 32(SI), Y0
	ROUND8(Y0, Y5)
	VPSRLD    $16, Y2, Y2
	VPSRLD    $16, Y5, Y5
	VPACKUSDW Y5, Y2, Y6
	VPERMQ    $0xd8, Y6, Y6
	VMOVDQU   Y6, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	SUBQ      $16, CX
	JNZ       roundloop
	VZEROUPPER
	RET

// func pairAVX2(dst *uint32, r0, r1 *float32, n int)
// n > 0, a multiple of 8: dst[j] = bits(r0[j]) | bits(r1[j])<<16.
TEXT ·pairAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ n+24(FP), CX
	CONSTS(R8, X8, Y8, X9, Y9, X10, Y10)
	MOVL         $0xffff0000, R8
	VMOVD        R8, X11
	VPBROADCASTD X11, Y11

pairloop:
	VMOVUPS (SI), Y0
	ROUND8(Y0, Y2)
	VMOVUPS (DX), Y0
	ROUND8(Y0, Y5)
	VPSRLD  $16, Y2, Y2
	VPAND   Y11, Y5, Y5
	VPOR    Y5, Y2, Y2
	VMOVDQU Y2, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     pairloop
	VZEROUPPER
	RET

// ROUNDC rounds eight float32 in reg to bfloat16 bits in the low halves of
// its lanes, with the constants in Y0 (0x7fff), Y1 (1), Y2 (quiet bit) and
// Y3, Y4 scratch.
#define ROUNDC(reg) \
	ROUND(reg, Y3, Y0, Y1, Y2, Y4, reg); \
	VPSRLD $16, Y3, reg

// STORE2 packs the rounded columns lo and hi (eight bfloat16 each) and
// stores them at (R10) and (R10)(DX*1): two rows of dst; R10 then moves
// two rows on.
#define STORE2(lo, hi) \
	VPACKUSDW  hi, lo, Y5; \
	VPERMQ     $0xd8, Y5, Y5; \
	VMOVDQU    X5, (R10); \
	VEXTRACTI128 $1, Y5, X6; \
	VMOVDQU    X6, (R10)(DX*1); \
	LEAQ       (R10)(DX*2), R10

// func transposeAVX2(dst *uint16, ds int, src *float32, ss int, rows8, cols8 int)
// Rounds and transposes rows8·8 × cols8·8 floats: dst[j·ds+i] =
// bits(src[i·ss+j]); ds and ss in elements.
TEXT ·transposeAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ds+8(FP), DX
	SHLQ $1, DX                     // dst row bytes
	MOVQ src+16(FP), SI
	MOVQ ss+24(FP), CX
	SHLQ $2, CX                     // src row bytes
	MOVQ rows8+32(FP), R12

rowblock:
	MOVQ SI, R11                    // src block (i0, j0)
	MOVQ DI, R9                     // dst block (j0, i0)
	MOVQ cols8+40(FP), R13

colblock:
	MOVQ      R11, R8
	VMOVUPS   (R8), Y8
	VMOVUPS   (R8)(CX*1), Y9
	LEAQ      (R8)(CX*2), R8
	VMOVUPS   (R8), Y10
	VMOVUPS   (R8)(CX*1), Y11
	LEAQ      (R8)(CX*2), R8
	VMOVUPS   (R8), Y12
	VMOVUPS   (R8)(CX*1), Y13
	LEAQ      (R8)(CX*2), R8
	VMOVUPS   (R8), Y14
	VMOVUPS   (R8)(CX*1), Y15
	VUNPCKLPS Y9, Y8, Y0
	VUNPCKHPS Y9, Y8, Y1
	VUNPCKLPS Y11, Y10, Y2
	VUNPCKHPS Y11, Y10, Y3
	VUNPCKLPS Y13, Y12, Y4
	VUNPCKHPS Y13, Y12, Y5
	VUNPCKLPS Y15, Y14, Y6
	VUNPCKHPS Y15, Y14, Y7
	VSHUFPS   $0x44, Y2, Y0, Y8
	VSHUFPS   $0xee, Y2, Y0, Y9
	VSHUFPS   $0x44, Y3, Y1, Y10
	VSHUFPS   $0xee, Y3, Y1, Y11
	VSHUFPS   $0x44, Y6, Y4, Y12
	VSHUFPS   $0xee, Y6, Y4, Y13
	VSHUFPS   $0x44, Y7, Y5, Y14
	VSHUFPS   $0xee, Y7, Y5, Y15
	VPERM2F128 $0x20, Y12, Y8, Y0   // column 0
	VPERM2F128 $0x20, Y13, Y9, Y1   // column 1
	VPERM2F128 $0x20, Y14, Y10, Y2  // column 2
	VPERM2F128 $0x20, Y15, Y11, Y3  // column 3
	VPERM2F128 $0x31, Y12, Y8, Y4   // column 4
	VPERM2F128 $0x31, Y13, Y9, Y5   // column 5
	VPERM2F128 $0x31, Y14, Y10, Y6  // column 6
	VPERM2F128 $0x31, Y15, Y11, Y7  // column 7
	VMOVDQU   Y0, Y8
	VMOVDQU   Y1, Y9
	VMOVDQU   Y2, Y10
	VMOVDQU   Y3, Y11
	VMOVDQU   Y4, Y12
	VMOVDQU   Y5, Y13
	VMOVDQU   Y6, Y14
	VMOVDQU   Y7, Y15
	CONSTS(R8, X0, Y0, X1, Y1, X2, Y2)
	ROUNDC(Y8)
	ROUNDC(Y9)
	ROUNDC(Y10)
	ROUNDC(Y11)
	ROUNDC(Y12)
	ROUNDC(Y13)
	ROUNDC(Y14)
	ROUNDC(Y15)
	MOVQ R9, R10
	STORE2(Y8, Y9)
	STORE2(Y10, Y11)
	STORE2(Y12, Y13)
	STORE2(Y14, Y15)
	ADDQ $32, R11                   // eight columns on in src
	LEAQ (R9)(DX*8), R9             // eight rows on in dst
	DECQ R13
	JNZ  colblock

	LEAQ (SI)(CX*8), SI             // eight rows on in src
	ADDQ $16, DI                    // eight columns on in dst
	DECQ R12
	JNZ  rowblock
	VZEROUPPER
	RET
