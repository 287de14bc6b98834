//go:build noasm

package aggr

// noasmBuild: the noasm tag compiles no assembly kernels.
const noasmBuild = true
