//go:build !noasm

package aggr

import "github.com/supergcn/supergcn/internal/dispatch"

// platformKernels returns the amd64 assembly kernels, best first;
// internal/dispatch keeps those the CPU and OS support.
func platformKernels() []kernel {
	return []kernel{
		{name: "avx512", rows: accumRowsAVX512, rowsW: accumRowsWAVX512, maxRows: maxRowsAVX512, scatter: scatterMaxAVX512, native: true, route: "avx512"},
		{name: "avx2", rows: accumRowsAVX2, rowsW: accumRowsWAVX2, maxRows: maxRowsAVX2, scatter: scatterMaxGeneric, native: true, route: dispatch.Generic},
	}
}
