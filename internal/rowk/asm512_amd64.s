//go:build !noasm

#include "textflag.h"

// AVX-512 row kernels of the LayerNorm stage (contracts and the generic
// twins: kernels_amd64.go, generic.go). Each routine runs n elements, n a
// positive multiple of 8, eight per iteration: eight float32 in one ymm
// register, widened (VCVTPS2PD, exact) into one 8-lane float64 zmm vector,
// so lane l of a float64 sum adds element j+l, then j+8+l, as the twins'
// partial sum l does. (The statistics' two sums, BiasStats, stay AVX2: one
// chain of zmm additions per 8 elements ran slower than two ymm chains.) Products are rounded before they are added (VMULPx
// then VADDPx, never FMA); float64 → float32 (VCVTPD2PS) rounds to nearest
// under Go's MXCSR, as float32() does. Only AVX-512F instructions (and the
// AVX2 ones the set's CPUs also have).

DATA finite512<>+0(SB)/4, $0x7f800000
GLOBL finite512<>(SB), RODATA|NOPTR, $4
DATA carry512<>+0(SB)/4, $0x00800000
GLOBL carry512<>(SB), RODATA|NOPTR, $4

// NORM8Z: Y1 = relu(float32(float32((x-mean)·rstd)·gamma) + beta) for the
// eight elements at (SI) (float64), (DX) gamma, (R8) beta; Z4 mean, Z5 rstd.
// relu: v &^ (v >>arith 31) maps negatives (and −0, negative NaNs) to +0.
#define NORM8Z \
	VMOVUPD   (SI), Z1; \
	VSUBPD    Z4, Z1, Z1; \
	VMULPD    Z5, Z1, Z1; \
	VCVTPD2PS Z1, Y1; \
	VMULPS    (DX), Y1, Y1; \
	VADDPS    (R8), Y1, Y1; \
	VPSRAD    $31, Y1, Y3; \
	VPANDN    Y1, Y3, Y1

// func normAVX512(h *float32, x *float64, gamma, beta *float32, n int, mean, rstd float64)
TEXT ·normAVX512(SB), NOSPLIT, $0-56
	MOVQ         h+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         beta+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSD mean+40(FP), Z4
	VBROADCASTSD rstd+48(FP), Z5
	SHRQ         $3, CX

nloop:
	NORM8Z
	VMOVUPS Y1, (DI)
	ADDQ    $32, DI
	ADDQ    $64, SI
	ADDQ    $32, DX
	ADDQ    $32, R8
	DECQ    CX
	JNZ     nloop
	VZEROUPPER
	RET

// func normDropAVX512(h *float32, x *float64, gamma, beta *float32, u *uint16, n int, mean, rstd float64, thresh int32, scale float32)
// h = NORM8Z · (u ≥ thresh ? scale : +0).
TEXT ·normDropAVX512(SB), NOSPLIT, $0-72
	MOVQ         h+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         beta+24(FP), R8
	MOVQ         u+32(FP), R9
	MOVQ         n+40(FP), CX
	VBROADCASTSD mean+48(FP), Z4
	VBROADCASTSD rstd+56(FP), Z5
	MOVL         thresh+64(FP), AX
	VMOVD        AX, X6
	VPBROADCASTD X6, Y6
	VBROADCASTSS scale+68(FP), Y7
	SHRQ         $3, CX

ndloop:
	NORM8Z
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

// func normGradAVX512(gr, h, o, bias, gamma, xh *float32, ag, ab *float64, n int, mean, rstd float64, scale float32, active bool, st *gradState)
// Registers: Z0 s, Z9 t, Y10 bad (OR of (h & finite) + carry), Z11 mean,
// Z12 rstd, Y13 scale, Y14 finite, Y15 carry; R10 g, R11 h, R12 o, R13
// bias, R14 gamma, R15 xh, SI ag, DI ab, CX iterations, BL active.
TEXT ·normGradAVX512(SB), NOSPLIT, $0-104
	MOVQ         gr+0(FP), R10
	MOVQ         h+8(FP), R11
	MOVQ         o+16(FP), R12
	MOVQ         bias+24(FP), R13
	MOVQ         gamma+32(FP), R14
	MOVQ         xh+40(FP), R15
	MOVQ         ag+48(FP), SI
	MOVQ         ab+56(FP), DI
	MOVQ         n+64(FP), CX
	VBROADCASTSD mean+72(FP), Z11
	VBROADCASTSD rstd+80(FP), Z12
	VBROADCASTSS scale+88(FP), Y13
	MOVB         active+92(FP), BL
	MOVQ         st+96(FP), AX
	VMOVUPD      (AX), Z0
	VMOVUPD      64(AX), Z9
	VPXOR        Y10, Y10, Y10
	VPBROADCASTD finite512<>(SB), Y14
	VPBROADCASTD carry512<>(SB), Y15
	SHRQ         $3, CX

ngloop:
	// Every load of g, h, o and xh comes before the iteration's stores
	// (see normGradAVX2).
	VMOVUPS (R10), Y1
	VMOVUPS (R11), Y2
	VMOVUPS (R12), Y8
	VADDPS  (R13), Y8, Y8 // o + bias
	TESTB   BL, BL
	JZ      ngnoscale
	VMULPS  Y13, Y1, Y1

ngnoscale:
	VPAND  Y14, Y2, Y3
	VPADDD Y15, Y3, Y3
	VPOR   Y3, Y10, Y10
	VPXOR  Y3, Y3, Y3
	VPSUBD Y2, Y3, Y3 // −bits(h)
	VPSRAD $31, Y3, Y3 // keep where bits(h) ∈ (0, 2³¹]
	VPAND  Y3, Y1, Y1  // v

	// x̂ = float32((float64(o+bias) - mean)·rstd) into Y3
	VCVTPS2PD Y8, Z3
	VSUBPD    Z11, Z3, Z3
	VMULPD    Z12, Z3, Z3
	VCVTPD2PS Z3, Y3

	// ag += float64(v·x̂)
	VMULPS    Y3, Y1, Y2
	VCVTPS2PD Y2, Z4
	VADDPD    (SI), Z4, Z4
	VMOVUPD   Z4, (SI)

	// ab += float64(v)
	VCVTPS2PD Y1, Z5
	VADDPD    (DI), Z5, Z5
	VMOVUPD   Z5, (DI)

	// ĥ = float64(v·gamma): s += ĥ; t += ĥ·float64(x̂)
	VMOVUPS   Y1, (R10)
	VMOVUPS   Y3, (R15)
	VMULPS    (R14), Y1, Y1
	VCVTPS2PD Y1, Z4
	VADDPD    Z4, Z0, Z0
	VCVTPS2PD Y3, Z6
	VMULPD    Z6, Z4, Z4
	VADDPD    Z4, Z9, Z9

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

	VMOVUPD   Z0, (AX)
	VMOVUPD   Z9, 64(AX)
	VMOVMSKPS Y10, DX // bit 31 of each lane
	TESTL     DX, DX
	JZ        ngdone
	ORL       $0x80000000, 128(AX)

ngdone:
	VZEROUPPER
	RET

// func normGradOutAVX512(dst, gr, gamma, xh *float32, n int, rstd, sg, sgx float64)
// dst = float32(rstd·((float64(g·gamma) − sg) − float64(xh)·sgx)).
TEXT ·normGradOutAVX512(SB), NOSPLIT, $0-64
	MOVQ         dst+0(FP), DI
	MOVQ         gr+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         xh+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSD rstd+40(FP), Z13
	VBROADCASTSD sg+48(FP), Z14
	VBROADCASTSD sgx+56(FP), Z15
	SHRQ         $3, CX

goloop:
	VMOVUPS   (SI), Y1
	VMULPS    (DX), Y1, Y1
	VCVTPS2PD Y1, Z3
	VCVTPS2PD (R8), Z4
	VSUBPD    Z14, Z3, Z3
	VMULPD    Z15, Z4, Z4
	VSUBPD    Z4, Z3, Z3
	VMULPD    Z13, Z3, Z3
	VCVTPD2PS Z3, Y3
	VMOVUPS   Y3, (DI)
	ADDQ      $32, DI
	ADDQ      $32, SI
	ADDQ      $32, DX
	ADDQ      $32, R8
	DECQ      CX
	JNZ       goloop
	VZEROUPPER
	RET
