//go:build !noasm

package nn

import "golang.org/x/sys/cpu"

//go:noescape
func dropWordAVX512(x, out *float32, u *uint64, thresh uint16, scale float32) uint64

//go:noescape
func dropApplyAVX512(x, out *float32, word uint64, scale float32)

// dropWords returns the dropout kernels of 64 elements (drop_amd64.s)
// where the CPU and OS run AVX-512 with its 16-bit lanes, nil elsewhere.
func dropWords() *wordKernels {
	if !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512BW {
		return nil
	}
	return &wordKernels{word: dropWordAVX512, apply: dropApplyAVX512}
}
