//go:build !noasm

package aggr

import "golang.org/x/sys/cpu"

// accumRowsBF16AVX2 is the AVX2 bfloat16 micro-kernel (bf16_amd64.s) over
// the first n columns of out, n > 0 a multiple of 8, m = len(idx) > 0:
// blocks of 64 columns accumulate in eight ymm registers, then blocks of 8;
// each bfloat16 is widened (zero-extended, shifted left 16) and added in
// the order of idx, as accumRowsBF16Generic does.
//
//go:noescape
func accumRowsBF16AVX2(out *float32, n int, x *uint16, stride int, idx *int32, m int)

// accumRowsBF16AVX2Go is the rowsBF16 kernel: assembly over the columns in
// blocks of 8, the twin over the rest.
func accumRowsBF16AVX2Go(out []float32, x []uint16, stride int, idx []int32) {
	if len(idx) == 0 {
		return
	}
	n := len(out)
	m := n &^ 7
	if m > 0 {
		// applyBF16 checked that x holds every row the CSR names.
		accumRowsBF16AVX2(&out[0], m, &x[0], stride, &idx[0], len(idx))
	}
	if m < n {
		accumRowsBF16Generic(out[m:], x[m:], stride, idx)
	}
}

// accumRowsBF16AVX512 is the AVX-512 (F + BW) bfloat16 micro-kernel
// (bf16_amd64.s) over all n > 0 columns of out, m = len(idx) > 0: passes of
// up to 128 columns, each one sweep over the neighbours with eight full
// chunks of 16 in zmm registers and the rest under a mask, added in the
// order of idx as accumRowsBF16Generic does.
//
//go:noescape
func accumRowsBF16AVX512(out *float32, n int, x *uint16, stride int, idx *int32, m int)

func accumRowsBF16AVX512Go(out []float32, x []uint16, stride int, idx []int32) {
	if len(idx) == 0 || len(out) == 0 {
		return
	}
	// applyBF16 checked that x holds every row the CSR names.
	accumRowsBF16AVX512(&out[0], len(out), &x[0], stride, &idx[0], len(idx))
}

// bf16AVX512 is the bfloat16 kernel of the avx512 set: the AVX-512 one
// where the CPU has AVX512BW (widening words into a zmm register needs it),
// else the AVX2 one.
func bf16AVX512() func(out []float32, x []uint16, stride int, idx []int32) {
	if cpu.X86.HasAVX512BW {
		return accumRowsBF16AVX512Go
	}
	return accumRowsBF16AVX2Go
}
