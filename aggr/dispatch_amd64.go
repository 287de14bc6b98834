//go:build !noasm

package aggr

import "github.com/klauspost/cpuid/v2"

// platformKernels returns the assembly kernels this amd64 CPU (and OS: cpuid
// checks that XCR0 enables the register state) supports, best first.
func platformKernels() []kernel {
	var ks []kernel
	if cpuid.CPU.Supports(cpuid.AVX512F) {
		ks = append(ks, kernel{name: "avx512", rows: accumRowsAVX512, rowsW: accumRowsWAVX512, native: true})
	}
	if cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3) {
		ks = append(ks, kernel{name: "avx2", rows: accumRowsAVX2, rowsW: accumRowsWAVX2, native: true})
	}
	return ks
}
