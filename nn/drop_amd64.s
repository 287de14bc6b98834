//go:build !noasm

#include "textflag.h"

// Dropout of 64 elements (act.go): the decisions of a word are compared
// with thresh as unsigned 16-bit lanes (VPCMPUW, AVX512BW), and each
// element is multiplied by scale or by +0 (a zero-masked copy of scale:
// v·0 as the scalar loop computes it, −0, NaN and all).

// APPLY: out[j] = x[j]·(bit j of AX ? Z21 : +0), j < 64 (SI x, DI out).
#define APPLY \
	KMOVW     AX, K1; \
	SHRQ      $16, AX; \
	KMOVW     AX, K2; \
	SHRQ      $16, AX; \
	KMOVW     AX, K3; \
	SHRQ      $16, AX; \
	KMOVW     AX, K4; \
	VMOVAPS.Z Z21, K1, Z4; \
	VMOVAPS.Z Z21, K2, Z5; \
	VMOVAPS.Z Z21, K3, Z6; \
	VMOVAPS.Z Z21, K4, Z7; \
	VMULPS    (SI), Z4, Z4; \
	VMULPS    64(SI), Z5, Z5; \
	VMULPS    128(SI), Z6, Z6; \
	VMULPS    192(SI), Z7, Z7; \
	VMOVUPS   Z4, (DI); \
	VMOVUPS   Z5, 64(DI); \
	VMOVUPS   Z6, 128(DI); \
	VMOVUPS   Z7, 192(DI)

// func dropWordAVX512(x, out *float32, u *uint64, thresh uint16, scale float32) uint64
// out[j] = x[j]·(u[j] ≥ thresh ? scale : 0), j < 64, u[j] the 16-bit lane j
// of the words at u (lane 0 the low bits of the first); returns bit j set
// where u[j] ≥ thresh.
TEXT ·dropWordAVX512(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         u+16(FP), DX
	MOVWLZX      thresh+24(FP), AX
	VPBROADCASTW AX, Z20
	VBROADCASTSS scale+28(FP), Z21
	VMOVDQU16    (DX), Z0
	VMOVDQU16    64(DX), Z1
	VPCMPUW      $5, Z20, Z0, K1
	VPCMPUW      $5, Z20, Z1, K2
	KMOVD        K1, AX
	KMOVD        K2, BX
	SHLQ         $32, BX
	ORQ          BX, AX
	MOVQ         AX, ret+32(FP)
	APPLY
	VZEROUPPER
	RET

// func dropApplyAVX512(x, out *float32, word uint64, scale float32)
// out[j] = x[j]·(bit j of word ? scale : 0), j < 64.
TEXT ·dropApplyAVX512(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         word+16(FP), AX
	VBROADCASTSS scale+24(FP), Z21
	APPLY
	VZEROUPPER
	RET

