//go:build !noasm

package aggr

import "golang.org/x/sys/cpu"

// platformKernels returns the assembly kernels this arm64 CPU supports, best
// first: SVE (vector-length agnostic; A64FX, Graviton3, Neoverse V1/V2) when
// the OS reports it, then NEON, which every arm64 Linux CPU has. The features
// come from the kernel's HWCAP (golang.org/x/sys/cpu), so SVE is offered only
// where the OS has enabled it.
func platformKernels() []kernel {
	var ks []kernel
	if cpu.ARM64.HasSVE {
		ks = append(ks, kernel{name: "sve", rows: accumRowsSVE, rowsW: accumRowsWSVE, native: true})
	}
	if cpu.ARM64.HasASIMD {
		ks = append(ks, kernel{name: "neon", rows: accumRowsNEON, rowsW: accumRowsWNEON, native: true})
	}
	return ks
}
