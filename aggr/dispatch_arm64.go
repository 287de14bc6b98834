//go:build !noasm

package aggr

import "github.com/supergcn/supergcn/internal/dispatch"

// platformKernels returns the arm64 assembly kernels, best first: SVE
// (vector-length agnostic; A64FX, Graviton3, Neoverse V1/V2), then NEON;
// internal/dispatch keeps those the CPU and OS support.
func platformKernels() []kernel {
	return []kernel{
		{name: "sve", rows: accumRowsSVE, rowsW: accumRowsWSVE, maxRows: maxRowsNEON, scatter: scatterMaxGeneric, native: true, route: dispatch.Generic},
		{name: "neon", rows: accumRowsNEON, rowsW: accumRowsWNEON, maxRows: maxRowsNEON, scatter: scatterMaxGeneric, native: true, route: dispatch.Generic},
	}
}
