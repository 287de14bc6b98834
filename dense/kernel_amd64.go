//go:build !noasm

package dense

import "golang.org/x/sys/cpu"

// The AVX-512 micro-kernels (kernel_amd64.s): a tile of 12, 4 or 1 rows ×
// 32 or 16 columns of c, the contract of kernFunc.

//go:noescape
func kern12x32(k int, a *float32, si, sp int, b *float32, ldb int, c *float32, ldc int, mask uint32, alpha float32, acc bool)

//go:noescape
func kern4x32(k int, a *float32, si, sp int, b *float32, ldb int, c *float32, ldc int, mask uint32, alpha float32, acc bool)

//go:noescape
func kern1x32(k int, a *float32, si, sp int, b *float32, ldb int, c *float32, ldc int, mask uint32, alpha float32, acc bool)

//go:noescape
func kern12x16(k int, a *float32, si, sp int, b *float32, ldb int, c *float32, ldc int, mask uint32, alpha float32, acc bool)

//go:noescape
func kern4x16(k int, a *float32, si, sp int, b *float32, ldb int, c *float32, ldc int, mask uint32, alpha float32, acc bool)

//go:noescape
func kern1x16(k int, a *float32, si, sp int, b *float32, ldb int, c *float32, ldc int, mask uint32, alpha float32, acc bool)

//go:noescape
func colSumsAVX512(acc *float64, m *float32, rows, cols, stride int)

// archColSums returns the column-sum kernel (the contract of colSumsInto
// with rows, cols ≥ 1) where the CPU and OS run AVX-512, nil elsewhere.
func archColSums() func(acc *float64, m *float32, rows, cols, stride int) {
	if !cpu.X86.HasAVX512F {
		return nil
	}
	return colSumsAVX512
}

// archKernels returns the micro-kernels of 12, 4 and 1 rows (32 and 16
// columns) where the CPU
// and OS run AVX-512 (x/sys/cpu checks the register state too), nil
// elsewhere.
func archKernels() *tileKernels {
	if !cpu.X86.HasAVX512F {
		return nil
	}
	return &tileKernels{
		wide:   [3]kernFunc{kern12x32, kern4x32, kern1x32},
		narrow: [3]kernFunc{kern12x16, kern4x16, kern1x16},
	}
}
