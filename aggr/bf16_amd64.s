//go:build !noasm

#include "textflag.h"

// WIDEN_ADD(off, tmp, acc): acc += the eight bfloat16 at off(AX), widened.
#define WIDEN_ADD(off, tmp, acc) \
	VPMOVZXWD off(AX), tmp; \
	VPSLLD    $16, tmp, tmp; \
	VADDPS    tmp, acc, acc

// func accumRowsBF16AVX2(out *float32, n int, x *uint16, stride int, idx *int32, m int)
TEXT ·accumRowsBF16AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ stride+24(FP), R8
	SHLQ $1, R8                    // bytes of an x row
	MOVQ idx+32(FP), R9
	MOVQ m+40(FP), R10

block64:
	CMPQ    CX, $64
	JLT     block8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	MOVQ    R9, R11
	MOVQ    R10, R12

loop64:
	MOVLQSX (R11), AX
	IMULQ   R8, AX
	ADDQ    SI, AX
	WIDEN_ADD(0, Y8, Y0)
	WIDEN_ADD(16, Y9, Y1)
	WIDEN_ADD(32, Y10, Y2)
	WIDEN_ADD(48, Y11, Y3)
	WIDEN_ADD(64, Y12, Y4)
	WIDEN_ADD(80, Y13, Y5)
	WIDEN_ADD(96, Y14, Y6)
	WIDEN_ADD(112, Y15, Y7)
	ADDQ    $4, R11
	DECQ    R12
	JNZ     loop64
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, DI
	ADDQ    $128, SI
	SUBQ    $64, CX
	JMP     block64

block8:
	CMPQ    CX, $8
	JLT     done
	VMOVUPS (DI), Y0
	MOVQ    R9, R11
	MOVQ    R10, R12

loop8:
	MOVLQSX (R11), AX
	IMULQ   R8, AX
	ADDQ    SI, AX
	WIDEN_ADD(0, Y8, Y0)
	ADDQ    $4, R11
	DECQ    R12
	JNZ     loop8
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $16, SI
	SUBQ    $8, CX
	JMP     block8

done:
	VZEROUPPER
	RET
