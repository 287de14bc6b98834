//go:build !noasm

#include "textflag.h"

// AVX2 row kernels of the fused hidden stage (contracts and the generic
// twins: kernels_amd64.go, generic.go). Each routine runs n elements, n a
// positive multiple of 8, eight per iteration: eight float32 in one ymm
// register, widened (VCVTPS2PD, exact) into two float64 vectors holding
// elements j..j+3 and j+4..j+7 (AVX2), which go to two float64 sums, lanes
// 0..3 and 4..7 of the twins' eight partial sums, or into one 8-lane zmm
// vector (AVX-512), so lane l of a sum adds element j+l, then j+8+l, as
// the twins' partial sum l does. Products are rounded
// before they are added (VMULPx then VADDPx, never FMA); float64 → float32
// (VCVTPD2PS) rounds to nearest under Go's MXCSR, as float32() does.

// finite<>: the float32 exponent field; carry<>: 1<<23. (b & finite) +
// carry sets bit 31 exactly when the exponent is all ones (NaN or ±Inf).
DATA finite<>+0(SB)/4, $0x7f800000
GLOBL finite<>(SB), RODATA|NOPTR, $4
DATA carry<>+0(SB)/4, $0x00800000
GLOBL carry<>(SB), RODATA|NOPTR, $4

// WIDEN(Y, XLO, YLO, XHI, YHI): YLO = float64(Y[0:4]), YHI = float64(Y[4:8]).
#define WIDEN(Y, X, YLO, XHI, YHI) \
	VCVTPS2PD    X, YLO; \
	VEXTRACTF128 $1, Y, XHI; \
	VCVTPS2PD    XHI, YHI

// func biasSumAVX2(x *float64, o, bias *float32, n int, s *[8]float64)
// x = float64(o+bias); s[l] += x[j] for j ≡ l (mod 8).
TEXT ·biasSumAVX2(SB), NOSPLIT, $0-40
	MOVQ    x+0(FP), DI
	MOVQ    o+8(FP), SI
	MOVQ    bias+16(FP), DX
	MOVQ    n+24(FP), CX
	MOVQ    s+32(FP), AX
	VMOVUPD (AX), Y0
	VMOVUPD 32(AX), Y9
	SHRQ    $3, CX

bsloop:
	VMOVUPS (SI), Y1
	VADDPS  (DX), Y1, Y1
	WIDEN(Y1, X1, Y2, X3, Y3)
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, 32(DI)
	VADDPD  Y2, Y0, Y0
	VADDPD  Y3, Y9, Y9
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     bsloop
	VMOVUPD Y0, (AX)
	VMOVUPD Y9, 32(AX)
	VZEROUPPER
	RET

// func sqSumAVX2(x *float64, n int, mean float64, s *[8]float64)
// s[l] += (x[j]-mean)² for j ≡ l (mod 8).
TEXT ·sqSumAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSD mean+16(FP), Y4
	MOVQ         s+24(FP), AX
	VMOVUPD      (AX), Y0
	VMOVUPD      32(AX), Y9
	SHRQ         $3, CX

sqloop:
	VMOVUPD (DI), Y1
	VMOVUPD 32(DI), Y2
	VSUBPD  Y4, Y1, Y1
	VSUBPD  Y4, Y2, Y2
	VMULPD  Y1, Y1, Y1
	VMULPD  Y2, Y2, Y2
	VADDPD  Y1, Y0, Y0
	VADDPD  Y2, Y9, Y9
	ADDQ    $64, DI
	DECQ    CX
	JNZ     sqloop
	VMOVUPD Y0, (AX)
	VMOVUPD Y9, 32(AX)
	VZEROUPPER
	RET

// NORM8: Y1 = relu(float32(float32((x-mean)·rstd)·gamma) + beta) for the
// eight elements at (SI) (float64), (DX) gamma, (R8) beta; Y4 mean, Y5 rstd.
// relu: v &^ (v >>arith 31) maps negatives (and −0, negative NaNs) to +0.
#define NORM8 \
	VMOVUPD     (SI), Y1; \
	VMOVUPD     32(SI), Y2; \
	VSUBPD      Y4, Y1, Y1; \
	VSUBPD      Y4, Y2, Y2; \
	VMULPD      Y5, Y1, Y1; \
	VMULPD      Y5, Y2, Y2; \
	VCVTPD2PSY  Y1, X1; \
	VCVTPD2PSY  Y2, X2; \
	VINSERTF128 $1, X2, Y1, Y1; \
	VMULPS      (DX), Y1, Y1; \
	VADDPS      (R8), Y1, Y1; \
	VPSRAD      $31, Y1, Y3; \
	VPANDN      Y1, Y3, Y1

// func normAVX2(h *float32, x *float64, gamma, beta *float32, n int, mean, rstd float64)
TEXT ·normAVX2(SB), NOSPLIT, $0-56
	MOVQ         h+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         beta+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSD mean+40(FP), Y4
	VBROADCASTSD rstd+48(FP), Y5
	SHRQ         $3, CX

nloop:
	NORM8
	VMOVUPS Y1, (DI)
	ADDQ    $32, DI
	ADDQ    $64, SI
	ADDQ    $32, DX
	ADDQ    $32, R8
	DECQ    CX
	JNZ     nloop
	VZEROUPPER
	RET

// func normDropAVX2(h *float32, x *float64, gamma, beta *float32, u *uint16, n int, mean, rstd float64, thresh int32, scale float32)
// h = NORM8 · (u ≥ thresh ? scale : +0).
TEXT ·normDropAVX2(SB), NOSPLIT, $0-72
	MOVQ         h+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         beta+24(FP), R8
	MOVQ         u+32(FP), R9
	MOVQ         n+40(FP), CX
	VBROADCASTSD mean+48(FP), Y4
	VBROADCASTSD rstd+56(FP), Y5
	MOVL         thresh+64(FP), AX
	VMOVD        AX, X6
	VPBROADCASTD X6, Y6
	VBROADCASTSS scale+68(FP), Y7
	SHRQ         $3, CX

ndloop:
	NORM8
	VPMOVZXWD (R9), Y8
	VPCMPGTD  Y8, Y6, Y8 // thresh > u: dropped
	VPANDN    Y7, Y8, Y8 // scale where kept, else +0
	VMULPS    Y8, Y1, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $32, DI
	ADDQ      $64, SI
	ADDQ      $32, DX
	ADDQ      $32, R8
	ADDQ      $16, R9
	DECQ      CX
	JNZ       ndloop
	VZEROUPPER
	RET

// func normGradAVX2(gr, h, o, bias, gamma, xh *float32, ag, ab *float64, n int, mean, rstd float64, scale float32, active bool, st *gradState)
// Registers: Y0/Y14 s (lanes 0..3/4..7), Y9/Y15 t, Y10 bad (OR of (h &
// finite) + carry), Y11 mean, Y12 rstd, Y13 scale; R10 g, R11 h, R12 o,
// R13 bias, R14 gamma, R15 xh, SI ag, DI ab, CX iterations, BL active.
TEXT ·normGradAVX2(SB), NOSPLIT, $0-104
	MOVQ         gr+0(FP), R10
	MOVQ         h+8(FP), R11
	MOVQ         o+16(FP), R12
	MOVQ         bias+24(FP), R13
	MOVQ         gamma+32(FP), R14
	MOVQ         xh+40(FP), R15
	MOVQ         ag+48(FP), SI
	MOVQ         ab+56(FP), DI
	MOVQ         n+64(FP), CX
	VBROADCASTSD mean+72(FP), Y11
	VBROADCASTSD rstd+80(FP), Y12
	VBROADCASTSS scale+88(FP), Y13
	MOVB         active+92(FP), BL
	MOVQ         st+96(FP), AX
	VMOVUPD      (AX), Y0
	VMOVUPD      32(AX), Y14
	VMOVUPD      64(AX), Y9
	VMOVUPD      96(AX), Y15
	VPXOR        Y10, Y10, Y10
	SHRQ         $3, CX

ngloop:
	// Every load of the iteration comes before its stores: g, h, o and xh
	// often sit at the same offset within their pages, and a load behind
	// a store to the same offset modulo 4096 waits for it.
	VMOVUPS (R10), Y1
	VMOVUPS (R11), Y2
	VMOVUPS (R12), Y8
	VADDPS  (R13), Y8, Y8 // o + bias
	TESTB   BL, BL
	JZ      ngnoscale
	VMULPS  Y13, Y1, Y1

ngnoscale:
	VPBROADCASTD finite<>(SB), Y4
	VPAND        Y4, Y2, Y3
	VPBROADCASTD carry<>(SB), Y4
	VPADDD       Y4, Y3, Y3
	VPOR         Y3, Y10, Y10
	VPXOR        Y3, Y3, Y3
	VPSUBD       Y2, Y3, Y3 // −bits(h)
	VPSRAD       $31, Y3, Y3 // keep where bits(h) ∈ (0, 2³¹]
	VPAND        Y3, Y1, Y1  // v

	// x̂ = float32((float64(o+bias) - mean)·rstd) into Y3
	WIDEN(Y8, X8, Y3, X4, Y4)
	VSUBPD      Y11, Y3, Y3
	VSUBPD      Y11, Y4, Y4
	VMULPD      Y12, Y3, Y3
	VMULPD      Y12, Y4, Y4
	VCVTPD2PSY  Y3, X3
	VCVTPD2PSY  Y4, X4
	VINSERTF128 $1, X4, Y3, Y3

	// ag += float64(v·x̂)
	VMULPS  Y3, Y1, Y2
	WIDEN(Y2, X2, Y4, X5, Y5)
	VADDPD  (SI), Y4, Y4
	VADDPD  32(SI), Y5, Y5
	VMOVUPD Y4, (SI)
	VMOVUPD Y5, 32(SI)

	// ab += float64(v)
	WIDEN(Y1, X1, Y4, X5, Y5)
	VADDPD  (DI), Y4, Y4
	VADDPD  32(DI), Y5, Y5
	VMOVUPD Y4, (DI)
	VMOVUPD Y5, 32(DI)

	// ĥ = float64(v·gamma): s += ĥ; t += ĥ·float64(x̂)
	VMOVUPS Y1, (R10)
	VMOVUPS Y3, (R15)
	VMULPS  (R14), Y1, Y1
	WIDEN(Y1, X1, Y4, X5, Y5)
	VADDPD  Y4, Y0, Y0
	VADDPD  Y5, Y14, Y14
	WIDEN(Y3, X3, Y6, X7, Y7)
	VMULPD  Y6, Y4, Y4
	VMULPD  Y7, Y5, Y5
	VADDPD  Y4, Y9, Y9
	VADDPD  Y5, Y15, Y15

	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $32, R14
	ADDQ $32, R15
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  ngloop

	VMOVUPD   Y0, (AX)
	VMOVUPD   Y14, 32(AX)
	VMOVUPD   Y9, 64(AX)
	VMOVUPD   Y15, 96(AX)
	VMOVMSKPS Y10, DX // bit 31 of each lane
	TESTL     DX, DX
	JZ        ngdone
	ORL       $0x80000000, 128(AX)

ngdone:
	VZEROUPPER
	RET

// func normGradOutAVX2(dst, gr, gamma, xh *float32, n int, rstd, sg, sgx float64)
// dst = float32(rstd·((float64(g·gamma) − sg) − float64(xh)·sgx)).
TEXT ·normGradOutAVX2(SB), NOSPLIT, $0-64
	MOVQ         dst+0(FP), DI
	MOVQ         gr+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         xh+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSD rstd+40(FP), Y13
	VBROADCASTSD sg+48(FP), Y14
	VBROADCASTSD sgx+56(FP), Y15
	SHRQ         $3, CX

goloop:
	VMOVUPS     (SI), Y1
	VMULPS      (DX), Y1, Y1
	VMOVUPS     (R8), Y2
	WIDEN(Y1, X1, Y3, X5, Y5)
	WIDEN(Y2, X2, Y4, X6, Y6)
	VSUBPD      Y14, Y3, Y3
	VSUBPD      Y14, Y5, Y5
	VMULPD      Y15, Y4, Y4
	VMULPD      Y15, Y6, Y6
	VSUBPD      Y4, Y3, Y3
	VSUBPD      Y6, Y5, Y5
	VMULPD      Y13, Y3, Y3
	VMULPD      Y13, Y5, Y5
	VCVTPD2PSY  Y3, X3
	VCVTPD2PSY  Y5, X5
	VINSERTF128 $1, X5, Y3, Y3
	VMOVUPS     Y3, (DI)
	ADDQ        $32, DI
	ADDQ        $32, SI
	ADDQ        $32, DX
	ADDQ        $32, R8
	DECQ        CX
	JNZ         goloop
	VZEROUPPER
	RET

// RELUBIAS8: Y1 = relu(o + bias) for the eight elements at (SI), (DX).
#define RELUBIAS8 \
	VMOVUPS (SI), Y1; \
	VADDPS  (DX), Y1, Y1; \
	VPSRAD  $31, Y1, Y3; \
	VPANDN  Y1, Y3, Y1

// func reluBiasAVX2(h, o, bias *float32, n int)
TEXT ·reluBiasAVX2(SB), NOSPLIT, $0-32
	MOVQ h+0(FP), DI
	MOVQ o+8(FP), SI
	MOVQ bias+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX

rbloop:
	RELUBIAS8
	VMOVUPS Y1, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     rbloop
	VZEROUPPER
	RET

// func reluBiasDropAVX2(h, o, bias *float32, u *uint16, n int, thresh int32, scale float32)
TEXT ·reluBiasDropAVX2(SB), NOSPLIT, $0-48
	MOVQ         h+0(FP), DI
	MOVQ         o+8(FP), SI
	MOVQ         bias+16(FP), DX
	MOVQ         u+24(FP), R9
	MOVQ         n+32(FP), CX
	MOVL         thresh+40(FP), AX
	VMOVD        AX, X6
	VPBROADCASTD X6, Y6
	VBROADCASTSS scale+44(FP), Y7
	SHRQ         $3, CX

rbdloop:
	RELUBIAS8
	VPMOVZXWD (R9), Y8
	VPCMPGTD  Y8, Y6, Y8 // thresh > u: dropped
	VPANDN    Y7, Y8, Y8 // scale where kept, else +0
	VMULPS    Y8, Y1, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $32, DI
	ADDQ      $32, SI
	ADDQ      $32, DX
	ADDQ      $16, R9
	DECQ      CX
	JNZ       rbdloop
	VZEROUPPER
	RET

// func gateAVX2(gr, h *float32, n int, scale float32, active bool, bad *uint32)
// gr = (active ? gr·scale : gr) where bits(h) ∈ (0, 2³¹], +0 elsewhere;
// *bad |= 1<<31 when h holds a NaN or an infinity.
TEXT ·gateAVX2(SB), NOSPLIT, $0-40
	MOVQ         gr+0(FP), DI
	MOVQ         h+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y13
	MOVB         active+28(FP), BL
	MOVQ         bad+32(FP), AX
	VPXOR        Y10, Y10, Y10
	VPXOR        Y14, Y14, Y14
	VPBROADCASTD finite<>(SB), Y15
	VPBROADCASTD carry<>(SB), Y12
	SHRQ         $3, CX

gtloop:
	VMOVUPS (DI), Y1
	VMOVUPS (SI), Y2
	TESTB   BL, BL
	JZ      gtnoscale
	VMULPS  Y13, Y1, Y1

gtnoscale:
	VPAND   Y15, Y2, Y3
	VPADDD  Y12, Y3, Y3
	VPOR    Y3, Y10, Y10
	VPSUBD  Y2, Y14, Y3
	VPSRAD  $31, Y3, Y3
	VPAND   Y3, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	DECQ    CX
	JNZ     gtloop

	VMOVMSKPS Y10, DX
	TESTL     DX, DX
	JZ        gtdone
	ORL       $0x80000000, (AX)

gtdone:
	VZEROUPPER
	RET

// EXP8(X, T, N, R, P): X = ExpFlush(X) in every lane (softmax.go), its
// operations in its order (no fused multiply-add, so the lanes equal the
// Go twin's values bit for bit): x clamped to [ExpLo, ExpHi] into T (a NaN
// stays), N the lanes below ExpLo (set to 0 at the end), X the exponent
// 2^n, R and P temporaries. Constants from expc<> (the polynomial of
// attn's exp kernels, attn/heads_amd64.s).
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


// expc<>: the constants of ExpFlush (softmax.go), eight copies each (one ymm
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

// func softMaxAVX2(x *float32, n int) float32
// The largest of x[0:n] (NaNs may be skipped: the loss sees them in the sum).
TEXT ·softMaxAVX2(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JZ      maxreduce

maxloop:
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX
	JNZ    maxloop

maxreduce:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func softExpAVX2(e, x *float32, n int, m float32, p *[4]float64)
// e[j] = ExpFlush(x[j]−m); p[l] += float64(e[j]) for j ≡ l (mod 4), in order.
TEXT ·softExpAVX2(SB), NOSPLIT, $0-40
	MOVQ         e+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS m+24(FP), Y8
	MOVQ         p+32(FP), DX
	VMOVUPD      (DX), Y9

exploop:
	VMOVUPS (SI), Y0
	VSUBPS  Y8, Y0, Y0
	EXP8(Y0, Y1, Y2, Y3, Y4)
	VMOVUPS Y0, (DI)
	WIDEN(Y0, X0, Y5, X6, Y7)
	VADDPD  Y5, Y9, Y9
	VADDPD  Y7, Y9, Y9
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     exploop

	VMOVUPD Y9, (DX)
	VZEROUPPER
	RET

// func scaleAVX2(dst, src *float32, n int, f float32)
// dst[j] = f·src[j], n a positive multiple of 32, 32 per iteration.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-28
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS f+24(FP), Y8

scaleloop:
	VMULPS  (SI), Y8, Y0
	VMULPS  32(SI), Y8, Y1
	VMULPS  64(SI), Y8, Y2
	VMULPS  96(SI), Y8, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JNZ     scaleloop
	VZEROUPPER
	RET
