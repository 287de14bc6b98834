//go:build !noasm

package aggr

// noasmBuild: without the noasm tag the assembly kernels are compiled.
const noasmBuild = false
