//go:build !noasm

package nn

import (
	"golang.org/x/sys/cpu"

	"github.com/supergcn/supergcn/internal/dispatch"
)

//go:noescape
func dropWordAVX512(x, out *float32, u *uint64, thresh uint16, scale float32) uint64

//go:noescape
func dropApplyAVX512(x, out *float32, word uint64, scale float32)

// archDropWords returns this architecture's dropout kernels: AVX-512 with
// its 16-bit lanes (AVX512BW), where the CPU has them; dispatch keeps
// them where the CPU and OS run AVX-512.
func archDropWords() []dispatch.Impl[*wordKernels] {
	if !cpu.X86.HasAVX512BW {
		return nil
	}
	return []dispatch.Impl[*wordKernels]{{Name: "avx512", Impl: &wordKernels{word: dropWordAVX512, apply: dropApplyAVX512}}}
}
