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

// CHUNK(n, off, tmp, acc): when the pass has at least n full chunks of 16,
// acc += the sixteen bfloat16 at off(AX), widened; else on to ntail.
#define CHUNK(n, off, tmp, acc) \
	CMPQ      R13, $n; \
	JLT       ntail; \
	VPMOVZXWD off(AX), tmp; \
	VPSLLD    $16, tmp, tmp; \
	VADDPS    tmp, acc, acc

#define LOADACC(n, off, acc) \
	CMPQ    R13, $n; \
	JLT     latail; \
	VMOVUPS off(DI), acc

#define STOREACC(n, off, acc) \
	CMPQ    R13, $n; \
	JLT     sttail; \
	VMOVUPS acc, off(DI)

// func accumRowsBF16AVX512(out *float32, n int, x *uint16, stride int, idx *int32, m int)
// n > 0, m > 0. Passes of up to 128 columns: eight full chunks of 16 in
// Z0–Z7, the last < 16 columns of a pass in Z8 under the mask K1, so that
// a row of up to 128 columns is one pass over its neighbours.
TEXT ·accumRowsBF16AVX512(SB), NOSPLIT, $8-48
	MOVQ out+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ stride+24(FP), R8
	SHLQ $1, R8                    // bytes of an x row
	MOVQ idx+32(FP), R9
	MOVQ m+40(FP), R10

pass:
	MOVQ    CX, AX
	MOVQ    $128, DX
	CMPQ    AX, DX
	CMOVQGT DX, AX                 // AX = columns of this pass
	MOVQ    AX, pw-8(SP)
	MOVQ    AX, R13
	SHRQ    $4, R13                // full chunks
	ANDQ    $15, AX                // tail columns
	MOVQ    $1, DX
	SHLXQ   AX, DX, DX
	DECQ    DX
	KMOVW   DX, K1                 // tail mask (0: no tail)
	MOVQ    R13, DX
	SHLQ    $5, DX                 // tail offset in x (bytes)
	MOVQ    R13, R12
	SHLQ    $6, R12
	ADDQ    DI, R12                // tail of out

	LOADACC(1, 0, Z0)
	LOADACC(2, 64, Z1)
	LOADACC(3, 128, Z2)
	LOADACC(4, 192, Z3)
	LOADACC(5, 256, Z4)
	LOADACC(6, 320, Z5)
	LOADACC(7, 384, Z6)
	LOADACC(8, 448, Z7)

latail:
	VMOVUPS.Z (R12), K1, Z8
	MOVQ      R9, R11
	MOVQ      R10, BX

nloop:
	MOVLQSX (R11), AX
	IMULQ   R8, AX
	ADDQ    SI, AX
	CHUNK(1, 0, Z9, Z0)
	CHUNK(2, 32, Z10, Z1)
	CHUNK(3, 64, Z11, Z2)
	CHUNK(4, 96, Z12, Z3)
	CHUNK(5, 128, Z13, Z4)
	CHUNK(6, 160, Z14, Z5)
	CHUNK(7, 192, Z15, Z6)
	CHUNK(8, 224, Z16, Z7)

ntail:
	VPMOVZXWD.Z (AX)(DX*1), K1, Z17
	VPSLLD      $16, Z17, Z17
	VADDPS      Z17, Z8, Z8
	ADDQ        $4, R11
	DECQ        BX
	JNZ         nloop

	STOREACC(1, 0, Z0)
	STOREACC(2, 64, Z1)
	STOREACC(3, 128, Z2)
	STOREACC(4, 192, Z3)
	STOREACC(5, 256, Z4)
	STOREACC(6, 320, Z5)
	STOREACC(7, 384, Z6)
	STOREACC(8, 448, Z7)

sttail:
	VMOVUPS Z8, K1, (R12)
	MOVQ    pw-8(SP), AX
	LEAQ    (DI)(AX*4), DI
	LEAQ    (SI)(AX*2), SI
	SUBQ    AX, CX
	JNZ     pass
	VZEROUPPER
	RET
