//go:build !noasm

#include "textflag.h"

// The kernels of heads_amd64.go (declarations and reference loops there).

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
	MOVLQSX 32(R8), AX
	IMULQ DX, AX
	PREFETCHT0 (SI)(AX*1)
	PREFETCHT0 64(SI)(AX*1)
	PREFETCHT0 128(SI)(AX*1)
	PREFETCHT0 192(SI)(AX*1)
	PREFETCHT0 252(SI)(AX*1)
	MOVLQSX (R8), AX
	IMULQ DX, AX
	ADDQ SI, AX
	VBROADCASTSS 0(R9), Y8
	VFMADD231PS 0(AX), Y8, Y0
	VBROADCASTSS 4(R9), Y9
	VFMADD231PS 32(AX), Y9, Y1
	VBROADCASTSS 8(R9), Y10
	VFMADD231PS 64(AX), Y10, Y2
	VBROADCASTSS 12(R9), Y11
	VFMADD231PS 96(AX), Y11, Y3
	VBROADCASTSS 16(R9), Y12
	VFMADD231PS 128(AX), Y12, Y4
	VBROADCASTSS 20(R9), Y13
	VFMADD231PS 160(AX), Y13, Y5
	VBROADCASTSS 24(R9), Y14
	VFMADD231PS 192(AX), Y14, Y6
	VBROADCASTSS 28(R9), Y15
	VFMADD231PS 224(AX), Y15, Y7
	ADDQ $4, R8
	ADDQ R10, R9
	DECQ CX
	DECQ R11
	JNZ ahead

tail:
	MOVLQSX (R8), AX
	IMULQ DX, AX
	ADDQ SI, AX
	VBROADCASTSS 0(R9), Y8
	VFMADD231PS 0(AX), Y8, Y0
	VBROADCASTSS 4(R9), Y9
	VFMADD231PS 32(AX), Y9, Y1
	VBROADCASTSS 8(R9), Y10
	VFMADD231PS 64(AX), Y10, Y2
	VBROADCASTSS 12(R9), Y11
	VFMADD231PS 96(AX), Y11, Y3
	VBROADCASTSS 16(R9), Y12
	VFMADD231PS 128(AX), Y12, Y4
	VBROADCASTSS 20(R9), Y13
	VFMADD231PS 160(AX), Y13, Y5
	VBROADCASTSS 24(R9), Y14
	VFMADD231PS 192(AX), Y14, Y6
	VBROADCASTSS 28(R9), Y15
	VFMADD231PS 224(AX), Y15, Y7
	ADDQ $4, R8
	ADDQ R10, R9
	DECQ CX
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

// func dotRows8AVX2(d []float32, dstride int, x []float32, stride int, idx []int32, b []float32)
// Registers: DI the edge's 8 dots, R10 dstride in bytes, SI x, DX stride
// in bytes, R8 the next idx entry, CX edges left, R11 edges left with an
// entry 8 ahead to prefetch, AX the row; Y8–Y15 b, Y0–Y7 the row's
// products, summed pairwise by VHADDPS into one register of the groups'
// half sums (groups 0–3 and 4–7 from the low and high 128-bit halves),
// whose halves are added.
TEXT ·dotRows8AVX2(SB), NOSPLIT, $0-112
	MOVQ d_base+0(FP), DI
	MOVQ dstride+24(FP), R10
	SHLQ $2, R10
	MOVQ x_base+32(FP), SI
	MOVQ stride+56(FP), DX
	SHLQ $2, DX
	MOVQ idx_base+64(FP), R8
	MOVQ idx_len+72(FP), CX
	MOVQ b_base+88(FP), BX
	TESTQ CX, CX
	JZ dotsdone
	VMOVUPS 0(BX), Y8
	VMOVUPS 32(BX), Y9
	VMOVUPS 64(BX), Y10
	VMOVUPS 96(BX), Y11
	VMOVUPS 128(BX), Y12
	VMOVUPS 160(BX), Y13
	VMOVUPS 192(BX), Y14
	VMOVUPS 224(BX), Y15
	MOVQ CX, R11
	SUBQ $8, R11
	JLE dotstail

dotsahead:
	MOVLQSX 32(R8), AX
	IMULQ DX, AX
	PREFETCHT0 (SI)(AX*1)
	PREFETCHT0 64(SI)(AX*1)
	PREFETCHT0 128(SI)(AX*1)
	PREFETCHT0 192(SI)(AX*1)
	PREFETCHT0 252(SI)(AX*1)
	MOVLQSX (R8), AX
	IMULQ DX, AX
	ADDQ SI, AX
	VMULPS 0(AX), Y8, Y0
	VMULPS 32(AX), Y9, Y1
	VMULPS 64(AX), Y10, Y2
	VMULPS 96(AX), Y11, Y3
	VMULPS 128(AX), Y12, Y4
	VMULPS 160(AX), Y13, Y5
	VMULPS 192(AX), Y14, Y6
	VMULPS 224(AX), Y15, Y7
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y2, Y0, Y0
	VHADDPS Y6, Y4, Y4
	VPERM2F128 $0x20, Y4, Y0, Y1
	VPERM2F128 $0x31, Y4, Y0, Y2
	VADDPS Y2, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $4, R8
	ADDQ R10, DI
	DECQ CX
	DECQ R11
	JNZ dotsahead

dotstail:
	MOVLQSX (R8), AX
	IMULQ DX, AX
	ADDQ SI, AX
	VMULPS 0(AX), Y8, Y0
	VMULPS 32(AX), Y9, Y1
	VMULPS 64(AX), Y10, Y2
	VMULPS 96(AX), Y11, Y3
	VMULPS 128(AX), Y12, Y4
	VMULPS 160(AX), Y13, Y5
	VMULPS 192(AX), Y14, Y6
	VMULPS 224(AX), Y15, Y7
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y2, Y0, Y0
	VHADDPS Y6, Y4, Y4
	VPERM2F128 $0x20, Y4, Y0, Y1
	VPERM2F128 $0x31, Y4, Y0, Y2
	VADDPS Y2, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $4, R8
	ADDQ R10, DI
	DECQ CX
	JNZ dotstail
	VZEROUPPER

dotsdone:
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
	MOVLQSX (R8), AX
	IMULQ DX, AX
	ADDQ SI, AX
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
