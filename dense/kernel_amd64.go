//go:build !noasm

package dense

import "github.com/supergcn/supergcn/internal/dispatch"

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

// archKernelSets returns the kernel sets of this architecture: AVX-512
// (dispatch keeps it where the CPU and OS run it).
func archKernelSets() []dispatch.Impl[kernelSet] {
	return []dispatch.Impl[kernelSet]{{Name: "avx512", Impl: kernelSet{
		tiles: &tileKernels{
			wide:   [3]kernFunc{kern12x32, kern4x32, kern1x32},
			narrow: [3]kernFunc{kern12x16, kern4x16, kern1x16},
		},
		colSums: colSumsAVX512,
	}}}
}
