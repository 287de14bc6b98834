//go:build !noasm

#include "textflag.h"

// The kernels of heads_amd64.go (declarations and reference loops there).
// The loops of accumHeads8AVX2, accumHeads8AVX512 and gradEdges8AVX2 run
// one edge body (a macro: ACCUM_EDGE, ACCUM_EDGE512, GRAD_EDGE) twice:
// with the prefetch of the rows 8 edges ahead while one exists, then
// without for the last 8. The macros come first, then the constants, then
// the functions.

// PREFETCH_AHEAD: the 256 bytes of the row of the idx entry 8 ahead of R8
// (x in SI, stride in bytes in DX; AX clobbered).
#define PREFETCH_AHEAD \
	MOVLQSX 32(R8), AX; \
	IMULQ DX, AX; \
	PREFETCHT0 (SI)(AX*1); \
	PREFETCHT0 64(SI)(AX*1); \
	PREFETCHT0 128(SI)(AX*1); \
	PREFETCHT0 192(SI)(AX*1); \
	PREFETCHT0 252(SI)(AX*1)

// ROW_AT_R8: AX = the address of the row of the idx entry at R8.
#define ROW_AT_R8 \
	MOVLQSX (R8), AX; \
	IMULQ DX, AX; \
	ADDQ SI, AX

// ACCUM_EDGE: one edge of accumHeads8AVX2 (registers there); ends with
// DECQ CX, so its flags say whether edges are left.
#define ACCUM_EDGE \
	ROW_AT_R8; \
	VBROADCASTSS 0(R9), Y8; \
	VFMADD231PS 0(AX), Y8, Y0; \
	VBROADCASTSS 4(R9), Y9; \
	VFMADD231PS 32(AX), Y9, Y1; \
	VBROADCASTSS 8(R9), Y10; \
	VFMADD231PS 64(AX), Y10, Y2; \
	VBROADCASTSS 12(R9), Y11; \
	VFMADD231PS 96(AX), Y11, Y3; \
	VBROADCASTSS 16(R9), Y12; \
	VFMADD231PS 128(AX), Y12, Y4; \
	VBROADCASTSS 20(R9), Y13; \
	VFMADD231PS 160(AX), Y13, Y5; \
	VBROADCASTSS 24(R9), Y14; \
	VFMADD231PS 192(AX), Y14, Y6; \
	VBROADCASTSS 28(R9), Y15; \
	VFMADD231PS 224(AX), Y15, Y7; \
	ADDQ $4, R8; \
	ADDQ R10, R9; \
	DECQ CX

// ACCUM_EDGE512: one edge of accumHeads8AVX512 (registers there); ends
// with DECQ CX, so its flags say whether edges are left.
#define ACCUM_EDGE512 \
	ROW_AT_R8; \
	VMOVUPS 0(R9), Y8; \
	VPERMPS Z8, Z20, Z9; \
	VFMADD231PS 0(AX), Z9, Z0; \
	VPERMPS Z8, Z21, Z10; \
	VFMADD231PS 64(AX), Z10, Z1; \
	VPERMPS Z8, Z22, Z11; \
	VFMADD231PS 128(AX), Z11, Z2; \
	VPERMPS Z8, Z23, Z12; \
	VFMADD231PS 192(AX), Z12, Z3; \
	ADDQ $4, R8; \
	ADDQ R10, R9; \
	DECQ CX

// EXP8(X, T, N, R, P): X = rowk.ExpFlush(X) in every lane, its operations
// in its order (no fused multiply-add, so the lanes equal the Go twin's
// values bit for bit): x clamped to [ExpLo, ExpHi] into T (a NaN stays),
// N the lanes below ExpLo (set to 0 at the end), X the exponent 2^n, R
// and P temporaries. Constants from expc<>.
#define EXP8(X, T, N, R, P) \
	VMOVUPS expc<>+352(SB), T; \
	VMAXPS X, T, T; \
	VMOVUPS expc<>+384(SB), N; \
	VMINPS T, N, T; \
	VCMPPS $1, expc<>+352(SB), X, N; \
	VMULPS expc<>+0(SB), T, X; \
	VADDPS expc<>+32(SB), X, X; \
	VSUBPS expc<>+32(SB), X, R; \
	VPADDD expc<>+416(SB), X, X; \
	VPSLLD $23, X, X; \
	VMULPS expc<>+64(SB), R, P; \
	VSUBPS P, T, T; \
	VMULPS expc<>+96(SB), R, P; \
	VSUBPS P, T, T; \
	VMULPS expc<>+128(SB), T, P; \
	VADDPS expc<>+160(SB), P, P; \
	VMULPS T, P, P; \
	VADDPS expc<>+192(SB), P, P; \
	VMULPS T, P, P; \
	VADDPS expc<>+224(SB), P, P; \
	VMULPS T, P, P; \
	VADDPS expc<>+256(SB), P, P; \
	VMULPS T, P, P; \
	VADDPS expc<>+288(SB), P, P; \
	VMULPS T, T, R; \
	VMULPS R, P, P; \
	VADDPS T, P, P; \
	VADDPS expc<>+320(SB), P, P; \
	VMULPS X, P, X; \
	VANDNPS X, N, X

// GRAD_EDGE: one edge of gradEdges8AVX2 (registers there); ends with DECQ
// CX, so its flags say whether edges are left.
#define GRAD_EDGE \
	ROW_AT_R8; \
	VMULPS 0(AX), Y8, Y0; \
	VMULPS 32(AX), Y9, Y1; \
	VHADDPS Y1, Y0, Y0; \
	VMULPS 64(AX), Y10, Y1; \
	VMULPS 96(AX), Y11, Y2; \
	VHADDPS Y2, Y1, Y1; \
	VHADDPS Y1, Y0, Y0; \
	VMULPS 128(AX), Y12, Y1; \
	VMULPS 160(AX), Y13, Y2; \
	VHADDPS Y2, Y1, Y1; \
	VMULPS 192(AX), Y14, Y2; \
	VMULPS 224(AX), Y15, Y3; \
	VHADDPS Y3, Y2, Y2; \
	VHADDPS Y2, Y1, Y1; \
	VPERM2F128 $0x20, Y1, Y0, Y2; \
	VPERM2F128 $0x31, Y1, Y0, Y3; \
	VADDPS Y3, Y2, Y0; \
	MOVLQSX (R8), AX; \
	IMULQ R9, AX; \
	VMOVUPS (BX)(AX*1), Y1; \
	MOVLQSX (R8), AX; \
	IMULQ R11, AX; \
	ADDQ R10, AX; \
	VADDPS (AX), Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VADDPS Y2, Y1, Y2; \
	VMOVUPS expc<>+320(SB), Y3; \
	VBLENDVPS Y2, 0(SP), Y3, Y3; \
	VMULPS Y3, Y1, Y1; \
	VSUBPS (AX)(R12*1), Y1, Y1; \
	EXP8(Y1, Y2, Y4, Y5, Y6); \
	VMULPS (AX)(R12*2), Y1, Y5; \
	MOVBLZX (R13), AX; \
	VMOVD AX, X4; \
	VPBROADCASTD X4, Y4; \
	VPAND bits<>(SB), Y4, Y4; \
	VPCMPEQD bits<>(SB), Y4, Y4; \
	VMULPS 32(SP), Y1, Y2; \
	VANDPS Y4, Y2, Y2; \
	VMOVUPS Y2, (DI); \
	VMULPS Y0, Y2, Y2; \
	VSUBPS Y5, Y2, Y2; \
	VMULPS Y3, Y2, Y2; \
	VADDPS Y2, Y7, Y7; \
	ADDQ $4, R8; \
	ADDQ 64(SP), DI; \
	ADDQ 72(SP), R13; \
	DECQ CX


// MUL64(X, CL, CH, T1, T2, T3): X = X·C mod 2^64 in every 64-bit lane, C's
// low and high 32 bits in CL and CH: lo(X)·lo(C) + ((hi(X)·lo(C) +
// lo(X)·hi(C)) << 32) (AVX2 has no 64-bit multiply).
#define MUL64(X, CL, CH, T1, T2, T3) \
	VPMULUDQ CL, X, T1; \
	VPSRLQ $32, X, T2; \
	VPMULUDQ CL, T2, T2; \
	VPMULUDQ CH, X, T3; \
	VPADDQ T3, T2, T2; \
	VPSLLQ $32, T2, T2; \
	VPADDQ T2, T1, X

// MIX64(X, T1, T2, T3): X = mix.Mix64(X) in every 64-bit lane, the
// multipliers' halves in Y12–Y15.
#define MIX64(X, T1, T2, T3) \
	VPSRLQ $30, X, T1; \
	VPXOR T1, X, X; \
	MUL64(X, Y12, Y13, T1, T2, T3); \
	VPSRLQ $27, X, T1; \
	VPXOR T1, X, X; \
	MUL64(X, Y14, Y15, T1, T2, T3); \
	VPSRLQ $31, X, T1; \
	VPXOR T1, X, X

// MIX64Q(X, T): mix.Mix64 on the eight 64-bit lanes of a zmm register
// with the 64-bit products of AVX-512DQ (VPMULLQ; the multipliers in Z23,
// Z24).
#define MIX64Q(X, T) \
	VPSRLQ $30, X, T; \
	VPXORQ T, X, X; \
	VPMULLQ Z23, X, X; \
	VPSRLQ $27, X, T; \
	VPXORQ T, X, X; \
	VPMULLQ Z24, X, X; \
	VPSRLQ $31, X, T; \
	VPXORQ T, X, X

// expc<>: the constants of rowk.ExpFlush (internal/rowk/softmax.go), eight copies each (one ymm
// vector) at offsets of 32 bytes: log2(e), 1.5·2^23, ln 2's high and low
// parts, the polynomial's c0–c5, 1, ExpLo, ExpHi, the integer 127 −
// bits(1.5·2^23) that turns t's bits into the exponent of 2^n, and −Inf.
DATA expc<>+0(SB)/4, $0x3fb8aa3b
DATA expc<>+4(SB)/4, $0x3fb8aa3b
DATA expc<>+8(SB)/4, $0x3fb8aa3b
DATA expc<>+12(SB)/4, $0x3fb8aa3b
DATA expc<>+16(SB)/4, $0x3fb8aa3b
DATA expc<>+20(SB)/4, $0x3fb8aa3b
DATA expc<>+24(SB)/4, $0x3fb8aa3b
DATA expc<>+28(SB)/4, $0x3fb8aa3b
DATA expc<>+32(SB)/4, $0x4b400000
DATA expc<>+36(SB)/4, $0x4b400000
DATA expc<>+40(SB)/4, $0x4b400000
DATA expc<>+44(SB)/4, $0x4b400000
DATA expc<>+48(SB)/4, $0x4b400000
DATA expc<>+52(SB)/4, $0x4b400000
DATA expc<>+56(SB)/4, $0x4b400000
DATA expc<>+60(SB)/4, $0x4b400000
DATA expc<>+64(SB)/4, $0x3f318000
DATA expc<>+68(SB)/4, $0x3f318000
DATA expc<>+72(SB)/4, $0x3f318000
DATA expc<>+76(SB)/4, $0x3f318000
DATA expc<>+80(SB)/4, $0x3f318000
DATA expc<>+84(SB)/4, $0x3f318000
DATA expc<>+88(SB)/4, $0x3f318000
DATA expc<>+92(SB)/4, $0x3f318000
DATA expc<>+96(SB)/4, $0xb95e8083
DATA expc<>+100(SB)/4, $0xb95e8083
DATA expc<>+104(SB)/4, $0xb95e8083
DATA expc<>+108(SB)/4, $0xb95e8083
DATA expc<>+112(SB)/4, $0xb95e8083
DATA expc<>+116(SB)/4, $0xb95e8083
DATA expc<>+120(SB)/4, $0xb95e8083
DATA expc<>+124(SB)/4, $0xb95e8083
DATA expc<>+128(SB)/4, $0x39506967
DATA expc<>+132(SB)/4, $0x39506967
DATA expc<>+136(SB)/4, $0x39506967
DATA expc<>+140(SB)/4, $0x39506967
DATA expc<>+144(SB)/4, $0x39506967
DATA expc<>+148(SB)/4, $0x39506967
DATA expc<>+152(SB)/4, $0x39506967
DATA expc<>+156(SB)/4, $0x39506967
DATA expc<>+160(SB)/4, $0x3ab743ce
DATA expc<>+164(SB)/4, $0x3ab743ce
DATA expc<>+168(SB)/4, $0x3ab743ce
DATA expc<>+172(SB)/4, $0x3ab743ce
DATA expc<>+176(SB)/4, $0x3ab743ce
DATA expc<>+180(SB)/4, $0x3ab743ce
DATA expc<>+184(SB)/4, $0x3ab743ce
DATA expc<>+188(SB)/4, $0x3ab743ce
DATA expc<>+192(SB)/4, $0x3c088908
DATA expc<>+196(SB)/4, $0x3c088908
DATA expc<>+200(SB)/4, $0x3c088908
DATA expc<>+204(SB)/4, $0x3c088908
DATA expc<>+208(SB)/4, $0x3c088908
DATA expc<>+212(SB)/4, $0x3c088908
DATA expc<>+216(SB)/4, $0x3c088908
DATA expc<>+220(SB)/4, $0x3c088908
DATA expc<>+224(SB)/4, $0x3d2aa9c1
DATA expc<>+228(SB)/4, $0x3d2aa9c1
DATA expc<>+232(SB)/4, $0x3d2aa9c1
DATA expc<>+236(SB)/4, $0x3d2aa9c1
DATA expc<>+240(SB)/4, $0x3d2aa9c1
DATA expc<>+244(SB)/4, $0x3d2aa9c1
DATA expc<>+248(SB)/4, $0x3d2aa9c1
DATA expc<>+252(SB)/4, $0x3d2aa9c1
DATA expc<>+256(SB)/4, $0x3e2aaaaa
DATA expc<>+260(SB)/4, $0x3e2aaaaa
DATA expc<>+264(SB)/4, $0x3e2aaaaa
DATA expc<>+268(SB)/4, $0x3e2aaaaa
DATA expc<>+272(SB)/4, $0x3e2aaaaa
DATA expc<>+276(SB)/4, $0x3e2aaaaa
DATA expc<>+280(SB)/4, $0x3e2aaaaa
DATA expc<>+284(SB)/4, $0x3e2aaaaa
DATA expc<>+288(SB)/4, $0x3f000000
DATA expc<>+292(SB)/4, $0x3f000000
DATA expc<>+296(SB)/4, $0x3f000000
DATA expc<>+300(SB)/4, $0x3f000000
DATA expc<>+304(SB)/4, $0x3f000000
DATA expc<>+308(SB)/4, $0x3f000000
DATA expc<>+312(SB)/4, $0x3f000000
DATA expc<>+316(SB)/4, $0x3f000000
DATA expc<>+320(SB)/4, $0x3f800000
DATA expc<>+324(SB)/4, $0x3f800000
DATA expc<>+328(SB)/4, $0x3f800000
DATA expc<>+332(SB)/4, $0x3f800000
DATA expc<>+336(SB)/4, $0x3f800000
DATA expc<>+340(SB)/4, $0x3f800000
DATA expc<>+344(SB)/4, $0x3f800000
DATA expc<>+348(SB)/4, $0x3f800000
DATA expc<>+352(SB)/4, $0xc2aeac4f
DATA expc<>+356(SB)/4, $0xc2aeac4f
DATA expc<>+360(SB)/4, $0xc2aeac4f
DATA expc<>+364(SB)/4, $0xc2aeac4f
DATA expc<>+368(SB)/4, $0xc2aeac4f
DATA expc<>+372(SB)/4, $0xc2aeac4f
DATA expc<>+376(SB)/4, $0xc2aeac4f
DATA expc<>+380(SB)/4, $0xc2aeac4f
DATA expc<>+384(SB)/4, $0x42b00000
DATA expc<>+388(SB)/4, $0x42b00000
DATA expc<>+392(SB)/4, $0x42b00000
DATA expc<>+396(SB)/4, $0x42b00000
DATA expc<>+400(SB)/4, $0x42b00000
DATA expc<>+404(SB)/4, $0x42b00000
DATA expc<>+408(SB)/4, $0x42b00000
DATA expc<>+412(SB)/4, $0x42b00000
DATA expc<>+416(SB)/4, $0xb4c0007f
DATA expc<>+420(SB)/4, $0xb4c0007f
DATA expc<>+424(SB)/4, $0xb4c0007f
DATA expc<>+428(SB)/4, $0xb4c0007f
DATA expc<>+432(SB)/4, $0xb4c0007f
DATA expc<>+436(SB)/4, $0xb4c0007f
DATA expc<>+440(SB)/4, $0xb4c0007f
DATA expc<>+444(SB)/4, $0xb4c0007f
DATA expc<>+448(SB)/4, $0xff800000
DATA expc<>+452(SB)/4, $0xff800000
DATA expc<>+456(SB)/4, $0xff800000
DATA expc<>+460(SB)/4, $0xff800000
DATA expc<>+464(SB)/4, $0xff800000
DATA expc<>+468(SB)/4, $0xff800000
DATA expc<>+472(SB)/4, $0xff800000
DATA expc<>+476(SB)/4, $0xff800000
GLOBL expc<>(SB), RODATA|NOPTR, $480

// bits<>: the int32s 1, 2, 4, …, 128, to turn an edge's keep byte into a
// lane mask (lane j all ones when bit j is set).
DATA bits<>+0(SB)/4, $1
DATA bits<>+4(SB)/4, $2
DATA bits<>+8(SB)/4, $4
DATA bits<>+12(SB)/4, $8
DATA bits<>+16(SB)/4, $16
DATA bits<>+20(SB)/4, $32
DATA bits<>+24(SB)/4, $64
DATA bits<>+28(SB)/4, $128
GLOBL bits<>(SB), RODATA|NOPTR, $32

// mixc<>: the low and high 32 bits of mix.Mix64's two multipliers.
DATA mixc<>+0(SB)/8, $0x1ce4e5b9
DATA mixc<>+8(SB)/8, $0xbf58476d
DATA mixc<>+16(SB)/8, $0x133111eb
DATA mixc<>+24(SB)/8, $0x94d049bb
GLOBL mixc<>(SB), RODATA|NOPTR, $32

// wperm<>: VPERMPS indices spreading eight weights over four zmm registers
// of two heads' columns each: 0 ×8, 1 ×8, then 2, 3; 4, 5; 6, 7.
DATA wperm<>+0(SB)/4, $0
DATA wperm<>+4(SB)/4, $0
DATA wperm<>+8(SB)/4, $0
DATA wperm<>+12(SB)/4, $0
DATA wperm<>+16(SB)/4, $0
DATA wperm<>+20(SB)/4, $0
DATA wperm<>+24(SB)/4, $0
DATA wperm<>+28(SB)/4, $0
DATA wperm<>+32(SB)/4, $1
DATA wperm<>+36(SB)/4, $1
DATA wperm<>+40(SB)/4, $1
DATA wperm<>+44(SB)/4, $1
DATA wperm<>+48(SB)/4, $1
DATA wperm<>+52(SB)/4, $1
DATA wperm<>+56(SB)/4, $1
DATA wperm<>+60(SB)/4, $1
DATA wperm<>+64(SB)/4, $2
DATA wperm<>+68(SB)/4, $2
DATA wperm<>+72(SB)/4, $2
DATA wperm<>+76(SB)/4, $2
DATA wperm<>+80(SB)/4, $2
DATA wperm<>+84(SB)/4, $2
DATA wperm<>+88(SB)/4, $2
DATA wperm<>+92(SB)/4, $2
DATA wperm<>+96(SB)/4, $3
DATA wperm<>+100(SB)/4, $3
DATA wperm<>+104(SB)/4, $3
DATA wperm<>+108(SB)/4, $3
DATA wperm<>+112(SB)/4, $3
DATA wperm<>+116(SB)/4, $3
DATA wperm<>+120(SB)/4, $3
DATA wperm<>+124(SB)/4, $3
DATA wperm<>+128(SB)/4, $4
DATA wperm<>+132(SB)/4, $4
DATA wperm<>+136(SB)/4, $4
DATA wperm<>+140(SB)/4, $4
DATA wperm<>+144(SB)/4, $4
DATA wperm<>+148(SB)/4, $4
DATA wperm<>+152(SB)/4, $4
DATA wperm<>+156(SB)/4, $4
DATA wperm<>+160(SB)/4, $5
DATA wperm<>+164(SB)/4, $5
DATA wperm<>+168(SB)/4, $5
DATA wperm<>+172(SB)/4, $5
DATA wperm<>+176(SB)/4, $5
DATA wperm<>+180(SB)/4, $5
DATA wperm<>+184(SB)/4, $5
DATA wperm<>+188(SB)/4, $5
DATA wperm<>+192(SB)/4, $6
DATA wperm<>+196(SB)/4, $6
DATA wperm<>+200(SB)/4, $6
DATA wperm<>+204(SB)/4, $6
DATA wperm<>+208(SB)/4, $6
DATA wperm<>+212(SB)/4, $6
DATA wperm<>+216(SB)/4, $6
DATA wperm<>+220(SB)/4, $6
DATA wperm<>+224(SB)/4, $7
DATA wperm<>+228(SB)/4, $7
DATA wperm<>+232(SB)/4, $7
DATA wperm<>+236(SB)/4, $7
DATA wperm<>+240(SB)/4, $7
DATA wperm<>+244(SB)/4, $7
DATA wperm<>+248(SB)/4, $7
DATA wperm<>+252(SB)/4, $7
GLOBL wperm<>(SB), RODATA|NOPTR, $256

// mixq<>: mix.Mix64's two multipliers, then 1<<56 (the step from one
// head's offset to the next) and 1.
DATA mixq<>+0(SB)/8, $0xbf58476d1ce4e5b9
DATA mixq<>+8(SB)/8, $0x94d049bb133111eb
DATA mixq<>+16(SB)/8, $0x0100000000000000
DATA mixq<>+24(SB)/8, $1
GLOBL mixq<>(SB), RODATA|NOPTR, $32

// lanemask<>: the mask of the first n lanes at byte n (1 ≤ n ≤ 8).
DATA lanemask<>+0(SB)/8, $0x7f3f1f0f070301ff
DATA lanemask<>+8(SB)/1, $0xff
GLOBL lanemask<>(SB), RODATA|NOPTR, $9

// tailmask<>: eight all-ones int32s then eight zero ones; the 8-lane mask
// of the first r values starts at byte 32 − 4·r.
DATA tailmask<>+0(SB)/8, $0xffffffffffffffff
DATA tailmask<>+8(SB)/8, $0xffffffffffffffff
DATA tailmask<>+16(SB)/8, $0xffffffffffffffff
DATA tailmask<>+24(SB)/8, $0xffffffffffffffff
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// func accumHeads8AVX2(out, x []float32, stride int, idx []int32, w []float32, wstride int)
// Registers: DI out, SI x, DX stride in bytes, R8 the next idx entry, CX
// edges left, R9 the edge's weights, R10 wstride in bytes, R11 edges left
// with an entry 8 ahead to prefetch, AX the source row; Y0–Y7 the 64
// sums, Y8–Y15 the broadcast weights.
TEXT ·accumHeads8AVX2(SB), NOSPLIT, $0-112
	MOVQ out_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ stride+48(FP), DX
	SHLQ $2, DX
	MOVQ idx_base+56(FP), R8
	MOVQ idx_len+64(FP), CX
	MOVQ w_base+80(FP), R9
	MOVQ wstride+104(FP), R10
	SHLQ $2, R10
	TESTQ CX, CX
	JZ done
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	MOVQ CX, R11
	SUBQ $8, R11
	JLE tail

ahead:
	PREFETCH_AHEAD
	ACCUM_EDGE
	DECQ R11
	JNZ ahead

tail:
	ACCUM_EDGE
	JNZ tail
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER

done:
	RET

// func accumHeads8AVX512(out, x []float32, stride int, idx []int32, w []float32, wstride int)
// Registers: as accumHeads8AVX2's; Z0–Z3 the 64 sums (two heads each),
// Y8 the edge's eight weights, Z9–Z12 them spread over two heads' columns
// (VPERMPS by the indices wperm<> in Z20–Z23).
TEXT ·accumHeads8AVX512(SB), NOSPLIT, $0-112
	MOVQ out_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ stride+48(FP), DX
	SHLQ $2, DX
	MOVQ idx_base+56(FP), R8
	MOVQ idx_len+64(FP), CX
	MOVQ w_base+80(FP), R9
	MOVQ wstride+104(FP), R10
	SHLQ $2, R10
	TESTQ CX, CX
	JZ accz
	VMOVDQU32 wperm<>+0(SB), Z20
	VMOVDQU32 wperm<>+64(SB), Z21
	VMOVDQU32 wperm<>+128(SB), Z22
	VMOVDQU32 wperm<>+192(SB), Z23
	VMOVUPS 0(DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	MOVQ CX, R11
	SUBQ $8, R11
	JLE acczt

acczahead:
	PREFETCH_AHEAD
	ACCUM_EDGE512
	DECQ R11
	JNZ acczahead

acczt:
	ACCUM_EDGE512
	JNZ acczt
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VZEROUPPER

accz:
	RET

// func prefetchRowsAVX2(x []float32, stride int, idx []int32, bytes int)
// Registers: SI x, DX stride in bytes, R8 the next idx entry, CX entries
// left, R9 bytes, AX the row, BX the offset in it.
TEXT ·prefetchRowsAVX2(SB), NOSPLIT, $0-64
	MOVQ x_base+0(FP), SI
	MOVQ stride+24(FP), DX
	SHLQ $2, DX
	MOVQ idx_base+32(FP), R8
	MOVQ idx_len+40(FP), CX
	MOVQ bytes+56(FP), R9
	TESTQ CX, CX
	JZ pfdone

pfrow:
	ROW_AT_R8
	XORQ BX, BX

pfline:
	PREFETCHT0 (AX)(BX*1)
	ADDQ $64, BX
	CMPQ BX, R9
	JLT pfline
	ADDQ $4, R8
	DECQ CX
	JNZ pfrow

pfdone:
	RET

// func expAll8AVX2(x []float32)
// Registers: DI the next 8 values, CX vectors left; Y0 the values, Y1–Y4
// EXP8's temporaries.
TEXT ·expAll8AVX2(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), DI
	MOVQ x_len+8(FP), CX
	SHRQ $3, CX
	JZ expdone

exploop:
	VMOVUPS (DI), Y0
	EXP8(Y0, Y1, Y2, Y3, Y4)
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ exploop
	VZEROUPPER

expdone:
	RET

// func gradEdges8AVX2(w []float32, wstride int, x []float32, stride int, idx []int32, b, a []float32, astride int, t []float32, tstride, toff int, keep []uint8, kstride int, slope, scale float32, sum []float32)
// Registers: DI the edge's weights, SI x, DX stride in bytes, R8 the next
// idx entry, CX edges left, BX a, R9 astride in bytes, R10 t, R11 tstride
// in bytes, R12 toff in bytes, R13 the edge's keep byte, AX the row; Y8–Y15
// b, Y7 the sums; per edge Y0 the dots (Y0–Y3 while their products are
// summed in pairwise trees, VHADDPS), Y1 e then l − M then P, Y3 LeakyReLU'(e), Y4 the keep
// mask, Y5 P·cd, Y2 W then de, Y2/Y4–Y6 EXP8's temporaries. Frame: the
// slope and the scale broadcast (0 and 32), wstride and kstride in bytes
// (64, 72).
TEXT ·gradEdges8AVX2(SB), NOSPLIT, $80-248
	MOVQ w_base+0(FP), DI
	MOVQ wstride+24(FP), AX
	SHLQ $2, AX
	MOVQ AX, 64(SP)
	MOVQ x_base+32(FP), SI
	MOVQ stride+56(FP), DX
	SHLQ $2, DX
	MOVQ idx_base+64(FP), R8
	MOVQ idx_len+72(FP), CX
	MOVQ b_base+88(FP), AX
	VMOVUPS 0(AX), Y8
	VMOVUPS 32(AX), Y9
	VMOVUPS 64(AX), Y10
	VMOVUPS 96(AX), Y11
	VMOVUPS 128(AX), Y12
	VMOVUPS 160(AX), Y13
	VMOVUPS 192(AX), Y14
	VMOVUPS 224(AX), Y15
	MOVQ a_base+112(FP), BX
	MOVQ astride+136(FP), R9
	SHLQ $2, R9
	MOVQ t_base+144(FP), R10
	MOVQ tstride+168(FP), R11
	SHLQ $2, R11
	MOVQ toff+176(FP), R12
	SHLQ $2, R12
	MOVQ keep_base+184(FP), R13
	MOVQ kstride+208(FP), AX
	MOVQ AX, 72(SP)
	VBROADCASTSS slope+216(FP), Y0
	VMOVUPS Y0, 0(SP)
	VBROADCASTSS scale+220(FP), Y0
	VMOVUPS Y0, 32(SP)
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JZ gradstore
	CMPQ CX, $8
	JLE gradtail

gradahead:
	PREFETCH_AHEAD
	MOVLQSX 32(R8), AX
	IMULQ R9, AX
	PREFETCHT0 (BX)(AX*1)
	MOVLQSX 32(R8), AX
	IMULQ R11, AX
	PREFETCHT0 (R10)(AX*1)
	PREFETCHT0 64(R10)(AX*1)
	GRAD_EDGE
	CMPQ CX, $8
	JG gradahead

gradtail:
	GRAD_EDGE
	JNZ gradtail

gradstore:
	MOVQ sum_base+224(FP), AX
	VMOVUPS Y7, (AX)
	VZEROUPPER
	RET

// func softmax8AVX2(p []float32, pstride int, src []float32, sstride int, idx []int32, d []float32, slope float32, m, s []float32, keep []uint8, kstride int, scale float32)
// Registers: DI the edge's scores, SI src, DX sstride in bytes, R8 the
// next idx entry, CX edges left, R9 pstride in bytes, R10 p, BX the edge
// count, AX the source terms; first pass: Y0 d, Y1 the slope, Y2 1, Y3
// the max, Y4 e then l, Y5 e + 0, Y6 LeakyReLU'(e); second pass: Y3 the
// max, Y7 the sums, Y6 the scale, R11 the edge's keep byte, R12 kstride,
// Y0 l − M then P, Y1 the keep mask then W, Y1/Y2/Y4/Y5 EXP8's
// temporaries.
TEXT ·softmax8AVX2(SB), NOSPLIT, $0-204
	MOVQ p_base+0(FP), R10
	MOVQ pstride+24(FP), R9
	SHLQ $2, R9
	MOVQ src_base+32(FP), SI
	MOVQ sstride+56(FP), DX
	SHLQ $2, DX
	MOVQ idx_base+64(FP), R8
	MOVQ idx_len+72(FP), BX
	MOVQ d_base+88(FP), AX
	VMOVUPS (AX), Y0
	VBROADCASTSS slope+112(FP), Y1
	VMOVUPS expc<>+320(SB), Y2
	VMOVUPS expc<>+448(SB), Y3
	VXORPS Y7, Y7, Y7
	MOVQ BX, CX
	MOVQ R10, DI
	TESTQ CX, CX
	JZ softstore

softscore:
	CMPQ CX, $8
	JLE softnow
	MOVLQSX 32(R8), AX
	IMULQ DX, AX
	PREFETCHT0 (SI)(AX*1)

softnow:
	MOVLQSX (R8), AX
	IMULQ DX, AX
	VADDPS (SI)(AX*1), Y0, Y4
	VADDPS Y7, Y4, Y5
	VBLENDVPS Y5, Y1, Y2, Y6
	VMULPS Y6, Y4, Y4
	VMOVUPS Y4, (DI)
	VMAXPS Y4, Y3, Y3
	ADDQ $4, R8
	ADDQ R9, DI
	DECQ CX
	JNZ softscore
	MOVQ BX, CX
	MOVQ R10, DI
	MOVQ keep_base+168(FP), R11
	MOVQ kstride+192(FP), R12
	VBROADCASTSS scale+200(FP), Y6

softexp:
	VMOVUPS (DI), Y0
	VSUBPS Y3, Y0, Y0
	EXP8(Y0, Y1, Y2, Y4, Y5)
	VADDPS Y0, Y7, Y7
	MOVBLZX (R11), AX
	VMOVD AX, X1
	VPBROADCASTD X1, Y1
	VPAND bits<>(SB), Y1, Y1
	VPCMPEQD bits<>(SB), Y1, Y1
	VMULPS Y6, Y0, Y0
	VANDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ R9, DI
	ADDQ R12, R11
	DECQ CX
	JNZ softexp

softstore:
	MOVQ m_base+120(FP), AX
	VMOVUPS Y3, (AX)
	MOVQ s_base+144(FP), AX
	VMOVUPS Y7, (AX)
	VZEROUPPER
	RET

// func keepBytes8AVX2(keep []uint8, kstride int, eh []uint64, hx *[8]uint64, thr int64)
// Registers: DI the edge's keep byte, R9 kstride, SI the next hash, CX
// hashes left, AX/BX the two halves' mask bits; Y12–Y15 the low and high
// 32 bits of Mix64's multipliers (one a 64-bit lane), Y10/Y11 hx, Y9 thr
// − 1 (n ≥ thr as the signed n > thr − 1 of VPCMPGTQ);
// per edge Y0 its hash, Y1/Y2 heads 0–3 and 4–7, Y3–Y8 MIX64's
// temporaries.
TEXT ·keepBytes8AVX2(SB), NOSPLIT, $0-72
	MOVQ keep_base+0(FP), DI
	MOVQ kstride+24(FP), R9
	MOVQ eh_base+32(FP), SI
	MOVQ eh_len+40(FP), CX
	MOVQ hx+56(FP), AX
	VMOVDQU (AX), Y10
	VMOVDQU 32(AX), Y11
	MOVQ thr+64(FP), AX
	DECQ AX
	MOVQ AX, X9
	VPBROADCASTQ X9, Y9
	VPBROADCASTQ mixc<>+0(SB), Y12
	VPBROADCASTQ mixc<>+8(SB), Y13
	VPBROADCASTQ mixc<>+16(SB), Y14
	VPBROADCASTQ mixc<>+24(SB), Y15
	TESTQ CX, CX
	JZ keepdone

keeploop:
	VPBROADCASTQ (SI), Y0
	VPXOR Y10, Y0, Y1
	VPXOR Y11, Y0, Y2
	MIX64(Y1, Y3, Y4, Y5)
	MIX64(Y2, Y6, Y7, Y8)
	VPSRLQ $40, Y1, Y1
	VPSRLQ $40, Y2, Y2
	VPCMPGTQ Y9, Y1, Y1
	VPCMPGTQ Y9, Y2, Y2
	VMOVMSKPD Y1, AX
	VMOVMSKPD Y2, BX
	SHLQ $4, BX
	ORQ BX, AX
	MOVB AX, (DI)
	ADDQ R9, DI
	ADDQ $8, SI
	DECQ CX
	JNZ keeploop
	VZEROUPPER

keepdone:
	RET

// func dotRowsAVX2(d []float32, dstride int, x []float32, stride int, idx []int32, b []float32)
// Registers: DI the edge's dot, R10 dstride in bytes, SI x, DX stride in
// bytes, R8 the next idx entry, CX edges left, BX b, R12 the bytes of b's
// whole vectors, R13 len(b) in bytes, R9 the offset in the row, AX the
// row; Y15 the mask of b's last len(b)%8 values, Y0/Y1 the sums (even and
// odd vectors), Y2/Y3 a vector of the row and of b.
TEXT ·dotRowsAVX2(SB), NOSPLIT, $0-112
	MOVQ d_base+0(FP), DI
	MOVQ dstride+24(FP), R10
	SHLQ $2, R10
	MOVQ x_base+32(FP), SI
	MOVQ stride+56(FP), DX
	SHLQ $2, DX
	MOVQ idx_base+64(FP), R8
	MOVQ idx_len+72(FP), CX
	MOVQ b_base+88(FP), BX
	MOVQ b_len+96(FP), R13
	MOVQ R13, R12
	ANDQ $7, R13
	LEAQ tailmask<>(SB), AX
	SHLQ $2, R13
	NEGQ R13
	VMOVDQU 32(AX)(R13*1), Y15
	MOVQ R12, R13
	SHLQ $2, R13
	ANDQ $-8, R12
	SHLQ $2, R12
	TESTQ CX, CX
	JZ dotrdone

dotredge:
	CMPQ CX, $8
	JLE dotrnow
	MOVLQSX 32(R8), AX
	IMULQ DX, AX
	ADDQ SI, AX
	XORQ R9, R9

dotrpf:
	PREFETCHT0 (AX)(R9*1)
	ADDQ $64, R9
	CMPQ R9, R13
	JLT dotrpf

dotrnow:
	ROW_AT_R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ R9, R9
	MOVQ R12, R11
	SUBQ $64, R11
	JL dotrone

dotrtwo:
	VMOVUPS (AX)(R9*1), Y2
	VFMADD231PS (BX)(R9*1), Y2, Y0
	VMOVUPS 32(AX)(R9*1), Y2
	VFMADD231PS 32(BX)(R9*1), Y2, Y1
	ADDQ $64, R9
	CMPQ R9, R11
	JLE dotrtwo

dotrone:
	CMPQ R9, R12
	JGE dotrtail
	VMOVUPS (AX)(R9*1), Y2
	VFMADD231PS (BX)(R9*1), Y2, Y0
	ADDQ $32, R9

dotrtail:
	CMPQ R9, R13
	JGE dotrsum
	VMASKMOVPS (AX)(R9*1), Y15, Y2
	VMASKMOVPS (BX)(R9*1), Y15, Y3
	VFMADD231PS Y3, Y2, Y1

dotrsum:
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, (DI)
	ADDQ $4, R8
	ADDQ R10, DI
	DECQ CX
	JNZ dotredge
	VZEROUPPER

dotrdone:
	RET

// func edgeHashesAVX512(eh []uint64, idx []int32, ids []int64, mul, c, seed uint64)
// Eight edges to a register, one a 64-bit lane. Registers: DI the block's
// hashes, R8 its idx entries, CX edges left, SI ids (R15 its length, 0:
// the ids are the entries), BX the block's edges, R12 lanemask<>; Z20
// mul, Z21 c, Z22 seed, Z23/Z24 Mix64's multipliers; K2 the block's lanes
// (K3 the gather's copy), Z1 the entries, Z2 the ids, then the hashes.
TEXT ·edgeHashesAVX512(SB), NOSPLIT, $0-96
	MOVQ eh_base+0(FP), DI
	MOVQ idx_base+24(FP), R8
	MOVQ idx_len+32(FP), CX
	MOVQ ids_base+48(FP), SI
	MOVQ ids_len+56(FP), R15
	VPBROADCASTQ mul+72(FP), Z20
	VPBROADCASTQ c+80(FP), Z21
	VPBROADCASTQ seed+88(FP), Z22
	VPBROADCASTQ mixq<>+0(SB), Z23
	VPBROADCASTQ mixq<>+8(SB), Z24
	LEAQ lanemask<>(SB), R12
	TESTQ CX, CX
	JZ ehashdone

ehashblock:
	MOVQ $8, BX
	CMPQ CX, BX
	CMOVQLT CX, BX
	MOVBQZX (R12)(BX*1), AX
	KMOVB AX, K2
	VPMOVSXDQ.Z (R8), K2, Z1
	TESTQ R15, R15
	JZ ehashdirect
	KMOVB K2, K3
	VPXORQ Z2, Z2, Z2
	VPGATHERQQ (SI)(Z1*8), K3, Z2
	JMP ehashmix

ehashdirect:
	VMOVDQA64 Z1, Z2

ehashmix:
	VPMULLQ Z20, Z2, Z2
	VPXORQ Z21, Z2, Z2
	MIX64Q(Z2, Z3)
	VPXORQ Z22, Z2, Z2
	MIX64Q(Z2, Z3)
	VMOVDQU64 Z2, K2, (DI)
	LEAQ (R8)(BX*4), R8
	LEAQ (DI)(BX*8), DI
	SUBQ BX, CX
	JNZ ehashblock
	VZEROUPPER

ehashdone:
	RET

// func keepHeadsAVX512(keep []uint8, eh []uint64, heads int, thr int64)
// Eight edges to a register, one a 64-bit lane. Registers: SI the block's
// hashes, CX hashes left, DI the block's first keep byte, R14 an edge's
// bytes (nb), R10 heads, BX the block's edges, R11 the byte, DX its heads
// left, AX that byte's heads left, R12 lanemask<>; Z23/Z24 Mix64's
// multipliers, Z9 thr − 1, Z25 1<<56, Z26 1; per block K2 its lanes, Z2
// the hashes, Z11 the head's offset hd<<56, Z12 its bit 1<<(hd%8), Z4 the
// head's hashes, K1 the edges it keeps, Z13 the byte of every edge.
TEXT ·keepHeadsAVX512(SB), NOSPLIT, $0-64
	MOVQ keep_base+0(FP), DI
	MOVQ eh_base+24(FP), SI
	MOVQ eh_len+32(FP), CX
	MOVQ heads+48(FP), R10
	LEAQ 7(R10), R14
	SHRQ $3, R14
	LEAQ lanemask<>(SB), R12
	MOVQ thr+56(FP), AX
	DECQ AX
	VPBROADCASTQ AX, Z9
	VPBROADCASTQ mixq<>+0(SB), Z23
	VPBROADCASTQ mixq<>+8(SB), Z24
	VPBROADCASTQ mixq<>+16(SB), Z25
	VPBROADCASTQ mixq<>+24(SB), Z26
	TESTQ CX, CX
	JZ kheaddone

kheadblock:
	MOVQ $8, BX
	CMPQ CX, BX
	CMOVQLT CX, BX
	MOVBQZX (R12)(BX*1), AX
	KMOVB AX, K2
	VMOVDQU64.Z (SI), K2, Z2
	VPXORQ Z11, Z11, Z11
	XORQ R11, R11
	MOVQ R10, DX

kheadbyte:
	VPXORQ Z13, Z13, Z13
	VMOVDQA64 Z26, Z12
	MOVQ $8, AX
	CMPQ DX, AX
	CMOVQLT DX, AX
	SUBQ AX, DX

kheadhead:
	VPXORQ Z11, Z2, Z4
	MIX64Q(Z4, Z5)
	VPSRLQ $40, Z4, Z4
	VPCMPQ $6, Z9, Z4, K1
	VPORQ Z12, Z13, K1, Z13
	VPADDQ Z12, Z12, Z12
	VPADDQ Z25, Z11, Z11
	DECQ AX
	JNZ kheadhead
	CMPQ R14, $1
	JNE kheadscatter
	VPMOVQB Z13, K2, (DI)
	JMP kheadnext

kheadscatter:
	VPMOVQB Z13, X14
	VMOVQ X14, AX
	LEAQ (DI)(R11*1), R9
	MOVQ BX, R13

kheadstore:
	MOVB AX, (R9)
	SHRQ $8, AX
	ADDQ R14, R9
	DECQ R13
	JNZ kheadstore

kheadnext:
	INCQ R11
	CMPQ R11, R14
	JLT kheadbyte
	SUBQ BX, CX
	LEAQ (SI)(BX*8), SI
	IMULQ R14, BX
	ADDQ BX, DI
	TESTQ CX, CX
	JNZ kheadblock
	VZEROUPPER

kheaddone:
	RET
