//go:build !amd64 || noasm

package dense

import "github.com/supergcn/supergcn/internal/dispatch"

// archKernelSets: no kernel sets on this architecture (or with noasm):
// every product runs on the BLAS, the column sums in Go.
func archKernelSets() []dispatch.Impl[kernelSet] { return nil }
